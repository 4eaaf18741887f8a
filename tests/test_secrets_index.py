"""The index pipeline keeps the secrets it found: a findings table written after each update,
incrementally (an append scans only its new events), listed by ``secrets.list`` (one line per
distinct secret, newest first), filtered by ``has_secret``, with an allowlist the user owns
that survives a reindex."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, RootSpec
from agtaild.errors import UsageError
from agtaild.index import findings
from agtaild.query.service import Service
from agtaild.secrets import default_scanner
from tests.index_toy import ToyAdapter, append, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "Z5ZPAR3B7TTE2QXN"


def leaky(sid: str, secret: str, ts: str = "2026-01-01T10:00:00Z") -> list[str]:
    return [
        toy_line(t="meta", id=sid, cwd="/w", title=f"session {sid}"),
        toy_line(t="msg", role="user", text="hello there", ts=ts),
        toy_line(
            t="tool",
            id="c1",
            name="Bash",
            input={"command": f"git push https://x:{secret}@github.com/o/r"},
            ts=ts,
        ),
    ]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"


@pytest.fixture
def svc(tmp_path: Path, root: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    write_session(root / "a.jsonl", leaky("a", GITHUB, "2026-01-01T10:00:00Z"))
    write_session(root / "b.jsonl", leaky("b", GITHUB, "2026-01-02T10:00:00Z"))
    write_session(
        root / "c.jsonl",
        [
            toy_line(t="meta", id="c", cwd="/w"),
            toy_line(t="msg", role="user", text="nothing", ts="2026-01-03T10:00:00Z"),
        ],
    )
    service = Service(
        Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(root))], archive=False)
    )
    service.update_index()
    yield service
    service.close()


def rows(svc: Service, sql: str, *args: Any) -> list[Any]:
    return svc._reader().execute(sql, args).fetchall()


def test_an_update_records_findings_by_event_and_field(svc: Service) -> None:
    found = rows(
        svc,
        "SELECT s.sid, f.seq, f.field, f.rule, f.fingerprint, f.tail FROM secret_findings f JOIN sessions s ON s.id = f.session_id ORDER BY s.sid",
    )
    assert [(r[0], r[2]) for r in found] == [("a", "/input/command"), ("b", "/input/command")]
    assert len({r[4] for r in found}) == 1 and all(r[5] == "q7R8" for r in found)
    assert GITHUB not in json.dumps(found)  # the fingerprint, never the secret
    assert findings.pending(svc._reader(), default_scanner()) == 0
    # the clean events are recorded as clean, by the digest an exit computes (the same
    # "hello there" in two sessions is one digest: it names bytes, not events)
    from agtaild.secrets.items import digest, fields_to_scan

    events = svc.call("events.list", {"agent": "toy", "id": "a"}, reveal=True)["events"]
    keys = [digest(fields_to_scan(e)[0]) for e in events]
    known = findings.known_clean(svc._reader(), default_scanner(), [k for k in keys if k])
    assert [k in known for k in keys] == [e["kind"] != "tool_use" for e in events]


def test_an_append_scans_only_the_new_events(
    svc: Service, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanned: list[int] = []
    real = findings._scan_rows

    def counting(db: sqlite3.Connection, scanner: Any, batch: list[Any]) -> tuple[int, int, int]:
        scanned.extend(r[0] for r in batch)
        return real(db, scanner, batch)

    monkeypatch.setattr(findings, "_scan_rows", counting)
    before = rows(svc, "SELECT max(id) FROM events")[0][0]
    append(
        root / "c.jsonl", [toy_line(t="msg", role="user", text=f"my key is {AWS}", ts="2026-01-04T10:00:00Z")]
    )
    report = svc.update_index()
    assert scanned and all(i > before for i in scanned) and report["secrets"]["pending"] == 0
    doc = svc.call("secrets.list", {})
    assert [s["rule"] for s in doc["secrets"]] == ["aws-access-token", "github-pat"]  # newest first


def test_the_list_is_what_to_rotate_one_line_per_secret(svc: Service) -> None:
    doc = svc.call("secrets.list", {})
    assert len(doc["secrets"]) == 1 and doc["pending"] == 0
    entry = doc["secrets"][0]
    assert (
        entry["masked"] == "«secret:github-pat …q7R8»"
        and entry["session_count"] == 2
        and entry["place_count"] == 2
    )
    assert entry["first_seen"].startswith("2026-01-01") and entry["last_seen"].startswith("2026-01-02")
    assert [p["id"] for p in entry["places"]] == ["b", "a"] and entry["places"][0][
        "field"
    ] == "/input/command"
    assert GITHUB not in json.dumps(doc)
    one = svc.call("secrets.list", {"session": "toy:a"})
    assert one["secrets"][0]["place_count"] == 1


def test_has_secret_filters_list_and_search(svc: Service) -> None:
    with_secret = {s["id"] for s in svc.call("sessions.list", {"has_secret": True})["sessions"]}
    without = {s["id"] for s in svc.call("sessions.list", {"has_secret": False})["sessions"]}
    assert with_secret == {"a", "b"} and without == {"c"}
    hits = svc.call("search", {"q": "hello", "has_secret": True})["hits"]
    assert {h["session"]["id"] for h in hits} == {"a", "b"}
    assert svc.call("search", {"q": "nothing", "has_secret": True})["hits"] == []


def test_the_allowlist_is_the_users_and_survives_a_reindex(svc: Service) -> None:
    fp = svc.call("secrets.list", {})["secrets"][0]["fingerprint"]
    assert svc.call("secrets.allow", {"fingerprint": fp, "reason": "revoked"})["changed"] is True
    assert svc.call("secrets.list", {})["secrets"] == []
    assert svc.call("secrets.list", {"allowlisted": True})["secrets"][0]["allowlisted"] is True
    assert svc.call("sessions.list", {"has_secret": True})["sessions"] == []
    svc.update_index(full=True)  # a rebuild of the index from the files
    assert rows(svc, "SELECT count(*) FROM secret_findings")[0][0] == 2
    assert (
        svc.call("secrets.list", {})["secrets"] == []
        and svc.call("secrets.list", {})["allowlisted_hidden"] == 1
    )
    # still masked at the exits: allowlisting hides a finding from the lists, it reveals nothing
    assert GITHUB not in json.dumps(svc.call("events.list", {"agent": "toy", "id": "a"}))
    assert svc.call("secrets.unallow", {"fingerprint": fp})["changed"] is True
    assert len(svc.call("secrets.list", {})["secrets"]) == 1
    with pytest.raises(UsageError):
        svc.call("secrets.allow", {"fingerprint": "not-hex"})


def test_a_rewritten_session_keeps_no_stale_findings(svc: Service, root: Path) -> None:
    write_session(
        root / "a.jsonl",
        [
            toy_line(t="meta", id="a", cwd="/w"),
            toy_line(t="msg", role="user", text="clean now", ts="2026-01-05T10:00:00Z"),
        ],
    )
    svc.update_index(full=True)
    assert [
        r[0]
        for r in rows(
            svc, "SELECT DISTINCT s.sid FROM secret_findings f JOIN sessions s ON s.id = f.session_id"
        )
    ] == ["b"]


def test_reused_event_ids_are_scanned(svc: Service, root: Path) -> None:
    """The writer numbers events max + 1: after the newest events are deleted, new ones take
    ids at or below the pass's mark, and are queued rather than skipped."""
    newest = rows(
        svc, "SELECT s.sid FROM events e JOIN sessions s ON s.id = e.session_id ORDER BY e.id DESC LIMIT 1"
    )[0][0]
    top = rows(svc, "SELECT max(id) FROM events")[0][0]
    write_session(
        root / f"{newest}.jsonl",
        [
            toy_line(t="meta", id=newest, cwd="/w"),
            toy_line(t="msg", role="user", text=f"now {AWS}", ts="2026-01-06T10:00:00Z"),
        ],
    )
    svc.update_index()
    new_ids = [
        r[0]
        for r in rows(
            svc, "SELECT e.id FROM events e JOIN sessions s ON s.id = e.session_id WHERE s.sid = ?", newest
        )
    ]
    assert min(new_ids) <= top  # an id was reused
    assert "aws-access-token" in {s["rule"] for s in svc.call("secrets.list", {})["secrets"]}


