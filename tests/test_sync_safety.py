"""Nothing from a remote writes outside its collection; a hostile set is refused whole."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from agtaild.errors import Refused, UsageError
from agtaild.sync import directory as directory_mod
from agtaild.sync.directory import DirectoryDestination, DirectorySource
from agtaild.sync.manifest import FileEntry, HashCache, Manifest
from agtaild.sync.safety import check_collection_name, check_entries, check_not_native, path_problem
from agtaild.sync.transfer import Limits, transfer

LIMITS = Limits(max_file_size=10_000, known_agents=["claude-code", "codex"])


def tree_files(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def good_remote(tmp_path: Path) -> Path:
    remote = tmp_path / "remote" / "laptop"
    (remote / "claude-code" / "p").mkdir(parents=True)
    (remote / "claude-code" / "p" / "ok.jsonl").write_bytes(b'{"a":1}\n')
    return remote


def pull(remote: Path, local: Path) -> dict:
    return transfer(DirectorySource(remote, HashCache(None)), DirectoryDestination(local, HashCache(None)), LIMITS)


@pytest.mark.parametrize(
    "path",
    ["../evil.jsonl", "claude-code/../../evil", "/etc/passwd", "claude-code//x", "claude-code/./x",
     "C:/x/y", "claude-code\\..\\x", "claude-code/x\x00y", "claude-code/x\x1fy", "claude-code/x\x7fy", "claude-code/.x.agtail-partial",
     "evil-agent/x.jsonl", "x.jsonl", ""],
)
def test_unsafe_paths_are_named(path: str) -> None:
    assert path_problem(path, ["claude-code"]) is not None


def test_safe_path_passes() -> None:
    assert path_problem("claude-code/-home-me-app/abc.jsonl", ["claude-code"]) is None
    assert path_problem("claude-code/caf\u00e9 \u65e5\u672c/x\x80.jsonl", ["claude-code"]) is None


def test_collection_names() -> None:
    assert check_collection_name("work-laptop.2") == "work-laptop.2"
    for bad in ["..", ".hidden", "a/b", "", "x" * 65, "a b"]:
        with pytest.raises(UsageError):
            check_collection_name(bad)


def entry(path: str, size: int = 1, agent: str | None = None) -> FileEntry:
    return FileEntry(path=path, size=size, sha256="0" * 64, agent=agent or path.split("/")[0])


def test_whole_set_refused_with_every_problem_listed() -> None:
    with pytest.raises(Refused) as err:
        check_entries(
            [entry("claude-code/ok"), entry("../x", agent=".."), entry("claude-code/big", size=10**9),
             entry("claude-code/neg", size=-5), entry("codex/a", agent="claude-code")],
            max_file_size=1000, case_insensitive=False, known_agents=["claude-code", "codex"],
        )
    assert "nothing was written" in err.value.message
    assert len(err.value.data) == 4  # type: ignore[arg-type]


def test_case_only_differences_refused_on_case_insensitive_destinations() -> None:
    entries = [entry("claude-code/p/A.jsonl"), entry("claude-code/p/a.jsonl")]
    check_entries(entries, max_file_size=10, case_insensitive=False)
    with pytest.raises(Refused, match="only by case"):
        check_entries(entries, max_file_size=10, case_insensitive=True)
    with pytest.raises(Refused, match="only by case"):
        check_entries(entries[:1], max_file_size=10, case_insensitive=True, existing=["claude-code/p/a.jsonl"])


def test_symlink_in_remote_tree_refuses_everything(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    os.symlink(secret, remote / "claude-code" / "p" / "link.jsonl")
    local = tmp_path / "imported" / "laptop"
    with pytest.raises(Refused, match="symlink"):
        pull(remote, local)
    assert tree_files(local) == []


def test_symlinked_directory_in_remote_tree_refused(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", remote / "claude-code" / "dirlink")
    local = tmp_path / "imported" / "laptop"
    with pytest.raises(Refused, match="symlink"):
        pull(remote, local)
    assert tree_files(local) == []


def test_fifo_in_remote_tree_refused(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    os.mkfifo(remote / "claude-code" / "p" / "pipe.jsonl")
    local = tmp_path / "imported" / "laptop"
    with pytest.raises(Refused, match="not a regular file"):
        pull(remote, local)
    assert tree_files(local) == []


def test_oversized_file_refused(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    (remote / "claude-code" / "p" / "huge.jsonl").write_bytes(b"x" * 20_000)
    local = tmp_path / "imported" / "laptop"
    with pytest.raises(Refused, match="over the limit"):
        pull(remote, local)
    assert tree_files(local) == []


def _write_manifest(remote: Path, files: list[dict]) -> None:
    (remote / "manifest.json").write_text(json.dumps({"format": "agtail-manifest", "version": 1, "files": files}))


def test_manifest_naming_traversal_or_absolute_paths_refused(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    sha = hashlib.sha256(b"x").hexdigest()
    for bad in ["../../outside.jsonl", "/tmp/abs.jsonl"]:
        _write_manifest(remote, [{"path": bad, "size": 1, "sha256": sha, "agent": "claude-code"}])
        local = tmp_path / "imported" / "laptop"
        with pytest.raises(Refused):
            pull(remote, local)
        assert tree_files(local) == []
    assert not (tmp_path / "outside.jsonl").exists()


def test_manifest_lying_about_size_refused(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    f = remote / "claude-code" / "p" / "ok.jsonl"
    sha = hashlib.sha256(f.read_bytes()).hexdigest()
    _write_manifest(remote, [{"path": "claude-code/p/ok.jsonl", "size": 3, "sha256": sha,
                              "agent": "claude-code", "mtime": f.stat().st_mtime}])
    local = tmp_path / "imported" / "laptop"
    with pytest.raises(Refused, match="says"):
        pull(remote, local)
    assert tree_files(local) == []


def test_malformed_manifest_refused(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    (remote / "manifest.json").write_text('{"files": [{"path": 1}]}')
    with pytest.raises(Refused, match="not a valid agtail manifest"):
        pull(remote, tmp_path / "imported" / "laptop")


def test_source_sending_more_than_declared_keeps_nothing(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    local = tmp_path / "imported" / "laptop"
    src = DirectorySource(remote, HashCache(None))
    real_read = src.read

    def greedy(path: str, offset: int, length: int):  # type: ignore[no-untyped-def]
        yield from real_read(path, offset, length)
        yield b"and more bytes than the manifest said"

    src.read = greedy  # type: ignore[method-assign]
    rep = transfer(src, DirectoryDestination(local, HashCache(None)), LIMITS)
    assert rep["files"] == 0 and "more than" in rep["errors"][0]["message"]
    assert [p for p in tree_files(local) if "jsonl" in p] == []


def test_symlink_planted_in_destination_is_not_followed(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    local = tmp_path / "imported" / "laptop"
    outside = tmp_path / "outside"
    outside.mkdir()
    local.mkdir(parents=True)
    os.symlink(outside, local / "claude-code")
    rep = pull(remote, local)
    assert rep["files"] == 0 and "symlink" in rep["errors"][0]["message"]
    assert list(outside.iterdir()) == []


def test_destination_inside_native_dir_refused(tmp_path: Path) -> None:
    native = tmp_path / "home" / ".claude" / "projects"
    native.mkdir(parents=True)
    with pytest.raises(Refused, match="agent directory"):
        check_not_native(native / "x", [str(native)])
    with pytest.raises(Refused):
        check_not_native(tmp_path / "home", [str(native)])
    check_not_native(tmp_path / "data", [str(native)])


def test_case_insensitive_destination_detected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = good_remote(tmp_path)
    (remote / "claude-code" / "p" / "OK.jsonl").write_bytes(b'{"b":2}\n')
    monkeypatch.setattr(directory_mod, "is_case_insensitive", lambda _d: True)
    local = tmp_path / "imported" / "laptop"
    with pytest.raises(Refused, match="only by case"):
        pull(remote, local)
    assert [p for p in tree_files(local) if "jsonl" in p] == []


def test_manifest_struct_roundtrip() -> None:
    m = Manifest(files=[entry("claude-code/a")], collection="c")
    assert m.by_path()["claude-code/a"].size == 1


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    remote = good_remote(tmp_path)
    local = tmp_path / "imported" / "laptop"
    rep = transfer(DirectorySource(remote, HashCache(None)), DirectoryDestination(local, HashCache(None)),
                   LIMITS, dry_run=True)
    assert rep["pending"] == [{"path": "claude-code/p/ok.jsonl", "action": "new", "bytes": 8}]
    assert not (tmp_path / "imported").exists()
