"""Usage recorded without a time of its own (OpenHands, Continue and Aider count tokens per
session or per run) is dated by its session's time, so date filters — `stats --since`, the
viewer's last 30 days, MCP usage_summary — count it; usage with no time at all is said to be
left out. And Continue's "last active" is a time it recorded, not its file's mtime."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, RootSpec
from agtaild.index.prepare import local_day, parse_time
from agtaild.query.service import Service
from tests.conftest import CORPUS

REAL = CORPUS / "real"
UNTIMED = {"aider": REAL / "aider-0.86.2", "continue": REAL / "continue-1.5.47", "openhands": REAL / "openhands-1.16.0"}


def service(data: Path, roots: dict[str, Path]) -> Service:
    config = Config(data_dir=str(data), roots=[RootSpec(agent=a, path=str(p)) for a, p in roots.items()], archive=False)
    svc = Service(config)
    assert svc.update_index()["errors"] == []
    return svc


def by_agent(doc: dict[str, Any]) -> dict[str, int]:
    return {r["key"]: r["total_tokens"] for r in doc["rows"]}


def test_usage_without_times_is_dated_by_its_session(tmp_path: Path) -> None:
    svc = service(tmp_path / "data", {**UNTIMED, "claude-code": REAL / "claude-2.1.197" / "projects"})
    try:
        everything = by_agent(svc.call("stats", {"by": "agent"}))
        assert set(UNTIMED) <= set(everything) and all(everything[a] > 0 for a in UNTIMED)
        sessions = svc.call("sessions.list", {"limit": 200})["sessions"]
        first = min(local_day(parse_time(s["started"])) for s in sessions if s["agent"] in UNTIMED)
        dated = svc.call("stats", {"by": "agent", "since": first})
        assert {a: by_agent(dated).get(a) for a in UNTIMED} == {a: everything[a] for a in UNTIMED}
        assert "undated" not in dated
        # By day: on the days of their sessions, none on "(unknown)".
        days = {r["key"] for r in svc.call("stats", {"by": "day", "agent": "openhands"})["rows"]}
        openhands_days = {local_day(parse_time(s["started"])) for s in sessions if s["agent"] == "openhands"}
        assert days == openhands_days
        # A time bound (an age) too, and by hour: every token has an hour.
        ages = svc.call("stats", {"by": "agent", "since": f"{int((time.time() - parse_time(first + 'T00:00:00')) // 86400) + 2}d"})
        assert {a: by_agent(ages).get(a) for a in UNTIMED} == {a: everything[a] for a in UNTIMED}
        hours = svc.call("stats", {"by": "hour"})
        assert hours["totals"]["total_tokens"] == sum(everything.values()) and "undated" not in hours
        # MCP's usage_summary over the same days.
        from agtaild.mcp.tools import BY_NAME, check_arguments

        tool = BY_NAME["usage_summary"]
        text = tool.run(svc.call, check_arguments(tool, {"since": first, "by": "agent"}), None)
        for agent in UNTIMED:
            assert f"- {agent}: {everything[agent]:,} tokens" in text
    finally:
        svc.close()


def test_usage_with_no_time_at_all_is_said_to_be_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An OpenHands conversation whose metadata carries no time: its usage is on no day."""
    src = next((UNTIMED["openhands"] / "conversations").iterdir())
    root = tmp_path / "openhands"
    dest = root / "conversations" / src.name
    shutil.copytree(src, dest)
    for path in dest.rglob("*.json"):
        doc = json.loads(path.read_text())
        path.write_text(json.dumps(_without_times(doc)))
    svc = service(tmp_path / "data", {"openhands": root, "claude-code": REAL / "claude-2.1.197" / "projects"})
    try:
        sessions = svc.call("sessions.list", {"agent": "openhands"})["sessions"]
        assert sessions and all(s["started"] is None and s["ended"] is None for s in sessions)
        whole = svc.call("stats", {"by": "agent"})
        untimed = by_agent(whole)["openhands"]
        assert untimed > 0 and "undated" not in whole  # no date bound: counted (on no day)
        dated = svc.call("stats", {"by": "model", "since": "2020-01-01"})
        assert dated["undated"]["total_tokens"] == untimed
        assert dated["totals"]["total_tokens"] == whole["totals"]["total_tokens"] - untimed
        assert svc.call("stats", {"by": "hour"})["undated"]["total_tokens"] == untimed
        assert "undated" not in svc.call("stats", {"by": "model", "since": "2020-01-01", "agent": "claude-code"})
        from agtaild.mcp.tools import BY_NAME, check_arguments

        tool = BY_NAME["usage_summary"]
        text = tool.run(svc.call, check_arguments(tool, {"since": "2020-01-01"}), None)
        assert f"Not counted above: {untimed:,} tokens" in text and "no time at all" in text
    finally:
        svc.close()
    from agtaild.cli import main

    common = ["--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"openhands={root}",
              "--root", f"claude-code={REAL / 'claude-2.1.197' / 'projects'}"]
    assert main([*common, "stats", "--since", "2020-01-01"]) == 0
    err = capsys.readouterr().err
    assert "have no time at all (neither the records nor their sessions): not in any date range above" in err


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if not any(w in k.lower() for w in ("time", "_at", "date"))}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_an_index_of_0_2_0_dates_its_untimed_usage_when_it_opens(tmp_path: Path) -> None:
    """The migration: usage rows stored on no day get their session's time and day."""
    data = tmp_path / "data"
    svc = service(data, {"openhands": UNTIMED["openhands"]})
    svc.close()
    db = sqlite3.connect(str(data / "index.sqlite3"))
    db.execute("UPDATE usage SET epoch = NULL, day = ''")  # as 0.2.0 stored them
    db.execute("DELETE FROM _migrations WHERE name = 'm010_usage_session_time'")
    from agtaild.index.usage import refresh_rollup

    refresh_rollup(db, None)
    db.commit()
    db.close()
    svc = Service(Config(data_dir=str(data), roots=[RootSpec("openhands", str(UNTIMED["openhands"]))], archive=False))
    try:
        rows = svc.call("stats", {"by": "day"})["rows"]
        assert rows and all(r["key"] != "(unknown)" for r in rows)
    finally:
        svc.close()


