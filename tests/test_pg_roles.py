"""Each machine writes only its own rows of the team database, enforced by PostgreSQL's
row-level security (agtaild.pg.roles), on a real throw-away cluster (tests/pg_cluster.py).

The cluster trusts every local connection (initdb --auth=trust), so a test connects as a role
by naming it: what is under test is what each role may do once connected, not the password
check (which is PostgreSQL's; the tests check that only a SCRAM verifier is stored).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agtaild.api.caller import CALLER, OPERATOR
from agtaild.cli import main
from agtaild.errors import AgtailError
from tests.pg_cluster import pg_cluster, pg_url
from tests.test_pg_push import MACHINE_A, MACHINE_B, cli, machine, team_rows

__all__ = ["pg_cluster", "pg_url"]

psycopg = pytest.importorskip("psycopg")


def exact_rows(url: str, name: str) -> dict[str, list[str]]:
    """Every row of machine ``name`` in every machine-data table, as PostgreSQL prints the whole
    row (every column, ids and timestamps included): equal means byte-identical."""
    from agtaild.pg.roles import MACHINE_TABLES

    with psycopg.connect(url) as conn:
        return {
            table: [r[0] for r in conn.execute(f"SELECT t::text FROM {table} t WHERE machine = %s ORDER BY 1", (name,))]
            for table in MACHINE_TABLES
        }


def push_as(capsys: pytest.CaptureFixture[str], args: list[str], url: str, name: str) -> dict[str, Any]:
    return cli(capsys, [*args, "pg", "push", "--url", url, "--machine", name])


@pytest.fixture
def team(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """A team database under roles: laptop and desktop pushed with their own credentials."""
    done = cli(capsys, ["pg", "init", pg_url])
    assert done["pushers"].endswith("_pushers") and done["server"].endswith("_server")
    secret = tmp_path / "laptop.url"
    made = cli(capsys, ["pg", "add-machine", "laptop", "--url", pg_url, "--to", str(secret)])
    assert "url" not in made and made["to"] == str(secret)
    laptop = secret.read_text().strip()
    desktop = cli(capsys, ["pg", "add-machine", "desktop", "--url", pg_url])
    a, b = machine(tmp_path, "a", MACHINE_A), machine(tmp_path, "b", MACHINE_B)
    assert push_as(capsys, a, laptop, "laptop")["sessions"] > 5
    assert push_as(capsys, b, desktop["url"], "desktop")["sessions"] > 0
    return {"admin": pg_url, "laptop": laptop, "desktop": desktop["url"], "a": a, "b": b, "made": made, "file": secret}


def test_add_machine_prints_the_url_once_and_stores_only_a_verifier(team: dict[str, Any]) -> None:
    assert stat.S_IMODE(os.stat(team["file"]).st_mode) == 0o600
    password = psycopg.conninfo.conninfo_to_dict(team["laptop"])["password"]
    assert len(password) >= 24
    with psycopg.connect(team["admin"]) as conn:
        stored = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (team["made"]["role"],)).fetchone()[0]
        logins = conn.execute("SELECT name FROM agtail_logins WHERE removed IS NULL ORDER BY 1").fetchall()
    assert stored.startswith("SCRAM-SHA-256$") and password not in stored
    assert logins == [("desktop",), ("laptop",)]


#: What machine laptop's credentials try against desktop's rows, by hand: each statement must
#: fail ("error") or touch nothing (0 rows).
ATTACKS: list[tuple[str, str | int]] = [
    ("UPDATE sessions SET title = 'owned' WHERE machine = 'desktop'", 0),
    ("UPDATE events SET text = 'owned' WHERE machine <> 'laptop'", 0),
    ("UPDATE usage SET input = 0 WHERE machine = 'desktop'", 0),
    ("UPDATE usage_daily SET input = 0 WHERE machine = 'desktop'", 0),
    ("UPDATE machines SET cursor = 0, index_id = 'x' WHERE machine = 'desktop'", 0),
    ("UPDATE sessions SET machine = 'desktop' WHERE machine = 'laptop'", "error"),
    ("UPDATE usage_daily SET machine = 'desktop'", "error"),
    ("DELETE FROM sessions WHERE machine = 'desktop'", 0),
    ("DELETE FROM events WHERE machine <> 'laptop'", 0),
    ("DELETE FROM usage WHERE machine = 'desktop'", 0),
    ("DELETE FROM usage_daily WHERE machine = 'desktop'", 0),
    ("DELETE FROM machines WHERE machine = 'desktop'", 0),
    ("TRUNCATE events", "error"),
    ("TRUNCATE sessions CASCADE", "error"),
    ("TRUNCATE usage_daily", "error"),
    ("TRUNCATE machines", "error"),
    (
        "INSERT INTO sessions (machine, agent, sid, kind, activity, programmatic, archived, doc, index_id)"
        " VALUES ('desktop', 'pi', 'forged', 'native', 0, false, false, '{}', 'x')",
        "error",
    ),
    (
        "INSERT INTO events (machine, agent, sid, collection, seq, kind, doc)"
        " VALUES ('desktop', 'pi', 'x', '', 0, 'text', '{}')",
        "error",
    ),
    (
        "INSERT INTO usage_daily VALUES ('desktop', '2026-01-01', 'pi', '', false, 1, 1, 1, 1, 1, 1)"
        " ON CONFLICT (machine, day, agent, model, long_ctx) DO UPDATE SET n = 0",
        "error",
    ),
    (
        "INSERT INTO machines VALUES ('desktop', 'x', 0, now())"
        " ON CONFLICT (machine) DO UPDATE SET cursor = 0",
        "error",
    ),
    ("UPDATE agtail_logins SET name = 'desktop'", "error"),
    ("INSERT INTO agtail_logins (role, kind, name) VALUES (current_user, 'machine', 'desktop')", "error"),
    ("DELETE FROM agtail_migrations", "error"),
    ("ALTER TABLE sessions DISABLE ROW LEVEL SECURITY", "error"),
    ("DROP POLICY agtail_own ON events", "error"),
    ("DROP TABLE usage_daily", "error"),
    ("CREATE TABLE public.sessions_copy (a int)", "error"),
    ("SET ROLE postgres", "error"),
    ("SET row_security = off; SELECT count(*) FROM sessions", "error"),
]


def attempt(url: str, statement: str) -> str | int:
    """Run ``statement`` in a transaction that is rolled back: "error", or the number of rows
    it touched. A role that cannot even log in is an "error" too."""
    try:
        conn = psycopg.connect(url)
    except psycopg.OperationalError:
        return "error"
    with conn:
        try:
            cur = conn.execute(statement)
        except psycopg.Error:
            conn.rollback()
            return "error"
        touched = cur.rowcount
        conn.rollback()
        return touched


def upserts_of(url: str) -> list[tuple[str, str | int]]:
    """Upserts onto keys that desktop's rows really have (an attacker may know them)."""
    with psycopg.connect(url) as conn:
        agent, sid, coll, seq = conn.execute(
            "SELECT agent, sid, collection, seq FROM events WHERE machine = 'desktop' LIMIT 1"
        ).fetchone()
        ukey = conn.execute("SELECT key FROM usage WHERE machine = 'desktop' LIMIT 1").fetchone()[0]
    quoted = ", ".join(f"'{v}'" for v in (agent, sid, coll))
    return [
        (
            "INSERT INTO sessions (machine, agent, sid, collection, kind, activity, programmatic, archived, doc,"
            f" index_id) VALUES ('desktop', {quoted}, 'native', 0, false, false, '{{}}', 'x')"
            " ON CONFLICT (machine, agent, sid, collection) DO UPDATE SET title = 'owned'",
            "error",
        ),
        (
            "INSERT INTO events (machine, agent, sid, collection, seq, kind, doc)"
            f" VALUES ('desktop', {quoted}, {seq}, 'text', '{{}}')"
            " ON CONFLICT (machine, agent, sid, collection, seq) DO UPDATE SET text = 'owned'",
            "error",
        ),
        (
            "INSERT INTO usage (machine, agent, sid, collection, key, day, input, output, cache_read, cache_write,"
            f" reasoning, total, long_ctx, counted) VALUES ('desktop', {quoted}, '{ukey}', '2026-01-01',"
            " 0, 0, 0, 0, 0, 0, false, true)"
            " ON CONFLICT (machine, agent, sid, collection, key) DO UPDATE SET input = 0",
            "error",
        ),
    ]


