"""`agtail pg push` into a real, throw-away PostgreSQL (tests/pg_cluster.py): two machines, one
team database; incremental, idempotent, crash-safe."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from tests.conftest import CORPUS
from tests.pg_cluster import pg_cluster, pg_url

__all__ = ["pg_cluster", "pg_url"]

psycopg = pytest.importorskip("psycopg")

MACHINE_A = {"claude-code": "real/claude-2.1.197/projects", "codex": "real/codex-0.171.0/sessions"}
MACHINE_B = {"gemini": "real/gemini-0.61.0/tmp", "pi": "real/pi-0.73.1/sessions"}


def machine(tmp: Path, name: str, roots: dict[str, str]) -> list[str]:
    """A copy of some corpus folders (so tests may append) and the CLI options of a machine
    whose index lives in tmp/<name>/data."""
    base = tmp / name
    args = ["--no-daemon", "--data-dir", str(base / "data"), "--only-roots"]
    for agent, rel in roots.items():
        target = base / "roots" / agent
        shutil.copytree(CORPUS / rel, target)
        args += ["--root", f"{agent}={target}"]
    return args


def cli(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    code = main([*args, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def push(capsys: pytest.CaptureFixture[str], args: list[str], url: str, name: str) -> dict[str, Any]:
    return cli(capsys, [*args, "pg", "push", "--url", url, "--machine", name])


def team_rows(url: str, machine_name: str | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the team database (of one machine), without push bookkeeping columns."""
    where = "WHERE machine = %s" if machine_name else ""
    params = (machine_name,) if machine_name else ()
    with psycopg.connect(url) as conn:
        # usage_daily is kept by triggers on usage: it must equal the counted usage summed.
        summed = (
            "SELECT machine, day, agent, coalesce(model, ''), long_ctx, count(*), sum(input), sum(output),"
            " sum(cache_read), sum(cache_write), sum(reasoning) FROM usage WHERE counted GROUP BY 1, 2, 3, 4, 5"
        )
        drift = conn.execute(
            f"(({summed}) EXCEPT ALL (SELECT * FROM usage_daily))"
            f" UNION ALL ((SELECT * FROM usage_daily) EXCEPT ALL ({summed}))"
        ).fetchall()
        assert drift == []
        return {
            "daily": conn.execute(
                f"SELECT * FROM usage_daily {where} ORDER BY 1, 2, 3, 4, 5", params
            ).fetchall(),
            "sessions": conn.execute(
                f"SELECT machine, agent, sid, collection, kind, cwd, title, activity, doc FROM sessions {where}"
                " ORDER BY 1, 2, 3, 4",
                params,
            ).fetchall(),
            "events": conn.execute(
                f"SELECT machine, agent, sid, collection, seq, kind, text, tool_result, doc FROM events {where}"
                " ORDER BY 1, 2, 3, 4, 5",
                params,
            ).fetchall(),
            "usage": conn.execute(
                f"SELECT machine, agent, sid, collection, key, input, output, cache_read, cache_write, counted"
                f" FROM usage {where} ORDER BY 1, 2, 3, 4, 5",
                params,
            ).fetchall(),
        }


def local_totals(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, Any]:
    return cli(capsys, [*args, "stats", "--by", "agent", "--no-update"])["totals"]


def team_totals(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT sum(input), sum(output), sum(cache_read), sum(cache_write) FROM usage WHERE counted"
        ).fetchone()
    return dict(
        zip(
            ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
            map(int, row),
            strict=True,
        )
    )


