"""Gemini Apps (gemini.google.com), read from Google Takeout: ``agtail import gemini FILE.zip``.

Takeout's "My Activity" product, filtered to "Gemini Apps" and exported as JSON, writes
``Takeout/My Activity/Gemini Apps/My Activity.json``: one entry per prompt and its answer,
newest first, and no conversation ids. The import groups the entries into sessions by the
time between them (agtaild.adapters.gemini_apps.groups) and keeps one group per file.
Not Gemini CLI: its sessions are the ``gemini`` agent's.
"""

from agtaild.adapters.gemini_apps.adapter import GeminiAppsAdapter

__all__ = ["GeminiAppsAdapter"]
