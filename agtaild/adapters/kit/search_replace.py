"""Edits written into a reply's text as SEARCH/REPLACE blocks → the common edit shape.

Aider's "diff" edit formats have the model write each change in its reply::

    hello.py
    ```python
    <<<<<<< SEARCH
        return "Hello, " + name
    =======
        return f"Hello, {name}!"
    >>>>>>> REPLACE
    ```

The file name is the line before the opening fence (or just inside it); an empty SEARCH part
creates the file. The markers take 5 to 9 ``<``, ``=`` and ``>`` (as Aider accepts them). The
edit (agtaild.adapters.kit.edits) also says where in the text the blocks are: ``in_text``, the
0-based first and last line of each (file name and fences included), so a transcript can show
the diff in their place. Only the text is read: no file is looked at, so the line numbers are
the snippet's (a new file's are its own).
"""

from __future__ import annotations

import re
from typing import Any

from agtaild.adapters.kit import edits

_SEARCH = re.compile(r"^<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
#: Lines above a SEARCH marker searched for its file name.
_NAME_LINES = 3


def _file_name(line: str) -> str | None:
    name = line.strip().strip("*`#:").strip()
    return name if name and " " not in name.strip() and len(name) < 1000 else None


def blocks(text: str) -> list[tuple[str | None, str, str, int, int]]:
    """The blocks of ``text``: (file name or None, search text, replace text, first line,
    last line). A block without its closing marker is not one (the reply may be cut)."""
    lines = text.split("\n")
    found: list[tuple[str | None, str, str, int, int]] = []
    i = 0
    floor = 0  # the first line after the block before: its lines are not this one's
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        start, name = i, None
        for back in range(i - 1, max(i - 1 - _NAME_LINES, floor - 1), -1):
            if _FENCE.match(lines[back]):
                start = back
                continue
            if lines[back].strip():
                name = _file_name(lines[back])
                if name is not None:
                    start = back
                    if back - 1 >= floor and _FENCE.match(lines[back - 1]):  # the name inside the fence
                        start = back - 1
                break
        divider = next((j for j in range(i + 1, len(lines)) if _DIVIDER.match(lines[j])), None)
        if divider is None:
            break
        end = next((j for j in range(divider + 1, len(lines)) if _REPLACE.match(lines[j])), None)
        if end is None:
            break
        search, replace = lines[i + 1 : divider], lines[divider + 1 : end]
        last = end + 1 if end + 1 < len(lines) and _FENCE.match(lines[end + 1]) else end
        found.append((name, _joined(search), _joined(replace), start, last))
        i = floor = last + 1
    return found


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def edit_of_text(text: Any) -> dict[str, Any] | None:
    """``extra["edit"]`` for a reply holding SEARCH/REPLACE blocks (None when it holds none):
    one file entry per file, its blocks' hunks in order, and ``in_text``."""
    if not isinstance(text, str) or "SEARCH" not in text or len(text) > edits.MAX_TEXT:
        return None
    found = blocks(text)
    if not found:
        return None
    by_path: dict[str, dict[str, Any]] = {}
    spans: list[list[int]] = []
    path: str | None = None
    for name, search, replace, first, last in found:
        path = name or path  # a block without a name goes on editing the file before it
        spans.append([first, last])
        if path is None:
            continue
        new_file = not search and path not in by_path
        change = edits.from_texts(path, search, replace, start=1 if new_file else None,
                                  op="create" if new_file else "update")
        if change is None:
            continue
        if path in by_path:
            by_path[path]["hunks"] += change["hunks"]
        else:
            by_path[path] = change
    doc = edits.edit_doc([edits.file_change(p, c["hunks"], op=c["op"], numbered=c["numbered"])
                          for p, c in by_path.items()])
    if doc is not None:
        doc["in_text"] = spans
    return doc
