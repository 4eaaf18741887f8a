"""Kilo Code (Kilo-Org/kilocode): the OpenCode-fork database and the legacy task folders.

Modules: adapter. The adapter class is what the registry loads."""

from agtaild.adapters.kilo.adapter import KiloAdapter

__all__ = ["KiloAdapter"]
