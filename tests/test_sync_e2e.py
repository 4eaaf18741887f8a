"""Two machines end to end: push from A, pull into B (directory remote, and HTTP to a second
API server), B's index lists and finds the sessions as imported with their collection, resume
is refused, and an append on A moves only the appended bytes all the way to B."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, load_config
from agtaild.errors import Refused
from agtaild.query.service import Service
from agtaild.sync.remote import pull, push, status, verify
from tests.synctools import TOKEN, api_server, make_machine, tree


def reload(config: Config) -> Config:
    """A fresh config: a pull may have added a collection to the import store."""
    roots = [f"{r.agent}={r.path}" for r in config.roots if r.kind == "native"]
    return load_config(data_dir=config.data_dir, root_options=roots, only_roots=True)


def index_of(config: Config) -> Service:
    svc = Service(reload(config), workers=1)
    svc.update_index()
    return svc


def all_sessions(svc: Service, **params: Any) -> list[dict[str, Any]]:
    return list(svc.call("sessions.list", {"limit": 1000, **params})["sessions"])


@pytest.fixture
def two(tmp_path: Path, corpus: Path) -> tuple[Config, Config]:
    a = make_machine(tmp_path / "a", corpus, claude=True, codex=True)
    b = make_machine(tmp_path / "b", corpus, claude=False, codex=False)
    return a, b


def check_imported_on_b(a: Config, b: Config, collection: str) -> None:
    svc_a = index_of(a)
    svc_b = index_of(b)
    try:
        native = all_sessions(svc_a)
        imported = all_sessions(svc_b, imported=True, collection=collection)
        assert native and sorted((s["agent"], s["id"]) for s in imported) == sorted(
            (s["agent"], s["id"]) for s in native
        )
        assert all(s["imported"] and s["collection"] == collection and not s["resumable"] for s in imported)
        assert all_sessions(svc_b, imported=False) == []
        word = "demo"
        hits = svc_b.call("search", {"q": word, "limit": 5})["hits"]
        assert hits and all(h["session"]["collection"] == collection for h in hits)
        one = imported[0]
        with pytest.raises(Refused, match="imported from collection"):
            svc_b.call("resume.command", {"agent": one["agent"], "id": one["id"]})
    finally:
        svc_a.close()
        svc_b.close()


def append_line(a_base: Path) -> tuple[Path, bytes]:
    target = sorted((a_base / "claude" / "projects").glob("*/*.jsonl"))[0]
    extra = b'{"type":"user","message":{"role":"user","content":"appended later"},"uuid":"e2e-late"}\n'
    with open(target, "ab") as fh:
        fh.write(extra)
    return target, extra


def test_directory_remote_end_to_end(two: tuple[Config, Config], tmp_path: Path) -> None:
    a, b = two
    share = tmp_path / "share"
    share.mkdir()
    rep = push(a, str(share), "laptop")
    assert rep["errors"] == [] and rep["files"] > 0 and rep["skipped"] == 0
    rep_b = pull(b, str(share), "laptop")
    assert (rep_b["files"], rep_b["bytes"], rep_b["errors"]) == (rep["files"], rep["bytes"], [])
    check_imported_on_b(a, b, "laptop")

    target, extra = append_line(tmp_path / "a")
    st = status(a, str(share), "laptop")
    assert [p["action"] for p in st["push"]["pending"]] == ["append"]
    rep2 = push(a, str(share), "laptop")
    assert (rep2["files"], rep2["appended"], rep2["bytes"]) == (1, 1, len(extra))
    rep_b2 = pull(b, str(share), "laptop")
    assert (rep_b2["files"], rep_b2["appended"], rep_b2["bytes"]) == (1, 1, len(extra))
    copy = Path(b.import_dir) / "laptop" / "claude-code" / target.relative_to(tmp_path / "a" / "claude" / "projects")
    assert copy.read_bytes() == target.read_bytes()
    svc_b = index_of(b)
    try:
        assert svc_b.call("search", {"q": "appended later"})["hits"]
    finally:
        svc_b.close()
    ver = verify(b)
    assert ver["clean"] and ver["collections"][0]["ok"] == ver["collections"][0]["files"]


def test_http_remote_end_to_end(two: tuple[Config, Config], tmp_path: Path) -> None:
    a, b = two
    with api_server(b) as server:
        rep = push(a, server.url, "laptop", token=TOKEN)
        assert rep["errors"] == [] and rep["files"] > 0
        check_imported_on_b(a, b, "laptop")
        _target, extra = append_line(tmp_path / "a")
        rep2 = push(a, server.url, "laptop", token=TOKEN)
        assert (rep2["files"], rep2["appended"], rep2["bytes"]) == (1, 1, len(extra))
    # And the other way round: A pulls B's (empty) native sessions: nothing to move.
    with api_server(a) as server_a:
        back = pull(b, server_a.url, "from-a", token=TOKEN)
        assert back["errors"] == [] and back["files"] == rep["files"]


def test_verify_reports_a_damaged_copy(two: tuple[Config, Config], tmp_path: Path) -> None:
    a, b = two
    share = tmp_path / "share"
    share.mkdir()
    push(a, str(share), "laptop")
    pull(b, str(share), "laptop")
    victim = sorted((Path(b.import_dir) / "laptop").rglob("*.jsonl"))[0]
    victim.write_bytes(victim.read_bytes()[:-10] + b"corrupted\n")
    ver = verify(b, collection="laptop")
    assert not ver["clean"] and len(ver["collections"][0]["differs"]) == 1
    # Pulling again repairs it, keeping the damaged copy beside it.
    rep = pull(b, str(share), "laptop")
    assert len(rep["conflicts"]) == 1 and verify(b, collection="laptop")["clean"]
    local = tree(Path(b.import_dir) / "laptop" / "claude-code")
    kept = {k: v for k, v in local.items() if ".agtail-conflict-" in k}
    assert len(kept) == 1 and next(iter(kept.values())).endswith(b"corrupted\n")
    assert {k: v for k, v in local.items() if k not in kept} == tree(share / "laptop" / "claude-code")
