"""Small readers of untrusted JSON values that every adapter needs alike.

Records drift between versions and anything may have written them: a field that should be an
object or a count may be missing, ``null``, a string or a negative number. These give the
value when it has the expected type and a neutral one otherwise, so an adapter never raises
on a record's shape.
"""

from __future__ import annotations

from typing import Any

#: Longest title taken from a prompt (a whole pasted file is not a title).
TITLE_MAX = 200


def sub(d: Any, key: str) -> dict[str, Any]:
    """``d[key]`` when both are dicts, else an empty dict (fields drift between versions)."""
    value = d.get(key) if isinstance(d, dict) else None
    return value if isinstance(value, dict) else {}


def num(d: Any, key: str) -> int:
    """``d[key]`` as a non-negative int (a float is truncated); 0 for anything else."""
    value = d.get(key) if isinstance(d, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def title_from_prompt(prompt: str | None) -> str | None:
    """The first non-empty line of a prompt, shortened to :data:`TITLE_MAX` characters."""
    if not prompt:
        return None
    for line in prompt.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"
    return None
