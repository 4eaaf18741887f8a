"""Junie (JetBrains): one ``events.jsonl`` per session under ``~/.junie/sessions``.

``$JUNIE_HOME`` (default ``~/.junie``) holds ``sessions/<session id>/events.jsonl`` (the
session's event log, appended) and ``sessions/index.jsonl`` (one summary line per session:
``sessionId``, ``projectDir``, ``taskName``). Modules: adapter (roots, units, cwd fallback,
resume), parser (lines → events, usage, title and ending), steps (the agent's blocks, which
Junie re-sends under one ``stepId`` as they progress, as one event each).
"""

from agtaild.adapters.junie.adapter import JunieAdapter

__all__ = ["JunieAdapter"]
