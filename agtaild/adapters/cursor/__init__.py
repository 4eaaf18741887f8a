"""Cursor (``cursor``): the CLI's agent transcripts and chat stores under ``~/.cursor``.

Modules: adapter, ide, store, text, transcript. The adapter class is what the registry loads."""

from agtaild.adapters.cursor.adapter import CursorAdapter

__all__ = ["CursorAdapter"]
