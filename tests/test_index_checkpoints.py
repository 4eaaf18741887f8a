"""The index's log checkpointed on a thread of its own during a big update (agtaild.index.checkpoints)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agtaild.index import checkpoints
from agtaild.index.checkpoints import BackgroundCheckpoints
from agtaild.index.schema import connect

PAGE = 4096
ROW = os.urandom(3 * PAGE)  # a row of three pages of its own (overflow pages)


def writer_db(path: Path):  # type: ignore[no-untyped-def]
    db = connect(path)
    db.execute(f"PRAGMA page_size = {PAGE}")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, blob BLOB)")
    return db


def commit_rows(db, n: int) -> None:  # type: ignore[no-untyped-def]
    db.execute("BEGIN")
    db.executemany("INSERT INTO t (blob) VALUES (?)", [(ROW,)] * n)
    db.execute("COMMIT")


def test_every_commit_is_checkpointed_and_the_writer_gets_its_own_checkpoints_back(tmp_path: Path) -> None:
    db = writer_db(tmp_path / "i.sqlite3")
    with BackgroundCheckpoints(db, connect) as ckpt:
        assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # none on the writer's thread
        for _ in range(5):
            commit_rows(db, 20)
            ckpt.committed()
    assert ckpt.errors == []
    assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == checkpoints.AUTO_CHECKPOINT_PAGES
    # Everything the update committed is in the main file already: nothing left to copy.
    busy, log, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and log == copied
    assert os.path.getsize(tmp_path / "i.sqlite3") >= 100 * len(ROW)
    assert db.execute("SELECT count(*) FROM t").fetchone()[0] == 100
    db.close()


@pytest.mark.parametrize("with_thread", [True, False])
def test_the_log_stays_bounded_only_with_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_thread: bool
) -> None:
    """Over the limit, the writer waits for the checkpoint of its last commit, so that its next
    write starts the log again from the beginning. Without the thread (and with the writer's
    own checkpoints off, as during the update) the log holds every commit."""
    monkeypatch.setattr(checkpoints, "LOG_LIMIT_BYTES", 0)
    db = writer_db(tmp_path / "i.sqlite3")
    wal = tmp_path / "i.sqlite3-wal"
    ckpt = BackgroundCheckpoints(db, connect) if with_thread else None
    if ckpt is None:
        db.execute("PRAGMA wal_autocheckpoint = 0")
    biggest = 0
    for i in range(10):
        commit_rows(db, 30)
        if ckpt is not None:
            ckpt.committed()
            if i == 0:
                ckpt.wait()  # the log's size is known from the first checkpoint on
        biggest = max(biggest, os.path.getsize(wal))
    written = 10 * 30 * len(ROW)
    if ckpt is not None:
        ckpt.close()
        assert ckpt.errors == []
        assert biggest < written / 3  # about two commits' worth at most
    else:
        assert biggest >= written
    assert db.execute("SELECT count(*) FROM t").fetchone()[0] == 300
    db.close()


def test_close_without_a_commit_stops_the_thread(tmp_path: Path) -> None:
    db = writer_db(tmp_path / "i.sqlite3")
    ckpt = BackgroundCheckpoints(db, connect)
    ckpt.close()
    assert not ckpt._thread.is_alive()
    assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == checkpoints.AUTO_CHECKPOINT_PAGES
    db.close()


def test_no_thread_where_it_cannot_run(tmp_path: Path) -> None:
    """An index without a file (in memory), or a second connection that cannot be opened:
    no thread, and the writer keeps SQLite's own checkpoints."""
    memory = connect(":memory:")
    assert BackgroundCheckpoints.start(memory, connect) is None
    memory.close()

    db = writer_db(tmp_path / "i.sqlite3")

    def refused(path: str):  # type: ignore[no-untyped-def]
        raise OSError(24, "Too many open files")

    assert BackgroundCheckpoints.start(db, refused) is None
    assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == checkpoints.AUTO_CHECKPOINT_PAGES
    db.close()


def test_a_thread_that_dies_never_leaves_the_writer_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "LOG_LIMIT_BYTES", 0)
    db = writer_db(tmp_path / "i.sqlite3")
    ckpt = BackgroundCheckpoints(db, connect)
    commit_rows(db, 5)
    ckpt.committed()
    ckpt.wait()  # the log is over the limit from now on: every commit waits for the thread

    class Broken:
        def execute(self, sql: str):  # type: ignore[no-untyped-def]
            raise MemoryError("no memory for the checkpoint")

        def close(self) -> None:
            pass

    ckpt.conn = Broken()  # type: ignore[assignment]
    commit_rows(db, 5)
    waiting = threading.Thread(target=ckpt.committed)  # returns: the thread is gone, and said so
    waiting.start()
    waiting.join(timeout=10)
    assert not waiting.is_alive(), "the writer would wait forever"
    ckpt._thread.join(timeout=5)
    assert not ckpt._thread.is_alive()
    assert ckpt.errors == ["MemoryError: no memory for the checkpoint"]
    ckpt.close()
    assert db.execute("SELECT count(*) FROM t").fetchone()[0] == 10
    db.close()


def test_close_checkpoints_the_last_commits(tmp_path: Path) -> None:
    """The update's final commit is not followed by committed(): close() copies its pages, so
    the writer's next small commit (the daemon's first append) has no backlog to checkpoint."""
    db = writer_db(tmp_path / "i.sqlite3")
    ckpt = BackgroundCheckpoints(db, connect)
    commit_rows(db, 20)
    ckpt.committed()
    commit_rows(db, 40)  # the final commit
    ckpt.close()
    assert ckpt.errors == [] and not ckpt._thread.is_alive()
    # Every row is in the main file already (its pages were copied out of the log).
    assert os.path.getsize(tmp_path / "i.sqlite3") >= 60 * len(ROW)
    db.close()
