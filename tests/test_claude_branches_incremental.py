"""Incremental branch marks (agtaild.adapters.claude.branches, claude_tree): after any sequence
of appends, a forked session's marks, summary and usage equal a read from the start; an append
that continues the active branch neither decodes the saved tree nor re-marks stored events."""

from __future__ import annotations

import random
import shutil
import uuid as uuidlib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agtaild.adapters.claude import tree as claude_tree
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude.state import ClaudeState
from agtaild.adapters.kit.jsonl import Continuation
from tests.claude_code_helpers import SETTLED, find_unit
from tests.claude_rewind import SESSION_ID, answer, last_uuid, prompt, sample_lines, write_lines
from tests.conftest import CORPUS
from tests.replay_helpers import Store, line_cuts, read_once, replay_growing_file

#: The corpus's Claude Code sessions that were rewound (each has a fork and marked events).
SAMPLE_DIR = (
    CORPUS / "claude-code" / "claude-code-log" / "projects" / "-Users-dain-workspace-claude-code-log-sample"
)
FORKED_SAMPLES = [
    SAMPLE_DIR / f"{name}.jsonl"
    for name in (
        "12a546d1-83a7-49a6-abba-5400db340b43",
        "71c9afe9-d9cc-4583-86b3-e62ba682b83a",
        "937c6e6b-27e7-4edd-86f1-ad28f9731841",
        "cbc0f75b-b36d-4efd-a7da-ac800ea30eb6",
    )
]


def _marked(store: Store) -> int:
    return sum(1 for e in store.events.values() if "branch" in e["extra"])


@pytest.mark.parametrize("settled", [True, False], ids=["settled", "being-written"])
@pytest.mark.parametrize("sample", FORKED_SAMPLES, ids=lambda p: p.name[:8])
def test_corpus_samples_with_rewinds_line_by_line(sample: Path, settled: bool, tmp_path: Path) -> None:
    adapter = ClaudeCodeAdapter()
    root = tmp_path / "projects"
    dst = root / sample.parent.name / sample.name
    dst.parent.mkdir(parents=True)
    shutil.copy(sample, dst)
    whole = read_once(adapter, find_unit(adapter, root, dst), now=SETTLED)
    assert whole.session["extra"]["forks"] and _marked(whole) > 0
    step = replay_growing_file(
        adapter, sample, dst, line_cuts(sample.read_bytes()), find_unit(adapter, root, dst), settled=settled
    )
    assert step.snapshot() == whole.snapshot()


def _state(store: Store) -> ClaudeState:
    assert store.state is not None
    cont = msgspec.msgpack.decode(store.state, type=Continuation)
    return msgspec.msgpack.decode(cont.parser, type=ClaudeState)


class Session:
    """A generated rewound session, grown step by step; every step is checked against a read
    from the start."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "projects"
        self.path = self.root / "-tmp-rt-claude-home-src-demo-app" / f"{SESSION_ID}.jsonl"
        self.adapter = ClaudeCodeAdapter()
        self.store = Store()
        write_lines(self.path, sample_lines())
        self.leaf = last_uuid()
        self.prompts: list[str] = []
        self.read()

    def read(self) -> Any:
        unit = find_unit(self.adapter, self.root, self.path)
        result = self.adapter.read(unit, self.store.state, now=SETTLED)
        self.store.apply(result)
        whole = read_once(self.adapter, unit, now=SETTLED)
        assert self.store.snapshot() == whole.snapshot()
        return result

    def turn(self, text: str, parent: str | None = None) -> list[dict[str, Any]]:
        p = prompt(text, self.leaf if parent is None else parent)
        a = answer(f"answer to {text}", p["uuid"])
        self.prompts.append(p["uuid"])
        self.leaf = a["uuid"]
        return [p, a]

    def append(self, lines: list[dict[str, Any]]) -> Any:
        write_lines(self.path, lines, append=True)
        return self.read()


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a saved tree was decoded (the recompute path)."""
    calls: list[int] = []
    real = claude_tree.Tree.decode.__func__  # type: ignore[attr-defined]

    def spy(cls: type[claude_tree.Tree], raw: bytes) -> claude_tree.Tree:
        calls.append(len(raw))
        return real(cls, raw)  # type: ignore[no-any-return]

    monkeypatch.setattr(claude_tree.Tree, "decode", classmethod(spy))
    return calls


