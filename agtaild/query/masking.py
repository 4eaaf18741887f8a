"""Secrets never leave in an answer: every text of an answer that carries transcript content is
masked with the scanner's rules (agtaild.secrets) on the way out of the query layer.

Masking here, on the text being sent, covers every front end at once (the CLI in-process and
through the daemon, REST, JSON-RPC, SSE, MCP, the viewer, exports) and a session whose scan has
not run yet alike. A secret becomes ``«secret:RULE …WXYZ»``: the text stays readable and the
JSON valid. Answers of numbers only (stats, agents) pass as they are.
"""

from __future__ import annotations

from typing import Any

#: Methods whose answers hold text from transcripts (titles, prompts, tool input and output,
#: snippets, paths).
TEXT_METHODS = frozenset(
    {"sessions.list", "sessions.get", "events.list", "search", "projects.list", "resume.command", "state.change",
     "usage.live", "report"}
)


def mask_answer(method: str, answer: dict[str, Any]) -> dict[str, Any]:
    if method not in TEXT_METHODS:
        return answer
    from agtaild.secrets import mask_json

    masked: dict[str, Any] = mask_json(answer)
    return masked
