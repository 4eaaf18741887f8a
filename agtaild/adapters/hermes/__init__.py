"""Hermes Agent (Nous Research, PyPI ``hermes-agent``): every session in ``~/.hermes/state.db``.

``$HERMES_HOME`` (default ``~/.hermes``) holds ``state.db``: a ``sessions`` row per session
(source, cwd, model, parent, Hermes's own token counters) and a ``messages`` row per
OpenAI-style message (``tool_calls`` as JSON, tool results as JSON text, reasoning in its own
columns); each profile under ``profiles/<name>/`` has a ``state.db`` of its own. Modules:
adapter (roots, databases, resume), messages (rows → events, usage).
"""

from agtaild.adapters.hermes.adapter import HermesAdapter

__all__ = ["HermesAdapter"]
