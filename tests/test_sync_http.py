"""Push and pull over HTTP to another agtaild's sync endpoints (a real server on loopback)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from agtaild.errors import Refused, Unauthorized
from agtaild.sync import remote as remote_mod
from agtaild.sync.http import HttpClient, HttpDestination
from agtaild.sync.manifest import FileEntry
from agtaild.sync.native import LocalFilesSource
from agtaild.sync.remote import pull, push
from agtaild.sync.transfer import WriteOp
from tests.synctools import TOKEN, api_server, make_machine, tree


@pytest.fixture
def machines(tmp_path: Path, corpus: Path) -> tuple:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    b = make_machine(tmp_path / "b", corpus, claude=False, codex=True)
    return a, b


def test_push_writes_into_the_other_import_store_then_only_appends(machines: tuple, tmp_path: Path) -> None:
    a, b = machines
    with api_server(b) as server:
        rep = push(a, server.url, "laptop", token=TOKEN)
        native = tree(tmp_path / "a" / "claude" / "projects")
        assert rep["errors"] == [] and rep["files"] == len(native)
        assert rep["bytes"] == sum(len(v) for v in native.values())
        imported = Path(b.import_dir) / "laptop" / "claude-code"
        assert tree(imported) == native
        # Append to one session on A: the push sends exactly the appended bytes.
        target = sorted((tmp_path / "a" / "claude" / "projects").glob("*/*.jsonl"))[0]
        extra = b'{"type":"user","message":{"role":"user","content":"later"},"uuid":"late-1"}\n'
        with open(target, "ab") as fh:
            fh.write(extra)
        rep2 = push(a, server.url, "laptop", token=TOKEN)
        assert (rep2["files"], rep2["appended"], rep2["bytes"], rep2["skipped"]) == (1, 1, len(extra), len(native) - 1)
        assert tree(imported) == tree(tmp_path / "a" / "claude" / "projects")
        listing = json.loads(urllib.request.urlopen(urllib.request.Request(
            server.url + "/api/v1/import", headers={"Authorization": f"Bearer {TOKEN}"})).read())
        assert [c["name"] for c in listing["collections"]] == ["laptop"]
        assert listing["collections"][0]["sessions"] >= 7


def test_pull_brings_the_other_machines_native_sessions(machines: tuple, tmp_path: Path) -> None:
    a, b = machines
    with api_server(b) as server:
        rep = pull(a, server.url, "desk", token=TOKEN)
        assert rep["errors"] == []
        assert tree(Path(a.import_dir) / "desk" / "codex") == tree(tmp_path / "b" / "codex" / "sessions")
        again = pull(a, server.url, "desk", token=TOKEN)
        assert (again["files"], again["bytes"]) == (0, 0)


def test_wrong_token_is_refused_and_nothing_written(machines: tuple) -> None:
    a, b = machines
    with api_server(b) as server, pytest.raises(Unauthorized, match="token"):
        push(a, server.url, "laptop", token="wrong")
    assert not (Path(b.import_dir) / "laptop").exists()


def test_interrupted_upload_resumes(machines: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = machines
    big = tmp_path / "a" / "claude" / "projects" / "-tmp-big" / "big.jsonl"
    big.parent.mkdir()
    big.write_bytes(b"".join(b'{"type":"user","n":%d,"pad":"%s"}\n' % (i, b"y" * 80) for i in range(60000)))
    size = big.stat().st_size
    real_read = LocalFilesSource.read

    def dropping(self: LocalFilesSource, path: str, offset: int, length: int) -> Iterator[bytes]:
        sent = 0
        for block in real_read(self, path, offset, length):
            if path.endswith("big.jsonl") and sent + len(block) > 2_000_000:
                yield block[: 2_000_000 - sent]
                raise ConnectionResetError("the link dropped")
            sent += len(block)
            yield block

    with api_server(b) as server:
        monkeypatch.setattr(LocalFilesSource, "read", dropping)
        rep = push(a, server.url, "laptop", token=TOKEN)
        assert [e["path"] for e in rep["errors"]] == ["claude-code/-tmp-big/big.jsonl"]
        partial = Path(b.import_dir) / "laptop" / "claude-code" / "-tmp-big" / ".big.jsonl.agtail-partial"
        kept = partial.stat().st_size
        assert 0 < kept <= 2_000_000
        monkeypatch.setattr(LocalFilesSource, "read", real_read)
        rep2 = push(a, server.url, "laptop", token=TOKEN)
        assert (rep2["resumed"], rep2["bytes"], rep2["errors"]) == (1, size - kept, [])
        assert (Path(b.import_dir) / "laptop" / "claude-code" / "-tmp-big" / "big.jsonl").read_bytes() == big.read_bytes()
        assert not partial.exists()


def test_server_refuses_hostile_writes_itself(machines: tuple) -> None:
    _a, b = machines
    with api_server(b) as server:
        dest = HttpDestination(HttpClient(server.url, TOKEN), "laptop")
        for path in ["../../escape.jsonl", "/etc/evil", "claude-code/../../x", "unknown-agent/x"]:
            entry = FileEntry(path=path, size=4, sha256="0" * 64, agent=path.split("/")[0] or "claude-code")
            with pytest.raises(Refused):
                dest.write(WriteOp(entry, "new"), [b"evil"])
        big = FileEntry(path="claude-code/p/big.jsonl", size=2 << 30, sha256="0" * 64, agent="claude-code")
        with pytest.raises(Refused, match="over the limit"):
            dest.write(WriteOp(big, "new"), [b"x"])
        with pytest.raises(Exception, match="not allowed"):
            HttpDestination(HttpClient(server.url, TOKEN), "..").state()
        # A manifest set with one bad entry is refused whole by /check.
        from agtaild.sync.manifest import Manifest

        good = FileEntry(path="claude-code/p/a.jsonl", size=1, sha256="0" * 64, agent="claude-code")
        with pytest.raises(Refused, match="nothing was written"):
            dest.check(Manifest(files=[good, FileEntry(path="../x", size=1, sha256="0" * 64, agent="..")]))
        # Lying about the length: the declared size and the body disagree.
        req = urllib.request.Request(
            server.url + "/api/v1/import/laptop/file", data=b"12345", method="PUT",
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/octet-stream",
                     "X-Agtail-Write": msgspec.json.encode(WriteOp(good, "new")).decode()})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req)
        assert err.value.code == 400
    assert [p for p in Path(b.data_dir).rglob("*") if p.is_file() and "imported" in str(p)] == []
    assert not (Path(b.data_dir).parent / "escape.jsonl").exists()


def test_remote_kind_parsing() -> None:
    assert remote_mod.remote_kind("http://127.0.0.1:7717") == "http"
    assert remote_mod.remote_kind("ssh://host/srv/agtail") == "ssh"
    assert remote_mod.remote_kind("/mnt/share") == "directory"
    with pytest.raises(Exception, match="a remote is"):
        remote_mod.remote_kind("ftp://x/y")
