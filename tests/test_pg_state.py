"""The user's labels, stars, titles and hides travel with `agtail pg push` to the team server
(agtaild.pg.userstate), per machine, on a real throw-away PostgreSQL cluster (tests/pg_cluster.py):
the team server shows them and leaves hidden sessions out; each machine's rows are its own
under row-level security; a secret in a title is masked before it leaves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agtaild.api.caller import CALLER, OPERATOR
from tests.pg_cluster import pg_cluster, pg_url
from tests.test_pg_push import MACHINE_A, MACHINE_B, cli, machine
from tests.test_pg_roles import attempt, exact_rows

__all__ = ["pg_cluster", "pg_url"]

psycopg = pytest.importorskip("psycopg")
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def as_operator(fn: Any, *args: Any) -> Any:
    import contextvars

    ctx = contextvars.copy_context()
    ctx.run(CALLER.set, OPERATOR)
    return ctx.run(fn, *args)


@pytest.fixture
def team(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    cli(capsys, ["pg", "init", pg_url])
    laptop = cli(capsys, ["pg", "add-machine", "laptop", "--url", pg_url])["url"]
    desktop = cli(capsys, ["pg", "add-machine", "desktop", "--url", pg_url])["url"]
    server = cli(capsys, ["pg", "add-server", "hub", "--url", pg_url])["url"]
    a, b = machine(tmp_path, "a", MACHINE_A), machine(tmp_path, "b", MACHINE_B)
    cli(capsys, [*a, "pg", "push", "--url", laptop, "--machine", "laptop"])
    cli(capsys, [*b, "pg", "push", "--url", desktop, "--machine", "desktop"])
    return {"admin": pg_url, "laptop": laptop, "desktop": desktop, "server": server, "a": a, "b": b}


def push(capsys: pytest.CaptureFixture[str], team: dict[str, Any], who: str = "a") -> dict[str, Any]:
    name, url = ("laptop", team["laptop"]) if who == "a" else ("desktop", team["desktop"])
    return cli(capsys, [*team[who], "pg", "push", "--url", url, "--machine", name, "--no-update"])


def test_the_team_server_shows_each_machines_state_and_leaves_hidden_sessions_out(
    team: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.pg.service import TeamService

    a = team["a"]
    sessions = cli(capsys, [*a, "list", "--limit", "100"])["sessions"]
    one, two = sessions[0], sessions[1]
    r1, r2 = f"{one['agent']}:{one['id']}", f"{two['agent']}:{two['id']}"
    cli(capsys, [*a, "label", r1, "client=acme", "wip"])
    cli(capsys, [*a, "star", r1])
    cli(capsys, [*a, "title", r1, f"Deploy with {GITHUB}"])
    cli(capsys, [*a, "hide", r2])
    assert push(capsys, team)["state"] == 2
    assert push(capsys, team)["state"] == 0  # nothing changed, nothing sent
    svc = TeamService(team["server"], data_dir=tmp_path / "srv")
    try:
        listed = as_operator(svc.call, "sessions.list", {"limit": 1000})["sessions"]
        mine = {(s["agent"], s["id"]): s for s in listed if s["machine"] == "laptop"}
        assert (two["agent"], two["id"]) not in mine  # hidden: left out
        got = mine[(one["agent"], one["id"])]
        assert got["state"]["labels"] == {"client": "acme", "wip": ""} and got["state"]["starred"]
        assert GITHUB not in got["title"] and "«secret:github-pat" in got["title"]  # masked before it left
        assert got["agent_title"] == one["title"]
        hidden = as_operator(svc.call, "sessions.list", {"hidden": "only", "limit": 1000})["sessions"]
        assert [(s["machine"], s["id"]) for s in hidden] == [("laptop", two["id"])]
        assert (
            len(as_operator(svc.call, "sessions.list", {"hidden": "include", "limit": 1000})["sessions"])
            == len(listed) + 1
        )
        labelled = as_operator(svc.call, "sessions.list", {"label": "client=acme"})["sessions"]
        assert [s["id"] for s in labelled] == [one["id"]]
        assert as_operator(svc.call, "sessions.list", {"label": "client=other"})["sessions"] == []
        assert [s["id"] for s in as_operator(svc.call, "sessions.list", {"starred": True})["sessions"]] == [
            one["id"]
        ]
        hits = as_operator(svc.call, "search", {"q": "", "mode": "phrase", "limit": 1000})["hits"]
        assert all(h["session"]["id"] != two["id"] for h in hits)
        # Taken back on the laptop: gone from the team server at the next push.
        cli(capsys, [*a, "unhide", r2])
        cli(capsys, [*a, "label", r1, "wip", "--remove"])
        assert push(capsys, team)["state"] == 2
        listed = as_operator(svc.call, "sessions.list", {"limit": 1000})["sessions"]
        assert any(s["id"] == two["id"] for s in listed)
        assert next(s for s in listed if s["id"] == one["id"])["state"]["labels"] == {"client": "acme"}
        # An unreadable state store changes nothing on the team server.
        state = Path(a[a.index("--data-dir") + 1]) / "state.sqlite3"
        cli(capsys, [*a, "hide", r2])
        state.write_bytes(b"not a database at all" * 100)
        for extra in ("-wal", "-shm"):
            Path(str(state) + extra).unlink(missing_ok=True)
        assert push(capsys, team)["state"] == 0
        listed = as_operator(svc.call, "sessions.list", {"limit": 1000})["sessions"]
        assert next(s for s in listed if s["id"] == one["id"])["state"]["labels"] == {"client": "acme"}
    finally:
        svc.close()


def test_a_machine_cannot_touch_another_machines_state(
    team: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    b = team["b"]
    s = cli(capsys, [*b, "list", "--limit", "1"])["sessions"][0]
    cli(capsys, [*b, "label", f"{s['agent']}:{s['id']}", "team=b"])
    assert push(capsys, team, "b")["state"] == 1
    before = exact_rows(team["admin"], "desktop")
    assert before["session_state"]
    quoted = f"'{s['agent']}', '{s['id']}', '{s.get('collection') or ''}'"
    for statement, outcome in (
        ("UPDATE session_state SET hidden = true WHERE machine = 'desktop'", 0),
        ("DELETE FROM session_state WHERE machine <> 'laptop'", 0),
        ("UPDATE session_state SET machine = 'desktop' WHERE machine = 'laptop'", 0),
        ("TRUNCATE session_state", "error"),
        (
            f"INSERT INTO session_state (machine, agent, sid, collection) VALUES ('desktop', {quoted})"
            " ON CONFLICT (machine, agent, sid, collection) DO UPDATE SET hidden = true",
            "error",
        ),
        ("SELECT 1 FROM session_state WHERE machine = 'desktop'", 0),
    ):
        assert attempt(team["laptop"], statement) == outcome, statement
    assert exact_rows(team["admin"], "desktop") == before
