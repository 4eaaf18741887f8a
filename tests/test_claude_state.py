"""The saved state of a long Claude Code session: its usage memory is kept in frames that an
append neither decodes nor re-encodes (agtaild.adapters.claude.frames), reads continued from
it store what one read stores, and a state of an older layout is read again from the start."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agtaild.adapters.claude import frames as claude_frames
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude.frames import FramedMap, Frames
from agtaild.adapters.claude.state import LAYOUT, ClaudeState
from agtaild.adapters.claude.usage import MAX_REMEMBERED, SPILL
from agtaild.adapters.kit.jsonl import Continuation
from tests.claude_code_helpers import SETTLED, assistant_line, find_unit, usage_dict
from tests.replay_helpers import Store

# -- the framed map on its own -----------------------------------------------------------------

_ops = st.lists(
    st.tuples(st.sampled_from(["set", "setdefault", "get", "save"]), st.integers(0, 20), st.integers(0, 9)),
    min_size=40,
    max_size=200,
)


def _run(ops: list[tuple[str, int, int]], *, save_points: bool) -> tuple[list[Any], bytes]:
    """Apply ``ops`` to a map (spill 4, 3 frames); at each "save" (if ``save_points``) the map
    is encoded and decoded again, as between two reads. Returns what every get saw, and the
    stored form at the end."""
    stored = Frames()
    fm = FramedMap(stored, spill=4, frames=3)
    seen: list[Any] = []
    for op, k, v in ops:
        key = f"k{k}"
        if op == "set":
            fm.set(key, [v])
        elif op == "setdefault":
            fm.setdefault(key, [v])
        elif op == "get":
            seen.append(fm.get(key))
        elif save_points:
            stored = msgspec.msgpack.decode(msgspec.msgpack.encode(stored), type=Frames)
            fm = FramedMap(stored, spill=4, frames=3)
    return seen, msgspec.msgpack.encode(stored)


@contextmanager
def _union_after(n: int) -> Iterator[None]:
    """Search the filters as one after ``n`` lookups (0: always; the default: long reads only)."""
    saved = claude_frames.UNION_AFTER
    claude_frames.UNION_AFTER = n
    try:
        yield
    finally:
        claude_frames.UNION_AFTER = saved


def count_frame_decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, each frame the framed maps decode appends to the list returned."""
    decoded: list[int] = []
    real = claude_frames._frame_decoder

    class Counting:
        def decode(self, raw: Any) -> Any:
            decoded.append(1)
            return real.decode(raw)

    monkeypatch.setattr(claude_frames, "_frame_decoder", Counting())
    return decoded


@settings(max_examples=150, deadline=None)
@given(_ops, st.sampled_from([0, 5, 10**9]))
def test_saving_between_operations_changes_nothing(ops: list[tuple[str, int, int]], union_after: int) -> None:
    """Whether the map was saved and loaded between any two operations (a file read in one
    step or in many), and however its filters are searched, every lookup and the stored
    bytes are the same."""
    with _union_after(union_after):
        saved = _run(ops, save_points=True)
    assert saved == _run(ops, save_points=False)


@settings(max_examples=150, deadline=None)
@given(_ops, st.sampled_from([0, 5, 10**9]))
def test_the_newest_entries_are_remembered(ops: list[tuple[str, int, int]], union_after: int) -> None:
    """A key among the newest ``frames × spill`` inserted is found with its latest value; the
    map never holds more than ``(frames + 1) × spill``."""
    with _union_after(union_after):
        _check_newest(ops)


def _check_newest(ops: list[tuple[str, int, int]]) -> None:
    stored = Frames()
    fm = FramedMap(stored, spill=4, frames=3)
    order: list[str] = []  # keys by first insertion (an update keeps the place)
    value: dict[str, list[int]] = {}
    for op, k, v in ops:
        key = f"k{k}"
        if op in ("set", "setdefault"):
            present = fm.get(key) is not None
            if op == "set" or not present:
                fm.set(key, [v])
            if not present:  # new, or dropped earlier: now the newest
                if key in order:
                    order.remove(key)
                order.append(key)
                value[key] = [v]
            elif op == "set":
                value[key] = [v]
        held = [key for key in order if fm.get(key) is not None]
        assert len(held) <= 4 * 4 and len(fm) == len(held)
        for key in order[-12:]:
            assert fm.get(key) == value[key]
        # Dropped keys are the oldest ones, and they stay dropped until inserted again.
        assert held == order[len(order) - len(held) :]


