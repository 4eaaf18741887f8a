"""What every non-Claude adapter reads from every sample in tests/corpus, as one digest per
adapter: the before/after check for changes to how adapters read (speed work must not change
a single mapped field).

The digest covers, for every unit found under any folder of the corpus, the read's session
summary, events and usage records — the fields that exist now (fields added later are not
part of it), with the corpus location replaced by ``<CORPUS>``, file mtimes left out and
Aider's per-path file digest replaced, so a checkout anywhere gives the same digests.

When a mapping is changed on purpose, regenerate the expected digests and say so in the commit:
``.venv/bin/python -m tests.adapter_reads --write``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters import all_adapters
from agtaild.adapters.aider.adapter import file_digest
from agtaild.adapters.base import Adapter, Unit

CORPUS = Path(__file__).resolve().parent / "corpus"
EXPECTED = Path(__file__).resolve().parent / "fixtures" / "adapter_reads.json"
#: Far after every sample was written: every file counts as settled, every idle session as idle.
NOW = 2_000_000_000.0
#: The mtime every file of the corpus copy gets (2026-01-15).
PINNED_MTIME = 1_768_435_200
SKIP = ("claude-code",)  # (Claude's reader has its own exactness tests)

SESSION_FIELDS = (
    "agent", "id", "path", "title", "cwd", "project", "git_branch", "models", "started", "ended", "messages",
    "usage", "origin", "programmatic", "parent", "imported", "collection", "archived", "bad_lines", "truncated",
    "ending", "compactions", "resumable", "accounting", "first_prompt", "version", "plugin", "forked_from",
    "bad_line_numbers", "extra",
)  # fmt: skip
EVENT_FIELDS = (
    "seq", "kind", "ts", "role", "text", "tool", "input", "result", "is_error", "hook", "model", "usage", "uuid",
    "parent_uuid", "source", "raw", "tool_use_id", "sidechain", "subtype", "extra",
)  # fmt: skip
USAGE_FIELDS = ("key", "ts", "model", "usage")


def _pick(obj: Any, fields: tuple[str, ...]) -> list[Any]:
    return [getattr(obj, f) for f in fields]


def units_of(adapter: Adapter, corpus: Path) -> dict[str, Unit]:
    """Every unit the adapter finds under any folder (or database file) of the corpus."""
    roots = [corpus, *sorted(p for p in corpus.rglob("*") if p.is_dir() or p.suffix == ".db")]
    found: dict[str, Unit] = {}
    for root in roots:
        try:
            for unit in adapter.discover(root):
                found.setdefault(unit.path, unit)
        except Exception:  # a root of another agent may not suit this one
            continue
    return found


def read_digest(adapter: Adapter, corpus: Path) -> tuple[int, str]:
    """(number of units, sha256 of every unit's normalised read)."""
    units = units_of(adapter, corpus)
    h = hashlib.sha256()
    here = str(corpus.resolve()).encode()
    for path in sorted(units):
        unit = units[path]
        try:
            r = adapter.read(unit, None, now=NOW)
            blob = msgspec.json.encode(
                [
                    _pick(r.session, SESSION_FIELDS),
                    [_pick(e, EVENT_FIELDS) for e in r.events],
                    [_pick(u, USAGE_FIELDS) for u in r.usage],
                    r.reset,
                    r.marks,
                ]
            )
        except Exception as exc:  # an error is part of what is compared
            blob = f"{type(exc).__name__}: {exc}".encode()
        blob = blob.replace(here, b"<CORPUS>")
        if adapter.id == "aider":
            history = str(unit.hints.get("file") or path.rsplit("#", 1)[0])
            blob = blob.replace(file_digest(history).encode(), b"<DIGEST>")
        key = path.encode().replace(here, b"<CORPUS>")
        if adapter.id == "aider":
            key = key.replace(file_digest(history).encode(), b"<DIGEST>")
        h.update(key + b"\0" + blob + b"\n")
    return len(units), h.hexdigest()


def pinned_copy(corpus: Path, dest: Path) -> Path:
    """A copy of the corpus whose every file has the same mtime: sessions without times of
    their own take their file's (a checkout's mtimes are the time of the checkout)."""
    shutil.copytree(corpus, dest, symlinks=True)
    for path in sorted(dest.rglob("*"), reverse=True):
        if not path.is_symlink():
            os.utime(path, (PINNED_MTIME, PINNED_MTIME))
    os.utime(dest, (PINNED_MTIME, PINNED_MTIME))
    return dest


def digests(corpus: Path) -> dict[str, list[Any]]:
    return {a.id: list(read_digest(a, corpus)) for a in all_adapters() if a.id not in SKIP}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        found = digests(pinned_copy(CORPUS, Path(tmp) / "corpus"))
    if sys.argv[1:] == ["--write"]:
        EXPECTED.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"wrote {EXPECTED}")
    else:
        print(json.dumps(found, indent=1, sort_keys=True))