def test_two_machines_push_into_one_database(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = machine(tmp_path, "a", MACHINE_A), machine(tmp_path, "b", MACHINE_B)
    report_a = push(capsys, a, pg_url, "laptop")
    report_b = push(capsys, b, pg_url, "desktop")
    assert report_a["full"] and report_a["sessions"] > 5 and report_a["events"] > 50
    assert report_b["sessions"] > 0

    listed_a = cli(capsys, [*a, "list", "--limit", "500", "--no-update"])["sessions"]
    rows = team_rows(pg_url)
    assert {(r[0], r[1], r[2]) for r in rows["sessions"] if r[0] == "laptop"} == {
        ("laptop", s["agent"], s["id"]) for s in listed_a
    }
    assert {r[0] for r in rows["sessions"]} == {"laptop", "desktop"}
    # Every event of every session arrived, with its exact JSON.
    assert sum(1 for r in rows["events"] if r[0] == "laptop") == report_a["events"]
    one = listed_a[0]
    shown = cli(capsys, [*a, "show", f"{one['agent']}:{one['id']}", "--no-update"])["events"]
    stored = [json.loads(r[8]) for r in rows["events"] if r[:3] == ("laptop", one["agent"], one["id"])]
    assert [e["seq"] for e in stored] == [e["seq"] for e in shown]
    assert stored == shown

    # Team token totals are the sum of the two machines' own.
    ta, tb, team = local_totals(capsys, a), local_totals(capsys, b), team_totals(pg_url)
    for key, value in team.items():
        assert value == ta[key] + tb[key], key

    # An unchanged index pushes nothing.
    again = push(capsys, a, pg_url, "laptop")
    assert again["rows"] == 0 and not again["full"]
    assert team_rows(pg_url) == rows


def test_an_append_pushes_only_that_sessions_new_events(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machine(tmp_path, "a", MACHINE_A)
    push(capsys, a, pg_url, "laptop")
    session_file = sorted(
        (tmp_path / "a" / "roots" / "claude-code").glob("*/*.jsonl"), key=lambda p: p.stat().st_size
    )[-1]
    sid = session_file.stem
    # As Claude Code appends: the new prompt continues the conversation's last record.
    last = [json.loads(x) for x in session_file.read_text().splitlines() if x.strip()]
    parent = next(
        (r["uuid"] for r in reversed(last) if r.get("uuid") and r.get("type") in ("user", "assistant")), None
    )
    line = {
        "type": "user",
        "message": {"role": "user", "content": "pushed afterwards: zebrafinch"},
        "uuid": "0f000000-0000-4000-8000-000000000001",
        "parentUuid": parent,
        "sessionId": sid,
        "timestamp": "2026-11-30T23:59:00.000Z",
        "cwd": "/tmp",
    }
    with session_file.open("a") as f:
        f.write(json.dumps(line) + "\n")
    old = session_file.stat().st_mtime - 60
    os.utime(session_file, (old, old))
    report = push(capsys, a, pg_url, "laptop")
    assert report["sessions"] == 1 and 1 <= report["events"] <= 3, report
    with psycopg.connect(pg_url) as conn:
        found = conn.execute(
            "SELECT sid FROM events WHERE tsv @@ plainto_tsquery('simple', 'zebrafinch')"
        ).fetchall()
    assert found == [(sid,)]


def test_a_deleted_session_is_removed_and_a_rebuilt_index_is_pushed_whole(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machine(tmp_path, "a", MACHINE_A)
    a_no_archive = a  # the archive keeps deleted sessions; see below for the archive-off case
    push(capsys, a, pg_url, "laptop")
    before = team_rows(pg_url)
    cli(capsys, [*a_no_archive, "reindex"])
    report = push(capsys, a, pg_url, "laptop")
    assert report["full"]
    assert team_rows(pg_url) == before  # same content from a new index: nothing lost, nothing doubled


def test_kill_during_a_push_then_push_again_equals_a_push_from_scratch(
    tmp_path: Path, pg_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machine(tmp_path, "a", MACHINE_A)
    cli(capsys, [*a, "index"])
    interrupted, clean = pg_cluster.new_database(), pg_cluster.new_database()
    data_dir = a[a.index("--data-dir") + 1]
    child = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        import agtaild.pg.push as p
        p.BATCH_EVENTS = 1
        real = p.Pusher._push_batch
        count = 0
        def batch_then_die(self, batch):
            global count
            real(self, batch)
            count += 1
            if count == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        p.Pusher._push_batch = batch_then_die
        from pathlib import Path
        p.push(Path({data_dir!r}) / "index.sqlite3", {interrupted!r}, "laptop")
        print("not killed")
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    partial = team_rows(interrupted)
    resumed = push(capsys, a, interrupted, "laptop")
    assert not resumed["full"] and partial["sessions"]
    push(capsys, a, clean, "laptop")
    assert team_rows(interrupted) == team_rows(clean)


def test_bad_url_and_machine_names_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machine(tmp_path, "a", {"codex": MACHINE_A["codex"]})
    assert main([*a, "pg", "push", "--url", "postgresql://nobody@/x?host=/nonexistent"]) == 1
    assert "cannot connect to the team database" in capsys.readouterr().err
    assert main([*a, "pg", "push", "--url", "postgresql://x@/y", "--machine", "../etc"]) == 2
    assert "--machine" in capsys.readouterr().err


# -- the team server's service over what two machines pushed ---------------------------------
@pytest.fixture
def team(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> Any:
    from agtaild.pg.service import TeamService

    a, b = machine(tmp_path, "a", MACHINE_A), machine(tmp_path, "b", MACHINE_B)
    push(capsys, a, pg_url, "laptop")
    push(capsys, b, pg_url, "desktop")
    svc = TeamService(pg_url, data_dir=tmp_path / "server", machine="laptop")
    svc.machines = {"laptop": a, "desktop": b}  # type: ignore[attr-defined]
    yield svc
    svc.close()


def test_team_lists_both_machines_with_the_local_documents(
    team: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = team.call("sessions.list", {"limit": 500})["sessions"]
    assert {s["machine"] for s in listed} == {"laptop", "desktop"}
    local = cli(capsys, [*team.machines["laptop"], "list", "--limit", "500", "--no-update"])["sessions"]
    mine = {(s["agent"], s["id"]): s for s in listed if s["machine"] == "laptop"}
    for s in local:
        remote = dict(mine[(s["agent"], s["id"])])
        assert remote.pop("machine") == "laptop"
        assert remote == s  # the same document, usage and cost included
    # Another machine's sessions are never offered for resume from here.
    assert not any(s["resumable"] for s in listed if s["machine"] == "desktop")
    only = team.call("sessions.list", {"machine": "desktop", "limit": 500})["sessions"]
    assert only and {s["machine"] for s in only} == {"desktop"}
    # total: every page's sessions counted, with the same filters.
    assert team.call("sessions.list", {"limit": 3, "total": True})["total"] == len(listed)
    assert team.call("sessions.list", {"machine": "desktop", "limit": 1, "total": True})["total"] == len(only)
    assert "total" not in team.call("sessions.list", {"limit": 3})
    # Keyset pages cover everything once.
    seen, cursor = [], None
    while True:
        page = team.call("sessions.list", {"limit": 3, **({"cursor": cursor} if cursor else {})})
        seen += [(s["machine"], s["agent"], s["id"]) for s in page["sessions"]]
        cursor = page["next"]
        if not cursor:
            break
    assert sorted(seen) == sorted((s["machine"], s["agent"], s["id"]) for s in listed)


def test_team_stats_are_the_sum_of_the_machines(team: Any, capsys: pytest.CaptureFixture[str]) -> None:
    by_machine = team.call("stats", {"by": "machine"})
    for name, args in team.machines.items():
        own = local_totals(capsys, args)
        row = next(r for r in by_machine["rows"] if r["key"] == name)
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "total_tokens",
        ):
            assert row[key] == own[key], (name, key)
    local_days = cli(capsys, [*team.machines["laptop"], "stats", "--by", "day", "--no-update"])
    team_days = team.call("stats", {"by": "day", "machine": "laptop"})
    assert team_days == local_days


def test_team_search_modes(team: Any, capsys: pytest.CaptureFixture[str]) -> None:
    local_args = team.machines["laptop"]
    listed = cli(capsys, [*local_args, "list", "--limit", "500", "--no-update"])["sessions"]
    one = next(s for s in listed if s["agent"] == "claude-code" and s["messages"] > 2)
    events = cli(capsys, [*local_args, "show", f"claude-code:{one['id']}", "--no-update"])["events"]
    text = next(e["text"] for e in events if e["kind"] == "text" and e["text"] and len(e["text"].split()) > 4)
    words = [w for w in text.split() if w.isascii() and w.isalnum()][:3]
    assert len(words) >= 2
    phrase = " ".join(words)
    hits = team.call("search", {"q": phrase, "machine": "laptop", "limit": 50})["hits"]
    assert any(h["session"]["id"] == one["id"] for h in hits), phrase
    assert all(h["session"]["machine"] == "laptop" for h in hits)
    assert team.call("search", {"q": phrase[: len(words[0]) - 1], "mode": "prefix", "limit": 5})["hits"]
    reversed_words = " ".join(reversed(words))
    assert team.call("search", {"q": reversed_words, "mode": "words", "limit": 50})["hits"]
    # CJK by substring (the real recordings have a Japanese reply).
    cjk = (
        team.call("search", {"q": "日本", "limit": 5})["hits"]
        or team.call("search", {"q": "こんにちは", "limit": 5})["hits"]
    )
    assert cjk
    assert team.call("search", {"q": "colou?r|" + words[0], "mode": "regex", "limit": 5})["hits"]
    from agtaild.errors import UsageError

    with pytest.raises(UsageError):
        team.call("search", {"q": "(unclosed", "mode": "regex"})
    assert team.call("search", {"q": "'\"!:*&|<->", "limit": 5})["hits"] == []
    # The same caps as the local index: too long, too many terms.
    with pytest.raises(UsageError, match="too expensive"):
        team.call("search", {"q": "x" * 1001})
    with pytest.raises(UsageError, match="too expensive"):
        team.call("search", {"q": " ".join(f"w{i}" for i in range(40)), "mode": "words"})


def test_team_reading_views_match_the_local_ones(team: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """What the viewer's reading features ask: a window before a seq, stats by tool and by hour,
    projects, and the unique short ids — the same answers as the machine's own index."""
    local = team.machines["laptop"]
    listed = cli(capsys, [*local, "list", "--limit", "500", "--no-update"])["sessions"]
    remote = {
        (s["agent"], s["id"]): s
        for s in team.call("sessions.list", {"machine": "laptop", "limit": 500})["sessions"]
    }
    assert all(remote[(s["agent"], s["id"])]["short_id"] == s["short_id"] for s in listed)
    big = max(listed, key=lambda s: s["messages"])
    ref = {"agent": big["agent"], "id": big["id"]}
    all_events = team.call("events.list", {**ref, "limit": 10_000})["events"]
    mid = all_events[len(all_events) // 2]["seq"]
    window = team.call("events.list", {**ref, "before_seq": mid, "limit": 5})
    assert [e["seq"] for e in window["events"]] == [e["seq"] for e in all_events if e["seq"] < mid][-5:]
    first = window["events"][0]["seq"]
    assert window["prev_seq"] == (first if any(e["seq"] < first for e in all_events) else None)
    assert window["next"]
    for by in ("tool", "tool-category", "hour"):
        mine = cli(capsys, [*local, "stats", "--by", by, "--no-update"])
        theirs = team.call("stats", {"by": by, "machine": "laptop"})
        assert theirs["totals"] == mine["totals"], by
        assert {
            r["key"]: (r.get("calls", r.get("events")), r.get("category"), r.get("tools"))
            for r in theirs["rows"]
        } == {
            r["key"]: (r.get("calls", r.get("events")), r.get("category"), r.get("tools"))
            for r in mine["rows"]
        }, by
    mine = cli(capsys, [*local, "projects", "--no-update"])["projects"]
    theirs = team.call("projects.list", {"machine": "laptop"})["projects"]
    assert {(p["root"], p["sessions"], p["total_tokens"]) for p in theirs} == {
        (p["root"], p["sessions"], p["total_tokens"]) for p in mine
    }


def test_team_ranks_only_the_newest_matches_of_a_common_word(
    team: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The team server's bounded ranking (docs/team.md): the newest RANK_WINDOW matches, by
    ts_rank_cd — checked against the same ranking done by hand in SQL, pages included."""
    import agtaild.pg.search as pg_search

    def by_hand(window: int | None) -> list[tuple[str, int]]:
        newest = f"ORDER BY id DESC LIMIT {window}" if window else ""
        rank = "ts_rank_cd('{0.1, 0.3, 0.6, 1.0}', tsv, phraseto_tsquery('simple', 'the'))"
        with psycopg.connect(pg_url) as conn:
            rows = conn.execute(
                f"SELECT sid, seq FROM (SELECT id, sid, seq, {rank} AS r FROM events"
                f" WHERE tsv @@ phraseto_tsquery('simple', 'the') {newest}) m ORDER BY -r, id"
            ).fetchall()
        return [(str(sid), int(seq)) for sid, seq in rows]

    def hits(limit: int, cursor: str | None = None) -> dict[str, Any]:
        return team.call("search", {"q": "the", "limit": limit, **({"cursor": cursor} if cursor else {})})

    everything = by_hand(None)
    assert len(everything) > 6
    assert [(h["session"]["id"], h["event"]["seq"]) for h in hits(50)["hits"]] == everything[:50]
    monkeypatch.setattr(pg_search, "RANK_WINDOW", 6)
    windowed = by_hand(6)
    assert len(windowed) == 6 and windowed != everything[:6]
    first = hits(3)
    second = hits(3, first["next"])
    assert [(h["session"]["id"], h["event"]["seq"]) for h in first["hits"] + second["hits"]] == windowed
    rest = hits(3, second["next"])["hits"] if second["next"] else []
    assert rest == []  # nothing past the window


def test_team_events_and_resume_rules(team: Any) -> None:
    from agtaild.errors import Refused

    listed = team.call("sessions.list", {"machine": "desktop", "limit": 5})["sessions"]
    s = listed[0]
    events = team.call("events.list", {"agent": s["agent"], "id": s["id"], "limit": 2})
    assert events["events"] and [e["seq"] for e in events["events"]] == sorted(
        e["seq"] for e in events["events"]
    )
    with pytest.raises(Refused, match="desktop"):
        team.call("resume.command", {"agent": s["agent"], "id": s["id"], "from_machine": "laptop"})
    with pytest.raises(Refused, match="desktop"):
        team.call("resume.command", {"agent": s["agent"], "id": s["id"]})
    mine = next(
        s
        for s in team.call("sessions.list", {"machine": "laptop", "agent": "claude-code", "limit": 50})[
            "sessions"
        ]
        if s["parent"] is None
    )
    command = team.call(
        "resume.command", {"agent": "claude-code", "id": mine["id"], "from_machine": "laptop"}
    )
    assert command["argv"][0] == "claude" and mine["id"] in command["argv"][-1]
    machines = team.call("machines.list", {})["machines"]
    assert {m["machine"] for m in machines} == {"laptop", "desktop"}


def test_team_server_daemon_serves_the_api_and_streams_pushes(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.daemon_proc import DaemonProc, SseCollector, wait_until

    a = machine(tmp_path, "a", MACHINE_A)
    push(capsys, a, pg_url, "laptop")
    (tmp_path / "server").mkdir()
    server = DaemonProc(tmp_path / "server", {}, extra=["--backend", pg_url, "--machine", "hub"])
    try:
        server.start(wait_indexed=False)
        client = server.unix()
        health = client.health()
        assert health["ok"] and health.get("backend") == "postgresql", health
        listed = client.get("/sessions", {"limit": 200})["sessions"]
        assert listed and {s["machine"] for s in listed} == {"laptop"}
        assert client.call("stats", {"by": "machine"})["rows"][0]["key"] == "laptop"
        tcp = server.tcp()
        assert tcp.get("/search", {"q": "the", "limit": 3})["hits"]
        # A machine that pushes later shows up in the change feed.
        feed = SseCollector(client, "/changes")
        b = machine(tmp_path, "b", MACHINE_B)
        push(capsys, b, pg_url, "desktop")
        feed.wait_for(
            lambda e: e.event == "change" or "desktop" in str(e.data), 15, "a change from the new machine"
        )
        wait_until(
            lambda: any(
                s["machine"] == "desktop" for s in client.get("/sessions", {"limit": 200})["sessions"]
            ),
            10,
            "the new machine's sessions",
        )
        # The CLI against the team server, by URL: the machine filter and facet.
        env = {**os.environ, "AGTAIL_SERVER": server.url, "AGTAIL_TOKEN": server.token, "HOME": str(tmp_path)}
        run = [
            sys.executable,
            "-c",
            "import sys; from agtaild.cli import main; sys.exit(main())",
            "--data-dir",
            str(tmp_path / "cli"),
        ]
        listed_cli = subprocess.run(
            [*run, "list", "--machine", "desktop", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert listed_cli.returncode == 0, listed_cli.stderr
        sessions = json.loads(listed_cli.stdout)["sessions"]
        assert sessions and {s["machine"] for s in sessions} == {"desktop"}
        by_machine = subprocess.run(
            [*run, "stats", "--by", "machine", "--json"], capture_output=True, text=True, env=env, timeout=60
        )
        assert {r["key"] for r in json.loads(by_machine.stdout)["rows"]} == {"laptop", "desktop"}
        one = sessions[0]
        shown = subprocess.run(
            [*run, "show", f"{one['agent']}:{one['id']}", "--machine", "desktop", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["session"]["machine"] == "desktop"
        # MCP over the team server's /mcp (the unix socket needs no token).
        _mcp_on_team_server(server.socket, sessions[0])
        # The team server never indexes anything.
        with pytest.raises(Exception, match=r"(?i)index\.update|not offer|no method"):
            client.call("index.update", {})
    finally:
        server.cleanup()


async def test_viewer_on_a_team_server_filters_by_machine(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], browser: Any, shots: Path
) -> None:
    """In Chromium: the team server's viewer lists both machines' sessions, tags each with its
    machine, and its machine menu narrows the list to one machine."""
    from tests.daemon_proc import DaemonProc
    from tests.web_cdp import chromium_available

    if not chromium_available():
        pytest.skip("needs headless Chromium at /usr/bin/chromium (apt-get install chromium)")
    push(capsys, machine(tmp_path, "a", MACHINE_A), pg_url, "laptop")
    push(capsys, machine(tmp_path, "b", MACHINE_B), pg_url, "desktop")
    (tmp_path / "server").mkdir()
    server = DaemonProc(tmp_path / "server", {}, extra=["--backend", pg_url])
    try:
        server.start(wait_indexed=False)
        total = len(server.tcp().get("/sessions", {"limit": 500})["sessions"])
        desktop = len(server.tcp().get("/sessions", {"limit": 500, "machine": "desktop"})["sessions"])
        await browser.goto(f"{server.url}/login?token={server.token}")
        await browser.wait_for("location.pathname === '/' && !!window.agtail", what="the viewer after login")
        options = await browser.wait_for(
            "(() => { const s = document.querySelector('.machine-select'); return s && [...s.options].map((o) => o.value); })()",
            what="the machine menu",
        )
        assert options == ["", "desktop", "laptop"]
        tags = await browser.wait_for(
            f"(() => {{ const r = [...document.querySelectorAll('#view-sessions .srow')]; return r.length === {min(total, 60)} && "
            "[...new Set(r.map((x) => x.querySelector('.tag.machine').textContent))].sort(); })()",
            what="every session listed with its machine",
        )
        assert tags == ["on desktop", "on laptop"]
        await browser.eval("location.hash = '#/?machine=desktop'")
        await browser.wait_for(
            f"(() => {{ const r = [...document.querySelectorAll('#view-sessions .srow')]; return r.length === {desktop} && "
            "r.every((x) => x.querySelector('.tag.machine').textContent === 'on desktop'); })()",
            what="only the desktop's sessions",
        )
        await browser.screenshot(shots / "team-machines.png")
    finally:
        server.cleanup()


def _mcp_on_team_server(socket_path: Path, one: dict[str, Any]) -> None:
    """Every MCP tool answers from the team database (an agent on any machine searches the
    team's history), with no tool error."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> None:
        transport = httpx2.AsyncHTTPTransport(uds=str(socket_path))
        async with (
            httpx2.AsyncClient(transport=transport, timeout=60) as http,
            Client(streamable_http_client("http://localhost/mcp", http_client=http)) as client,
        ):
            answers = {}
            for name, args in (
                ("list_sessions", {"limit": 5}),
                ("search_sessions", {"query": "hello"}),
                ("read_session", {"id": f"{one['agent']}:{one['id']}"}),
                ("usage_summary", {"since": "2026-01-01"}),
                ("sessions_here", {"cwd": one["cwd"] or "/"}),
            ):
                result = await client.call_tool(name, args)
                text = "".join(getattr(c, "text", "") for c in result.content)
                assert not result.is_error, (name, text)
                answers[name] = text
            assert one["id"] in answers["read_session"] or one["id"][:8] in answers["read_session"]
            assert answers["search_sessions"].strip()

    anyio.run(run)


def _same_stats(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal documents but for the last digits of summed costs (summed in another order)."""

    def rounded(doc: dict[str, Any]) -> Any:
        return json.loads(json.dumps(doc), parse_float=lambda x: round(float(x), 9))

    assert rounded(a) == rounded(b)


def test_usage_daily_follows_every_change_of_usage(team: Any, pg_url: str) -> None:
    """The triggers behind usage_daily (schema m003_stats): counted flags moved, responses
    deleted, a session deleted with its usage (cascade) — the table stays the usage summed
    (team_rows checks it), and stats read from it answer as the usage itself does."""

    def both(by: str) -> tuple[dict[str, Any], dict[str, Any]]:
        # imported=false holds every session here but needs the sessions: the usage path.
        return team.call("stats", {"by": by}), team.call("stats", {"by": by, "imported": False})

    assert team_rows(pg_url)["daily"]
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "UPDATE usage SET counted = NOT counted WHERE key IN (SELECT key FROM usage ORDER BY key LIMIT 7)"
        )
    team_rows(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute("DELETE FROM usage WHERE key IN (SELECT key FROM usage ORDER BY key DESC LIMIT 5)")
        sid = conn.execute("SELECT sid FROM usage WHERE counted ORDER BY sid LIMIT 1").fetchone()[0]
        conn.execute("DELETE FROM sessions WHERE sid = %s", (sid,))
    team_rows(pg_url)
    for by in ("day", "model", "agent", "machine"):
        daily, usage = both(by)
        _same_stats(daily, usage)
        assert daily["totals"]["total_tokens"] > 0


def test_secrets_leave_for_the_team_database_masked(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pushed transcript's secrets are masked before they leave the machine: no row of the
    team database holds one, so the team server cannot reveal it."""
    github = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a format-valid fake, assembled here
    args = machine(tmp_path, "leaky", {"claude-code": "real/claude-2.1.197/projects"})
    session = next((tmp_path / "leaky" / "roots" / "claude-code").rglob("cd61be5e-*.jsonl"))
    lines = session.read_text().splitlines()
    record = json.loads(lines[2])
    assert record["type"] == "user"
    record["message"]["content"] = f"push with {github} please"
    lines[2] = json.dumps(record)
    session.write_text("\n".join(lines) + "\n")
    os.utime(session, (1_700_000_000, 1_700_000_000))
    push(capsys, args, pg_url, "leaky")
    with psycopg.connect(pg_url) as conn:
        dumped = json.dumps(
            [conn.execute(f"SELECT * FROM {t}").fetchall() for t in ("sessions", "events")],
            default=str,
            ensure_ascii=False,
        )
    assert github not in dumped and "«secret:github-pat …q7R8»" in dumped