def test_a_machine_cannot_touch_another_machines_rows_by_hand(team: dict[str, Any]) -> None:
    before = exact_rows(team["admin"], "desktop")
    assert all(before[t] for t in ("sessions", "events", "usage", "usage_daily", "machines"))
    attacks = ATTACKS + upserts_of(team["admin"])
    outcomes = {statement: attempt(team["laptop"], statement) for statement, _ in attacks}
    assert outcomes == dict(attacks)
    with psycopg.connect(team["laptop"]) as conn:
        # Nor read them: desktop's rows do not exist for laptop's role.
        assert conn.execute("SELECT count(*) FROM events WHERE machine = 'desktop'").fetchone() == (0,)
        assert conn.execute("SELECT DISTINCT machine FROM sessions").fetchall() == [("laptop",)]
        assert conn.execute("SELECT name FROM agtail_logins").fetchall() == [("laptop",)]
        role = conn.execute("SELECT role FROM agtail_logins").fetchone()[0]
        with conn.cursor() as cur, pytest.raises(psycopg.Error), cur.copy("COPY machines FROM STDIN") as copy:
            copy.write_row(("desktop", "x", 0, None))
    with psycopg.connect(team["admin"]) as conn:
        other = conn.execute("SELECT role FROM agtail_logins WHERE name = 'desktop'").fetchone()[0]
    assert attempt(team["laptop"], f'SET ROLE "{other}"') == "error"
    assert role != other
    assert exact_rows(team["admin"], "desktop") == before


