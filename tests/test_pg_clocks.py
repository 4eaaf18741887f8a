"""Machines whose clocks disagree push into one team database (a real throw-away cluster):
their change numbers, not their clocks, drive the push cursors, and the team server's pages and
change feed neither lose nor repeat a session."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.caller import CALLER, OPERATOR
from tests.pg_cluster import pg_cluster, pg_url
from tests.test_pg_push import MACHINE_A, cli, machine, push, team_rows

__all__ = ["pg_cluster", "pg_url"]

psycopg = pytest.importorskip("psycopg")

#: How far the desktop's clock runs ahead of the laptop's (and of the database server's).
SKEW = 6 * 3600.0


@contextlib.contextmanager
def clock(monkeypatch: pytest.MonkeyPatch, offset: float) -> Iterator[None]:
    """This process's wall clock ``offset`` seconds off, as on a machine set wrong."""
    real = time.time
    with monkeypatch.context() as patched:
        patched.setattr(time, "time", lambda: real() + offset)
        yield


def _shifted(value: Any, seconds: float) -> Any:
    if isinstance(value, dict):
        return {
            k: (_stamp(v, seconds) if k == "timestamp" and isinstance(v, str) else _shifted(v, seconds))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_shifted(v, seconds) for v in value]
    return value


def _stamp(text: str, seconds: float) -> str:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    moved = (when + timedelta(seconds=seconds)).astimezone(UTC)
    return moved.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moved.microsecond // 1000:03d}Z"


def write_as_of(path: Path, offset: float) -> None:
    """The file last written a minute ago by the clock of a machine ``offset`` seconds off."""
    when = time.time() + offset - 60
    os.utime(path, (when, when))


def shift_transcripts(root: Path, seconds: float) -> None:
    """Every timestamp of the Claude Code transcripts under ``root`` moved by ``seconds``, and
    each file written by that clock."""
    for path in root.rglob("*.jsonl"):
        out = []
        for line in path.read_text().splitlines():
            try:
                out.append(json.dumps(_shifted(json.loads(line), seconds), ensure_ascii=False))
            except ValueError:
                out.append(line)
        path.write_text("\n".join(out) + "\n")
        write_as_of(path, seconds)


def append_prompt(path: Path, words: str, offset: float) -> None:
    """A new prompt at the end of a conversation, stamped by a clock ``offset`` seconds off."""
    records = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    parent = next(
        (r["uuid"] for r in reversed(records) if r.get("uuid") and r.get("type") in ("user", "assistant")),
        None,
    )
    line = {
        "type": "user",
        "message": {"role": "user", "content": words},
        "uuid": f"0f000000-0000-4000-8000-{int(offset) % 10**12:012d}",
        "parentUuid": parent,
        "sessionId": path.stem,
        "timestamp": _stamp(datetime.now(UTC).isoformat(), offset),
        "cwd": "/tmp",
    }
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")
    write_as_of(path, offset)


def largest(root: Path) -> Path:
    return sorted(root.glob("*/*.jsonl"), key=lambda p: (p.stat().st_size, p.name))[-1]


