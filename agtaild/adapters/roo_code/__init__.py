"""Roo Code (RooCodeInc/Roo-Code), a Cline fork: the same task folders, read by cline_tasks.

Modules: adapter. The adapter class is what the registry loads."""

from agtaild.adapters.roo_code.adapter import RooCodeAdapter

__all__ = ["RooCodeAdapter"]
