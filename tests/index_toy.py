"""A small JSONL agent ("toy") for the index tests, built on the real JSONL helper.

It exercises what the index must handle from real adapters: events re-emitted with the same
seq when a tool result arrives in a later read (upserts), usage records keyed per response,
parser state carried between incremental reads, unknown records and bad lines.

Line shapes:
  {"t": "meta", "id": "S", "cwd": "/p", "title": "…"}
  {"t": "msg", "role": "user", "text": "…", "ts": "…"}
  {"t": "tool", "id": "c1", "name": "Bash", "input": {…}, "ts": "…"}
  {"t": "result", "id": "c1", "output": "…" | {…}, "error": false}
  {"t": "usage", "key": "k", "model": "m", "in": 1, "out": 2, "cr": 3, "cw": 4, "ts": "…"}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.kit.jsonl import Category, JsonlAdapter, LineParser, ParserState
from agtaild.model import Event, Session, Usage, UsageRecord

REPO_TESTS = Path(__file__).resolve().parent


class ToyState(ParserState):
    tools: dict[str, int] = msgspec.field(default_factory=dict)
    tool_events: dict[int, Event] = msgspec.field(default_factory=dict)


class ToyParser(LineParser[ToyState]):
    State = ToyState

    def new_state(self) -> ToyState:
        return ToyState(session=Session(agent="toy", id=Path(self.unit.path).stem))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        st = self.st
        s = st.session
        if not isinstance(obj, dict):
            self.emit(Event(seq=-1, kind="unknown", raw=obj, source={"line": line}))
            return "events"
        t = obj.get("t")
        ts = obj.get("ts")
        if ts:
            s.started = s.started or ts
            s.ended = ts
        if t == "meta":
            s.id = obj.get("id") or s.id
            s.cwd = obj.get("cwd") or s.cwd
            s.title = obj.get("title") or s.title
            return "metadata"
        if t == "msg":
            s.messages += 1
            if s.title is None and obj.get("role") == "user":
                s.title = (obj.get("text") or "")[:80]
            self.emit(
                Event(
                    seq=-1,
                    kind="text",
                    ts=ts,
                    role=obj.get("role"),
                    text=obj.get("text"),
                    source={"line": line},
                )
            )
            return "events"
        if t == "tool":
            ev = self.emit(
                Event(
                    seq=-1,
                    kind="tool_use",
                    ts=ts,
                    role="assistant",
                    tool=obj.get("name"),
                    input=obj.get("input"),
                    tool_use_id=obj.get("id"),
                    source={"line": line},
                )
            )
            st.tools[str(obj.get("id"))] = ev.seq
            st.tool_events[ev.seq] = ev
            return "events"
        if t == "result":
            seq = st.tools.get(str(obj.get("id")))
            if seq is None:
                self.emit(
                    Event(seq=-1, kind="tool_result", ts=ts, result=obj.get("output"), source={"line": line})
                )
                return "events"
            ev = st.tool_events[seq]
            ev.result = obj.get("output")
            ev.is_error = bool(obj.get("error"))
            self.emit(ev)
            return "merged"
        if t == "usage":
            u = Usage(
                input_tokens=obj.get("in", 0),
                output_tokens=obj.get("out", 0),
                cache_read_tokens=obj.get("cr", 0),
                cache_write_tokens=obj.get("cw", 0),
            ).fix_total()
            self.add_usage(UsageRecord(key=str(obj.get("key")), ts=ts, model=obj.get("model"), usage=u))
            s.usage.add(u)
            if obj.get("model") and obj["model"] not in s.models:
                s.models.append(obj["model"])
            return "metadata"
        self.emit(Event(seq=-1, kind="unknown", ts=ts, raw=obj, source={"line": line}))
        return "events"


class ToyAdapter(JsonlAdapter):
    id: ClassVar[str] = "toy"
    appends_keep_units: ClassVar[bool] = True
    name: ClassVar[str] = "Toy Agent"
    Parser: ClassVar[type[LineParser[Any]]] = ToyParser

    def discover(self, root: Path) -> Iterator[Unit]:
        for path in sorted(root.rglob("*.jsonl")):
            yield Unit(agent="toy", path=str(path), files=[str(path)], root=str(root))


def toy_line(**fields: Any) -> str:
    return json.dumps(fields, ensure_ascii=False) + "\n"


def write_session(path: Path, lines: list[str], *, mtime: float | None = None) -> Path:
    """Write (or replace) a session file and date it in the past so it counts as settled."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    settle(path, mtime)
    return path


