"""At index time: the events of one read → the rows of the ``edits`` table.

Each row is one change of one file by one event: its normalized path (agtaild.provenance.paths),
its kind (``create``, ``edit``, ``patch``, ``delete``, ``command``, ``rename``), whether the tool
failed, and a document (msgpack) holding what blame replays and history shows:

* ``ops``: the change as replay operations, from the most exact source the event has:
  ``["write", lines, added]`` (a whole new text; ``added`` the 1-based lines a recorded diff
  shows as added, or None when all are new), ``["replace", old_lines, new_lines, hint, False]``
  (one hunk of ``extra.edit``: whole lines; ``hint`` the 1-based line its old side starts at
  when the diff is numbered by the file, else 0), or ``["text", old, new, hint, all]`` (an
  old/new string pair of the input: a piece of the file's text, not always whole lines;
  ``all`` for ``replace_all``);
* ``hunks`` and ``cut``: ``extra.edit``'s diff of the file, as the adapters normalized it
  (agtaild.adapters.kit.edits), for history;
* ``tool``, and ``command`` for shell commands (no content: the transcript has none).

The index writer stores them in the same transaction as the events (agtaild.index.writer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from agtaild.model import Event
from agtaild.provenance import paths, shell

#: An ``edits`` row as the writer binds it: (seq, epoch, path, name, kind, failed, from_path, data).
EditRow = tuple[int, float | None, str, str, str, int, str | None, bytes]
#: Texts longer than this (characters) are not kept as replay operations.
MAX_TEXT = 2_000_000
#: Command text kept in a ``command`` row.
MAX_COMMAND_SHOWN = 2_000

_PAIRS = (
    ("old_string", "new_string"), ("oldString", "newString"), ("old_str", "new_str"),
    ("oldText", "newText"), ("old_text", "new_text"),
)  # fmt: skip
_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "file", "filename", "target_file")
_CONTENT_KEYS = ("content", "file_text", "contents")
_COMMAND_KEYS = ("command", "cmd", "commandLine", "script")
_pack = msgspec.msgpack.Encoder()


def rows(events: Iterable[Event], cwd: str | None, time_of: Callable[[str | None], float | None]) -> list[EditRow]:
    """Every file change the events record (an event that is no change gives no row)."""
    out: list[EditRow] = []
    for ev in events:
        try:
            out += _rows_of(ev, cwd, time_of)
        except (TypeError, ValueError, AttributeError, KeyError):  # a malformed edit: no row, never a failed read
            continue
    return out


#: Tool categories (agtaild.adapters.kit.tool_categories) whose calls may change a file.
_CHANGING = frozenset({"write", "edit", "shell"})


def _rows_of(ev: Event, cwd: str | None, time_of: Callable[[str | None], float | None]) -> list[EditRow]:
    extra = ev.extra if isinstance(ev.extra, dict) else {}
    edit = extra.get("edit")
    if edit is None and (ev.kind != "tool_use" or extra.get("tool_category") not in _CHANGING):
        return []  # most events: nothing to look at (this runs for every event indexed)
    inp = ev.input if isinstance(ev.input, dict) else {}
    failed = int(ev.is_error is True)
    tool = str(ev.tool) if ev.tool else None
    found: list[EditRow] = []

    def add(path: Any, kind: str, doc: dict[str, Any], from_path: Any = None) -> None:
        full = paths.normalize(path, cwd)
        if full is None:
            return
        source = paths.normalize(from_path, cwd) if from_path is not None else None
        doc = {"tool": tool, **doc}
        found.append((ev.seq, time_of(ev.ts), full, paths.name_of(full), kind, failed, source, _pack.encode(doc)))

    files = edit.get("files") if isinstance(edit, dict) else None
    if isinstance(files, list) and files:
        single = len(files) == 1
        for f in files:
            if not isinstance(f, dict) or not isinstance(f.get("path"), str):
                continue
            path, source = _moved(f["path"])
            op = f.get("op") if f.get("op") in ("create", "delete") else "update"
            hunks = [h for h in f.get("hunks") or [] if isinstance(h, dict) and isinstance(h.get("lines"), list)]
            doc: dict[str, Any] = {"hunks": hunks, "cut": int(f.get("cut") or 0), "numbered": bool(f.get("numbered"))}
            if op == "delete":
                add(path, "delete", {**doc, "ops": [["delete"]]}, source)
                continue
            numbered = bool(f.get("numbered"))
            ops = _input_ops(inp, hunks, numbered, cut=bool(f.get("cut"))) if single and ev.kind == "tool_use" else None
            kind = "edit"
            if ops is None:
                ops, kind = _hunk_ops(hunks, numbered, whole=op == "create"), "patch"
            if op == "create":
                kind = "create"
            elif source is not None and not hunks:
                kind = "rename"
            add(path, kind, {**doc, "ops": ops}, source)
        return found
    if ev.kind != "tool_use":
        return found
    category = extra.get("tool_category")
    content = next((inp[k] for k in _CONTENT_KEYS if isinstance(inp.get(k), str)), None)
    target = next((inp[k] for k in _PATH_KEYS if isinstance(inp.get(k), str)), None)
    if content is not None and target is not None and category in ("write", "edit") and len(content) <= MAX_TEXT:
        add(target, "create", {"ops": [["write", content.splitlines(), None]]})
        return found
    if category == "shell":
        command = next((inp[k] for k in _COMMAND_KEYS if inp.get(k)), None) if inp else ev.input
        text = command if isinstance(command, str) else " ".join(map(str, command or []))
        for written, source, kind in shell.touched(command):
            add(written, kind, {"command": text[:MAX_COMMAND_SHOWN]}, source)
    return found


def _moved(path: str) -> tuple[str, str | None]:
    """apply_patch's ``old → new`` (agtaild.adapters.kit.apply_patch) → (new, old)."""
    if " → " in path:
        old, new = path.split(" → ", 1)
        return new.strip(), old.strip()
    return path, None


