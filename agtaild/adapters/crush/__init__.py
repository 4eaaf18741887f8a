"""Crush (charmbracelet/crush): ``<project>/.crush/crush.db``, one SQLite DB per project.

Modules: adapter, parts. The adapter class is what the registry loads."""

from agtaild.adapters.crush.adapter import CrushAdapter

__all__ = ["CrushAdapter"]
