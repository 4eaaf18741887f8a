"""An edit (``event.extra["edit"]``, the shape of agtaild.adapters.kit.edits) as a unified diff.

The output is what ``git apply`` and ``patch`` read: ``--- a/PATH`` / ``+++ b/PATH`` (``/dev/null``
for a created or deleted file) and hunk headers with their line counts (``@@ -1,5 +1,6 @@``).
Where the agent did not record the file's own line numbers (``numbered`` false), the numbers are
the edit's own, and :func:`numbered` says so, so that a caller can say it too.
"""

from __future__ import annotations

from typing import Any


def hunk_header(hunk: dict[str, Any]) -> str:
    """``@@ -old_start,old_count +new_start,new_count @@`` for one hunk of the edit shape."""
    lines = [x for x in hunk.get("lines") or [] if isinstance(x, str)]
    old = sum(1 for x in lines if x[:1] != "+")
    new = sum(1 for x in lines if x[:1] != "-")
    old_start = int(hunk.get("old_start") or 0) if old else max(int(hunk.get("old_start") or 1) - 1, 0)
    new_start = int(hunk.get("new_start") or 0) if new else max(int(hunk.get("new_start") or 1) - 1, 0)
    return f"@@ -{old_start},{old} +{new_start},{new} @@"


def files_of(edit: Any) -> list[dict[str, Any]]:
    files = edit.get("files") if isinstance(edit, dict) else None
    return [f for f in files or [] if isinstance(f, dict)]


def numbered(edit: Any) -> bool:
    return all(f.get("numbered") for f in files_of(edit))


def unified(edit: Any, base: str | None = None) -> str:
    """The whole edit as one unified diff ("" for an edit with nothing to show); paths below
    ``base`` (the session's cwd) relative to it, as ``git apply`` in that directory wants them."""
    out: list[str] = []
    prefix = base.rstrip("/") + "/" if base else None
    for f in files_of(edit):
        path = str(f.get("path") or "file")
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        path = path.lstrip("/")
        op = f.get("op") or "update"
        out.append("--- " + ("/dev/null" if op == "create" else f"a/{path}"))
        out.append("+++ " + ("/dev/null" if op == "delete" else f"b/{path}"))
        for hunk in f.get("hunks") or []:
            if not isinstance(hunk, dict):
                continue
            out.append(hunk_header(hunk))
            for line in hunk.get("lines") or []:
                if isinstance(line, str):
                    out.append(line if line[:1] in ("+", "-", " ") else " " + line)
    return "\n".join(out) + ("\n" if out else "")


def cut(edit: Any) -> int:
    """Diff lines the adapter left out (each file keeps at most a bounded number)."""
    return sum(int(f.get("cut") or 0) for f in files_of(edit))