def test_a_tampered_push_cannot_reach_another_machines_rows(
    team: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agtaild.pg.push as pg_push
    import agtaild.pg.roles as roles

    before = exact_rows(team["admin"], "desktop")
    laptop_before = exact_rows(team["admin"], "laptop")
    index = Path(team["a"][team["a"].index("--data-dir") + 1]) / "index.sqlite3"

    # 1. laptop's credentials, desktop's name: agtail refuses before sending anything…
    assert main([*team["a"], "pg", "push", "--url", team["laptop"], "--machine", "desktop", "--no-update"]) == 3
    assert "these credentials push as machine 'laptop'" in capsys.readouterr().err
    # … and with that check taken out, PostgreSQL refuses the first row.
    monkeypatch.setattr(roles, "require_identity", lambda conn, name: None)
    with pytest.raises(AgtailError, match="refused this push"):
        pg_push.push(index, team["laptop"], "desktop")

    # 2. A push whose removals and rebuild replacement forget the machine: they reach only
    # laptop's own rows.
    class Sweeping(pg_push.Pusher):
        def _remove(self, cur: Any, row: tuple[Any, ...]) -> None:
            cur.execute("DELETE FROM sessions WHERE agent = %s AND sid = %s", (row[1], row[2]))

        def _drop_stale(self) -> None:
            with self.team.transaction(), self.team.cursor() as cur:
                cur.execute("DELETE FROM sessions WHERE index_id <> %s", (self.index_id,))
                cur.execute("DELETE FROM usage_daily")
                cur.execute("UPDATE machines SET cursor = 0")

    monkeypatch.setattr(pg_push, "Pusher", Sweeping)
    cli(capsys, [*team["a"], "reindex"])  # a new index id: a full push, then the stale sweep
    report = pg_push.push(index, team["laptop"], "laptop")
    assert report.full and report.sessions
    assert exact_rows(team["admin"], "desktop") == before
    assert exact_rows(team["admin"], "laptop") != laptop_before  # the sweep did run, on laptop's rows


def test_migrations_need_the_administrator(
    team: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import agtaild.pg.schema as schema
    from agtaild.pg.service import TeamService

    def m900_later(cur: Any) -> None:
        cur.execute("CREATE TABLE agtail_later (a int)")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, m900_later])
    before = exact_rows(team["admin"], "laptop")
    assert main([*team["a"], "pg", "push", "--url", team["laptop"], "--machine", "laptop"]) == 1
    assert "m900_later" in capsys.readouterr().err
    server = cli(capsys, ["pg", "add-server", "hub", "--url", team["admin"]])
    with pytest.raises(AgtailError, match="only its administrator"):
        TeamService(server["url"], data_dir=tmp_path / "srv")
    with psycopg.connect(team["admin"]) as conn:
        assert conn.execute("SELECT to_regclass('agtail_later')").fetchone() == (None,)
    assert exact_rows(team["admin"], "laptop") == before
    cli(capsys, ["pg", "init", team["admin"]])
    with psycopg.connect(team["admin"]) as conn:
        assert conn.execute("SELECT to_regclass('agtail_later') IS NOT NULL").fetchone() == (True,)
    assert push_as(capsys, team["a"], team["laptop"], "laptop")["rows"] == 0


