"""Live usage from a real index: active sessions and their burn, Claude's block and week,
Codex's recorded rate-limit windows (synthetic and the real 0.171.0 recordings)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.errors import UsageError
from agtaild.index.live import live_usage
from agtaild.query.service import Service
from tests.live_helpers import NOW, claude_session, codex_rollout, live_config

M = 60.0
H = 3600.0
LIMITS = {
    "limit_id": "codex",
    "primary": {"used_percent": 42.5, "window_minutes": 300, "resets_at": int(NOW + 2 * H)},
    "secondary": {"used_percent": 7.0, "window_minutes": 10080, "resets_at": int(NOW + 3 * 86400)},
    "plan_type": "pro",
}


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Any]:
    config, claude, codex = live_config(tmp_path)
    # Fast: 4 responses in the last 5 minutes; slow: one 20 minutes ago; old: yesterday's.
    claude_session(claude, "fast-1111", "/w/app", [NOW - 4 * M, NOW - 3 * M, NOW - 2 * M, NOW - 1 * M])
    claude_session(claude, "slow-2222", "/w/lib", [NOW - 20 * M], tokens=500)
    claude_session(claude, "old-3333", "/w/app", [NOW - 26 * H, NOW - 25 * H])
    codex_rollout(codex, "01aa0000-0000-7000-8000-000000000001", NOW - 10 * M, LIMITS)
    return {"config": config, "claude": claude, "codex": codex, "tmp": tmp_path}


@pytest.fixture
def svc(layout: dict[str, Any]) -> Iterator[Service]:
    service = Service(layout["config"])
    service.update_index()
    yield service
    service.close()


def live(svc: Service, **kw: Any) -> dict[str, Any]:
    return live_usage(svc._reader(), svc.pricing(), now=NOW, **kw)


def test_active_sessions_sorted_by_burn_with_their_rates(svc: Service) -> None:
    doc = live(svc)
    ids = [s["id"] for s in doc["sessions"]]
    assert ids == ["fast-1111", "01aa0000-0000-7000-8000-000000000001", "slow-2222"]  # old-3333 is not active
    fast = doc["sessions"][0]
    # 4 responses of 1000 input + 100 output in 5 minutes.
    assert fast["burn"]["5m"]["tokens"] == 4400
    assert fast["burn"]["5m"]["tokens_per_minute"] == 880.0
    assert fast["burn"]["30m"]["tokens_per_minute"] == pytest.approx(4400 / 30, abs=0.1)
    assert fast["usage"]["total_tokens"] == 4400
    assert fast["minutes"][-5:] == [1100, 1100, 1100, 1100, 0]  # 4, 3, 2 and 1 minute ago
    assert fast["burn"]["5m"]["usd_per_hour"] > 0
    assert fast["model"] == "claude-opus-4-8"
    assert fast["window"] == "claude-code block 2026-03-01T11:00:00Z"
    slow = doc["sessions"][2]
    assert slow["burn"]["5m"]["tokens"] == 0 and slow["burn"]["30m"]["tokens"] == 550
    codex = doc["sessions"][1]
    assert codex["window"] == "codex primary (300 min)"
    assert codex["burn"]["30m"]["tokens"] == 5200
    # A shorter activity window leaves the slow session out.
    assert [s["id"] for s in live(svc, active_minutes=15)["sessions"]] == [
        "fast-1111",
        "01aa0000-0000-7000-8000-000000000001",
    ]


def test_claude_block_week_and_projection(svc: Service) -> None:
    doc = live(svc)
    block = next(w for w in doc["windows"] if w["agent"] == "claude-code" and w["kind"] == "block")
    assert (block["start"], block["end"], block["active"]) == (
        "2026-03-01T11:00:00Z",
        "2026-03-01T16:00:00Z",
        True,
    )
    assert block["usage"]["responses"] == 5 and block["usage"]["total_tokens"] == 4400 + 550
    assert block["resets_in_seconds"] == 4 * 3600
    assert block["projection"]["label"] == "projection"
    assert block["projection"]["total_tokens"] == round(4950 + 4950 / 30 * 240)
    week = next(w for w in doc["windows"] if w["kind"] == "week")
    assert week["usage"]["responses"] == 7  # yesterday's two count in the week, not in the block
    from agtaild.index.prepare import local_day

    day = local_day(NOW)
    assert doc["today"]["day"] == day
    assert doc["today"]["usage"] == svc.call("stats", {"by": "agent", "since": day, "until": day})["totals"]
    assert doc["today"]["usage"]["total_tokens"] > 0


def test_codex_windows_as_recorded_with_their_age(svc: Service) -> None:
    windows = {w["kind"]: w for w in live(svc)["windows"] if w["agent"] == "codex"}
    primary, secondary = windows["primary"], windows["secondary"]
    assert (primary["used_percent"], primary["window_minutes"]) == (42.5, 300)
    assert primary["resets_in_seconds"] == 2 * 3600 and primary["resets_at"] == "2026-03-01T14:00:00Z"
    assert primary["age_seconds"] == 600 and primary["source"] == "recorded"
    assert secondary["window_minutes"] == 10080
    assert windows["snapshot"]["plan_type"] == "pro" and "unknown" not in windows["snapshot"]


def test_a_snapshot_from_a_future_cli_keeps_unknown_fields_raw(layout: dict[str, Any]) -> None:
    future = {
        **LIMITS,
        "primary": {**LIMITS["primary"], "burst_credits": 3},
        "spend_cap": {"usd": 50, "reached": False},
        "resets_at_text": "soon",
    }
    codex_rollout(layout["codex"], "01aa0000-0000-7000-8000-000000000009", NOW - 1 * M, future)
    service = Service(layout["config"])
    try:
        service.update_index()
        windows = {w["kind"]: w for w in live(service)["windows"] if w["agent"] == "codex"}
    finally:
        service.close()
    assert windows["primary"]["unknown"] == {"burst_credits": 3}
    assert windows["primary"]["used_percent"] == 42.5
    assert windows["snapshot"]["unknown"] == {
        "spend_cap": {"usd": 50, "reached": False},
        "resets_at_text": "soon",
    }
    assert windows["snapshot"]["age_seconds"] == 60  # the newer snapshot wins


def test_the_real_codex_recordings_have_a_snapshot_without_windows(corpus: Path, tmp_path: Path) -> None:
    config, _, codex = live_config(tmp_path)
    shutil.rmtree(codex)
    shutil.copytree(corpus / "real" / "codex-0.171.0" / "sessions", codex)
    service = Service(config)
    try:
        service.update_index()
        from agtaild.index.prepare import parse_time

        now = parse_time("2026-11-30T00:30:00Z")
        assert now is not None
        doc = live_usage(service._reader(), service.pricing(), now=now)
    finally:
        service.close()
    codex_windows = [w for w in doc["windows"] if w["agent"] == "codex"]
    # 0.171.0 against a local model: rate_limits with primary and secondary null, and two
    # fields 0.135.0 did not write (kept, shown as unknown).
    assert [w["kind"] for w in codex_windows] == ["snapshot"]
    snap = codex_windows[0]
    assert snap["limit_id"] == "codex"
    assert snap["unknown"] == {"individual_limit": None, "spend_control_reached": None}
    assert snap["recorded_at"] == "2026-11-30T00:25:38.779000Z" and snap["age_seconds"] == 261
    assert len(doc["sessions"]) == 5 and all(s["window"] is None for s in doc["sessions"])


def test_a_real_codex_0_135_rollout_s_windows_as_recorded(corpus: Path, tmp_path: Path) -> None:
    """A real (redacted) `codex exec` 0.135.0 rollout on a Pro plan: both windows, as written."""
    config, _, codex = live_config(tmp_path)
    source = corpus / "codex" / "agent-history" / "sessions" / "2026" / "06" / "05"
    (codex / "2026" / "06" / "05").mkdir(parents=True)
    for f in source.glob("rollout-*019e9625*.jsonl"):
        shutil.copy(f, codex / "2026" / "06" / "05" / f.name)
    from agtaild.index.prepare import parse_time

    recorded = parse_time("2026-06-05T04:58:26.707Z")
    assert recorded is not None
    service = Service(config)
    try:
        service.update_index()
        doc = live_usage(service._reader(), service.pricing(), now=recorded + 10 * M)
    finally:
        service.close()
    windows = {w["kind"]: w for w in doc["windows"] if w["agent"] == "codex"}
    assert set(windows) == {"primary", "secondary", "snapshot"}
    primary, secondary = windows["primary"], windows["secondary"]
    assert (primary["used_percent"], primary["window_minutes"], primary["resets_at"]) == (
        15.0,
        300,
        "2026-06-05T05:46:35Z",
    )
    assert primary["resets_in_seconds"] == 1780638395 - round(recorded + 10 * M)
    assert (secondary["used_percent"], secondary["window_minutes"]) == (5.0, 10080)
    assert secondary["resets_at"] == "2026-06-11T02:50:08Z"
    assert primary["age_seconds"] == 600 and primary["recorded_at"] == "2026-06-05T04:58:26.707000Z"
    snap = windows["snapshot"]
    assert (snap["limit_id"], snap["plan_type"]) == ("codex", "pro") and "unknown" not in snap
    assert all("unknown" not in w for w in windows.values())  # every field of 0.135.0 is known


def test_sessions_with_no_usage_and_clocks_that_jump(layout: dict[str, Any]) -> None:
    claude = layout["claude"]
    claude_session(claude, "quiet-4444", "/w/quiet", [])  # a prompt, no response yet
    claude_session(
        claude, "ahead-5555", "/w/ahead", [NOW - 2 * M, NOW + 2 * H]
    )  # a response "from the future"
    service = Service(layout["config"])
    try:
        service.update_index()
        doc = live_usage(service._reader(), service.pricing(), now=NOW, active_minutes=120)
    finally:
        service.close()
    by_id = {s["id"]: s for s in doc["sessions"]}
    quiet = by_id["quiet-4444"]
    assert (
        quiet["usage"]["total_tokens"] == 0 and quiet["burn"]["5m"]["tokens"] == 0 and quiet["model"] is None
    )
    jumped = by_id["ahead-5555"]
    assert jumped["burn"]["5m"]["tokens"] == 1100 and jumped["ahead"] == 1
    block = next(w for w in doc["windows"] if w["kind"] == "block")
    assert block["last"] == "2026-03-01T11:59:00Z"  # the future response is in no block now


def test_a_clock_set_back_leaves_what_is_dated_days_ahead_out_of_now(layout: dict[str, Any]) -> None:
    """Sessions dated more than a day after the clock (a clock set back a year, an index of
    another machine's future) are not active now and count in no window of now; a snapshot
    recorded then is not the newest one now."""
    later = {**LIMITS, "primary": {**LIMITS["primary"], "used_percent": 99.0}}
    claude_session(layout["claude"], "later-6666", "/w/later", [NOW + 2 * 86400, NOW + 2 * 86400 + M])
    codex_rollout(layout["codex"], "01aa0000-0000-7000-8000-000000000007", NOW + 3 * 86400, later)
    service = Service(layout["config"])
    try:
        service.update_index()
        doc = live(service)
    finally:
        service.close()
    assert [s["id"] for s in doc["sessions"]] == [
        "fast-1111",
        "01aa0000-0000-7000-8000-000000000001",
        "slow-2222",
    ]
    windows = {(w["agent"], w["kind"]): w for w in doc["windows"]}
    assert windows[("claude-code", "block")]["usage"]["responses"] == 5
    assert windows[("claude-code", "week")]["usage"]["responses"] == 7
    assert (
        windows[("codex", "primary")]["used_percent"] == 42.5
        and windows[("codex", "primary")]["age_seconds"] == 600
    )


def test_every_query_of_the_live_answer_searches_an_index(svc: Service) -> None:
    """No statement of ``usage.live`` (the active sessions, the windows, today's total, one
    session) reads a whole table: each is bounded by an index, on time or on the session."""
    db = svc._reader()
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    try:
        svc.call("usage.live", {})
        svc.call("usage.live", {"session": "claude-code:fast-1111", "sessions": False})
    finally:
        db.set_trace_callback(None)
    selects = [sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) > 10
    for sql in selects:
        plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql)]
        assert not [step for step in plan if step.startswith("SCAN")], (sql, plan)


def test_the_method_checks_its_parameters_and_answers_one_session(svc: Service) -> None:
    doc = svc.call("usage.live", {"session": "claude-code:slow", "sessions": "false"})
    assert doc["sessions"] == []
    assert doc["session"]["id"] == "slow-2222" and doc["session"]["usage"]["total_tokens"] == 550
    assert svc.call("usage.live", {"session": "no-such-session"})["session"] is None
    for bad in ({"active": 0}, {"active": 5000}, {"agent": "nope"}, {"colour": "red"}):
        with pytest.raises(UsageError):
            svc.call("usage.live", bad)