def test_continuing_a_forked_session_keeps_every_stored_mark(tmp_path: Path, decodes: list[int]) -> None:
    s = Session(tmp_path)
    fork_at = s.leaf
    s.append(s.turn("first try"))
    s.append(s.turn("second try", parent=fork_at))  # a rewind: read again from the start once
    assert _state(s.store).branches.forked
    decodes.clear()
    for i in range(30):
        result = s.append(s.turn(f"continue {i}"))
        assert not result.reset and not result.marks
        assert {e.extra.get("branch") for e in result.events} == {"active"}
    assert decodes == [], "a plain continuation decoded the saved tree"
    # Several turns in one append, a sidechain line and a parentless stray record included.
    lines = s.turn("batch 1") + s.turn("batch 2")
    side = dict(lines[1], uuid=str(uuidlib.uuid4()), parentUuid=lines[1]["uuid"], isSidechain=True)
    s.append([*lines, side])
    assert decodes == []


def test_rewinds_and_leaf_moves_recompute_and_equal_a_full_read(tmp_path: Path, decodes: list[int]) -> None:
    s = Session(tmp_path)
    start = s.leaf
    s.append(s.turn("one"))
    s.append(s.turn("one, again", parent=start))  # first fork: a full read
    branch_b = s.leaf
    for i in range(5):
        s.append(s.turn(f"b{i}"))
    decodes.clear()
    # Back to the first branch: every mark of both branches flips (a recompute).
    first_prompt = s.prompts[0]
    result = s.append(s.turn("continue the first try", parent=first_prompt))
    assert decodes and result.marks
    # A second rewind of the same prompt: a third alternative.
    decodes.clear()
    s.append(s.turn("one, a third time", parent=start))
    assert decodes
    # Then plain continuations again take the cheap way.
    decodes.clear()
    s.append(s.turn("go on"))
    assert decodes == []
    # A rewind of the very first prompt (a second parentless prompt).
    s.append([prompt("restart", None)])
    s.leaf = branch_b
    s.append(s.turn("back on b"))
    assert _marked(s.store) > 0


def test_random_appends_equal_a_full_read(tmp_path: Path) -> None:
    """Random turns, rewinds to random earlier prompts, parentless restarts and stray lines,
    appended in random batches (each checked against a read from the start in Session.read)."""
    rng = random.Random(13)
    s = Session(tmp_path)
    starts = [s.leaf]
    for step in range(40):
        lines: list[dict[str, Any]] = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.6 or not s.prompts:
                lines += s.turn(f"turn {step}")
            elif roll < 0.8:
                lines += s.turn(f"rewind {step}", parent=rng.choice(starts + s.prompts))
            elif roll < 0.85:
                p = prompt(f"restart {step}", None)
                lines.append(p)
                s.leaf = p["uuid"]
            else:  # a progress-like line hanging off an older record
                lines.append(dict(answer(f"late {step}", rng.choice(s.prompts)), type="assistant"))
        s.append(lines)
    assert _state(s.store).branches.forked and _marked(s.store) > 0


def test_a_state_from_before_the_saved_tree_is_read_again_once(tmp_path: Path) -> None:
    """A forked state written by an older layout (no saved tree) makes one read from the start."""
    s = Session(tmp_path)
    fork_at = s.leaf
    s.append(s.turn("a"))
    s.append(s.turn("b", parent=fork_at))
    st = _state(s.store)
    st.branches.version = 1
    cont = msgspec.msgpack.decode(s.store.state, type=Continuation)  # type: ignore[arg-type]
    s.store.state = msgspec.msgpack.encode(msgspec.structs.replace(cont, parser=msgspec.msgpack.encode(st)))
    result = s.append(s.turn("c"))
    assert result.reset
    assert not s.append(s.turn("d")).reset


def test_a_parent_written_after_its_child_in_one_append(tmp_path: Path) -> None:
    """A record naming as its parent one written later in the same append: the saved tree
    keeps it (a frame of the older layout stored a forward index it could not decode again,
    so the next rewind failed the read), and every read equals a read from the start."""
    s = Session(tmp_path)
    fork_at = s.leaf
    s.append(s.turn("a"))
    s.append(s.turn("b", parent=fork_at))
    later, child = str(uuidlib.uuid4()), str(uuidlib.uuid4())
    s.append([answer("child", later, uid=child), answer("parent", s.leaf, uid=later)])
    s.leaf = child
    s.append(s.turn("c"))
    s.append(s.turn("a rewind", parent=fork_at))  # decodes the saved tree
    s.append(s.turn("d"))
    assert _marked(s.store) > 0


