"""Events are stored by position; a changed Event layout rebuilds the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec

from agtaild.index.codec import decode_event, encode_event
from agtaild.model import Event, HookInfo, Usage
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, sample_lines, toy_config, toy_registry, write_session

__all__ = ["toy_registry"]


def test_an_event_round_trips_with_every_field_in_order() -> None:
    ev = Event(
        seq=7,
        kind="tool_use",
        ts="2026-01-01T00:00:00Z",
        role="assistant",
        tool="Bash",
        input={"command": "ls", "n": [1, 2.5, None, True]},
        result={"stdout": "x"},
        is_error=False,
        hook=HookInfo(event="PreToolUse", command="check.sh"),
        model="m",
        usage=Usage(input_tokens=3, total_tokens=3),
        source={"line": 4},
        extra={"k": {"deep": "v"}},
    )
    doc = decode_event(encode_event(ev))
    assert doc == msgspec.to_builtins(ev)
    assert list(doc) == list(msgspec.to_builtins(ev))


def test_values_msgpack_cannot_hold_fall_back_to_json() -> None:
    ev = Event(seq=1, kind="unknown", raw={"huge": 2**70})
    data = encode_event(ev)
    assert data[:1] == b"{"
    assert decode_event(data)["raw"] == {"huge": 2**70}


def test_rows_of_an_older_shorter_layout_get_defaults() -> None:
    short = msgspec.msgpack.encode([1, "text", None, "user"])
    doc = decode_event(short)
    assert doc["seq"] == 1 and doc["role"] == "user" and doc["extra"] == {} and doc["sidechain"] is False
    assert list(doc) == list(msgspec.to_builtins(Event(seq=0, kind="")))


def test_a_changed_event_layout_rebuilds_the_index(tmp_path: Path, toy_registry: ToyAdapter) -> None:
    root = tmp_path / "root"
    write_session(root / "A.jsonl", sample_lines("A", 2))
    config = toy_config(tmp_path, root)
    svc = Service(config)
    svc.update_index()
    svc.close()
    db = sqlite3.connect(config.index_path)
    db.execute("UPDATE meta SET value = 'older' WHERE key = 'event_layout'")
    db.commit()
    db.close()
    svc = Service(config)
    try:
        assert svc.call("sessions.list", {})["sessions"] == []
        svc.update_index()
        events = svc.call("events.list", {"agent": "toy", "id": "A"})["events"]
        assert [e["seq"] for e in events] == list(range(len(events))) and events[0]["text"]
    finally:
        svc.close()
