"""At query time: every recorded change of a file (or of the files under a folder), with the
session that made it and the prompt that led to it (the ``files.history`` method).

The path asked for is compared with every recorded spelling of its name (agtaild.provenance.paths):
the same path, the same file through a symlink, or another case (kept, but marked: ambiguous on
a case-sensitive file system). A rename (``mv``, ``git mv``, apply_patch's ``Move to``) is
followed backwards: the old name's changes before the rename belong to the file's history.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

import msgspec

from agtaild.index.codec import decode_event
from agtaild.index.queries import short_id
from agtaild.provenance import paths

#: Records one answer holds at most (blame needs them all; history pages them).
MAX_RECORDS = 20_000
#: Characters of a prompt shown.
PROMPT_CHARS = 600
#: Lines of a new file's text shown as its diff.
SHOWN_LINES = 400
#: How many renames are followed back.
MAX_RENAMES = 20

_unpack = msgspec.msgpack.Decoder()
_COLUMNS = "e.id, e.session_id, e.seq, e.epoch, e.path, e.kind, e.failed, e.from_path, e.data"


def git_place(path: str) -> dict[str, str] | None:
    """The git work tree holding ``path`` and the path inside it (a ``.git`` found above it)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    for _ in range(64):
        if os.path.exists(os.path.join(folder, ".git")):
            return {"root": folder, "rel": os.path.relpath(path, folder)}
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _rows_for(db: sqlite3.Connection, asked: str, real: str, folder: bool) -> list[tuple[Any, ...]]:
    if folder:
        found: dict[int, tuple[Any, ...]] = {}
        for base in {asked, real}:
            lo = base.rstrip("/") + "/"
            hi = base.rstrip("/") + "0"  # '0' sorts right after '/'
            for row in db.execute(f"SELECT {_COLUMNS} FROM edits e WHERE e.path >= ? AND e.path < ?", (lo, hi)):
                found[row[0]] = (*row, "same")
        return list(found.values())
    out = []
    for row in db.execute(f"SELECT {_COLUMNS} FROM edits e WHERE e.name = ? COLLATE NOCASE", (paths.name_of(asked),)):
        how = paths.match_kind(row[4], asked, real)
        if how is not None:
            out.append((*row, how))
    return out


def _with_renames(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Add the changes of the old names the file was renamed from, up to each rename."""
    seen = {r[0] for r in rows}
    todo = [(r[7], r[3]) for r in rows if r[7]]
    for _ in range(MAX_RENAMES):
        if not todo:
            break
        nxt = []
        for old, when in todo:
            for row in db.execute(f"SELECT {_COLUMNS} FROM edits e WHERE e.path = ?", (old,)):
                if row[0] in seen or (when is not None and row[3] is not None and row[3] > when):
                    continue
                seen.add(row[0])
                rows.append((*row, "renamed"))
                if row[7]:
                    nxt.append((row[7], row[3]))
        todo = nxt
    return rows


class _Sessions:
    """Session documents and user prompts, each read once per answer."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.docs: dict[int, dict[str, Any]] = {}
        self.prompts: dict[int, list[tuple[int, str]]] = {}

    def doc(self, session_id: int) -> dict[str, Any]:
        if session_id not in self.docs:
            row = self.db.execute(
                "SELECT agent, sid, title, cwd, started FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                self.docs[session_id] = {"agent": None, "id": None}
            else:
                agent, sid, title, cwd, started = row
                self.docs[session_id] = {
                    "agent": agent, "id": sid, "short_id": short_id(self.db, agent, sid),
                    "title": title, "cwd": cwd, "started": started,
                }  # fmt: skip
        return self.docs[session_id]

    def prompt(self, session_id: int, seq: int) -> dict[str, Any] | None:
        """The last user message before ``seq`` in the session."""
        if session_id not in self.prompts:
            found = []
            for pseq, text, data in self.db.execute(
                "SELECT seq, text, data FROM events WHERE session_id = ? AND kind = 'text' ORDER BY seq",
                (session_id,),
            ):
                if text and decode_event(data).get("role") == "user":
                    found.append((pseq, str(text)))
            self.prompts[session_id] = found
        best = None
        for pseq, text in self.prompts[session_id]:
            if pseq >= seq:
                break
            best = (pseq, text)
        if best is None:
            return None
        text = best[1]
        return {"seq": best[0], "text": text[:PROMPT_CHARS] + ("…" if len(text) > PROMPT_CHARS else "")}


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _written(record: dict[str, Any], ops: Any) -> None:
    """A whole-file write recorded without a diff (a new file): its text as added lines."""
    if not (isinstance(ops, list) and len(ops) == 1 and isinstance(ops[0], list) and ops[0][:1] == ["write"]):
        return
    lines = [str(x) for x in ops[0][1]] if isinstance(ops[0][1], list) else []
    shown = lines[:SHOWN_LINES]
    if shown:
        record["hunks"] = [{"old_start": 0, "new_start": 1, "lines": ["+" + x for x in shown]}]
        record["numbered"] = True
        record["cut"] = len(lines) - len(shown)


def file_history(
    db: sqlite3.Connection, asked_path: str, *, limit: int = 200, replay: bool = False
) -> dict[str, Any]:
    """The recorded changes of ``asked_path``, newest first (``replay``: all of them, each with
    its replay operations, for blame)."""
    asked, real = paths.spellings(asked_path)
    folder = os.path.isdir(real)
    rows = _rows_for(db, asked, real, folder)
    if not folder:
        rows = _with_renames(db, rows)
    sessions = _Sessions(db)
    starts: dict[int, float] = {}
    for r in rows:
        if r[1] not in starts:
            starts[r[1]] = sessions.doc(r[1]).get("started") or 0.0
    # Time order: by the event's time (else its session's start), a session's own by seq.
    rows.sort(key=lambda r: (r[3] if r[3] is not None else starts[r[1]], r[1], r[2]), reverse=True)
    total = len(rows)
    keep = rows[: MAX_RECORDS if replay else limit]
    records = []
    for rid, session_id, seq, epoch, path, kind, failed, from_path, data, how in keep:
        try:
            doc = _unpack.decode(data)
        except msgspec.DecodeError:
            doc = {}
        record: dict[str, Any] = {
            "edit_id": rid,
            "session": sessions.doc(session_id),
            "seq": seq,
            "time": _iso(epoch),
            "kind": kind,
            "failed": bool(failed),
            "path": path,
            "from_path": from_path,
            "match": how,
            "tool": doc.get("tool"),
            "prompt": sessions.prompt(session_id, seq),
            "hunks": doc.get("hunks") or [],
            "numbered": bool(doc.get("numbered")),
            "cut": int(doc.get("cut") or 0),
        }
        if not record["hunks"]:
            _written(record, doc.get("ops"))
        if doc.get("command"):
            record["command"] = doc["command"]
        if replay:
            record["ops"] = doc.get("ops") or []
        records.append(record)
    ambiguous = sorted({r["path"] for r in records if r["match"] == "case"})
    return {
        "path": asked,
        "real_path": real if real != asked else None,
        "directory": folder,
        "exists": os.path.exists(real),
        "git": git_place(real) if os.path.exists(real) else None,
        "records": records,
        "total": total,
        "truncated": total > len(records),
        "other_case": ambiguous,
    }
