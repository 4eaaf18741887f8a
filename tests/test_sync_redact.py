"""`sync push --redact` and native `export --redact`: one secret of every rule (the planted
corpus of tests/secrets) in a Claude Code JSONL, in OpenCode's JSON files and in OpenCode's
SQLite store; what is written holds none of their bytes, every file still parses, and the
pulled copy indexes. Without --redact the bytes are sent as they are (and hold them all)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, load_config
from agtaild.query.service import Service
from agtaild.sync.export import export_sessions
from agtaild.sync.remote import pull, push
from tests.conftest import CORPUS
from tests.secrets.corpus import Corpus, build

OPENCODE_JSON = "opencode/synthetic-agtail-json/.local/share/opencode/storage"
OPENCODE_DB = "opencode/synthetic-agtail-sqlite/.local/share/opencode/opencode.db"
CLAUDE_SID = "5ec0e7a1-0000-4000-8000-00000000c0de"


@cache
def planted() -> Corpus:
    from agtaild.secrets import load_rules

    return build(1, ruleset=load_rules())


def forms(secret: str) -> set[bytes]:
    """The secret as it reads in a file: raw, JSON-escaped once and twice; a secret of many
    lines (a private key) also line by line (a tool's output may number its lines)."""
    parts = [
        secret,
        *(ln for ln in secret.replace("\\n", "\n").splitlines() if len(ln) >= 16 and "-----" not in ln),
    ]
    out = set()
    for part in parts:
        once = json.dumps(part, ensure_ascii=False)[1:-1]
        twice = json.dumps(once, ensure_ascii=False)[1:-1]
        out.update(s.encode() for s in (part, once, twice))
    return out


def leaks(root: Path) -> list[str]:
    """Every planted secret whose bytes appear in a file below ``root``."""
    blobs = [p.read_bytes() for p in root.rglob("*") if p.is_file()]
    out = []
    for p in planted().planted:
        if any(f in b for f in forms(p.secret) for b in blobs):
            out.append(p.family)
    return out


def claude_lines(records: list[dict[str, Any]]) -> list[str]:
    lines = []
    parent = None
    for n, rec in enumerate(records):
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        rec = {**rec, "uuid": uuid, "parentUuid": parent, "sessionId": CLAUDE_SID, "cwd": "/home/dev/src/app",
               "timestamp": f"2026-02-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"}  # fmt: skip
        if "type" not in rec or rec["type"] not in ("user", "assistant"):
            rec = {"type": "user", "message": {"role": "user", "content": json.dumps(rec)}, **{k: rec[k] for k in ("uuid", "parentUuid", "sessionId", "cwd", "timestamp")}}  # fmt: skip
        lines.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
        parent = uuid
    return lines


def make_machine(base: Path) -> Config:
    records = planted().records
    claude = base / "claude" / "projects" / "-home-dev-src-app"
    claude.mkdir(parents=True)
    (claude / f"{CLAUDE_SID}.jsonl").write_text("\n".join(claude_lines(records)) + "\n")
    # OpenCode's JSON storage: the records as a value inside a part, a prompt as a part's text.
    oc_json = base / "opencode-json"
    shutil.copytree(CORPUS / OPENCODE_JSON, oc_json / ".local/share/opencode/storage")
    part = next((oc_json / ".local/share/opencode/storage/part").rglob("*.json"))
    doc = json.loads(part.read_text())
    doc["text"] = records[0]["message"]["content"]
    doc["planted"] = records
    part.write_text(json.dumps(doc, indent=2))
    # OpenCode's SQLite store: the records in a part's JSON, a prompt's text in a title.
    oc_db = base / "opencode-db" / ".local/share/opencode"
    oc_db.mkdir(parents=True)
    shutil.copy2(CORPUS / OPENCODE_DB, oc_db / "opencode.db")
    db = sqlite3.connect(oc_db / "opencode.db")
    (pid, data), *_ = db.execute("SELECT id, data FROM part ORDER BY id").fetchall()
    value = json.loads(data)
    value["planted"] = records
    db.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(value), pid))
    db.execute("UPDATE session SET title = ?", (records[0]["message"]["content"],))
    db.commit()
    db.close()
    roots = [f"claude-code={base / 'claude' / 'projects'}", f"opencode={oc_json / '.local/share/opencode'}",
             f"opencode={base / 'opencode-db' / '.local/share/opencode'}"]  # fmt: skip
    return load_config(data_dir=str(base / "data"), root_options=roots, only_roots=True)


