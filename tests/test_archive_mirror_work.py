"""The archive mirror's per-file work: what it costs in a first index is mostly compression,
so the rest (regrouping bytes into frames, opening files, marking them archived, taking units
off the pipe) must stay cheap without changing what is stored."""

from __future__ import annotations

import builtins
import multiprocessing
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters import get_adapter
from agtaild.config import load_config
from agtaild.store.archive import mirror_proc as archive_proc
from agtaild.store.archive.archiver import Archiver, read_archived
from agtaild.store.archive.framing import FRAME_RAW, reframe
from agtaild.store.archive.view import verify_store
from agtaild.sync.manifest import HashCache

CLAUDE = "real/claude-2.1.197/projects"


def test_frame_sized_chunks_pass_through_uncopied() -> None:
    blocks = [os.urandom(FRAME_RAW), os.urandom(FRAME_RAW), b"tail"]
    out = list(reframe(iter(blocks)))
    assert len(out) == 3
    assert all(a is b for a, b in zip(out, blocks, strict=True))
    single = b"a small file"
    (frame,) = reframe([single])
    assert frame is single


@pytest.mark.parametrize("seed", range(6))
def test_any_chunking_regroups_into_the_same_frames(seed: int) -> None:
    rnd = random.Random(seed)
    data = rnd.randbytes(3 * FRAME_RAW + rnd.randrange(FRAME_RAW))
    cuts = sorted(rnd.sample(range(1, len(data)), rnd.randrange(1, 12)))
    if seed % 2:  # some chunks exactly a frame long, between odd ones
        cuts = sorted({*cuts, FRAME_RAW, 2 * FRAME_RAW + 5, 2 * FRAME_RAW + 5 + FRAME_RAW})
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    frames = list(reframe(chunks))
    assert b"".join(frames) == data
    assert [len(f) for f in frames[:-1]] == [FRAME_RAW] * (len(frames) - 1)
    assert 0 < len(frames[-1]) <= FRAME_RAW
    assert list(reframe([])) == []


def test_put_many_marks_all_in_one_commit_seen_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "hashes.sqlite3"
    cache = HashCache(path)
    cache.put_many([("/a", "1:2:3:", "x"), ("/b", "4:5:6:", "y")])
    cache.put_many([])
    other = HashCache(path)  # another connection: it sees only what was committed
    assert other.get("/a", "1:2:3:") == "x" and other.get("/b", "4:5:6:") == "y"
    assert other.get("/a", "other key") is None
    cache.put_many([("/a", "7:8:9:", "z")])
    assert HashCache(path).get("/a", "7:8:9:") == "z" and cache.get("/a", "1:2:3:") is None


def _send_all(conn: Any, messages: list[bytes], done: bool) -> None:
    for m in messages:
        conn.send_bytes(m)
    if done:
        conn.send_bytes(archive_proc._DONE)
    conn.close()


@pytest.mark.parametrize("done", [True, False])
def test_the_mirror_takes_what_waits_in_its_pipe_in_batches(done: bool) -> None:
    """Every message arrives once, in order, in batches of at most BATCH_UNITS; the end is
    the DONE message or the other end closing (the index process died)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    messages = [f"unit {n}".encode() for n in range(3 * archive_proc.BATCH_UNITS + 7)]
    _send_all(parent, messages, done)  # all of them wait in the pipe before the first read
    batches = list(archive_proc._received(child))
    assert [m for b in batches for m in b] == messages
    assert all(0 < len(b) <= archive_proc.BATCH_UNITS for b in batches)
    assert len(batches) == 4


@pytest.fixture
def native(tmp_path: Path, corpus: Path) -> Path:
    root = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, root)
    return root


def test_each_native_file_is_opened_once_and_stored_byte_exact(
    native: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    sources = [str(p) for p in native.rglob("*") if p.is_file()]
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) in sources:
            opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    arch = Archiver(config)
    units = list(get_adapter("claude-code").discover(native))
    for unit in units:
        arch.mirror_pairs([(get_adapter("claude-code"), unit)], defer=True)
    assert arch.flush()["errors"] == []
    assert sources and sorted(opened) == sorted(sources)  # once each
    monkeypatch.setattr(builtins, "open", real_open)
    for p in native.rglob("*"):
        if p.is_file():
            assert read_archived(config, f"claude-code/{p.relative_to(native)}") == p.read_bytes()
    assert verify_store(config)["damaged"] == []
    # Appended to: the boundary check and the new bytes come from one open too.
    target = max(sources, key=os.path.getsize)
    with real_open(target, "ab") as fh:
        fh.write(b'{"type":"user","message":{"role":"user","content":"appended"}}\n')
    opened.clear()
    monkeypatch.setattr(builtins, "open", counting_open)
    report = arch.mirror_pairs([(get_adapter("claude-code"), u) for u in units])
    assert report["errors"] == [] and report["appended"] == 1
    assert opened == [target]
    assert read_archived(config, f"claude-code/{Path(target).relative_to(native)}") == Path(target).read_bytes()
    arch.cache.close()
    arch.store.close()
