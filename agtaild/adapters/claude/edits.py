"""Claude Code's Edit, MultiEdit and Write calls → the common edit shape (agtaild.adapters.kit.edits).

The tool result's ``toolUseResult.structuredPatch`` (hunks with the file's own line numbers) is
used once it has arrived; until then, and in older files without it, the diff is computed from
the input's ``old_string``/``new_string`` (MultiEdit: each of its ``edits``). A Write that
created a file has no earlier text: no diff (its input shows the content).
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import edits
from agtaild.model import Event

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})


def edit_of(ev: Event) -> dict[str, Any] | None:
    inp = ev.input if isinstance(ev.input, dict) else {}
    path = inp.get("file_path")
    result = ev.extra.get("tool_use_result")
    if isinstance(result, dict):
        patch = result.get("structuredPatch")
        if isinstance(patch, list) and patch:
            found: list[dict[str, Any]] = []
            for x in patch:
                hunk = _hunk(x) if isinstance(x, dict) else None
                if hunk is not None:
                    found.append(hunk)
            if found:
                change = edits.file_change(result.get("filePath") or path, found, numbered=True)
                return edits.edit_doc([change])
        if ev.tool == "Write" and isinstance(result.get("originalFile"), str):
            return edits.edit_doc(
                [edits.from_texts(path, result["originalFile"], inp.get("content"), start=1)]
            )
    if ev.tool == "Edit":
        return edits.edit_doc([edits.from_texts(path, inp.get("old_string"), inp.get("new_string"))])
    if ev.tool == "MultiEdit" and isinstance(inp.get("edits"), list):
        parts: list[dict[str, Any]] = []
        for one in inp["edits"]:
            if isinstance(one, dict):
                one_change = edits.from_texts(path, one.get("old_string"), one.get("new_string"))
                parts += one_change["hunks"] if one_change else []
        return edits.edit_doc([edits.file_change(path, parts)])
    return None


def _hunk(raw: dict[str, Any]) -> dict[str, Any] | None:
    lines = raw.get("lines")
    old, new = raw.get("oldStart"), raw.get("newStart")
    if not isinstance(lines, list) or not isinstance(old, int) or not isinstance(new, int):
        return None
    return {"old_start": old, "new_start": new, "lines": [x for x in lines if isinstance(x, str)]}
