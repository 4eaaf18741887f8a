"""The ssh transport's rsync runs, against a local path (no ssh server in tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agtaild.sync import rsync as rsync_mod
from agtaild.sync.manifest import load_manifest
from agtaild.sync.remote import pull, push
from tests.synctools import make_machine, tree

pytestmark = pytest.mark.skipif(shutil.which("rsync") is None, reason="rsync is not installed (.ci/run installs it)")


@pytest.fixture
def via_local_rsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ssh://… remotes go to a local directory through the same rsync invocations."""
    target = tmp_path / "server" / "agtail"
    target.mkdir(parents=True)
    monkeypatch.setattr(rsync_mod, "parse_ssh_remote", lambda remote: rsync_mod.RsyncRemote(str(target)))
    return target


def test_push_then_append_then_pull(via_local_rsync: Path, tmp_path: Path, corpus: Path) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    b = make_machine(tmp_path / "b", corpus, claude=False)
    native = tmp_path / "a" / "claude" / "projects"
    rep = push(a, "ssh://server/agtail", "laptop")
    assert rep["errors"] == [] and rep["files"] == len(tree(native))
    assert tree(via_local_rsync / "laptop" / "claude-code") == tree(native)
    record = load_manifest(via_local_rsync / "laptop")
    assert record is not None and len(record.files) == len(tree(native))

    target = sorted(native.glob("*/*.jsonl"))[0]
    extra = b'{"type":"user","message":{"role":"user","content":"later"},"uuid":"late-1"}\n'
    with open(target, "ab") as fh:
        fh.write(extra)
    rep2 = push(a, "ssh://server/agtail", "laptop")
    assert (rep2["files"], rep2["appended"], rep2["bytes"]) == (1, 1, len(extra))
    assert rep2["wire_bytes"] < target.stat().st_size  # only the tail (+ rsync's checksums) crossed
    assert tree(via_local_rsync / "laptop" / "claude-code") == tree(native)
    assert not any(".agtail-conflict-" in p for p in tree(via_local_rsync))

    pulled = pull(b, "ssh://server/agtail", "laptop")
    assert pulled["errors"] == []
    assert tree(Path(b.import_dir) / "laptop" / "claude-code") == tree(native)
    again = pull(b, "ssh://server/agtail", "laptop")
    assert (again["files"], again["bytes"]) == (0, 0)


def test_file_written_by_another_machine_is_kept_on_push(via_local_rsync: Path, tmp_path: Path, corpus: Path) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    other = make_machine(tmp_path / "o", corpus, claude=True)
    push(other, "ssh://server/agtail", "shared")
    target = sorted((tmp_path / "a" / "claude" / "projects").glob("*/*.jsonl"))[0]
    target.write_bytes(b'{"type":"user","message":{"role":"user","content":"mine"}}\n')
    rep = push(a, "ssh://server/agtail", "shared")
    assert len(rep["conflicts"]) == 1
    kept = [p for p in tree(via_local_rsync / "shared") if ".agtail-conflict-" in p]
    assert len(kept) == 1


def test_pull_never_brings_symlinks_or_oversized_files(via_local_rsync: Path, tmp_path: Path, corpus: Path) -> None:
    b = make_machine(tmp_path / "b", corpus, claude=False)
    coll = via_local_rsync / "evil" / "claude-code" / "p"
    coll.mkdir(parents=True)
    (coll / "ok.jsonl").write_bytes(b'{"a":1}\n')
    secret = tmp_path / "secret"
    secret.write_text("password")
    (coll / "link.jsonl").symlink_to(secret)
    (coll / "huge.jsonl").write_bytes(b"x" * 5000)
    rep = pull(b, "ssh://server/agtail", "evil", max_file_size=1000)
    assert rep["errors"] == []
    assert set(tree(Path(b.import_dir) / "evil")) == {"claude-code/p/ok.jsonl", "manifest.json"}


def test_ssh_remote_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    r = rsync_mod.parse_ssh_remote("ssh://me@host.example:2222/srv/agtail")
    assert (r.target, r.port) == ("me@host.example:/srv/agtail", 2222)
    with pytest.raises(Exception, match="ssh://"):
        rsync_mod.parse_ssh_remote("ssh://host")