def append(path: Path, lines: list[str], *, mtime: float | None = None) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines))
    settle(path, mtime)


_clock = [1_700_000_000.0]


def settle(path: Path, mtime: float | None = None) -> None:
    """Give the file an old, strictly increasing mtime (a change is always visible)."""
    _clock[0] += 10
    when = mtime if mtime is not None else _clock[0]
    os.utime(path, (when, when))


def sample_lines(sid: str, n: int = 3, *, word: str = "alpha") -> list[str]:
    lines = [toy_line(t="meta", id=sid, cwd=f"/work/{sid}")]
    for i in range(n):
        ts = f"2026-01-0{1 + i % 9}T10:00:{i % 60:02d}Z"
        lines.append(toy_line(t="msg", role="user", text=f"{word} question {i} for {sid}", ts=ts))
        lines.append(
            toy_line(t="tool", id=f"{sid}-c{i}", name="Bash", input={"command": f"ls {word}{i}"}, ts=ts)
        )
        lines.append(toy_line(t="result", id=f"{sid}-c{i}", output=f"output {i} of {word}", ts=ts))
        lines.append(
            toy_line(
                t="usage",
                key=f"{sid}-k{i}",
                model="claude-sonnet-4-20250514",
                ts=ts,
                **{"in": 10, "out": 20, "cr": 30, "cw": 40},
            )
        )
    # A record the adapter does not map: an event with no text at all (still indexed: an FTS5
    # table over external content must hold every content row).
    lines.append(toy_line(t="mystery", payload={"n": n}))
    return lines


@pytest.fixture
def toy_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[ToyAdapter]:
    """Register the toy adapter (beside the built-ins that import cleanly)."""
    import importlib

    import agtaild.adapters as registry

    usable = []
    for spec in registry.BUILTIN:
        try:
            importlib.import_module(spec.partition(":")[0])
            usable.append(spec)
        except ImportError:
            pass
    adapter = ToyAdapter()
    monkeypatch.setattr(registry, "BUILTIN", usable)
    monkeypatch.setattr(registry, "_extra", [adapter])
    registry.all_adapters.cache_clear()
    yield adapter
    registry.all_adapters.cache_clear()


def toy_config(tmp: Path, root: Path, *, extra: list[Any] | None = None) -> Any:
    from agtaild.config import Config, RootSpec

    data = tmp / "data"
    roots = [RootSpec("toy", str(root)), RootSpec("toy", str(data / "archive" / "toy"), kind="archive")]
    # archive=False: a rebuilt index has no archive to compare with (tests/test_archive*.py cover it).
    return Config(data_dir=str(data), roots=roots + list(extra or []), archive=False)