def test_an_update_in_an_old_frame_is_saved() -> None:
    stored = Frames()
    fm = FramedMap(stored, spill=2, frames=4)
    for i in range(6):
        fm.set(f"k{i}", [i])
    fm.set("k1", [100])  # in the first frame
    fm.set("k6", [6])
    stored = msgspec.msgpack.decode(msgspec.msgpack.encode(stored), type=Frames)
    fm = FramedMap(stored, spill=2, frames=4)
    assert [fm.get(f"k{i}") for i in range(7)] == [[0], [100], [2], [3], [4], [5], [6]]
    assert len(stored.frames) == 3 and stored.recent == {"k6": [6]}


def test_a_lookup_of_a_new_key_decodes_no_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = Frames()
    fm = FramedMap(stored, spill=8, frames=4)
    for i in range(40):
        fm.set(f"key-{i}", [i])
    stored = msgspec.msgpack.decode(msgspec.msgpack.encode(stored), type=Frames)
    decoded = count_frame_decodes(monkeypatch)
    fm = FramedMap(stored, spill=8, frames=4)
    for i in range(100, 140):
        assert fm.get(f"key-{i}") is None
        fm.set(f"key-{i}", [i])
    assert decoded == []  # only CRC filters were searched (false positives: 1 in ~10⁸ here)
    assert fm.get("key-20") is None  # dropped with its frame (4 frames of 8 hold the newest 32)
    assert fm.get("key-110") == [110]  # a key of an older frame: that frame is decoded
    assert decoded == [1]


# -- the Claude parser state -------------------------------------------------------------------


def _write(path: Path, lines: list[dict[str, Any]], mode: str = "w") -> None:
    with open(path, mode) as fh:
        fh.write("".join(json.dumps(line) + "\n" for line in lines))


def _responses(start: int, stop: int) -> list[dict[str, Any]]:
    """Responses written as Claude writes them: split over two lines, a sidechain replay of
    an older response under another request id now and then, a line without a message id."""
    lines: list[dict[str, Any]] = []
    for i in range(start, stop):
        lines.append(assistant_line(f"u{i}a", f"m{i}", f"r{i}", usage_dict(10, 1, 5, 1)))
        lines.append(assistant_line(f"u{i}b", f"m{i}", f"r{i}", usage_dict(10, 7, 5, 1)))
        if i % 97 == 50:  # a replay of a response ~40 and ~300 responses back (another frame)
            for back in (40, 300):
                if i - back >= 0:
                    lines.append(assistant_line(f"u{i}s{back}", f"m{i - back}", f"rs{i}",
                                                usage_dict(99, 99), sidechain=True))  # fmt: skip
        if i % 211 == 0:
            lines.append(assistant_line(f"u{i}n", None, None, usage_dict(1, 1)))
        if i % 89 == 7:  # a response seen first as a sidechain copy; its main copy 267 later wins
            lines.append(assistant_line(f"u{i}x", f"side{i}", "rx", usage_dict(3, 3), sidechain=True))
            if i >= 267:
                lines.append(assistant_line(f"u{i}y", f"side{i - 267}", "main", usage_dict(4, 4)))
    return lines


def test_long_session_read_in_steps_equals_one_read(tmp_path: Path) -> None:
    """Well over MAX_REMEMBERED responses with replays across frames: reads continued from the
    saved state at many places store what one read stores (usage, totals, the state itself)."""
    n = MAX_REMEMBERED + 3 * SPILL + 17
    lines = _responses(0, n)
    root = tmp_path / "projects"
    path = root / "-w" / "long.jsonl"
    path.parent.mkdir(parents=True)
    adapter = ClaudeCodeAdapter()
    _write(path, lines)
    unit = find_unit(adapter, root, path)
    whole = Store()
    whole.apply(adapter.read(unit, None, now=SETTLED))
    sides = len(range(7, n, 89))
    assert len(whole.usage) == n + n // 211 + 1 + sides
    stepped = Store()
    _write(path, [])
    start = 0
    for stop in [1, 2, 300, 301, 1000, SPILL * 5 + 3, 3000, MAX_REMEMBERED + 1, len(lines) - 1, len(lines)]:
        _write(path, lines[start:stop], "a")
        result = adapter.read(unit, stepped.state, now=SETTLED)
        assert not result.reset or start == 0
        stepped.apply(result)
        start = stop
    assert stepped.usage == whole.usage
    assert stepped.session == whole.session
    assert stepped.state == whole.state
    # The replays were merged into the responses they copy: each was counted once, as main.
    mains = len(range(274, n, 89))
    assert whole.session["usage"]["input_tokens"] == 10 * n + n // 211 + 1 + 3 * sides + mains
    assert whole.session["usage"]["input_tokens"] == sum(
        r["usage"]["input_tokens"] for r in whole.usage.values()
    )
    assert whole.usage["side7:rx"]["usage"]["input_tokens"] == 4  # the main copy, 267 responses later


