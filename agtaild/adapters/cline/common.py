"""What Cline's two store generations (and its forks) share: token counts, ids, user text.

Token counts. Cline records ``tokensIn``/``inputTokens`` as its provider reported them. The
Anthropic-style providers report input *without* the cache; the OpenAI-style ones report
``prompt_tokens``, which *includes* the cached tokens (Cline's own cost code,
``calculateApiCostOpenAI``, subtracts them for exactly those providers; the real Cline 2.18
and 3.0.65 samples against an OpenAI-compatible endpoint show ``tokensIn`` = prompt tokens).
agtail's :class:`Usage` wants input without the cache, so for those providers the cache
reads (and writes) are taken out of the input again.
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.model import Usage

#: Provider ids (Cline's ``providerId`` / SDK ``provider``) whose input count includes the cache.
INPUT_INCLUDES_CACHE: frozenset[str] = frozenset(
    {"openai", "openai-native", "openai-compatible", "deepseek", "xai", "openai-codex"}
)

_WRAPPERS = re.compile(
    r"^\s*<(task|feedback|user_message|answer|user_input)(?: [^>]*)?>\n?(.*?)\n?</\1>\s*$", re.S
)

_INNER = re.compile(r"<(user_message|feedback)>\n?(.*?)\n?</\1>", re.S)


def usage_from(
    inp: int, out: int, cache_read: int, cache_write: int, provider: str | None, reasoning: int = 0
) -> Usage:
    """Cline's counts in the Anthropic convention (see the module docstring)."""
    if provider in INPUT_INCLUDES_CACHE and inp >= cache_read + cache_write:
        inp -= cache_read + cache_write
    return Usage(
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    ).fix_total()


def unwrap(text: str) -> str:
    """A user text without Cline's wrapper tags (``<task>…</task>``, ``<feedback>``,
    ``<user_message>``, the SDK's ``<user_input mode="act">``)."""
    m = _WRAPPERS.match(text)
    if m:
        return m.group(2).strip()
    inner = _INNER.search(text)  # "New instructions for task continuation:\n<user_message>…"
    return inner.group(2).strip() if inner else text


def is_injected(text: str) -> bool:
    """Text blocks Cline adds to a user message for the model, not typed by anyone."""
    head = text.lstrip()[:40]
    return head.startswith(("<environment_details>", "# task_progress", "[TASK RESUMPTION]"))


def block_text(content: Any) -> str:
    """A tool result's or message's content as plain text (strings, text blocks, lists)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (block_text(c) for c in content) if t)
    if isinstance(content, dict):
        for key in ("text", "result", "content", "error"):
            value = content.get(key)
            if isinstance(value, str) and value:
                return value
    return ""
