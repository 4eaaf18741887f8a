"""The common shape of a file edit, which adapters put in ``event.extra["edit"]``.

Agents record edits in their own ways (Claude's old/new strings and structured patch, Codex's
apply_patch envelope, Gemini's and OpenCode's unified diffs, Pi's oldText/newText). Each
adapter turns its own into this one shape, so the CLI and the viewer render every agent's edits
the same way without knowing any agent's format::

    {"files": [{"path": str, "op": "update" | "create" | "delete",
                "hunks": [{"old_start": int, "new_start": int, "lines": [" ctx", "-old", "+new"],
                           "section": str}],   # optional: the text after the hunk's @@
                "numbered": bool,   # line numbers are the file's (else counted from the snippet)
                "cut": int}]}       # diff lines left out (very large edits are cut)

Only built from what the transcript recorded (the old and new text, or the patch): no file is
read. Large edits are cut at :data:`MAX_DIFF_LINES` lines per file, with the count kept.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

#: Diff lines kept per file (the rest is counted in ``cut``).
MAX_DIFF_LINES = 400
#: Context lines around each change.
CONTEXT = 3
#: Edits with more text than this (old + new characters) are not diffed (the input is kept).
MAX_TEXT = 2_000_000

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def hunks_from_texts(old: str, new: str, start: int = 1) -> list[dict[str, Any]]:
    """Unified hunks turning ``old`` into ``new``; ``start`` is the file line of old's first line."""
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT):
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + x for x in a[a1:a2]]
                continue
            lines += ["-" + x for x in a[a1:a2]]
            lines += ["+" + x for x in b[b1:b2]]
        hunks.append({"old_start": start + group[0][1], "new_start": start + group[0][3], "lines": lines})
    return hunks


def file_change(
    path: Any, hunks: list[dict[str, Any]], *, op: str = "update", numbered: bool = False
) -> dict[str, Any]:
    """One file's change, cut to :data:`MAX_DIFF_LINES` diff lines."""
    kept: list[dict[str, Any]] = []
    room = MAX_DIFF_LINES
    cut = 0
    for hunk in hunks:
        lines = hunk["lines"]
        if room <= 0:
            cut += len(lines)
            continue
        if len(lines) > room:
            cut += len(lines) - room
            hunk = {**hunk, "lines": lines[:room]}
        room -= len(hunk["lines"])
        kept.append(hunk)
    return {
        "path": str(path) if path is not None else None,
        "op": op,
        "hunks": kept,
        "numbered": numbered,
        "cut": cut,
    }


def from_texts(
    path: Any, old: Any, new: Any, *, start: int | None = None, op: str = "update"
) -> dict[str, Any] | None:
    """A change from the text before and after (an old_string/new_string edit, or a whole file)."""
    if not isinstance(old, str) or not isinstance(new, str) or len(old) + len(new) > MAX_TEXT:
        return None
    return file_change(path, hunks_from_texts(old, new, start or 1), op=op, numbered=start is not None)


def from_unified(text: Any, path: Any = None) -> list[dict[str, Any]]:
    """The file changes of a unified diff (``---``/``+++`` headers, ``@@ -a,b +c,d @@`` hunks)."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return []
    files: list[dict[str, Any]] = []
    cur_path: Any = path
    hunks: list[dict[str, Any]] = []
    old_name: str | None = None

    def flush() -> None:
        if hunks:
            files.append(file_change(cur_path, list(hunks), numbered=True))
            hunks.clear()

    for line in text.splitlines():
        if line.startswith("--- ") and (not hunks or not hunks[-1]["lines"] or _hunk_done(hunks[-1])):
            flush()
            old_name = _name(line[4:])
            continue
        if line.startswith("+++ ") and old_name is not None and not hunks:
            new_name = _name(line[4:])
            cur_path = path or (new_name if new_name != "/dev/null" else old_name)
            old_name = None
            continue
        m = _HUNK.match(line)
        if m:
            hunks.append(
                {
                    "old_start": int(m.group(1)),
                    "new_start": int(m.group(2)),
                    "lines": [],
                    "_want": _counts(line),
                }
            )
            continue
        if hunks and line[:1] in (" ", "-", "+") and not _hunk_done(hunks[-1]):
            hunks[-1]["lines"].append(line)
        elif hunks and line == "" and not _hunk_done(hunks[-1]):
            hunks[-1]["lines"].append(" ")
    flush()
    for f in files:
        for h in f["hunks"]:
            h.pop("_want", None)
    return files


def _counts(header: str) -> tuple[int, int]:
    m = re.match(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", header)
    if not m:
        return (0, 0)
    return (
        int(m.group(1)) if m.group(1) is not None else 1,
        int(m.group(2)) if m.group(2) is not None else 1,
    )


def _hunk_done(hunk: dict[str, Any]) -> bool:
    want_old, want_new = hunk.get("_want", (0, 0))
    old = sum(1 for x in hunk["lines"] if x[:1] in (" ", "-"))
    new = sum(1 for x in hunk["lines"] if x[:1] in (" ", "+"))
    return old >= want_old and new >= want_new


def _name(value: str) -> str:
    name = value.split("\t", 1)[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


def edit_doc(files: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """``extra["edit"]``, or None when nothing could be diffed."""
    kept = [f for f in files if f is not None and (f["hunks"] or f["op"] != "update")]
    return {"files": kept} if kept else None