def test_continue_last_active_is_a_recorded_time_not_the_files_mtime(tmp_path: Path) -> None:
    root = tmp_path / "continue"
    shutil.copytree(UNTIMED["continue"], root, copy_function=shutil.copy)  # a plain copy: mtime now
    now = time.time()
    for path in root.rglob("*"):
        os.utime(path, (now, now))
    from agtaild.adapters import get_adapter

    adapter = get_adapter("continue")
    index = {e["sessionId"]: int(e["dateCreated"]) for e in json.loads((root / "sessions" / "sessions.json").read_text())}
    units = list(adapter.discover(root))
    assert len(units) == len(index)
    for unit in units:
        s = adapter.read(unit, None, now=now + 60).session
        created = index[s.id] / 1000
        assert parse_time(s.started) == pytest.approx(created, abs=0.001)
        assert parse_time(s.ended) == pytest.approx(created, abs=0.001), "last active is the copy's mtime"


def test_continue_last_active_is_its_latest_reasoning_time(tmp_path: Path) -> None:
    root = tmp_path / "continue"
    shutil.copytree(UNTIMED["continue"], root)
    path = next(p for p in (root / "sessions").iterdir() if p.name != "sessions.json")
    doc = json.loads(path.read_text())
    created = next(int(e["dateCreated"]) for e in json.loads((root / "sessions" / "sessions.json").read_text())
                   if e["sessionId"] == doc["sessionId"])
    item = next(i for i in doc["history"] if i["message"]["role"] == "assistant")
    item["reasoning"] = {"active": False, "text": "thinking it over", "startAt": created + 5_000, "endAt": created + 9_000}
    path.write_text(json.dumps(doc))
    from agtaild.adapters import get_adapter
    from agtaild.adapters.base import Unit

    adapter = get_adapter("continue")
    s = adapter.read(Unit(agent="continue", path=str(path), files=[str(path)], root=str(root)), None,
                     now=time.time() + 60).session
    assert parse_time(s.ended) == pytest.approx((created + 9_000) / 1000, abs=0.001)
