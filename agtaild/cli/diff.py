"""Edits as numbered, coloured unified diffs in `agtail show`.

Adapters put every agent's edit in one shape (``event.extra["edit"]``, see
agtaild.adapters.kit.edits); this module prints it: a header per file, ``@@`` hunk headers, and each
line with its old and new line numbers, removed lines red, added lines green (no colour without
a terminal or with ``NO_COLOR``). Long diffs are cut with a marker (``--full`` prints all that
was recorded); ``--no-diff`` prints the raw tool input instead.
"""

from __future__ import annotations

from agtaild.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

#: Diff lines printed per event without ``--full``.
SHOWN_LINES = 80


def edit_of(ev: dict[str, Any]) -> dict[str, Any] | None:
    extra = ev.get("extra") or {}
    edit = extra.get("edit") if isinstance(extra, dict) else None
    if isinstance(edit, dict) and isinstance(edit.get("files"), list) and edit["files"]:
        return edit
    return None


def diff_lines(edit: dict[str, Any], style: Any, *, full: bool = False, indent: str = "    ") -> list[str]:
    out: list[str] = []
    budget = None if full else SHOWN_LINES
    left_out = 0
    for f in edit.get("files") or []:
        if not isinstance(f, dict):
            continue
        op = f.get("op") or "update"
        label = {"create": "new file", "delete": "deleted"}.get(op, "")
        out.append(indent + style.bold(f"{f.get('path') or '?'}" + (f" ({label})" if label else "")))
        hunks = [h for h in f.get("hunks") or [] if isinstance(h, dict)]
        width = _number_width(hunks)
        for hunk in hunks:
            old_no = int(hunk.get("old_start") or 1)
            new_no = int(hunk.get("new_start") or 1)
            lines = [x for x in hunk.get("lines") or [] if isinstance(x, str)]
            if budget is not None and budget <= 0:
                left_out += len(lines)
                continue
            prefix = "" if f.get("numbered") else "~"
            out.append(indent + style.dim(f"@@ {prefix}-{old_no} {prefix}+{new_no} @@"))
            for line in lines:
                if budget is not None:
                    if budget <= 0:
                        left_out += 1
                        continue
                    budget -= 1
                sign, body = line[:1], line[1:]
                if sign == "-":
                    out.append(indent + style.red(f"{old_no:>{width}} {'':>{width}} -{body}"))
                    old_no += 1
                elif sign == "+":
                    out.append(indent + style.green(f"{'':>{width}} {new_no:>{width}} +{body}"))
                    new_no += 1
                else:
                    out.append(indent + style.dim(f"{old_no:>{width}} {new_no:>{width}}") + f"  {body}")
                    old_no += 1
                    new_no += 1
        if f.get("cut"):
            left_out += int(f["cut"])
    if left_out:
        out.append(
            indent
            + style.dim(
                f"… diff cut: {count(left_out, 'more line')}" + ("" if full else " (--full shows what was recorded)")
            )
        )
    return out


def _number_width(hunks: list[dict[str, Any]]) -> int:
    top = 1
    for h in hunks:
        n = len(h.get("lines") or [])
        top = max(top, int(h.get("old_start") or 1) + n, int(h.get("new_start") or 1) + n)
    return max(3, len(str(top)))