def test_a_first_index_does_not_wait_and_the_rest_runs_later(
    tmp_path: Path,
    toy_registry: ToyAdapter,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "big"
    for i in range(6):
        write_session(root / f"s{i}.jsonl", leaky(f"s{i}", GITHUB))
    monkeypatch.setattr(findings, "INLINE_BUDGET_CHARS", 1)
    monkeypatch.setattr(findings, "BATCH_EVENTS", 2)
    service = Service(
        Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(root))], archive=False)
    )
    try:
        report = service.update_index()
        assert report["secrets"]["pending"] > 0  # the update did not scan everything
        # masked all the same, scan or no scan
        assert GITHUB not in json.dumps(service.call("events.list", {"agent": "toy", "id": "s5"}))
        assert service.call("secrets.list", {})["pending"] > 0  # a request does not run the pass
        assert service.scan_secrets()["pending"] == 0
        assert service.call("secrets.list", {})["secrets"][0]["session_count"] == 6
    finally:
        service.close()


def test_an_update_that_read_much_scans_nothing_inline(
    tmp_path: Path,
    toy_registry: ToyAdapter,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "big"
    for i in range(3):
        write_session(root / f"s{i}.jsonl", leaky(f"s{i}", GITHUB))
    monkeypatch.setattr(findings, "BIG_UPDATE_BYTES", 1)  # every update with bytes to read is "big"
    service = Service(
        Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(root))], archive=False)
    )
    try:
        report = service.update_index()
        assert report["secrets"]["scanned"] == 0
        assert report["secrets"]["pending"] == len(rows(service, "SELECT id FROM events")) + 3
        assert GITHUB not in json.dumps(service.call("events.list", {"agent": "toy", "id": "s2"}))
        assert service.scan_secrets()["pending"] == 0
        assert service.call("secrets.list", {})["secrets"][0]["session_count"] == 3
        # a small update (an append, a new session) scans what it stored inline
        write_session(root / "s3.jsonl", leaky("s3", GITHUB))
        monkeypatch.setattr(findings, "BIG_UPDATE_BYTES", 1 << 40)
        assert service.update_index()["secrets"]["pending"] == 0
    finally:
        service.close()


