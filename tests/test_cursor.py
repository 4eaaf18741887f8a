"""Cursor adapter: the peer fixtures (agent transcripts, a meta-only store.db), a real workspace
state.vscdb of late 2024 (tests/corpus/cursor/cursor-history), the synthetic transcript and the
hand-made store.db and state.vscdb (tests/cursor_store_maker.py)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.base import Unit
from agtaild.adapters.cursor.adapter import CursorAdapter
from agtaild.adapters.cursor.store import decode_meta, proto_fields
from agtaild.model import Session
from tests.cursor_store_maker import (
    SAMPLE_ID,
    SAMPLE_MESSAGES,
    SAMPLE_WORKSPACE,
    make_store,
    sample_path,
    tree_node,
)
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

FIX = "cursor/agent-sessions"
NESTED = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"
NESTED_CHILD = "d88b213c-84e1-427d-bb5e-3859c1011087"
FLAT = "2e6ac32a-c5c6-46dc-b26e-0849128e90bc"
PARENT = "2844cd40-72ba-471b-90ed-386b16074d2b"
CHILD = "b9807d66-29ac-4377-8b58-77c98a82bbb3"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> CursorAdapter:
    return CursorAdapter()


def read_all(adapter: CursorAdapter, root: Path) -> dict[str, object]:
    return {u.hints["id"]: adapter.read(u, None, now=LATER) for u in adapter.discover(root)}


def test_discovery_layouts(adapter: CursorAdapter, corpus: Path) -> None:
    units = {u.hints["id"]: u for u in adapter.discover(corpus / FIX)}
    assert set(units) == {NESTED, NESTED_CHILD, FLAT, PARENT, CHILD}  # the store joins its transcript
    assert any(f.endswith("store.db") for f in units[NESTED].files)
    assert {u.hints["id"] for u in adapter.discover(corpus / FIX / "projects")} == set(units)
    assert adapter.default_roots({}, Path("/h"))[0] == Path("/h/.cursor")


def test_transcript_with_its_chat_store(adapter: CursorAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / FIX)[NESTED]
    s: Session = res.session  # type: ignore[attr-defined]
    # title, model and start from the store's hex-encoded meta row; the workspace from the slug,
    # confirmed by md5("/Users/test/Repository/TestProject") == the chat bucket name
    assert (s.title, s.models, s.started) == ("Test Session", ["claude-4-sonnet"], "2026-04-07T00:43:10.321Z")
    assert s.cwd == "/Users/test/Repository/TestProject" and s.project == "TestProject"
    events = res.events  # type: ignore[attr-defined]
    assert [(e.kind, e.role) for e in events][:3] == [
        ("text", "user"),
        ("text", "assistant"),
        ("tool_use", "assistant"),
    ]
    assert events[0].text == "run ls command" and events[0].extra["raw_text"].startswith("<user_query>")
    assert events[2].tool == "Shell" and events[2].input["command"] == "ls -la /tmp"
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["cursor-agent", "--resume", NESTED]
    child = read_all(adapter, corpus / FIX)[NESTED_CHILD].session  # type: ignore[attr-defined]
    assert child.parent is not None and child.parent.id == NESTED and child.cwd == s.cwd
    assert adapter.resume(child) is None


def test_transcripts_without_a_store(adapter: CursorAdapter, corpus: Path) -> None:
    sessions = read_all(adapter, corpus / FIX)
    flat = sessions[FLAT].session  # type: ignore[attr-defined]
    assert flat.title == "List the files." and flat.accounting.metadata == 1  # the turn_ended line
    assert flat.cwd is None and flat.project == "tmp-agent-sessions-stage0"  # slug not confirmable
    assert adapter.resume(flat) is None  # no chat store: not known to be a CLI chat
    child = sessions[CHILD].session  # type: ignore[attr-defined]
    assert child.parent is not None and child.parent.id == PARENT


def test_store_only_chat_walks_the_blob_tree(adapter: CursorAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / "cursor/synthetic-agtail/.cursor")[SAMPLE_ID]
    s = res.session  # type: ignore[attr-defined]
    assert s.title == "Explain the scanner" and s.cwd == SAMPLE_WORKSPACE and s.models == ["gpt-5"]
    kinds = [(e.kind, e.role) for e in res.events]  # type: ignore[attr-defined]
    assert kinds == [
        ("system", "system"),
        ("text", "user"),
        ("thinking", "assistant"),
        ("text", "assistant"),
        ("tool_use", "assistant"),
        ("text", "assistant"),
    ]
    tool = res.events[4]  # type: ignore[attr-defined]
    assert tool.result == "def scan(root): ..." and tool.is_error is False and tool.tool_use_id == "tc_1"
    # 1 meta row + 5 message blobs + 2 tree nodes + 1 stale blob
    acct = s.accounting
    assert (acct.lines, acct.events, acct.merged, acct.metadata, acct.skipped) == (9, 4, 1, 3, 1)
    assert adapter.resume(s).argv == ["cursor-agent", "--resume", SAMPLE_ID]  # type: ignore[union-attr]


def test_store_sample_is_what_the_maker_writes(corpus: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "store.db"
    make_store(fresh, SAMPLE_ID, SAMPLE_MESSAGES, workspace=SAMPLE_WORKSPACE)

    def rows(db: Path) -> list[tuple[object, ...]]:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT id, data FROM blobs ORDER BY id").fetchall()
        finally:
            conn.close()

    assert rows(fresh) == rows(sample_path(corpus))


def test_damaged_stores_and_meta(adapter: CursorAdapter, tmp_path: Path) -> None:
    assert (
        decode_meta("7b7d") == {}
        and decode_meta("zz") == {}
        and decode_meta(b'{"name":"x"}') == {"name": "x"}
    )
    assert proto_fields(b"\x0a\x20" + b"\x01" * 5) == []  # a length past the end stops the walk
    assert proto_fields(tree_node(["ab" * 32], "/w")) == [(1, 2, bytes.fromhex("ab" * 32)), (9, 2, b"/w")]
    db = tmp_path / "chats" / "b" / "x" / "store.db"
    make_store(
        db, "x", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "{not"}], workspace="/w"
    )
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO blobs VALUES ('cc', x'7b6e6f7420')")  # an unreachable broken blob
    conn.commit()
    conn.close()
    s = adapter.read(next(iter(adapter.discover(tmp_path))), None, now=LATER).session
    assert s.accounting.balanced() and s.accounting.skipped == 2


@pytest.mark.parametrize(
    "rel", [f"{FIX}/projects/Users-test-Repository-TestProject/agent-transcripts/{NESTED}/{NESTED}.jsonl"]
)
@pytest.mark.parametrize("settled", [False, True])
def test_incremental_reads_store_what_one_read_does(
    adapter: CursorAdapter, corpus: Path, tmp_path: Path, rel: str, settled: bool
) -> None:
    src = corpus / rel
    dst = tmp_path / "projects" / "p" / "agent-transcripts" / "t.jsonl"
    unit = Unit(
        agent="cursor", path=str(dst), files=[str(dst)], root=str(tmp_path), hints={"id": "t", "slug": "p"}
    )
    grown = replay_growing_file(adapter, src, dst, line_cuts(src.read_bytes()), unit, settled=settled)
    once = read_once(adapter, unit, now=os.stat(dst).st_mtime + (100 if settled else 0.5))
    g, o = grown.snapshot(), once.snapshot()
    assert g[0] == o[0] and g[1] == o[1]
    g[2].pop("ended"), o[2].pop("ended")  # the file's mtime stands in for the missing timestamps
    assert g[2] == o[2]


def test_unreadable_store_does_not_lose_the_transcript(
    adapter: CursorAdapter, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / ".cursor"
    shutil.copytree(corpus / FIX, home)
    store = next(home.glob("chats/*/*/store.db"))
    store.write_bytes(b"not a database at all")
    res = read_all(adapter, home)[NESTED]
    assert len(res.events) == 8 and res.session.title == "run ls command"  # type: ignore[attr-defined]


IDE = "cursor/synthetic-agtail/.config/Cursor/User/globalStorage"


def test_ide_composers_from_state_vscdb(adapter: CursorAdapter, corpus: Path, tmp_path: Path) -> None:
    from tests.cursor_store_maker import IDE_COMPOSER, IDE_EMPTY, IDE_LEGACY

    units = list(adapter.discover(corpus / IDE))
    assert sorted(u.path.rsplit("#", 1)[1] for u in units) == sorted(
        [IDE_COMPOSER, IDE_LEGACY]
    )  # not the empty one
    assert IDE_EMPTY not in {u.path for u in units}
    res = {u.path.rsplit("#", 1)[1]: adapter.read(u, None, now=LATER) for u in units}
    s = res[IDE_COMPOSER].session
    assert (s.title, s.models, s.started, s.ended) == (
        "Watcher misses renames",
        ["claude-4-sonnet"],
        "2026-03-06T10:00:00.000Z",
        "2026-03-06T10:01:10.000Z",
    )
    events = res[IDE_COMPOSER].events
    assert [(e.kind, e.role) for e in events] == [
        ("text", "user"),
        ("thinking", "assistant"),
        ("text", "assistant"),
        ("tool_use", "assistant"),
        ("text", "user"),
        ("text", "assistant"),
    ]
    tool = events[3]
    assert (
        tool.tool == "read_file" and tool.input == {"target_file": "src/watch.py"} and tool.is_error is False
    )
    assert (s.usage.input_tokens, s.usage.output_tokens) == (5200 + 5600 + 6100, 310 + 40 + 120)
    assert s.accounting.balanced() and s.accounting.skipped == 1  # the stale "old" bubble
    assert adapter.resume(s) is None and not s.resumable
    legacy = res[IDE_LEGACY]
    assert legacy.events[0].text == "What does load_config() merge?"
    # unchanged rows: the next read returns the saved summary without events
    unit = next(u for u in units if u.path.endswith(IDE_COMPOSER))
    first = adapter.read(unit, None, now=LATER)
    again = adapter.read(unit, first.state, now=LATER)
    assert not again.reset and again.events == [] and again.session.title == "Watcher misses renames"


def test_ide_roots_only_under_the_cursor_host(adapter: CursorAdapter, tmp_path: Path) -> None:
    roots = adapter.default_roots({}, tmp_path)
    assert roots[0] == tmp_path / ".cursor"
    assert tmp_path / ".config/Cursor/User/globalStorage" in roots
    assert tmp_path / ".config/Cursor/User/workspaceStorage" in roots
    assert all("Code" not in str(r) for r in roots)


def test_ide_sample_is_what_the_maker_writes(corpus: Path, tmp_path: Path) -> None:
    from tests.cursor_store_maker import make_vscdb, vscdb_path

    fresh = tmp_path / "state.vscdb"
    make_vscdb(fresh)

    def rows(db: Path) -> list[tuple[object, ...]]:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT key, value FROM cursorDiskKV ORDER BY key").fetchall()
        finally:
            conn.close()

    assert rows(fresh) == rows(vscdb_path(corpus))


def test_ide_database_root_mirrors_flat(adapter: CursorAdapter, corpus: Path) -> None:
    db = corpus / IDE / "state.vscdb"
    unit = next(iter(adapter.discover(db)))
    assert adapter.relative_path(unit, str(db)) == "state.vscdb"
    assert [adapter.relative_path(unit, f) for f in adapter.native_files(unit)] == ["state.vscdb"]


def test_older_text_transcript(adapter: CursorAdapter, corpus: Path, tmp_path: Path) -> None:
    root = corpus / "cursor/synthetic-agtail/.cursor"
    res = {u.hints["id"]: u for u in adapter.discover(root)}
    unit = res["3c2b1a09-8f7e-4d6c-9b5a-493827161504"]
    out = adapter.read(unit, None, now=LATER)
    assert [(e.kind, e.role) for e in out.events] == [
        ("text", "user"),
        ("thinking", "assistant"),
        ("text", "assistant"),
        ("tool_use", "assistant"),
        ("text", "assistant"),
    ]
    grep = out.events[3]
    assert grep.tool == "Grep" and grep.input == "pattern: archive\npath: tests"
    assert grep.result == "tests/test_archive.py\ntests/test_archive_index.py"
    assert out.session.title == "Which tests cover the archive command?" and out.session.accounting.lines == 2
    # a .jsonl of the same id wins over the .txt
    home = tmp_path / ".cursor"
    shutil.copytree(root, home)
    folder = next(home.glob("projects/*/agent-transcripts"))
    shutil.copy(
        folder / "0f1e2d3c-4b5a-4697-8877-665544332211.jsonl",
        folder / "3c2b1a09-8f7e-4d6c-9b5a-493827161504.jsonl",
    )
    paths = [Path(u.path).name for u in adapter.discover(home) if "3c2b1a09" in u.path]
    assert paths == ["3c2b1a09-8f7e-4d6c-9b5a-493827161504.jsonl"]


WORKSPACES = "cursor/cursor-history/.config/Cursor/User/workspaceStorage"


def _workspace_composers(db: Path) -> list[dict[str, object]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        (value,) = conn.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").fetchone()
    finally:
        conn.close()
    import json

    return json.loads(value)["allComposers"]


def test_real_workspace_state_vscdb_composers(adapter: CursorAdapter, corpus: Path, tmp_path: Path) -> None:
    db = corpus / WORKSPACES / "slevin48-cursor-history" / "state.vscdb"
    composers = _workspace_composers(db)
    units = list(adapter.discover(corpus / WORKSPACES))
    assert [u.path for u in units] == [f"{db}#{c['composerId']}" for c in composers] and len(units) == 26
    assert list(adapter.discover(db)) == [
        Unit(agent=u.agent, path=u.path, files=u.files, root=str(db)) for u in units
    ]  # the database itself as the root
    by_id = {u.path.rsplit("#", 1)[1]: adapter.read(u, None, now=LATER) for u in units}
    for c in composers:
        res = by_id[str(c["composerId"])]
        s = res.session
        conversation = c["conversation"]
        assert isinstance(conversation, list)
        assert [(e.role, e.text) for e in res.events] == [
            ("user" if b["type"] == 1 else "assistant", b["text"]) for b in conversation
        ]
        assert (
            s.accounting.lines == len(conversation) + 1 and s.accounting.balanced() and s.accounting.bad == 0
        )
        assert s.extra["workspace_store"] and s.extra["status"] == c["status"] and not s.resumable
        assert s.title == (c.get("name") or conversation[0]["text"].splitlines()[0])
        assert s.usage.is_zero() and s.cwd is None  # no token counts then; no workspace.json was published
    s = by_id["a76419da-5045-4dcb-a1d4-307eab526a30"].session
    assert (s.title, s.messages, s.started, s.ended) == (
        "create settings page that enables to enter OpenAI API key,",
        14,
        "2024-11-17T03:55:37.024Z",
        "2024-11-17T04:05:54.754Z",
    )
    # the workspace.json beside it names the folder
    copy = tmp_path / "workspaceStorage" / "abc"
    copy.mkdir(parents=True)
    shutil.copy(db, copy / "state.vscdb")
    (copy / "workspace.json").write_text('{"folder": "file:///home/dev/src/ionic%20app"}')
    unit = next(iter(adapter.discover(tmp_path / "workspaceStorage")))
    assert unit.files[-1] == str(copy / "workspace.json")
    assert adapter.read(unit, None, now=LATER).session.cwd == "/home/dev/src/ionic app"


def test_a_workspace_database_beside_the_cli_folders_hides_none_of_them(
    adapter: CursorAdapter, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "cursor"
    shutil.copytree(corpus / FIX, home)
    cli = sorted(u.path for u in adapter.discover(home))
    (home / "abc").mkdir()
    shutil.copy(corpus / WORKSPACES / "slevin48-cursor-history" / "state.vscdb", home / "abc" / "state.vscdb")
    both = sorted(u.path for u in adapter.discover(home))
    ide = [p for p in both if p.startswith(str(home / "abc" / "state.vscdb") + "#")]
    assert len(ide) == 26 and sorted(set(both) - set(ide)) == cli and cli