def snapshot(index_path: Path) -> dict[str, Any]:
    """Everything the index holds that does not depend on the order rows were written in.

    Row ids differ between an incremental index and a rebuilt one, so rows are keyed by the
    unit path and seq / usage key. Both FTS tables are checked against their content first.
    """
    import sqlite3

    db = sqlite3.connect(str(index_path))
    try:
        db.execute("INSERT INTO events_fts(events_fts, rank) VALUES ('integrity-check', 1)")
        db.execute("INSERT INTO events_cjk(events_cjk) VALUES ('integrity-check')")
        path_of = dict(
            db.execute("SELECT s.id, f.path FROM sessions s JOIN files f ON f.id = s.file_id").fetchall()
        )
        sessions = {
            path_of[sid]: (
                agent,
                ssid,
                kind,
                coll,
                cwd,
                project,
                started,
                activity,
                prog,
                arch,
                title,
                json.loads(data),
            )
            for sid, agent, ssid, kind, coll, cwd, project, started, activity, prog, arch, title, data in db.execute(
                "SELECT id, agent, sid, kind, collection, cwd, project, started, activity, programmatic, archived, title,"
                " data FROM sessions"
            )
        }
        events = {
            (path_of[r[0]], r[1]): r[2:]
            for r in db.execute(
                "SELECT session_id, seq, kind, epoch, text, tool_input, tool_result, result_moved, data FROM events"
            )
        }
        fts_rows = db.execute("SELECT count(*) FROM events_fts").fetchone()[0]
        cjk = {
            (path_of[r[0]], r[1]): r[2:]
            for r in db.execute(
                "SELECT e.session_id, e.seq, c.text, c.tool_input FROM events_cjk c"
                " JOIN events e ON e.id = c.rowid"
            )
        }
        orphans = db.execute(
            "SELECT (SELECT count(*) FROM events_cjk WHERE rowid NOT IN (SELECT id FROM events))"
            " + (SELECT count(*) FROM events WHERE session_id NOT IN (SELECT id FROM sessions))"
            " + (SELECT count(*) FROM usage WHERE session_id NOT IN (SELECT id FROM sessions))"
            " + (SELECT count(*) FROM sessions WHERE file_id NOT IN (SELECT id FROM files))"
        ).fetchone()[0]
        usage = {
            (path_of[r[0]], r[1]): r[2:]
            for r in db.execute(
                "SELECT session_id, key, agent, epoch, day, model, input, output, cache_read, cache_write,"
                " reasoning, total, long_ctx, counted FROM usage"
            )
        }
        rollup = sorted(
            (path_of[r[0]], *r[1:])
            for r in db.execute(
                "SELECT session_id, agent, day, model, long_ctx, input, output, cache_read, cache_write, reasoning"
                " FROM usage_rollup"
            )
        )
        daily = sorted(
            db.execute(
                "SELECT day, agent, model, long_ctx, n, input, output, cache_read, cache_write, reasoning"
                " FROM usage_daily"
            )
        )
        # usage_daily is kept by difference with usage_rollup: it must equal the rollup summed.
        assert daily == sorted(
            db.execute(
                "SELECT day, agent, coalesce(model, ''), long_ctx, count(*), sum(input), sum(output),"
                " sum(cache_read), sum(cache_write), sum(reasoning) FROM usage_rollup GROUP BY 1, 2, 3, 4"
            )
        )
        totals = sorted(
            db.execute(
                "SELECT agent, model, long_ctx, n, input, output, cache_read, cache_write, reasoning"
                " FROM usage_totals"
            )
        )
        assert totals == sorted(
            db.execute(
                "SELECT agent, coalesce(model, ''), long_ctx, count(*), sum(input), sum(output),"
                " sum(cache_read), sum(cache_write), sum(reasoning) FROM usage_rollup GROUP BY 1, 2, 3"
            )
        )
        files = {
            r[0]: r[1:]
            for r in db.execute(
                "SELECT path, agent, root, kind, collection, rel, dev, ino, size, mtime_ns, fingerprint FROM files"
            )
        }
        parts = set(db.execute("SELECT p.path, f.path FROM file_parts p JOIN files f ON f.id = p.file_id"))
    finally:
        db.close()
    return {
        "sessions": sessions,
        "events": events,
        "fts_rows": fts_rows,
        "cjk": cjk,
        "orphans": orphans,
        "usage": usage,
        "rollup": rollup,
        "daily": daily,
        "totals": totals,
        "files": files,
        "parts": parts,
    }