def test_other_rules_start_the_pass_again(svc: Service) -> None:
    from agtaild.secrets import Scanner, load_rules

    other = Scanner(load_rules(), disabled=["github-pat"])
    db = svc._db
    assert findings.pending(db, other) > 0
    findings.scan_pass(db, other, max_chars=None)
    assert {r[0] for r in db.execute("SELECT rule FROM secret_findings")} == {"url-password"}
    assert findings.known_clean(db, default_scanner(), [b"x" * 16]) == set()


async def test_the_daemons_writer_finishes_the_pass_in_the_background(
    tmp_path: Path,
    toy_registry: ToyAdapter,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from agtaild.api.hub import ChangeHub
    from agtaild.daemon.scheduler import IndexWriter

    root = tmp_path / "big"
    for i in range(5):
        write_session(root / f"s{i}.jsonl", leaky(f"s{i}", GITHUB))
    monkeypatch.setattr(findings, "INLINE_BUDGET_CHARS", 1)
    monkeypatch.setattr(findings, "BATCH_EVENTS", 2)
    service = Service(
        Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(root))], archive=False)
    )
    writer = IndexWriter(service, ChangeHub())
    try:
        writer.start()
        async with asyncio.timeout(30):
            while writer.secrets is None or writer.secrets.get("pending") != 0:
                await asyncio.sleep(0.02)
        assert writer.status()["secrets"]["pending"] == 0 and writer.secrets["findings"] >= 1
        assert len(rows(service, "SELECT DISTINCT session_id FROM secret_findings")) == 5
    finally:
        await writer.stop()
        service.close()