def test_a_damaged_saved_tree_means_a_read_from_the_start(tmp_path: Path) -> None:
    s = Session(tmp_path)
    fork_at = s.leaf
    s.append(s.turn("a"))
    s.append(s.turn("b", parent=fork_at))
    st = _state(s.store)
    assert st.branches.tree
    for damaged in (
        st.branches.tree[:-3],
        b"\x05\x00\x00\x00" + b"\x95" * 5,
        st.branches.tree + b"\x01\x00\x00\x00\xc1",
    ):
        st.branches.tree = damaged
        cont = msgspec.msgpack.decode(s.store.state, type=Continuation)  # type: ignore[arg-type]
        state = msgspec.msgpack.encode(msgspec.structs.replace(cont, parser=msgspec.msgpack.encode(st)))
        s.store.state = state
        result = s.append(s.turn("a rewind", parent=fork_at))  # needs the tree: read from the start
        assert result.reset
        st = _state(s.store)


_uuid_or_id = st.one_of(st.uuids().map(str), st.text(max_size=40), st.uuids().map(lambda u: str(u).upper()))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_tree_frames_decode_to_the_tree_written(data: st.DataObject) -> None:
    """Frames of any nodes (canonical uuids or other ids; parents before, after, outside the
    tree or none; typed prompts anywhere) and owners, appended in several pieces or written
    whole, decode to the same tree."""
    ids = data.draw(st.lists(_uuid_or_id, min_size=1, max_size=40, unique=True))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=4)))
    parents: list[Any] = [
        data.draw(st.one_of(st.none(), st.integers(0, len(ids) - 1), st.text(max_size=10))) for _ in ids
    ]
    heads = [data.draw(st.booleans()) for _ in ids]
    owners = data.draw(st.dictionaries(st.integers(0, 500), st.integers(0, len(ids) - 1), max_size=30))
    raw = b""
    for start, stop in zip([0, *cuts], [*cuts, len(ids)], strict=True):
        nodes = []
        for i in range(start, stop):
            p = parents[i]
            ok = type(p) is int and p < stop  # an index only for a node written by then
            nodes.append((ids[i], p if ok else (ids[p] if type(p) is int else p), heads[i]))
        part = [x for seq in sorted(owners) if start <= owners[seq] < stop for x in (seq, owners[seq])]
        raw += claude_tree.frame(nodes, part, start)
    tree = claude_tree.Tree.decode(raw)
    want_parents = [ids[p] if type(p) is int else p for p in parents]
    assert (tree.uuids, tree.parents, tree.heads, tree.owner) == (ids, want_parents, heads, owners)
    again = claude_tree.Tree.decode(tree.encode())
    assert (again.uuids, again.parents, again.heads, again.owner) == (ids, want_parents, heads, owners)


def test_a_record_written_again_keeps_every_stored_mark(tmp_path: Path, decodes: list[int]) -> None:
    """A line whose uuid the session already has (Claude Code writes some records twice) is a
    known node: no decode of the saved tree and no re-mark (it was a full recompute, 1.6-2 s on
    a 48 MB session), and the marks still equal a read from the start (Session.read)."""
    s = Session(tmp_path)
    fork_at = s.leaf
    s.append(s.turn("first try"))
    s.append(s.turn("second try", parent=fork_at))
    for i in range(5):
        s.append(s.turn(f"continue {i}"))
    last_prompt, last_answer = s.turn("the newest")
    s.append([last_prompt, last_answer])
    decodes.clear()
    result = s.append([last_answer])  # the newest record, written again
    assert not result.reset and not result.marks and decodes == []
    result = s.append([dict(last_prompt), dict(last_answer)])  # a prompt and its answer again
    assert not result.reset and not result.marks and decodes == []
    # Then the session goes on the cheap way.
    s.append(s.turn("go on"))
    assert decodes == []


def test_an_old_record_written_again_is_looked_up_and_marked_as_a_full_read_marks_it(
    tmp_path: Path, decodes: list[int]
) -> None:
    """A duplicate of a record older than the recent ones: the saved tree is decoded to know
    it (its CRC is there), and the marks equal a read from the start (Session.read)."""
    s = Session(tmp_path)
    fork_at = s.leaf
    s.append(s.turn("first try"))
    s.append(s.turn("second try", parent=fork_at))
    old_record = prompt("the first try, once more", fork_at)
    s.append([old_record, answer("once more", old_record["uuid"])])
    for i in range(300):  # push the early records out of the recent ones
        write_lines(s.path, s.turn(f"continue {i}"), append=True)
    s.read()
    decodes.clear()
    stale = dict(prompt("x", fork_at), uuid=old_record["uuid"], parentUuid=fork_at)
    result = s.append([stale, answer("after the stale one", s.leaf)])
    assert decodes, "an old uuid must be looked up in the saved tree"
    assert not result.reset
