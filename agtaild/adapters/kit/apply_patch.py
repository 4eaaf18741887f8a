"""Codex's apply_patch envelope → the common edit shape (agtaild.adapters.kit.edits).

The patch names each file (``*** Update File:``, ``*** Add File:``, ``*** Delete File:``,
``*** Move to:``) and gives its changes as ``@@``-separated chunks of `` ``/``-``/``+`` lines,
without line numbers: the diff is shown numbered from each chunk's start (a new file's are its
own: it starts at line 1). The text after a chunk's ``@@`` (the line Codex finds the chunk
by, e.g. ``@@ def greet(name):``) is kept as the hunk's ``section``. The patch comes as a
``custom_tool_call`` input, a function call's ``input`` argument, or the second word of an
``["apply_patch", PATCH]`` command.
"""

from __future__ import annotations

from typing import Any

from agtaild.adapters.kit import edits

_FILE_OPS = (("*** Update File: ", "update"), ("*** Add File: ", "create"), ("*** Delete File: ", "delete"))


def patch_text(tool: str | None, data: Any) -> str | None:
    """The apply_patch text of a call, if it is one."""
    if tool == "apply_patch":
        if isinstance(data, str):
            return data
        if isinstance(data, dict) and isinstance(data.get("input"), str):
            return str(data["input"])
    command = data.get("command") if isinstance(data, dict) else None
    if isinstance(command, list) and len(command) >= 2 and command[0] in ("apply_patch", "applypatch"):
        return command[1] if isinstance(command[1], str) else None
    return None


def edit_of(tool: str | None, data: Any) -> dict[str, Any] | None:
    text = patch_text(tool, data)
    if text is None or "*** Begin Patch" not in text or len(text) > edits.MAX_TEXT:
        return None
    files: list[dict[str, Any] | None] = []
    path: str | None = None
    op = "update"
    chunks: list[list[str]] = []
    sections: list[str] = []

    def flush() -> None:
        if path is not None:
            hunks = []
            for lines, section in zip(chunks, sections, strict=True):
                if lines:
                    hunk: dict[str, Any] = {"old_start": 1, "new_start": 1, "lines": lines}
                    if section:
                        hunk["section"] = section
                    hunks.append(hunk)
            files.append(edits.file_change(path, hunks, op=op, numbered=op == "create"))

    for line in text.splitlines():
        started = next(((line[len(p) :].strip(), o) for p, o in _FILE_OPS if line.startswith(p)), None)
        if started is not None:
            flush()
            path, op = started
            chunks, sections = [[]], [""]
        elif line.startswith("*** Move to: ") and path is not None:
            path = f"{path} → {line[len('*** Move to: ') :].strip()}"
        elif line.startswith("***"):
            continue
        elif line.startswith("@@") and path is not None:
            chunks.append([])
            sections.append(line[2:].strip())
        elif path is not None and line[:1] in (" ", "-", "+"):
            chunks[-1].append(line)
        elif path is not None and line == "":
            chunks[-1].append(" ")
    flush()
    return edits.edit_doc(files)