def test_the_team_server_role_reads_everything_and_writes_nothing(
    team: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.pg.service import TeamService

    server = cli(capsys, ["pg", "add-server", "hub", "--url", team["admin"]])
    svc = TeamService(server["url"], data_dir=tmp_path / "srv")
    token = CALLER.set(OPERATOR)  # the team server's own token (readers: tests/test_pg_readers.py)
    try:
        listed = svc.call("sessions.list", {"limit": 500})["sessions"]
        assert {s["machine"] for s in listed} == {"laptop", "desktop"}
        assert {m["machine"] for m in svc.call("machines.list", {})["machines"]} == {"laptop", "desktop"}
    finally:
        CALLER.reset(token)
        svc.close()
    for statement in (
        "DELETE FROM sessions",
        "UPDATE machines SET cursor = 0",
        "INSERT INTO usage_daily VALUES ('x', '2026-01-01', 'pi', '', false, 1, 1, 1, 1, 1, 1)",
        "TRUNCATE events",
    ):
        assert attempt(server["url"], statement) == "error", statement


def test_revoked_mid_push_stops_cleanly_and_new_credentials_resume(
    team: dict[str, Any], pg_cluster: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agtaild.pg.push as pg_push

    desktop_before = exact_rows(team["admin"], "desktop")
    cli(capsys, [*team["a"], "reindex"])  # everything to push again, in many small batches
    monkeypatch.setattr(pg_push, "BATCH_EVENTS", 1)
    real = pg_push.Pusher._push_batch
    seen: list[int] = []

    def batch_then_revoke(self: Any, batch: Any) -> None:
        real(self, batch)
        seen.append(self.report.cursor)
        if len(seen) == 2:
            assert main(["pg", "remove-machine", "laptop", "--url", team["admin"]]) == 0

    monkeypatch.setattr(pg_push.Pusher, "_push_batch", batch_then_revoke)
    index = Path(team["a"][team["a"].index("--data-dir") + 1]) / "index.sqlite3"
    with pytest.raises(AgtailError, match="cursor stays at") as caught:
        pg_push.push(index, team["laptop"], "laptop")
    assert "ended during the push" in str(caught.value) and f"cursor stays at {seen[1]};" in str(caught.value)
    with psycopg.connect(team["admin"]) as conn:
        assert conn.execute("SELECT cursor FROM machines WHERE machine = 'laptop'").fetchone() == (seen[1],)
    monkeypatch.setattr(pg_push.Pusher, "_push_batch", real)
    # The old credentials stay dead; the name stays taken until given again with --reuse.
    with pytest.raises(AgtailError):
        pg_push.push(index, team["laptop"], "laptop")
    capsys.readouterr()
    assert main(["pg", "add-machine", "laptop", "--url", team["admin"]]) == 3
    assert "--reuse" in capsys.readouterr().err
    fresh = cli(capsys, ["pg", "add-machine", "laptop", "--url", team["admin"], "--reuse"])
    resumed = pg_push.push(index, fresh["url"], "laptop")
    assert not resumed.full and resumed.sessions
    clean = pg_cluster.new_database()
    pg_push.push(index, clean, "laptop")
    assert team_rows(team["admin"], "laptop") == team_rows(clean, "laptop")
    assert exact_rows(team["admin"], "desktop") == desktop_before


def test_names_are_refused_when_taken_and_removal_can_delete_history(
    team: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["pg", "add-machine", "desktop", "--url", team["admin"]]) == 3
    err = capsys.readouterr().err
    assert "has credentials" in err and "--reuse" in err
    replaced = cli(capsys, ["pg", "add-machine", "desktop", "--url", team["admin"], "--reuse"])
    assert replaced["replaced"] and attempt(team["desktop"], "SELECT 1") == "error"
    done = cli(capsys, ["pg", "remove-machine", "desktop", "--url", team["admin"], "--delete-history"])
    assert done["deleted_sessions"] > 0 and not any(exact_rows(team["admin"], "desktop").values())
    assert main(["pg", "remove-machine", "nobody", "--url", team["admin"]]) == 4
    logins = cli(capsys, ["pg", "logins", "--url", team["admin"]])["logins"]
    assert {(x["name"], x["removed"] is None) for x in logins} >= {("laptop", True), ("desktop", False)}
    # A name that pushed before roles were set up (a shared role) is taken too.
    with psycopg.connect(team["admin"]) as conn:
        conn.execute(
            "INSERT INTO sessions (machine, agent, sid, kind, activity, programmatic, archived, doc, index_id)"
            " VALUES ('ci', 'pi', 's', 'native', 0, false, false, '{}', 'i')"
        )
    assert main(["pg", "add-machine", "ci", "--url", team["admin"]]) == 3
    assert "pushed before roles" in capsys.readouterr().err


def test_admin_commands_need_init_and_a_url(
    pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGTAIL_PG_ADMIN_URL", raising=False)
    assert main(["pg", "add-machine", "laptop", "--url", pg_url]) == 2
    assert "agtail pg init" in capsys.readouterr().err
    assert main(["pg", "init"]) == 2
    assert "administrator" in capsys.readouterr().err
    assert main(["pg", "add-machine", "../x", "--url", pg_url]) == 2
    capsys.readouterr()
    assert main(["pg", "add-machine", "laptop", "--url", "host=/tmp dbname=x"]) == 2
    assert "postgresql://" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "ssl", "warned"),
    [
        ("db.example.com", False, True),
        ("10.0.0.5", False, True),
        ("db.example.com", True, False),
        ("/run/postgresql", False, False),
        ("localhost", False, False),
        ("127.0.0.1", False, False),
        ("::1", False, False),
    ],
)
def test_plain_tcp_to_another_host_warns(host: str, ssl: bool, warned: bool) -> None:
    from agtaild.pg.connection import transport_warning

    said = transport_warning(host, ssl, "prefer")
    assert (said is not None) == warned
    if said:
        assert host in said and "sslmode=verify-full" in said