def _input_ops(
    inp: dict[str, Any], hunks: list[dict[str, Any]], numbered: bool, *, cut: bool
) -> list[list[Any]] | None:
    """The change from the call's own texts, when they say more than the recorded diff: a
    whole new text (a write), or old/new strings where the diff is not numbered by the file
    or was cut. (A numbered, uncut diff is whole lines at known places: replayed as it is.)"""
    content = next((inp[k] for k in _CONTENT_KEYS if isinstance(inp.get(k), str)), None)
    if content is not None and len(content) <= MAX_TEXT:
        added = _added_lines(hunks) if numbered and hunks and not cut else None
        return [["write", content.splitlines(), added]]
    if numbered and hunks and not cut:
        return _hunk_ops(hunks, True, whole=False)
    hint = _hint(hunks) if numbered else 0
    for old_key, new_key in _PAIRS:
        old, new = inp.get(old_key), inp.get(new_key)
        if isinstance(old, str) and isinstance(new, str) and len(old) + len(new) <= MAX_TEXT:
            return [["text", old, new, hint, bool(inp.get("replace_all"))]]
    many = inp.get("edits")
    if isinstance(many, list) and many:
        ops: list[list[Any]] = []
        for one in many:
            pair = next(
                ((one[o], one[n]) for o, n in _PAIRS if isinstance(one, dict) and isinstance(one.get(o), str)
                 and isinstance(one.get(n), str)),
                None,
            )
            if pair is None:
                return None
            ops.append(["text", pair[0], pair[1], 0, bool(one.get("replace_all"))])
        return ops
    return None


def _hint(hunks: list[dict[str, Any]]) -> int:
    """Where the first changed line of a numbered diff is in the new file."""
    if not hunks:
        return 0
    first = hunks[0]
    value = first.get("new_start")
    start = value if isinstance(value, int) else 0
    lead = 0
    for line in first["lines"]:
        if not isinstance(line, str) or not line.startswith(" "):
            break
        lead += 1
    return max(int(start) + lead, 0)


def _added_lines(hunks: list[dict[str, Any]]) -> list[int]:
    """The 1-based new-file lines a numbered diff shows as added."""
    added: list[int] = []
    for h in hunks:
        start = h.get("new_start")
        at = start if isinstance(start, int) else 1
        for line in h["lines"]:
            if not isinstance(line, str):
                continue
            if line.startswith("+"):
                added.append(at)
                at += 1
            elif line.startswith(" "):
                at += 1
    return added


def _hunk_ops(hunks: list[dict[str, Any]], numbered: bool, *, whole: bool) -> list[list[Any]]:
    """The change from its recorded hunks: each hunk replaces its old side by its new side."""
    if whole:
        lines = [str(x)[1:] for h in hunks for x in h["lines"] if isinstance(x, str) and x[:1] in ("+", " ")]
        return [["write", lines, None]]
    ops: list[list[Any]] = []
    for h in hunks:
        lines = [x for x in h["lines"] if isinstance(x, str)]
        old = [x[1:] for x in lines if x[:1] in (" ", "-")]
        new = [x[1:] for x in lines if x[:1] in (" ", "+")]
        start = h.get("new_start") if numbered and isinstance(h.get("new_start"), int) else 0
        ops.append(["replace", old, new, int(start or 0), False])
    return ops