def test_machines_with_clocks_hours_apart_lose_and_repeat_nothing(
    tmp_path: Path, pg_cluster: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.pg.service import TeamService

    url = pg_cluster.new_database()
    laptop = machine(tmp_path, "laptop", MACHINE_A)
    desktop = machine(tmp_path, "desktop", {"claude-code": MACHINE_A["claude-code"]})
    desktop_root = tmp_path / "desktop" / "roots" / "claude-code"
    shift_transcripts(desktop_root, SKEW)

    def push_desktop(target: str = url) -> dict[str, Any]:
        with clock(monkeypatch, SKEW):
            return push(capsys, desktop, target, "desktop")

    first_desktop = push_desktop()  # the machine in the future pushes first
    first_laptop = push(capsys, laptop, url, "laptop")
    assert first_desktop["sessions"] and first_laptop["sessions"]
    svc = TeamService(url, data_dir=tmp_path / "server")
    token = CALLER.set(OPERATOR)
    try:
        stamp, _ = svc.changes_since(None)
        with psycopg.connect(url) as conn:
            copies = conn.execute(
                "SELECT d.activity - l.activity FROM sessions d JOIN sessions l USING (agent, sid, collection)"
                " WHERE d.machine = 'desktop' AND l.machine = 'laptop'"
            ).fetchall()
        # Each machine's sessions carry its own clock's times (the same transcripts, 6 h apart).
        assert copies and all(abs(d - SKEW) < 1 for (d,) in copies), copies

        # Both append; the machine whose clock is ahead pushes first again.
        appended = {
            "laptop": largest(tmp_path / "laptop" / "roots" / "claude-code"),
            "desktop": largest(desktop_root),
        }
        append_prompt(appended["laptop"], "skewed clocks zebrafinch", 0)
        append_prompt(appended["desktop"], "skewed clocks zebrafinch", SKEW)
        second_desktop = push_desktop()
        second_laptop = push(capsys, laptop, url, "laptop")
        assert (second_desktop["sessions"], second_laptop["sessions"]) == (1, 1)
        assert not second_desktop["full"] and not second_laptop["full"]
        assert push_desktop()["rows"] == 0 and push(capsys, laptop, url, "laptop")["rows"] == 0

        with psycopg.connect(url) as conn:
            cursors = dict(conn.execute("SELECT machine, cursor FROM machines").fetchall())
            # The team server's clock stamps every push, never a machine's.
            assert conn.execute("SELECT bool_and(pushed_at <= now()) FROM sessions").fetchone() == (True,)
        assert cursors == {"desktop": second_desktop["cursor"], "laptop": second_laptop["cursor"]}

        # The change feed: the two appended sessions, each once.
        heard: list[str] = []
        while True:
            stamp, changed = svc.changes_since(stamp)
            if not changed:
                break
            heard += [c["path"] for c in changed]
        assert sorted(heard) == sorted(f"{m}:claude-code:{p.stem}" for m, p in appended.items())

        # Pages of the team's sessions, newest first by each machine's own times: every one once.
        seen: list[tuple[str, str, str]] = []
        cursor = None
        while True:
            page = svc.call("sessions.list", {"limit": 3, **({"cursor": cursor} if cursor else {})})
            seen += [(s["machine"], s["agent"], s["id"]) for s in page["sessions"]]
            cursor = page["next"]
            if cursor is None:
                break
        with psycopg.connect(url) as conn:
            expected = conn.execute(
                "SELECT machine, agent, sid FROM sessions ORDER BY activity DESC, id DESC"
            ).fetchall()
        assert seen == [tuple(r) for r in expected] and len(set(seen)) == len(seen)
        # A word of both appends: one hit per machine, over pages of one.
        hits: list[str] = []
        cursor = None
        while True:
            page = svc.call(
                "search", {"q": "zebrafinch", "limit": 1, **({"cursor": cursor} if cursor else {})}
            )
            hits += [h["session"]["machine"] for h in page["hits"]]
            cursor = page["next"]
            if cursor is None:
                break
        assert sorted(hits) == ["desktop", "laptop"]
    finally:
        CALLER.reset(token)
        svc.close()

    # Nothing lost, nothing doubled: the same rows as each machine pushed once from scratch.
    clean = pg_cluster.new_database()
    push_desktop(clean)
    push(capsys, laptop, clean, "laptop")
    assert team_rows(url) == team_rows(clean)
    listed = cli(capsys, [*laptop, "list", "--limit", "500", "--no-update"])["sessions"]
    assert len([r for r in team_rows(url, "laptop")["sessions"]]) == len(listed)


def test_a_push_that_commits_after_a_later_one_is_announced_when_it_commits(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The change feed goes by transactions, not by any clock: a batch that began first and
    commits last (a slow push) is announced once it commits, after the quicker one, and
    neither twice. (Stamped by the time its transaction began, it was passed over.)"""
    from agtaild.pg.service import TeamService

    push(capsys, machine(tmp_path, "a", {"codex": MACHINE_A["codex"]}), pg_url, "laptop")
    push(capsys, machine(tmp_path, "b", {"claude-code": MACHINE_A["claude-code"]}), pg_url, "desktop")
    with psycopg.connect(pg_url) as conn:
        one = {
            m: conn.execute("SELECT agent, sid FROM sessions WHERE machine = %s LIMIT 1", (m,)).fetchone()
            for m in ("laptop", "desktop")
        }
    touch = "UPDATE sessions SET pushed_at = now() WHERE machine = %s AND agent = %s AND sid = %s"
    svc = TeamService(pg_url, data_dir=tmp_path / "server")
    try:
        stamp, _ = svc.changes_since(None)
        slow = psycopg.connect(pg_url)  # its transaction stays open until the commit below
        slow.execute(touch, ("laptop", *one["laptop"]))
        with psycopg.connect(pg_url) as quick:
            quick.execute(touch, ("desktop", *one["desktop"]))
        stamp, held = svc.changes_since(stamp)
        assert held == []  # held back while an older transaction may still commit: not lost
        slow.commit()
        slow.close()
        stamp, heard = svc.changes_since(stamp)
        assert [c["path"] for c in heard] == [f"{m}:{a}:{s}" for m, (a, s) in one.items()]
        assert svc.changes_since(stamp)[1] == []
    finally:
        svc.close()