def test_an_appended_response_decodes_no_frame(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "projects"
    path = root / "-w" / "long.jsonl"
    path.parent.mkdir(parents=True)
    adapter = ClaudeCodeAdapter()
    _write(path, _responses(0, 3 * SPILL))
    unit = find_unit(adapter, root, path)
    store = Store()
    store.apply(adapter.read(unit, None, now=SETTLED))
    decoded = count_frame_decodes(monkeypatch)
    _write(path, _responses(3 * SPILL, 3 * SPILL + 5), "a")
    result = adapter.read(unit, store.state, now=SETTLED)
    assert not result.reset and len(result.usage) == 5
    assert decoded == []
    # A sidechain replay of a response in an old frame is matched (its frame decoded).
    _write(path, [assistant_line("late", "m3", "r-late", usage_dict(50, 50), sidechain=True)], "a")
    store.apply(result)
    result = adapter.read(unit, store.state, now=SETTLED)
    assert result.usage == [] and decoded == [1]


def _old_layout(state: bytes) -> bytes:
    """The same saved state as the code before LAYOUT wrote it: the usage maps as plain dicts,
    the uuid hashes as a set, no ``layout`` field."""
    cont = msgspec.msgpack.decode(state, type=Continuation)
    doc = msgspec.msgpack.decode(cont.parser)
    del doc["layout"], doc["usage"], doc["uuid_hashes"]
    doc.update(usage_seen={"m1:r1": [1, 2, 3, 4, 0]}, usage_by_message={"m1": "m1:r1"},
               usage_totals=[1, 2, 3, 4], seen_uuids=[1, 2, 3])  # fmt: skip
    cont.parser = msgspec.msgpack.encode(doc)
    return msgspec.msgpack.encode(cont)


@pytest.mark.parametrize("layout", ["old", "other"])
def test_a_state_of_another_layout_is_read_from_the_start(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "projects"
    path = root / "-w" / "s.jsonl"
    path.parent.mkdir(parents=True)
    adapter = ClaudeCodeAdapter()
    _write(path, _responses(0, 30))
    unit = find_unit(adapter, root, path)
    first = adapter.read(unit, None, now=SETTLED)
    assert first.state is not None
    if layout == "old":
        state = _old_layout(first.state)
    else:
        cont = msgspec.msgpack.decode(first.state, type=Continuation)
        parser = msgspec.msgpack.decode(cont.parser, type=ClaudeState)
        assert parser.layout == LAYOUT
        parser.layout = LAYOUT + 1
        cont.parser = msgspec.msgpack.encode(parser)
        state = msgspec.msgpack.encode(cont)
    _write(path, _responses(30, 35), "a")
    again = adapter.read(unit, state, now=SETTLED)
    assert again.reset  # read from the start: the stored rows are replaced, nothing double counted
    whole = adapter.read(unit, None, now=SETTLED)
    assert again.state == whole.state
    assert [r.key for r in again.usage] == [r.key for r in whole.usage]
    assert again.session.usage == whole.session.usage


# -- through the index -------------------------------------------------------------------------


def _index(data: Path, root: Path) -> dict[str, Any]:
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service
    from tests.index_toy import snapshot

    svc = Service(Config(data_dir=str(data), roots=[RootSpec("claude-code", str(root))], archive=False))
    try:
        report = svc.update_index()
        assert report["errors"] == []
    finally:
        svc.close()
    return snapshot(svc.config.index_path)


def test_an_index_of_old_states_updates_like_a_rebuild(corpus: Path, tmp_path: Path) -> None:
    """An index whose Claude states were saved by the older layout: after appends, one update
    stores exactly what a clean index of the same files stores (each such file is read again
    from the start once; nothing is counted twice)."""
    import shutil
    import sqlite3

    from agtaild.index import statepack

    root = tmp_path / "projects"
    shutil.copytree(corpus / "claude-code/spotter/projects", root)
    data = tmp_path / "data"
    _index(data, root)
    db = sqlite3.connect(str(data / "index.sqlite3"))
    try:
        rows = db.execute(
            "SELECT id, state FROM files WHERE agent = 'claude-code' AND state IS NOT NULL"
        ).fetchall()
        assert rows
        for file_id, stored in rows:
            state = statepack.unpack(stored)
            assert state is not None
            db.execute(
                "UPDATE files SET state = ? WHERE id = ?", (statepack.pack(_old_layout(state)), file_id)
            )
        db.commit()
    finally:
        db.close()
    files = sorted(root.rglob("*.jsonl"))
    for path in files[:3]:
        _write(path, _responses(0, 3), "a")
    got = _index(data, root)
    expected = _index(tmp_path / "fresh", root)
    assert got == expected


def test_a_summary_titles_a_leaf_of_an_earlier_read(tmp_path: Path) -> None:
    """The message uuid hashes are kept packed; a ``summary`` line of a later read still finds
    its leaf among them (and one whose leaf is not a message here does not title)."""
    root = tmp_path / "projects"
    path = root / "-w" / "s.jsonl"
    path.parent.mkdir(parents=True)
    adapter = ClaudeCodeAdapter()
    first = {"type": "user", "uuid": "leaf-1", "parentUuid": None, "sessionId": "s", "isSidechain": False,
             "timestamp": "2026-03-01T10:00:00.000Z", "message": {"role": "user", "content": "hello there"}}  # fmt: skip
    _write(path, [first, *_responses(0, 3)])
    unit = find_unit(adapter, root, path)
    store = Store()
    store.apply(adapter.read(unit, None, now=SETTLED))
    assert store.session["title"] == "hello there"
    _write(path, [{"type": "summary", "summary": "Not ours", "leafUuid": "elsewhere"}], "a")
    store.apply(adapter.read(unit, store.state, now=SETTLED))
    assert store.session["title"] == "hello there"
    _write(path, [{"type": "summary", "summary": "Greeting", "leafUuid": "leaf-1"}], "a")
    result = adapter.read(unit, store.state, now=SETTLED)
    assert not result.reset and result.session.title == "Greeting"
    store.apply(result)
    assert store.state == adapter.read(unit, None, now=SETTLED).state


def test_a_continuation_of_the_older_form_still_continues(tmp_path: Path) -> None:
    """Indexes before 2026-12 hold the parser state as a msgpack bin inside the continuation;
    the state written now is inline. Both continue the same way (no read from the start)."""
    from agtaild.adapters.kit.jsonl import parser_bytes

    root = tmp_path / "projects"
    path = root / "-w" / "s.jsonl"
    path.parent.mkdir(parents=True)
    adapter = ClaudeCodeAdapter()
    _write(path, _responses(0, 40))
    unit = find_unit(adapter, root, path)
    state = adapter.read(unit, None, now=SETTLED).state
    assert state is not None
    cont = msgspec.msgpack.decode(state, type=Continuation)
    assert memoryview(cont.parser)[0] not in (0xC4, 0xC5, 0xC6)  # inline, not a bin
    older = msgspec.msgpack.encode(msgspec.structs.replace(cont, parser=bytes(parser_bytes(cont))))
    assert len(older) > len(state) and msgspec.msgpack.decode(older)["parser"] == bytes(cont.parser)
    _write(path, _responses(40, 45), "a")
    new, old = adapter.read(unit, state, now=SETTLED), adapter.read(unit, older, now=SETTLED)
    assert not new.reset and not old.reset
    assert new.state == old.state and [r.key for r in new.usage] == [r.key for r in old.usage]
    assert msgspec.structs.asdict(new.session) == msgspec.structs.asdict(old.session)


@pytest.mark.parametrize("damage", ["frame", "filter", "uuid hashes"])
def test_a_damaged_frame_means_a_read_from_the_start(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "projects"
    path = root / "-w" / "s.jsonl"
    path.parent.mkdir(parents=True)
    adapter = ClaudeCodeAdapter()
    _write(path, _responses(0, 2 * SPILL))
    unit = find_unit(adapter, root, path)
    state = adapter.read(unit, None, now=SETTLED).state
    assert state is not None
    cont = msgspec.msgpack.decode(state, type=Continuation)
    parser = msgspec.msgpack.decode(cont.parser, type=ClaudeState)
    frames = parser.usage.responses
    assert frames.frames
    if damage == "frame":
        frames.frames = [b"\xc1" for _ in frames.frames]
    elif damage == "filter":
        frames.filters = [b"abc" for _ in frames.filters]
    else:
        parser.uuid_hashes += b"\x01"
    damaged = msgspec.msgpack.encode(msgspec.structs.replace(cont, parser=msgspec.msgpack.encode(parser)))
    # A replay of an old response (its frame is looked up) and, for the uuid hashes, a summary.
    extra = [assistant_line("again", "m3", "r-again", usage_dict(9, 9), sidechain=True)]
    extra.append({"type": "summary", "summary": "Title", "leafUuid": "u1a"})
    _write(path, extra, "a")
    result = adapter.read(unit, damaged, now=SETTLED)
    whole = adapter.read(unit, None, now=SETTLED)
    assert result.reset == (damage != "uuid hashes")  # a torn hash column: its whole values serve
    if result.reset:
        assert [r.key for r in result.usage] == [r.key for r in whole.usage]
    else:
        assert result.usage == []  # the replay matched its response: nothing counted twice
    assert result.session.usage == whole.session.usage and result.session.title == whole.session.title
