"""Edits as numbered, coloured unified diffs in `agtail show`, and as a patch (`show --patch`).

Adapters put every agent's edit in one shape (``event.extra["edit"]``, see
agtaild.adapters.kit.edits); this module prints it: a header per file, real unified hunk
headers with line counts (``@@ -1,5 +1,5 @@``; a hunk whose numbers were counted from the
edited snippet, not the file, says so after it), and each line with its old and new line
numbers, removed lines red, added lines green (no colour without a terminal or with
``NO_COLOR``). Long diffs are cut with a marker (``--full`` prints all that was recorded);
``--no-diff`` prints the raw tool input instead. :func:`patch_lines` writes the same edits
without the numbers, as a diff ``git apply`` and ``patch`` take.
"""

from __future__ import annotations

from agtaild.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

#: Diff lines printed per event without ``--full``.
SHOWN_LINES = 80
#: Said after the header of a hunk whose line numbers are the snippet's, not the file's.
COUNTED = "~ lines counted from the edit, not the file"
_LABELS = {"create": "new file", "delete": "deleted"}


def edit_of(ev: dict[str, Any]) -> dict[str, Any] | None:
    extra = ev.get("extra") or {}
    edit = extra.get("edit") if isinstance(extra, dict) else None
    if isinstance(edit, dict) and isinstance(edit.get("files"), list) and edit["files"]:
        return edit
    return None


def _files(edit: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in edit.get("files") or [] if isinstance(f, dict)]


def _hunks(f: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for h in f.get("hunks") or [] if isinstance(h, dict)]


def _lines(hunk: dict[str, Any]) -> list[str]:
    return [x for x in hunk.get("lines") or [] if isinstance(x, str)]


#: What a text shows in place of an edit it holds (Aider's SEARCH/REPLACE blocks).
FOLDED = "✎ (an edit: its diff follows)"


def fold_text(text: str, edit: dict[str, Any]) -> str:
    """``text`` with the lines where it writes its edits (``edit["in_text"]``: 0-based first
    and last lines) replaced by one line each: the diff printed after it shows them."""
    spans = [s for s in edit.get("in_text") or [] if isinstance(s, list) and len(s) == 2
             and all(isinstance(n, int) for n in s)]
    if not spans:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    for first, last in sorted(spans):
        if first < i or first > last:
            continue
        out += [*lines[i:first], FOLDED]
        i = last + 1
    return "\n".join(out + lines[i:])


def edit_summary(edit: dict[str, Any]) -> str:
    """The files an edit touches, for its call line: ``hello.py (new file), old.py (deleted)``."""
    names = []
    for f in _files(edit):
        label = _LABELS.get(str(f.get("op") or "update"), "")
        names.append(f"{f.get('path') or '?'}" + (f" ({label})" if label else ""))
    return ", ".join(names)


def hunk_header(hunk: dict[str, Any]) -> str:
    """``@@ -a,b +c,d @@`` with the counts of the hunk's lines; a side with no lines starts at
    the line before (``@@ -0,0 +1,6 @@``: a new file), as unified diffs write it."""
    lines = _lines(hunk)
    old = sum(1 for x in lines if x[:1] in (" ", "-"))
    new = sum(1 for x in lines if x[:1] in (" ", "+"))
    old_start = _start(hunk.get("old_start"))
    new_start = _start(hunk.get("new_start"))
    old_at = old_start if old else max(old_start - 1, 0)
    new_at = new_start if new else max(new_start - 1, 0)
    section = hunk.get("section")
    tail = f" {section}" if isinstance(section, str) and section else ""
    return f"@@ -{old_at},{old} +{new_at},{new} @@{tail}"


def _start(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1


def diff_lines(edit: dict[str, Any], style: Any, *, full: bool = False, indent: str = "    ") -> list[str]:
    out: list[str] = []
    budget = None if full else SHOWN_LINES
    left_out = 0
    for f in _files(edit):
        label = _LABELS.get(str(f.get("op") or "update"), "")
        out.append(indent + style.bold(f"{f.get('path') or '?'}" + (f" ({label})" if label else "")))
        hunks = _hunks(f)
        width = _number_width(hunks)
        for hunk in hunks:
            old_no = max(_start(hunk.get("old_start")), 1)
            new_no = max(_start(hunk.get("new_start")), 1)
            lines = _lines(hunk)
            if budget is not None and budget <= 0:
                left_out += len(lines)
                continue
            note = "" if f.get("numbered") else "  " + COUNTED
            out.append(indent + style.dim(hunk_header(hunk) + note))
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
        top = max(top, _start(h.get("old_start")) + n, _start(h.get("new_start")) + n)
    return max(3, len(str(top)))


def _relative(path: str, cwd: str | None) -> str:
    """``path`` as the patch names it: below the session's directory, relative to it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path.lstrip("/") if path.startswith("/") else path


def patch_lines(edit: dict[str, Any], cwd: str | None, where: str) -> tuple[list[str], list[str]]:
    """(the unified diff of an edit, notes on what it leaves out). Paths are relative to the
    session's ``cwd`` (``a/…``, ``b/…``: `git apply` and `patch -p1` in that directory); a
    file whose recorded diff was cut is left out (it would not apply). ``where`` names the
    event in the notes. A file whose line numbers were counted from the snippet is preceded by
    a line saying so (tools skip text between files): `patch` finds its hunks by their context,
    `git apply` with ``--unidiff-zero`` (without it, git wants a hunk with no context after it
    at the file's end, and one numbered 1 at its start)."""
    out: list[str] = []
    notes: list[str] = []
    for f in _files(edit):
        path = str(f.get("path") or "")
        if not path:
            continue
        if f.get("cut"):
            notes.append(f"{where}: the diff of {path} was cut when recorded; it is left out")
            continue
        old, _, new = path.partition(" → ")  # a moved file (Codex: *** Move to:)
        old, new = _relative(old, cwd), _relative(new or old, cwd)
        op = str(f.get("op") or "update")
        if not f.get("numbered"):
            out.append(f"agtail: {where}: {new}: line numbers counted from the edit, not the file: patch -p1"
                       " finds the lines by their context (git apply: --unidiff-zero)")
        out.append("--- /dev/null" if op == "create" else f"--- a/{old}")
        out.append("+++ /dev/null" if op == "delete" else f"+++ b/{new}")
        for hunk in _hunks(f):
            out.append(hunk_header(hunk))
            out.extend(x if x else " " for x in _lines(hunk))
    return out, notes


def write_patch(session: dict[str, Any], events: Any, write: Any, err: Any) -> bool:
    """`show --patch`: the edits of the active branch (those of abandoned branches were undone)
    as one unified diff, in order, through ``write``; what cannot be part of it through ``err``.
    False when the session recorded no edit."""
    from agtaild.cli import branches

    found = False
    for _, ev in branches.walk(events, all_branches=False):
        edit = edit_of(ev) if ev is not None else None
        if edit is None or ev is None:
            continue
        lines, notes = patch_lines(edit, session.get("cwd"), f"#{ev.get('seq')} {ev.get('tool') or 'edit'}")
        for note in notes:
            err(f"agtail: {note}")
        for line in lines:
            write(line + "\n")
        found = found or bool(lines)
    return found
