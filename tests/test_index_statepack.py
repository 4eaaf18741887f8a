"""Adapter states are stored compressed, read back exactly, and an older index's raw states
(and damaged frames) never stop an update."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agtaild.index import statepack
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, snapshot, toy_config, toy_registry
from tests.test_index_incremental import make_corpus, op_append

__all__ = ["toy_registry"]
MAGIC = b"\x28\xb5\x2f\xfd"


@given(st.binary(max_size=6000))
def test_every_state_reads_back_as_written(state: bytes) -> None:
    assert statepack.unpack(statepack.pack(state)) == state


def test_large_states_are_compressed_and_small_ones_kept() -> None:
    big = b'{"open_calls": []}' * 500
    assert len(statepack.pack(big) or b"") < len(big) // 4
    assert statepack.pack(b"small") == b"small"
    huge = b"y" * statepack.MAX_BYTES
    assert statepack.pack(huge) is huge  # the longest sessions' states: no cost per append
    assert statepack.pack(None) is None
    # A raw state that begins with the frame magic is compressed, so it is never misread.
    odd = b"\x28\xb5\x2f\xfd" + b"x"
    assert statepack.pack(odd) != odd and statepack.unpack(statepack.pack(odd)) == odd


def test_a_damaged_frame_means_a_read_from_scratch() -> None:
    assert statepack.unpack(b"\x28\xb5\x2f\xfd not a frame") is None


@pytest.mark.parametrize("case", ["compressed", "raw-then-compressed", "damaged"])
def test_stored_states_continue_like_a_rebuild(
    case: str, tmp_path: Path, toy_registry: ToyAdapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """States compressed, an older index's raw states, and damaged frames: after an append
    the rows are those of a clean rebuild."""
    root = tmp_path / "root"
    a = make_corpus(root)
    data = tmp_path / "data"
    data.mkdir()
    svc = Service(toy_config(data, root))
    try:
        monkeypatch.setattr(statepack, "MIN_BYTES", 1 << 30 if case.startswith("raw") else 0)
        svc.update_index()
        db = sqlite3.connect(str(svc.config.index_path))
        try:
            stored = [r[0] for r in db.execute("SELECT state FROM files WHERE state IS NOT NULL")]
            assert stored and all(s.startswith(MAGIC) != case.startswith("raw") for s in stored)
            if case == "damaged":
                db.execute("UPDATE files SET state = X'28B52FFD0000' WHERE state IS NOT NULL")
                db.commit()
        finally:
            db.close()
        monkeypatch.setattr(statepack, "MIN_BYTES", 0)
        op_append(a)
        svc.update_index()
        got = snapshot(svc.config.index_path)
    finally:
        svc.close()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    svc = Service(toy_config(fresh, root))
    try:
        svc.update_index()
        expected = snapshot(svc.config.index_path)
    finally:
        svc.close()
    for part in ("events", "usage", "rollup", "fts_rows"):
        assert got[part] == expected[part], part


def test_states_pack_and_unpack_in_many_threads_at_once() -> None:
    """Each thread has its own compressor (they are not safe to share): states packed and
    unpacked by several threads at once, a damaged frame among them, all read back exactly."""
    from concurrent.futures import ThreadPoolExecutor

    def work(n: int) -> bool:
        ok = True
        for i in range(200):
            state = (f"{n}:{i}:" * 700).encode()
            ok = ok and statepack.unpack(statepack.pack(state)) == state
            if i % 50 == 0:
                ok = ok and statepack.unpack(MAGIC + b"damaged") is None
        return ok

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))