def test_session_level_fields_are_findings_too_and_incremental(
    svc: Service, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A title or a working directory holding a secret is recorded like an event's text: field
    ``/session/title`` (seq -1), scanned when the session row changes, and only then."""
    write_session(root / "d.jsonl", [toy_line(t="meta", id="d", cwd=f"/srv/{AWS}", title=f"rotate {GITHUB} today"),
                                     toy_line(t="msg", role="user", text="hi", ts="2026-01-07T10:00:00Z")])  # fmt: skip
    svc.update_index()
    found = rows(
        svc,
        "SELECT f.seq, f.field, f.rule, f.event_id FROM secret_findings f JOIN sessions s ON s.id = f.session_id WHERE s.sid = 'd' ORDER BY f.field",
    )
    assert [(r[0], r[1], r[2], r[3]) for r in found] == [
        (-1, "/session/cwd", "aws-access-token", 0), (-1, "/session/project", "aws-access-token", 0), (-1, "/session/title", "github-pat", 0)
    ]  # fmt: skip
    listed = svc.call("secrets.list", {"session": "toy:d"})["secrets"]
    assert {p["field"] for s in listed for p in s["places"]} == {
        "/session/cwd",
        "/session/project",
        "/session/title",
    }
    assert {s["id"] for s in svc.call("sessions.list", {"has_secret": True})["sessions"]} == {"a", "b", "d"}
    assert findings.pending(svc._reader(), default_scanner()) == 0
    # An update that changes no session scans no session.
    seen: list[int] = []
    real = findings._scan_sessions

    def counting(db: sqlite3.Connection, scanner: Any, batch: list[Any]) -> tuple[int, int, int]:
        seen.extend(r[0] for r in batch)
        return real(db, scanner, batch)

    monkeypatch.setattr(findings, "_scan_sessions", counting)
    svc.update_index()
    assert seen == []
    # The title rewritten clean: its finding goes, the cwd's stays.
    write_session(root / "d.jsonl", [toy_line(t="meta", id="d", cwd=f"/srv/{AWS}", title="nothing here"),
                                     toy_line(t="msg", role="user", text="hi", ts="2026-01-07T10:00:00Z")])  # fmt: skip
    svc.update_index()
    assert len(seen) == 1
    found = rows(
        svc, "SELECT f.field FROM secret_findings f JOIN sessions s ON s.id = f.session_id WHERE s.sid = 'd'"
    )
    assert sorted(found) == [("/session/cwd",), ("/session/project",)]


def test_a_rule_on_has_secret_labels_the_sessions_holding_one(svc: Service) -> None:
    from agtaild.query.rules import apply_rules
    from agtaild.userstate import rules

    def where(text: str) -> set[str]:
        return {s["id"] for s in svc.call("sessions.list", {"where": text})["sessions"]}

    assert where("has-secret") == {"a", "b"} and where("has-secret=false") == {"c"}
    assert where("has-secret agent=toy") == {"a", "b"}
    rules.add(svc.state, "has-secret", "leak", "rotate")
    assert apply_rules(svc) == 2
    labelled = {s["id"] for s in svc.call("sessions.list", {"label": "leak=rotate"})["sessions"]}
    assert labelled == {"a", "b"}
    # An allowlisted secret no longer counts.
    fp = svc.call("secrets.list", {})["secrets"][0]["fingerprint"]
    svc.call("secrets.allow", {"fingerprint": fp, "reason": "revoked"})
    assert where("has-secret") == set() and where("has-secret=false") == {"a", "b", "c"}
    with pytest.raises(UsageError, match="has-secret=true"):
        svc.call("sessions.list", {"where": "has-secret:x"})


def test_pending_counts_few_events_exactly_and_many_from_their_ids(
    svc: Service, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon asks for the events left after every step of its pass: counting them walked
    the events table (seconds at 10 GB). Beyond EXACT_COUNT_IDS ids the ids left stand in: an
    upper bound, never 0 while an event is left, and exactly 0 once none is."""
    db = svc._reader()
    ids = [r[0] for r in rows(svc, "SELECT id FROM events ORDER BY id")]
    # ids freed by a session that is gone (its events deleted), below the newest ones
    middle = rows(
        svc,
        "SELECT s.sid FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.id = ?",
        ids[len(ids) // 2],
    )
    (root / f"{middle[0][0]}.jsonl").unlink()
    svc.update_index()
    after = [r[0] for r in rows(svc, "SELECT id FROM events ORDER BY id")]
    assert max(after) - min(after) + 1 > len(after)  # there are gaps now
    for mark in (0, ids[0], ids[len(ids) // 2], max(after) - 1, max(after)):
        exact = sum(1 for i in after if i > mark)
        assert findings.events_above(db, mark) == exact
        monkeypatch.setattr(findings, "EXACT_COUNT_IDS", 0)
        estimate = findings.events_above(db, mark)
        monkeypatch.setattr(findings, "EXACT_COUNT_IDS", 20_000)
        assert estimate == max(after) - mark if exact else estimate == 0
        assert estimate >= exact and (estimate > 0) == (exact > 0)
    assert findings.events_above(db, max(after) + 5) == 0
