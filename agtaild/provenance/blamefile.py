"""Blame of one file: its text as it is now (or as of a commit), its history replayed
(agtaild.provenance.replay), one attribution per line.

Bad input gets a plain answer, never a traceback: a missing file (its history may still be
there), a folder, a binary file (a NUL byte in its first 8 KB), a file over
:data:`MAX_BYTES`, undecodable bytes (read as UTF-8 with replacement characters: those lines
cannot match a record and show as not recorded).
"""

from __future__ import annotations

import os
from typing import Any

from agtaild.errors import UsageError
from agtaild.provenance.replay import UNKNOWN, Change, blame

#: Files larger than this are not blamed (the line matching grows with the file).
MAX_BYTES = 16 * 1024 * 1024
_SNIFF = 8192


def read_text(path: str) -> str:
    """The file's text, or a UsageError that says why it cannot be blamed."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file (`agtail history` still shows its recorded changes)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder: blame takes a file (`agtail history` takes folders)")
    if size > MAX_BYTES:
        raise UsageError(f"{path}: {size / 2**20:.1f} MB is too large to blame (the limit is {MAX_BYTES // 2**20} MB)")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return text_of(data, path)


def text_of(data: bytes, name: str) -> str:
    if b"\x00" in data[:_SNIFF]:
        raise UsageError(f"{name}: a binary file; blame works on text")
    return data.decode("utf-8", errors="replace")


def changes_of(records: list[dict[str, Any]]) -> list[Change]:
    """``files.history`` records (asked with ``replay``, oldest first) as replay changes."""
    return [Change(kind=str(r.get("kind")), ops=list(r.get("ops") or []), failed=bool(r.get("failed"))) for r in records]


def blame_doc(history: dict[str, Any], text: str, *, start: int = 1, end: int | None = None) -> dict[str, Any]:
    """Each line of ``text`` (lines ``start``..``end``, 1-based, inclusive) with the record that
    last wrote it, from a ``files.history`` answer asked with ``replay``."""
    records = list(reversed(history.get("records") or []))  # oldest first
    changes = changes_of(records)
    lines = text.splitlines()
    result = blame(changes, lines)
    last = len(lines) if end is None else min(end, len(lines))
    if start < 1 or (start > max(last, 1) and lines):
        raise UsageError(f"-L {start},{end}: the file has {len(lines)} lines")
    out = []
    for n in range(start, last + 1):
        origin = result.origins[n - 1]
        line: dict[str, Any] = {"line": n, "text": lines[n - 1]}
        if origin == UNKNOWN:
            line["record"] = None
        else:
            r = records[origin]
            ambiguous = result.ambiguous[n - 1] or r.get("match") == "case"
            line["record"] = origin
            line["ambiguous"] = ambiguous
        out.append(line)
    used = sorted({x["record"] for x in out if x["record"] is not None})
    shown = {
        i: {k: v for k, v in records[i].items() if k not in ("ops", "hunks")} for i in used
    }
    notes = [
        {"record": i, "note": o.note} for i, o in enumerate(result.outcomes) if o.note and not records[i].get("failed")
    ]
    attributed = sum(1 for x in out if x["record"] is not None)
    return {
        "path": history.get("path"),
        "lines": out,
        "records": {str(i): rec for i, rec in shown.items()},
        "attributed": attributed,
        "not_recorded": len(out) - attributed,
        "changes": len(records),
        "notes": notes,
    }
