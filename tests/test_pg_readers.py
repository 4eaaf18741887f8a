"""Readers of the team server see what their tier allows, decided by PostgreSQL's row-level
security (agtaild.pg.readers), on a real throw-away cluster: three machines, a reader of each
tier, every method of the team server's service, and the daemon's REST, JSON-RPC, SSE and MCP
with a reader's token."""

from __future__ import annotations

import contextvars
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.caller import CALLER, OPERATOR
from agtaild.cli import main
from agtaild.errors import AgtailError, NotFound
from agtaild.pg import queries
from tests.pg_cluster import pg_cluster, pg_url
from tests.test_pg_push import MACHINE_A, MACHINE_B, cli, machine

__all__ = ["pg_cluster", "pg_url"]

psycopg = pytest.importorskip("psycopg")

MACHINES = {"laptop": MACHINE_A, "desktop": MACHINE_B, "ci": {"codex": MACHINE_A["codex"]}}


def marker(name: str) -> str:
    return f"zq{name}marker"


@pytest.fixture
def team(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    cli(capsys, ["pg", "init", pg_url])
    pushers = {}
    for name, roots in MACHINES.items():
        made = cli(capsys, ["pg", "add-machine", name, "--url", pg_url])
        args = machine(tmp_path, name, roots)
        cli(capsys, [*args, "pg", "push", "--url", made["url"], "--machine", name])
        pushers[name] = (args, made["url"])
    with psycopg.connect(pg_url) as conn:
        # One event of each machine gets a word found nowhere else (as the administrator).
        for name in MACHINES:
            conn.execute(
                "UPDATE events SET text = %s || ' ' || coalesce(text, '') WHERE id = (SELECT min(id) FROM events"
                " WHERE machine = %s AND kind = 'text')",
                (marker(name), name),
            )
        project = conn.execute(
            "SELECT project_root FROM sessions WHERE machine = 'desktop' AND project_root IS NOT NULL"
            " GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()[0]
        keys = conn.execute("SELECT machine, agent, sid, project_root FROM sessions").fetchall()
        marked = dict(
            conn.execute(
                "SELECT e.machine, s.project_root FROM events e JOIN sessions s USING (machine, agent, sid, collection)"
                " WHERE e.text LIKE 'zq%%marker %%'"
            ).fetchall()
        )
    tokens = {
        "aggregate": cli(capsys, ["pg", "add-reader", "boss", "--tier", "aggregate", "--url", pg_url]),
        "own": cli(
            capsys, ["pg", "add-reader", "lee", "--tier", "own", "--machines", "laptop", "--url", pg_url]
        ),
        "project": cli(
            capsys, ["pg", "add-reader", "kim", "--tier", "project", "--projects", project, "--url", pg_url]
        ),
        "all": cli(capsys, ["pg", "add-reader", "sam", "--tier", "all", "--url", pg_url]),
    }
    server = cli(capsys, ["pg", "add-server", "hub", "--url", pg_url])
    allowed = {
        "aggregate": set(),
        "own": {(m, a, s) for m, a, s, _p in keys if m == "laptop"},
        "project": {(m, a, s) for m, a, s, p in keys if p == project},
        "all": {(m, a, s) for m, a, s, _p in keys},
    }
    return {
        "admin": pg_url,
        "server": server["url"],
        "tokens": tokens,
        "allowed": allowed,
        "marked": marked,
        "project": project,
        "keys": keys,
        "pushers": pushers,
    }


def as_caller(value: str, fn: Any, *args: Any) -> Any:
    ctx = contextvars.copy_context()
    ctx.run(CALLER.set, value)
    return ctx.run(fn, *args)


def keys_of(sessions: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(s["machine"], s["agent"], s["id"]) for s in sessions}


def test_each_tier_sees_only_what_it_may_through_every_method(team: dict[str, Any], tmp_path: Path) -> None:
    from agtaild.pg.service import METHODS, TeamService

    svc = TeamService(team["server"], data_dir=tmp_path / "srv")
    try:
        assert svc.enforced
        everything = as_caller(OPERATOR, svc.call, "sessions.list", {"limit": 1000})["sessions"]
        assert len({s["machine"] for s in everything}) == 3
        full_stats = as_caller(OPERATOR, svc.call, "stats", {"by": "day"})
        nothing = as_caller(OPERATOR, svc.call, "search", {"q": "zqnowheremarker"})
        checked = set()
        for tier, made in team["tokens"].items():
            caller = svc.reader_token(made["token"])
            assert caller is not None, tier

            def call(method: str, params: dict[str, Any], c: str = caller) -> Any:
                checked.add(method)
                return as_caller(c, svc.call, method, params)

            allowed = team["allowed"][tier]
            listed = call("sessions.list", {"limit": 1000, "total": True})
            assert keys_of(listed["sessions"]) == allowed, tier
            assert listed["total"] == len(allowed)
            if tier == "project":
                assert allowed and all(s["machine"] == "desktop" for s in listed["sessions"])
            # Aggregates for every tier: the same totals as the operator's.
            assert call("stats", {"by": "day"})["totals"] == full_stats["totals"], tier
            by_session = {r["key"] for r in call("stats", {"by": "session", "limit": 1000})["rows"]}
            assert by_session <= {f"{a}:{sid}" for _m, a, sid in allowed} and (
                by_session or tier == "aggregate"
            ), tier
            assert {m["machine"] for m in call("machines.list", {})["machines"]} == set(MACHINES)
            assert sum(a["sessions"] for a in call("agents.list", {})["agents"]) == len(allowed)
            roots = {p["root"] for p in call("projects.list", {})["projects"]}
            assert roots <= {p for m, a, s, p in team["keys"] if (m, a, s) in allowed}, tier
            # Text search over a forbidden session: no hit and nothing that counts one.
            for name, project in team["marked"].items():
                found = call("search", {"q": marker(name), "limit": 50})
                may = (
                    tier == "all"
                    or (tier == "own" and name == "laptop")
                    or (tier == "project" and project == team["project"])
                )
                if may:
                    assert [h["session"]["machine"] for h in found["hits"]] == [name], (tier, name)
                else:
                    assert found == nothing, (tier, name)
            for forbidden in [s for s in everything if (s["machine"], s["agent"], s["id"]) not in allowed][
                :3
            ]:
                ref = {"agent": forbidden["agent"], "id": forbidden["id"], "machine": forbidden["machine"]}
                for method in ("sessions.get", "events.list", "resume.command"):
                    with pytest.raises(NotFound):
                        call(
                            method,
                            {
                                **ref,
                                **(
                                    {"from_machine": forbidden["machine"]}
                                    if method == "resume.command"
                                    else {}
                                ),
                            },
                        )
        assert checked == set(METHODS)
        # No caller, a revoked reader, a wrong token: nothing, not even aggregates.
        assert as_caller("", svc.call, "sessions.list", {"limit": 5})["sessions"] == []
        assert as_caller("", svc.call, "stats", {"by": "day"})["totals"]["total_tokens"] == 0
        old = team["tokens"]["all"]["token"]
        caller = svc.reader_token(old)
        assert main(["pg", "remove-reader", "sam", "--url", team["admin"]]) == 0
        assert svc.reader_token(old) is None and svc.reader_token("agtr_wrong") is None
        assert as_caller(str(caller), svc.call, "sessions.list", {"limit": 5})["sessions"] == []
    finally:
        svc.close()


def test_reader_tokens_are_stored_hashed_and_refused_by_an_owner_connection(
    team: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.pg.service import TeamService

    with psycopg.connect(team["admin"]) as conn:
        stored = [r[0] for r in conn.execute("SELECT token_hash FROM agtail_readers").fetchall()]
    tokens = [t["token"] for t in team["tokens"].values()]
    assert len(stored) == 4 and not any(t in s for t in tokens for s in stored)
    # A team server that connects as the owner is not restricted by row-level security:
    # it takes no reader token at all rather than serve them everything.
    owner = TeamService(team["admin"], data_dir=tmp_path / "owner")
    try:
        assert not owner.enforced and owner.reader_token(tokens[0]) is None
    finally:
        owner.close()
    capsys.readouterr()
    assert main(["pg", "add-reader", "boss", "--tier", "all", "--url", team["admin"]]) == 3
    assert "--reuse" in capsys.readouterr().err
    assert main(["pg", "add-reader", "x", "--tier", "own", "--url", team["admin"]]) == 2
    assert "--machines" in capsys.readouterr().err
    gone = cli(
        capsys, ["pg", "add-reader", "ex", "--tier", "own", "--machines", "retired", "--url", team["admin"]]
    )
    assert gone["unknown_machines"] == ["retired"]
    listed = cli(capsys, ["pg", "readers", "--url", team["admin"]])["readers"]
    assert {r["reader"]: r["tier"] for r in listed}["lee"] == "own"


def test_the_team_server_answers_readers_by_their_tier_over_http(
    team: dict[str, Any], tmp_path: Path
) -> None:
    """REST, JSON-RPC, SSE and MCP of a running team server with readers' tokens."""
    from agtail_client import Client
    from tests.daemon_proc import DaemonProc, SseCollector

    (tmp_path / "server").mkdir()
    server = DaemonProc(tmp_path / "server", {}, extra=["--backend", team["server"], "--machine", "hub"])
    try:
        server.start(wait_indexed=False)
        operator = server.tcp().get("/sessions", {"limit": 1000})["sessions"]
        assert keys_of(operator) == team["allowed"]["all"]
        for tier, made in team["tokens"].items():
            reader = Client(url=server.url, token=made["token"], timeout=30)
            allowed = team["allowed"][tier]
            assert keys_of(reader.get("/sessions", {"limit": 1000})["sessions"]) == allowed, tier
            hits = reader.call("search", {"q": marker("desktop"), "limit": 20})["hits"]
            assert bool(hits) == (
                tier == "all" or (tier == "project" and team["marked"]["desktop"] == team["project"])
            ), tier
            forbidden = next(
                (s for s in operator if (s["machine"], s["agent"], s["id"]) not in allowed), None
            )
            if forbidden is not None:
                with pytest.raises(Exception, match=r"no [\w-]+ session"):
                    reader.get(
                        f"/sessions/{forbidden['agent']}/{forbidden['id']}/events",
                        {"machine": forbidden["machine"]},
                    )
            _mcp_search(server.url, made["token"], marker("laptop"), expect=tier in ("all", "own"))
        with pytest.raises(Exception, match=r"(?i)unauthori|401|token"):
            Client(url=server.url, token="agtr_not-a-reader", timeout=30).get("/sessions", {"limit": 1})
        # The viewer: a reader's login link sets a signed cookie that carries their tier.
        cookie = _login(server.url, team["tokens"]["own"]["token"])
        assert cookie.startswith("r.")
        assert (
            keys_of(_get(server.url, "/api/v1/sessions?limit=1000", cookie)[1]["sessions"])
            == team["allowed"]["own"]
        )
        _caller, _, mac = cookie[2:].rpartition(".")
        forged = f"r.{'0' * 64}.{mac}"  # another caller under this cookie's signature
        assert _get(server.url, "/api/v1/sessions?limit=5", forged)[0] == 401
        assert (
            _get(server.url, "/api/v1/sessions?limit=5", cookie[:-1] + ("0" if cookie[-1] != "0" else "1"))[0]
            == 401
        )
        with pytest.raises(AssertionError):
            _login(server.url, "agtr_not-a-reader")
        # The change feed: a reader of laptop's sessions hears of laptop's pushes only.
        own = SseCollector(
            Client(url=server.url, token=team["tokens"]["own"]["token"], timeout=30), "/changes"
        )
        everyone = SseCollector(server.tcp(), "/changes")
        time.sleep(1.0)  # both streams open before the push
        with psycopg.connect(team["admin"]) as conn:
            conn.execute("UPDATE sessions SET pushed_at = now() WHERE machine IN ('laptop', 'desktop')")
        everyone.wait_for(lambda e: e.event == "change" and "desktop:" in str(e.data), 20, "desktop's change")
        own.wait_for(lambda e: e.event == "change" and "laptop:" in str(e.data), 20, "laptop's change")
        with pytest.raises(TimeoutError):
            own.wait_for(
                lambda e: e.event == "change" and "laptop:" not in str(e.data), 3, "another machine's change"
            )
        own.close()
        everyone.close()
    finally:
        server.cleanup()


def _login(url: str, token: str) -> str:
    """GET /login?token=…: the cookie it sets (an AssertionError when it refuses)."""
    import http.client
    from urllib.parse import quote, urlsplit

    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=30)
    conn.request("GET", f"/login?token={quote(token)}", headers={"Host": where.netloc})
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 303, resp.status
    cookie = resp.getheader("Set-Cookie") or ""
    return cookie.split(";", 1)[0].partition("=")[2]


def _get(url: str, path: str, cookie: str) -> tuple[int, Any]:
    import http.client
    import json
    from urllib.parse import urlsplit

    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=30)
    conn.request("GET", path, headers={"Host": where.netloc, "Cookie": f"agtail_session={cookie}"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read() or b"null")


def _mcp_search(url: str, token: str, word: str, *, expect: bool) -> None:
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> None:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool("search_sessions", {"query": word})
            text = "".join(getattr(c, "text", "") for c in result.content)
            assert not result.is_error, text
            assert ("No matches" not in text) == expect, (word, text[:300])

    anyio.run(run)


def test_reader_errors_are_clear(team: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["pg", "remove-reader", "nobody", "--url", team["admin"]]) == 4
    assert "nobody" in capsys.readouterr().err
    with pytest.raises(AgtailError):
        from agtaild.pg.readers import add_reader

        with psycopg.connect(team["admin"], autocommit=True) as conn:
            add_reader(conn, "p", "project", machines=[], projects=[])


def test_a_users_share_label_opens_one_session_to_project_readers(
    team: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.pg.service import TeamService

    args, url = team["pushers"]["laptop"]
    one = next(k for k in team["keys"] if k[0] == "laptop" and k[3] != team["project"])
    ref = f"{one[1]}:{one[2]}"
    svc = TeamService(team["server"], data_dir=tmp_path / "srv")
    caller = svc.reader_token(team["tokens"]["project"]["token"])
    lee = svc.reader_token(team["tokens"]["own"]["token"])
    assert caller and lee

    def seen(c: str = caller) -> set[tuple[str, str, str]]:
        return keys_of(as_caller(c, svc.call, "sessions.list", {"limit": 1000})["sessions"])

    try:
        before = seen()
        assert one[:3] not in before
        cli(capsys, [*args, "label", ref, "share=team"])
        pushed = cli(capsys, [*args, "pg", "push", "--url", url, "--machine", "laptop", "--no-update"])
        assert pushed["shared"] == 1
        assert seen() == before | {one[:3]}
        events = as_caller(
            caller, svc.call, "events.list", {"agent": one[1], "id": one[2], "machine": "laptop"}
        )
        assert events["events"]
        assert seen(lee) == team["allowed"]["own"]  # the own tier is about machines, not shares
        cli(capsys, [*args, "label", ref, "share", "--remove"])
        assert (
            cli(capsys, [*args, "pg", "push", "--url", url, "--machine", "laptop", "--no-update"])["shared"]
            == 1
        )
        assert seen() == before
        # An unreadable label store leaves the shares as they are (a read error never unshares).
        cli(capsys, [*args, "label", ref, "share=team"])
        cli(capsys, [*args, "pg", "push", "--url", url, "--machine", "laptop", "--no-update"])
        state = Path(args[args.index("--data-dir") + 1]) / "state.sqlite3"
        state.write_bytes(b"not a database at all" * 100)
        for extra in ("-wal", "-shm"):
            Path(str(state) + extra).unlink(missing_ok=True)
        assert (
            cli(capsys, [*args, "pg", "push", "--url", url, "--machine", "laptop", "--no-update"])["shared"]
            == 0
        )
        assert one[:3] in seen()
    finally:
        svc.close()


def _as_server(url: str, caller: str) -> Any:
    """A hand-written SQL session as the team server's role, naming ``caller``."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("SELECT set_config('agtail.reader', %s, false)", (caller,))
    return conn


def test_the_server_role_reads_events_only_through_the_view_of_its_callers_sessions(
    team: dict[str, Any],
) -> None:
    """The team server's role has no row policy on events to slow searches: it cannot read the
    table at all, and the view it reads keeps to the sessions of the caller it names, for any
    SQL — a search, a LIKE, a bare SELECT of every column."""
    from agtaild.pg.readers import EVENTS_VIEW, EVENTS_VIEWS, token_hash

    with psycopg.connect(team["admin"]) as conn:
        total = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        having_events = {
            tuple(r) for r in conn.execute("SELECT DISTINCT machine, agent, sid FROM events").fetchall()
        }
    probes = [
        "SELECT machine, agent, sid, text FROM {view}",
        "SELECT machine, agent, sid, text FROM {view} WHERE tsv @@ plainto_tsquery('simple', %(word)s)",
        "SELECT machine, agent, sid, text FROM {view} WHERE text LIKE '%%' || %(word)s || '%%'",
        "SELECT e.machine, e.agent, e.sid, e.text FROM {view} e"
        " LEFT JOIN sessions s USING (machine, agent, sid, collection) WHERE s.sid IS NULL",
    ]
    callers = {tier: token_hash(made["token"]) for tier, made in team["tokens"].items()}
    callers["nobody"] = ""
    for tier, caller in callers.items():
        allowed = team["allowed"].get(tier, set())
        with _as_server(team["server"], caller) as conn:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("SELECT count(*) FROM events")
            for view in EVENTS_VIEWS:
                seen = {tuple(r[:3]) for r in conn.execute(probes[0].format(view=view)).fetchall()}
                # The view of every event gives everything or nothing: all of it to those who
                # read everything, none to anyone else (even what their tier lets them read).
                wide = view == EVENTS_VIEW or tier == "all"
                assert seen == (allowed & having_events if wide else set()), (tier, view)
                for name in MACHINES:
                    rows = conn.execute(probes[1].format(view=view), {"word": marker(name)}).fetchall()
                    rows += conn.execute(probes[2].format(view=view), {"word": marker(name)}).fetchall()
                    assert {tuple(r[:3]) for r in rows} <= allowed, (tier, name, view)
                    if not any(k[0] == name for k in allowed):
                        assert rows == [], (tier, name, view)
                # Events whose session the caller cannot see: none, whatever the query joins.
                assert conn.execute(probes[3].format(view=view)).fetchall() == [], (tier, view)
    # Pushers read their own events from the table, never through the views (they run as
    # their owner, who reads every machine's rows).
    _args, laptop = team["pushers"]["laptop"]
    for view in EVENTS_VIEWS:
        with psycopg.connect(laptop) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"SELECT count(*) FROM {view}")
    # What the role is trusted with (docs/team.md): it names its caller, the operator included,
    # as the team server does for its own token. Whoever holds its URL reads everything.
    with _as_server(team["server"], "operator") as conn:
        for view in EVENTS_VIEWS:
            assert conn.execute(f"SELECT count(*) FROM {view}").fetchone()[0] == total


def test_a_search_under_readers_can_use_the_word_index(team: dict[str, Any], tmp_path: Path) -> None:
    """The reason events have no row policy for the team server: PostgreSQL evaluates a policy
    before the query's non-leakproof conditions (``@@``, ``LIKE``), which kept the GIN indexes
    from driving a search (bench/RESULTS.md). The team server reads each tier's events through
    the view meant for it, and through the view of every event a word search uses the word
    index (with sequential scans priced out, so that the tiny test tables do not decide; the
    trigram index's use is measured in bench/RESULTS.md)."""
    from agtaild.pg.readers import ALL_EVENTS_VIEW, EVENTS_VIEW, token_hash
    from agtaild.pg.service import TeamService

    svc = TeamService(team["server"], data_dir=tmp_path / "srv")
    views = {}
    try:
        for tier, made in team["tokens"].items():
            caller = svc.reader_token(made["token"])
            views[tier] = as_caller(str(caller), svc.run, lambda cur: queries.EVENTS.get())
    finally:
        svc.close()
    assert views == {tier: ALL_EVENTS_VIEW if tier == "all" else EVENTS_VIEW for tier in team["tokens"]}
    # Those who read everything read it as if there were no readers at all. (For the others
    # PostgreSQL may rightly start from the few sessions they read; bench/RESULTS.md.)
    for tier, caller in (("all", token_hash(team["tokens"]["all"]["token"])), ("all", OPERATOR)):
        with _as_server(team["server"], caller) as conn:
            conn.execute("SET enable_seqscan = off")
            plans = {
                index: "\n".join(
                    r[0]
                    for r in conn.execute(
                        f"EXPLAIN SELECT e.id FROM {views[tier]} e JOIN sessions s USING (machine, agent, sid, collection)"
                        f" WHERE {cond}",
                        (arg,),
                    ).fetchall()
                )
                for index, cond, arg in (
                    ("events_tsv", "e.tsv @@ plainto_tsquery('simple', %s)", marker("laptop")),
                )
            }
        for index, plan in plans.items():
            assert f"Bitmap Index Scan on {index}" in plan, (tier, plan)


def test_a_removed_machine_leaves_its_readers_whose_tokens_keep_working(
    team: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pg remove-machine` takes the machine out of every reader's --machines: they read none of
    its history (kept, here) from then on, and their tokens keep working for the rest."""
    from agtaild.pg.service import TeamService

    both = cli(
        capsys,
        ["pg", "add-reader", "pat", "--tier", "own", "--machines", "laptop,desktop", "--url", team["admin"]],
    )
    svc = TeamService(team["server"], data_dir=tmp_path / "srv")
    try:
        pat, lee = svc.reader_token(both["token"]), svc.reader_token(team["tokens"]["own"]["token"])
        assert pat and lee
        laptop = {k for k in team["allowed"]["all"] if k[0] == "laptop"}
        desktop = {k for k in team["allowed"]["all"] if k[0] == "desktop"}
        full_stats = as_caller(OPERATOR, svc.call, "stats", {"by": "day"})["totals"]

        def sessions(caller: str) -> set[tuple[str, str, str]]:
            return keys_of(as_caller(caller, svc.call, "sessions.list", {"limit": 1000})["sessions"])

        assert sessions(pat) == laptop | desktop and laptop
        one = next(iter(laptop))
        done = cli(capsys, ["pg", "remove-machine", "laptop", "--url", team["admin"]])
        assert done["readers"] == ["lee", "pat"] and done["deleted_sessions"] == 0
        assert svc.reader_token(both["token"]) == pat  # still a reader
        assert sessions(pat) == desktop
        assert sessions(lee) == set()
        assert sessions(OPERATOR) >= laptop  # the history stays (no --delete-history)
        for caller in (pat, lee):
            assert as_caller(caller, svc.call, "search", {"q": marker("laptop")})["hits"] == []
            with pytest.raises(NotFound):
                as_caller(
                    caller, svc.call, "events.list", {"agent": one[1], "id": one[2], "machine": "laptop"}
                )
            assert (
                as_caller(caller, svc.call, "stats", {"by": "day"})["totals"] == full_stats
            )  # aggregates stay
        hits = as_caller(pat, svc.call, "search", {"q": marker("desktop")})["hits"]
        assert [h["session"]["machine"] for h in hits] == ["desktop"]
        listed = {
            r["reader"]: r["machines"]
            for r in cli(capsys, ["pg", "readers", "--url", team["admin"]])["readers"]
        }
        assert listed["pat"] == ["desktop"] and listed["lee"] == []
        # Naming the removed machine for a reader is allowed (its history is there) and said.
        later = cli(
            capsys,
            ["pg", "add-reader", "ann", "--tier", "own", "--machines", "laptop", "--url", team["admin"]],
        )
        assert later["removed_machines"] == ["laptop"]
        # The name given again gives the old readers nothing back by itself.
        cli(capsys, ["pg", "add-machine", "laptop", "--url", team["admin"], "--reuse"])
        assert sessions(pat) == desktop and sessions(lee) == set()
    finally:
        svc.close()
