"""Sync and export under bad input (issue #9, items 15, 16, 17): a tampered directory remote
whose files no longer match its manifest, unparsable URLs, an export onto a file, an empty
collection name. Each gets a clear error and loses nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agtaild import cli
from tests.synctools import make_machine


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else out), err


def globals_for(config: Any) -> list[str]:
    roots = [f"--root={r.agent}={r.path}" for r in config.roots if r.kind == "native"]
    return ["--data-dir", config.data_dir, "--only-roots", "--no-daemon", *roots]


@pytest.fixture
def pushed(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Any, Path, list[str]]:
    """Machine b, a directory remote holding machine a's collection "laptop", and its files."""
    a = make_machine(tmp_path / "a", corpus, claude=True)
    b = make_machine(tmp_path / "b", corpus, claude=False)
    share = tmp_path / "share"
    share.mkdir()
    code, rep, err = run(capsys, *globals_for(a), "sync", "push", str(share), "--collection", "laptop", "--json")
    assert code == 0 and rep["files"] > 1, err
    manifest = json.loads((share / "laptop" / "manifest.json").read_text())
    return b, share, sorted(f["path"] for f in manifest["files"])


def _imported(b: Any, path: str) -> Path:
    return Path(b.data_dir) / "imported" / "laptop" / path


def _pull(capsys: pytest.CaptureFixture[str], b: Any, share: Path, *more: str) -> tuple[int, Any, str]:
    return run(capsys, *globals_for(b), "sync", "pull", str(share), "--collection", "laptop", "--json", *more)


def test_a_file_enlarged_after_the_manifest_gives_only_what_the_manifest_describes(
    pushed: tuple[Any, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """0.1.0 hashed the tree when the mtime changed and imported the enlarged file whole."""
    b, share, paths = pushed
    victim = share / "laptop" / paths[0]
    original = victim.read_bytes()
    victim.write_bytes(original + b"X" * (3 << 20))  # 3 MiB more, manifest unchanged
    os.utime(victim, (1_900_000_000, 1_900_000_000))  # and a new mtime
    limit = str(len(original) + (1 << 20))  # the manifest's size fits; the enlarged file would not
    code, rep, err = _pull(capsys, b, share, "--max-file-size", limit)
    assert code == 0, err
    assert _imported(b, paths[0]).read_bytes() == original  # never more than the manifest's bytes
    assert rep["bytes"] < 2 << 20


def test_a_file_changed_after_the_manifest_is_not_imported(
    pushed: tuple[Any, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    b, share, paths = pushed
    victim = share / "laptop" / paths[0]
    original = victim.read_bytes()
    victim.write_bytes(original[:-2] + (b"AA" if original[-2:] != b"AA" else b"BB"))
    os.utime(victim, (1_900_000_000, 1_900_000_000))  # a new mtime: 0.1.0 then trusted the tree
    code, rep, _ = _pull(capsys, b, share)
    assert code == 1, json.dumps(rep)
    assert [e["path"] for e in rep["errors"]] == [paths[0]]
    assert "sha256" in rep["errors"][0]["message"]
    assert not _imported(b, paths[0]).exists()  # nothing renamed into place
    assert all(_imported(b, p).exists() for p in paths[1:])  # the others were moved
    assert not any(p.name.endswith(".agtail-partial") for p in _imported(b, "").rglob("*"))


def test_a_manifest_that_lies_at_the_same_mtime_refuses_everything(
    pushed: tuple[Any, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    b, share, paths = pushed
    victim = share / "laptop" / paths[0]
    st = victim.stat()
    victim.write_bytes(victim.read_bytes() + b"more")
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    code, _, err = run(capsys, *globals_for(b), "sync", "pull", str(share), "--collection", "laptop")
    assert code == 3 and "nothing was written" in err
    assert not (Path(b.data_dir) / "imported" / "laptop").exists() or not any(
        _imported(b, p).exists() for p in paths
    )


@pytest.mark.parametrize("remote", ["http://[::1:bad", "http://host:99999999", "ssh://[::1:bad/x"])
def test_an_unparsable_remote_is_a_usage_error(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str],
                                               remote: str) -> None:  # fmt: skip
    b = make_machine(tmp_path / "b", corpus, claude=False)
    for verb in ("pull", "push"):
        code, _, err = run(capsys, *globals_for(b), "sync", verb, remote, "--collection", "x")
        assert code == 2, err
        assert "not a valid URL" in err and "Traceback" not in err


def test_export_onto_an_existing_file_is_a_usage_error(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    from agtaild.query.service import Service

    svc = Service(a, workers=1)
    try:
        svc.update_index()
        one = svc.call("sessions.list", {"limit": 1})["sessions"][0]
    finally:
        svc.close()
    target = tmp_path / "a-file"
    target.write_text("keep me")
    code, _, err = run(capsys, *globals_for(a), "export", "--to", str(target), f"{one['agent']}:{one['id']}")
    assert code == 2 and "is a file, not a directory" in err
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("verb", ["push", "pull", "status", "verify"])
def test_an_empty_collection_name_is_refused(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True)
    share = tmp_path / "share"
    share.mkdir()
    code, _, err = run(capsys, *globals_for(a), "sync", verb, str(share), "--collection=")
    assert code == 2 and "--collection must not be empty" in err
    assert list(share.iterdir()) == []
