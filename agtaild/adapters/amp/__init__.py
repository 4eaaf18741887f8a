"""Amp (Sourcegraph): one JSON document per thread, ``~/.local/share/amp/threads/T-<uuid>.json``.

Modules: adapter. The adapter class is what the registry loads."""

from agtaild.adapters.amp.adapter import AmpAdapter

__all__ = ["AmpAdapter"]