def sessions_of(config: Config, **params: Any) -> list[tuple[str, str]]:
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        doc = svc.call("sessions.list", {"limit": 1000, **params})
        return sorted((s["agent"], s["id"]) for s in doc["sessions"])
    finally:
        svc.close()


def check_parses(root: Path) -> dict[str, int]:
    """Every written file parses as what it was: JSONL lines, JSON files, SQLite stores."""
    kinds = {"jsonl": 0, "json": 0, "sqlite": 0}
    for p in root.rglob("*"):
        if not p.is_file() or p.name == "manifest.json" or p.parent.name == ".agtail":
            continue
        head = p.read_bytes()[:16]
        if head == b"SQLite format 3\x00":
            db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            db.execute("SELECT count(*) FROM part").fetchone()
            db.close()
            kinds["sqlite"] += 1
        elif p.suffix == ".jsonl":
            for line in p.read_text().splitlines():
                json.loads(line)
            kinds["jsonl"] += 1
        elif p.suffix == ".json":
            json.loads(p.read_text())
            kinds["json"] += 1
    return kinds


@pytest.fixture
def machine(tmp_path: Path) -> Config:
    return make_machine(tmp_path / "a")


def test_a_plain_push_sends_the_bytes_as_they_are(machine: Config, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    rep = push(machine, str(remote), "laptop")
    assert not rep["errors"] and "redacted" not in rep
    assert set(leaks(remote)) == {p.family for p in planted().planted}  # the test can fail


def test_push_redact_sends_no_secret_and_the_copy_parses_and_indexes(machine: Config, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    rep = push(machine, str(remote), "laptop", redact=True)
    assert not rep["errors"], rep["errors"]
    assert rep["redacted"]["files"] >= 3 and rep["redacted"]["values"] >= 3
    assert leaks(remote) == []
    kinds = check_parses(remote / "laptop")
    assert kinds["jsonl"] >= 1 and kinds["json"] >= 1 and kinds["sqlite"] == 1
    text = (remote / "laptop" / "claude-code" / "-home-dev-src-app" / f"{CLAUDE_SID}.jsonl").read_text()
    assert "«secret:github-pat …" in text and "«secret:aws-access-token …" in text
    # Pulled into another machine, the masked copy is read by the same adapters.
    b = load_config(data_dir=str(tmp_path / "b" / "data"), root_options=[], only_roots=True)
    got = pull(b, str(remote), "laptop")
    assert not got["errors"]
    b = load_config(data_dir=b.data_dir, root_options=[], only_roots=False)
    native = sessions_of(machine)
    assert native and sessions_of(b, imported=True, collection="laptop") == native
    # Pushed again: nothing changed, nothing sent.
    again = push(machine, str(remote), "laptop", redact=True)
    assert again["files"] == 0 and again["skipped"] == rep["files"] + rep["skipped"]


def test_export_redact_writes_no_secret(machine: Config, tmp_path: Path) -> None:
    svc = Service(machine, workers=1)
    try:
        svc.update_index()
        sessions = svc.call("sessions.list", {"limit": 1000})["sessions"]
        full = [svc.call("sessions.get", {"agent": s["agent"], "id": s["id"]})["session"] for s in sessions]
    finally:
        svc.close()
    out = tmp_path / "export"
    rep = export_sessions(machine, full, out, redact=True)
    assert not rep["errors"] and rep["redacted"]["files"] >= 3
    assert leaks(out) == []
    kinds = check_parses(out)
    assert kinds["jsonl"] >= 1 and kinds["json"] >= 1 and kinds["sqlite"] == 1
    plain = export_sessions(machine, full, tmp_path / "plain")
    assert "redacted" not in plain and leaks(tmp_path / "plain")


def test_a_line_without_a_secret_keeps_its_bytes(tmp_path: Path) -> None:
    from agtaild.sync.redact import redact_text_file

    aws = "AKIA" + "Z5ZPAR3B7TTE2QXN"
    src = tmp_path / "s.jsonl"
    clean = '{"a": 1,   "b": "spaced out"}'
    src.write_text(f'{clean}\n{{"t":"key {aws}"}}\r\nnot json {aws}\n')
    dst = tmp_path / "d.jsonl"
    assert redact_text_file(str(src), str(dst)) == 2
    lines = dst.read_bytes().split(b"\n")
    assert lines[0] == clean.encode() and lines[1].endswith(b"\r")
    assert json.loads(lines[1])["t"] == "key «secret:aws-access-token …2QXN»"
    assert (
        lines[2] == "not json «secret:aws-access-token …2QXN»".encode()
        and aws.encode() not in dst.read_bytes()
    )


def _run(capsys: pytest.CaptureFixture[str], config: Config, *argv: str) -> tuple[int, Any, str]:
    from agtaild import cli

    roots = [f"--root={r.agent}={r.path}" for r in config.roots if r.kind == "native"]
    code = cli.main(["--data-dir", config.data_dir, "--only-roots", "--no-daemon", *roots, *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else out), err


def test_a_push_to_a_remote_not_marked_own_warns_how_many_secrets_it_carries(
    machine: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    share = tmp_path / "share"
    share.mkdir()
    code, rep, err = _run(
        capsys, machine, "sync", "push", str(share), "--collection", "c", "--json", "--dry-run"
    )
    assert code == 0 and rep["own_remote"] is False
    svc = Service(machine, workers=1)
    try:
        listed = svc.call("secrets.list", {"imported": False, "places": 0, "limit": 10_000})
    finally:
        svc.close()
    carried = len(listed["secrets"])
    assert carried > 100 and rep["secrets_carried"] == carried
    assert f"would carry {carried} secrets unmasked" in err and "--redact" in err
    # --redact: nothing carried, nothing said; the copy holds no secret.
    code, rep, err = _run(
        capsys, machine, "sync", "push", str(share), "--collection", "c", "--json", "--redact"
    )
    assert code == 0 and "secrets_carried" not in rep and "warning" not in err and leaks(share) == []
    # --own: remembered; neither that push nor the next one warns.
    code, rep, err = _run(capsys, machine, "sync", "push", str(share), "--collection", "d", "--json", "--own")
    assert code == 0 and rep["own_remote"] is True and "warning" not in err
    code, rep, err = _run(capsys, machine, "sync", "push", str(share) + "/", "--collection", "d", "--json")
    assert code == 0 and rep["own_remote"] is True and "warning" not in err and "secrets_carried" not in rep


def test_cli_export_redact(machine: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, rep, _ = _run(
        capsys, machine, "export", f"claude-code:{CLAUDE_SID}", "--to", str(out), "--redact", "--json"
    )
    assert code == 0 and rep["redacted"]["files"] == 1 and leaks(out) == []
    assert check_parses(out)["jsonl"] == 1


def test_an_sqlite_store_is_rewritten_through_sqlite(tmp_path: Path) -> None:
    """Every kind of table an agent's store may have: rowid, WITHOUT ROWID, FTS5; TEXT and BLOB
    values, JSON and plain; a WAL database. No byte of the secret is left in the copy."""
    from agtaild.sync.redact import redact_sqlite

    gh = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    src = tmp_path / "store.db"
    db = sqlite3.connect(src)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE msg (id INTEGER PRIMARY KEY, body TEXT, raw BLOB, n INTEGER)")
    db.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID")
    db.execute("CREATE VIRTUAL TABLE msg_fts USING fts5(body)")
    db.execute(
        "INSERT INTO msg VALUES (1, ?, ?, 7)",
        (f"export GITHUB_TOKEN={gh}", json.dumps({"token": gh}).encode()),
    )
    db.execute("INSERT INTO msg VALUES (2, 'nothing here', x'00ff', 8)")
    db.execute("INSERT INTO kv VALUES ('composer', ?)", (json.dumps({"text": f"use {gh}"}).encode(),))
    db.execute("INSERT INTO msg_fts (rowid, body) VALUES (1, ?)", (f"token {gh} there",))
    db.commit()
    dst = tmp_path / "copy.db"
    assert redact_sqlite(str(src), str(dst)) == 4
    db.close()
    assert gh.encode() not in dst.read_bytes() and not Path(str(dst) + "-wal").exists()
    out = sqlite3.connect(dst)
    assert out.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    body, raw, n = out.execute("SELECT body, raw, n FROM msg WHERE id = 1").fetchone()
    assert body == "export GITHUB_TOKEN=«secret:github-pat …q7R8»" and n == 7
    assert isinstance(raw, bytes) and json.loads(raw) == {"token": "«secret:github-pat …q7R8»"}
    assert out.execute("SELECT raw FROM msg WHERE id = 2").fetchone()[0] == b"\x00\xff"
    assert (
        json.loads(out.execute("SELECT v FROM kv").fetchone()[0])["text"] == "use «secret:github-pat …q7R8»"
    )
    assert out.execute("SELECT rowid FROM msg_fts WHERE msg_fts MATCH 'there'").fetchall() == [(1,)]
    assert out.execute("SELECT count(*) FROM msg_fts WHERE msg_fts MATCH ?", (f'"{gh}"',)).fetchone()[0] == 0
    out.close()
