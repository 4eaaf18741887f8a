"""Every query is bounded (issue #9, item 13): regexes run on RE2 (linear time, no
backtracking), a search has a time budget enforced by SQLite's progress handler, and query
text has a size and term limit with a clear "query too expensive" error."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agtaild.errors import UsageError
from agtaild.index import budget
from agtaild.index.budget import TooExpensive, time_budget
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

CATASTROPHIC = "(a+)+b"  # exponential for a backtracking engine on "aaaa…a" without a b


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[Service]:
    root = tmp_path / "root"
    lines = [toy_line(t="meta", id="S1", cwd="/home/me/p")]
    lines += [toy_line(t="msg", role="user", text="a" * 40 + f" line {i}", ts="2026-02-01T00:00:00Z") for i in range(50)]
    write_session(root / "one" / "S1.jsonl", lines)
    service = Service(toy_config(tmp_path, root))
    service.update_index()
    yield service
    service.close()


def test_a_catastrophic_regex_is_answered_at_once(svc: Service) -> None:
    start = time.monotonic()
    doc = svc.call("search", {"q": CATASTROPHIC, "mode": "regex"})
    assert doc["hits"] == []
    assert svc.call("search", {"q": "(a+)+ line 4\\d", "mode": "regex"})["hits"]
    assert time.monotonic() - start < 5


def test_regex_features_that_need_backtracking_are_refused_clearly(svc: Service) -> None:
    for pattern in ("(a)\\1", "a(?=b)", "(?<!x)a"):
        with pytest.raises(UsageError, match="RE2"):
            svc.call("search", {"q": pattern, "mode": "regex"})


def test_the_cli_regex_search_ends_quickly(corpus: Path, tmp_path: Path) -> None:
    """0.1.0 ran this for 30 s and more; a subprocess, so that a hang is a failure, not a stuck suite."""
    proj = tmp_path / "claude" / "-p"
    proj.mkdir(parents=True)
    from tests.daemon_proc import claude_user_line

    sid = "11111111-2222-4333-8444-555555555555"
    (proj / f"{sid}.jsonl").write_text(claude_user_line(sid, "a" * 40)[0])
    argv = ["--data-dir", str(tmp_path / "d"), "--no-daemon", "--only-roots", "--root",
            f"claude-code={tmp_path / 'claude'}", "search", "--mode", "regex", CATASTROPHIC]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.run([sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())", *argv],
                          env=env, capture_output=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert b"no matches" in proc.stderr
    assert b"re2.cc" not in proc.stderr  # RE2's own logging stays off


def test_a_search_over_its_time_budget_stops_with_a_clear_error(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "SEARCH_SECONDS", 0.0)
    monkeypatch.setattr(budget, "STEPS", 1)
    for params in ({"q": "line", "mode": "regex"}, {"q": "line"}):
        with pytest.raises(TooExpensive, match="query too expensive"):
            svc.call("search", params)
    with pytest.raises(TooExpensive):
        svc.call("sessions.list", {"q": "line"})
    monkeypatch.setattr(budget, "SEARCH_SECONDS", 10.0)
    assert svc.call("search", {"q": "line"})["hits"]  # the handler was removed


def test_the_budget_interrupts_a_statement_that_would_run_for_minutes() -> None:
    db = sqlite3.connect(":memory:")
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    start = time.monotonic()
    with pytest.raises(TooExpensive), time_budget(db, 0.2):
        db.execute(endless).fetchall()
    assert time.monotonic() - start < 3
    assert db.execute("SELECT 1").fetchone() == (1,)


def test_stopping_the_service_interrupts_a_long_read(svc: Service) -> None:
    db = svc._reader()  # this thread's reader, as a search would use it
    failed: list[BaseException] = []
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"

    def run() -> None:
        try:
            db.execute(endless).fetchall()
        except sqlite3.OperationalError as exc:
            failed.append(exc)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    svc.interrupt_reads()
    t.join(10)
    assert not t.is_alive() and failed and "interrupt" in str(failed[0])


@pytest.mark.parametrize("mode", ["phrase", "prefix", "words", "regex"])
def test_huge_queries_are_refused_at_once(svc: Service, mode: str) -> None:
    start = time.monotonic()
    with pytest.raises(TooExpensive, match=r"query too expensive.*characters"):
        svc.call("search", {"q": "word " * 20_000, "mode": mode})
    assert time.monotonic() - start < 1


def test_too_many_words_are_refused(svc: Service) -> None:
    many = " ".join(f"w{i}" for i in range(budget.MAX_QUERY_TERMS + 1))
    with pytest.raises(TooExpensive, match="terms"):
        svc.call("search", {"q": many, "mode": "words"})
    assert svc.call("search", {"q": many})["hits"] == []  # one phrase: one term
