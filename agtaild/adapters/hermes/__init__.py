"""Hermes Agent (Nous Research, PyPI ``hermes-agent``): every session in ``~/.hermes/state.db``.

``$HERMES_HOME`` (default ``~/.hermes``) holds ``state.db``: a ``sessions`` row per session
(source, cwd, model, parent, Hermes's own token counters) and a ``messages`` row per
OpenAI-style message (``tool_calls`` as JSON, tool results as JSON text, reasoning in its own
columns); each profile under ``profiles/<name>/`` has a ``state.db`` of its own. Releases before it wrote
``sessions/session_<id>.json``. Modules: adapter (roots, databases, links, resume), messages
(rows → events, usage), legacy (the older session files).
"""

from agtaild.adapters.hermes.adapter import HermesAdapter

__all__ = ["HermesAdapter"]
