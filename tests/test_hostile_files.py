"""Hostile files and a damaged index (issue #9): no session is ever lost, and the index heals.

Drives the CLI (in-process, and as another user or on small/read-only mounts in
subprocesses) and a live daemon with: file and directory symlink loops, unreadable folders,
non-UTF-8 file names, files rewritten in place, and index damage (corrupt, deleted,
read-only, disk full). Tests that need root powers (mount, setuid) skip with the reason when
this machine does not give them.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agtaild.cli import main
from agtaild.config import load_config
from agtaild.fsnames import from_text, to_text
from agtaild.store.archive.archiver import read_archived
from tests.daemon_proc import DaemonProc, wait_until

REPO = Path(__file__).resolve().parent.parent
AGTAIL = str(Path(sys.executable).parent / "agtail")
CLAUDE = "real/claude-2.1.197/projects"
PROJECT = "-tmp-rt-claude-home-src-demo-app"


def user_line(session: str, text: str) -> bytes:
    return (
        json.dumps(
            {
                "type": "user",
                "sessionId": session,
                "uuid": f"u-{session}-{len(text)}",
                "timestamp": "2025-03-01T10:00:00.000Z",
                "cwd": "/home/u/app",
                "message": {"role": "user", "content": text},
            }
        ).encode()
        + b"\n"
    )


@pytest.fixture
def projects(tmp_path: Path, corpus: Path) -> Path:
    root = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, root)
    return root


def cli(capsys: pytest.CaptureFixture[str], data: Path, root: Path, *args: str) -> tuple[int, Any, str]:
    """Run `agtail --json ARGS` in-process; (exit code, parsed stdout or None, stderr)."""
    argv = ["--data-dir", str(data), "--only-roots", "--root", f"claude-code={root}", "--no-daemon", "--json", *args]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def session_ids(capsys: pytest.CaptureFixture[str], data: Path, root: Path, *args: str) -> set[str]:
    code, doc, err = cli(capsys, data, root, "list", "--limit", "1000", *args)
    assert code == 0, err
    return {s["id"] for s in doc["sessions"]}


def archived(capsys: pytest.CaptureFixture[str], data: Path, root: Path) -> dict[str, bool]:
    code, doc, err = cli(capsys, data, root, "list", "--limit", "1000", "--no-update")
    assert code == 0, err
    return {s["id"]: s["archived"] for s in doc["sessions"]}


# -- 1. a symlink loop is skipped and reported; nothing else changes ----------------------------
def test_file_symlink_loop_loses_no_session(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path) -> None:
    data = tmp_path / "data"
    before = session_ids(capsys, data, projects)
    assert len(before) >= 6
    folder = projects / PROJECT
    (folder / "a.jsonl").symlink_to(folder / "b.jsonl")
    (folder / "b.jsonl").symlink_to(folder / "a.jsonl")
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 0
    assert doc["removed"] == 0 and doc["sessions"] == len(before)
    looped = [e for e in doc["errors"] if e["path"].endswith(("a.jsonl", "b.jsonl"))]
    assert looped and all(f"errno {errno.ELOOP}" in e["error"] for e in looped), doc["errors"]
    assert "a.jsonl" in err  # said on stderr too
    assert not any(archived(capsys, data, projects).values())  # still native, still resumable
    # A fresh index beside the loop finds every session too.
    assert session_ids(capsys, tmp_path / "fresh", projects) == before


def test_removed_file_is_still_removed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side: a file that is really gone (ENOENT) leaves the native listing."""
    monkeypatch.setenv("AGTAIL_ARCHIVE", "0")
    data = tmp_path / "data"
    before = session_ids(capsys, data, projects)
    victim = sorted((projects / PROJECT).glob("*.jsonl"))[0]
    victim.unlink()
    code, doc, _ = cli(capsys, data, projects, "index")
    assert code == 0 and doc["removed"] >= 1
    assert victim.stem not in session_ids(capsys, data, projects) and len(before) > 1


# -- 2. an unreadable project folder is kept and reported ---------------------------------------
def test_unreadable_project_dir_is_kept_and_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES injected on the folder's listing (root ignores chmod 000; the subprocess test
    below does it for real as another user)."""
    data = tmp_path / "data"
    ids = session_ids(capsys, data, projects)
    locked = str(projects / PROJECT)
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 0
    assert doc["removed"] == 0, doc
    assert any(e["path"] == locked and "Permission denied" in e["error"] for e in doc["errors"]), doc["errors"]
    assert locked in err
    state = archived(capsys, data, projects)
    assert set(state) == ids and not any(state.values())
    # The doctor names the folder.
    assert main(["--data-dir", str(data), "--only-roots", "--root", f"claude-code={projects}", "--json", "doctor"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert any("discovery" in c["name"] and locked in c["message"] for c in report["checks"]), report


@pytest.mark.parametrize(
    ("agent", "sample", "locked_rel"),
    [
        ("codex", "real/codex-0.171.0/sessions", "2026/11/30"),
        ("gemini", "real/gemini-0.61.0/tmp", None),
    ],
)
def test_every_adapter_keeps_what_it_cannot_list(
    agent: str, sample: str, locked_rel: str | None, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same rule through other adapters: a folder that cannot be listed loses nothing."""
    from agtaild.config import load_config
    from agtaild.query.service import Service

    if not (corpus / sample).is_dir():
        pytest.skip(f"no {sample} in the corpus")
    root = tmp_path / "root"
    shutil.copytree(corpus / sample, root)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"{agent}={root}"], only_roots=True)
    svc = Service(config, workers=1)
    try:
        first = svc.update_index()
        assert first["sessions"] >= 1
        if locked_rel is None:  # the first folder that holds sessions
            locked_rel = str(Path(svc.call("sessions.list", {"limit": 1})["sessions"][0]["path"]).parent.relative_to(root))
        locked = str(root / locked_rel)
        real_scandir, real_iterdir = os.scandir, Path.iterdir

        def scandir(path: Any = ".") -> Any:
            if os.fspath(path) == locked:
                raise PermissionError(errno.EACCES, "Permission denied", locked)
            return real_scandir(path)

        def iterdir(self: Path) -> Any:
            if str(self) == locked:
                raise PermissionError(errno.EACCES, "Permission denied", locked)
            return real_iterdir(self)

        monkeypatch.setattr(os, "scandir", scandir)
        monkeypatch.setattr(Path, "iterdir", iterdir)
        again = svc.update_index()
        assert again["sessions"] == first["sessions"] and not [c for c in again["changed"] if c["action"] == "removed"]
        assert any(locked in e["path"] for e in again["errors"]), again["errors"]
    finally:
        svc.close()


def _nobody() -> tuple[int, int]:
    import pwd

    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user to run as")
    if os.getuid() != 0:
        pytest.skip("needs root to switch to another user")
    return pw.pw_uid, pw.pw_gid


def _as_user(uid: int, gid: int, argv: list[str]) -> tuple[int, str, str]:
    """`agtail ARGV` as another user, in a forked child of this process: that user may not
    be able to read this interpreter's files, so everything the command imports must already
    be imported here (the caller runs the same commands as root first)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to the user, run the command, report through the pipes
        code = 70
        try:
            os.close(out_r)
            os.close(err_r)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            sys.stdout = os.fdopen(out_w, "w")
            sys.stderr = os.fdopen(err_w, "w")
            code = main(argv)
        except BaseException as exc:
            print(repr(exc), file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(out_w)
    os.close(err_w)
    with os.fdopen(out_r) as out, os.fdopen(err_r) as err:
        stdout, stderr = out.read(), err.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), stdout, stderr


def _shared_tmp(uid: int, gid: int) -> Path:
    """A temp dir another user can reach (pytest's tmp_path is root-only)."""
    base = Path(tempfile.mkdtemp(prefix="agtail-hostile-", dir="/tmp"))
    os.chmod(base, 0o755)
    os.chown(base, uid, gid)
    return base


def test_unreadable_project_dir_as_another_user(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real EACCES: a folder chmod 000, the index run as `nobody`."""
    uid, gid = _nobody()
    base = _shared_tmp(uid, gid)
    try:
        root = base / "projects"
        shutil.copytree(corpus / CLAUDE, root)
        for dirpath, _dirs, files in os.walk(base):
            os.chown(dirpath, uid, gid)
            for f in files:
                os.chown(os.path.join(dirpath, f), uid, gid)
        agtail = ["--data-dir", str(base / "data"), "--only-roots", "--root", f"claude-code={root}",
                  "--no-daemon", "--json"]
        warm = ["--data-dir", str(base / "warm"), *agtail[2:]]
        for cmd in (["index"], ["list", "--no-update"], ["doctor"]):  # import what the child needs
            main([*warm, *cmd])
        code, out, err = _as_user(uid, gid, [*agtail, "index"])
        assert code == 0, err
        total = json.loads(out)["sessions"]
        os.chmod(root / PROJECT, 0)
        code, out, err = _as_user(uid, gid, [*agtail, "index"])
        assert code == 0, err
        doc = json.loads(out)
        assert doc["removed"] == 0 and doc["sessions"] == total, doc
        assert any(PROJECT in e["path"] and "ermission" in e["error"] for e in doc["errors"]), doc["errors"]
        code, out, err = _as_user(uid, gid, [*agtail, "list", "--no-update", "--limit", "1000"])
        listed = json.loads(out)
        assert not any(s["archived"] for s in listed["sessions"]) and len(listed["sessions"]) == total
        code, out, err = _as_user(uid, gid, [*agtail, "doctor"])
        assert any(PROJECT in c["message"] for c in json.loads(out)["checks"] if "discovery" in c["name"]), out
    finally:
        os.chmod(base / "projects" / PROJECT, 0o755) if (base / "projects" / PROJECT).exists() else None
        shutil.rmtree(base, ignore_errors=True)


# -- 3. non-UTF-8 file names ----------------------------------------------------------------------
def test_non_utf8_name_is_indexed_with_a_visible_escape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path
) -> None:
    data = tmp_path / "data"
    before = session_ids(capsys, data, projects)
    folder = projects / PROJECT
    raw = os.fsencode(folder) + b"/bad\xff.jsonl"
    with open(raw, "wb") as fh:
        fh.write(user_line("x", "hello from a raw name"))
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 0 and doc["errors"] == [], (doc, err)
    ids = session_ids(capsys, data, projects)
    assert ids == before | {"bad\\xff"}
    code, hits, _ = cli(capsys, data, projects, "search", "raw name")
    assert code == 0
    [hit] = [h for h in hits["hits"] if h["session"]["id"] == "bad\\xff"]
    shown = hit["session"]["path"]
    assert shown.endswith("/bad\\xff.jsonl")
    assert os.fsencode(from_text(shown)) == raw  # the stored name leads back to the file
    # The archive stored it under the same (raw) name, and writes it back there once deleted.
    copy = os.fsencode(data / "archive" / "claude-code" / PROJECT) + b"/bad\xff.jsonl"
    stored = os.fsencode(data / "archive" / ".zstore" / "claude-code" / PROJECT) + b"/bad\xff.jsonl.zst"
    assert os.path.exists(stored) and not os.path.exists(copy)
    os.unlink(raw)
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 0 and doc["errors"] == [], (doc, err)
    with open(copy, "rb") as fh:
        assert fh.read() == user_line("x", "hello from a raw name")
    assert session_ids(capsys, data, projects) == before | {"bad\\xff"}


def test_non_utf8_name_in_text_output(tmp_path: Path, projects: Path) -> None:
    raw = os.fsencode(projects / PROJECT) + b"/\xe9t\xe9.jsonl"
    with open(raw, "wb") as fh:
        fh.write(user_line("x", "latin one name"))
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    out = subprocess.run(
        [AGTAIL, "--data-dir", str(tmp_path / "data"), "--only-roots",
         "--root", f"claude-code={projects}", "--no-daemon", "list"],
        capture_output=True, text=True, env=env, timeout=120, cwd=str(REPO),
    )
    assert out.returncode == 0, out.stderr
    [row] = [line for line in out.stdout.splitlines() if "latin one name" in line]
    assert "\\xe9t\\xe" in row and "Traceback" not in out.stderr  # shown escaped (the id column is cut)


# Names: any bytes but "/" and NUL, ending in .jsonl, not hidden.
_names = st.binary(min_size=1, max_size=24).map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_names, min_size=1, max_size=4, unique=True))
def test_random_byte_names_never_stop_the_index(names: list[bytes], tmp_path_factory: pytest.TempPathFactory) -> None:
    from agtaild.config import load_config
    from agtaild.query.service import Service

    base = tmp_path_factory.mktemp("names")
    folder = base / "projects" / "p"
    folder.mkdir(parents=True)
    made = set()
    for i, name in enumerate(names):
        path = os.fsencode(folder) + b"/" + name + b".jsonl"
        with open(path, "wb") as fh:
            fh.write(user_line(f"s{i}", f"message {i}"))
        made.add(os.fsdecode(path))
    config = load_config(data_dir=str(base / "data"), root_options=[f"claude-code={base / 'projects'}"], only_roots=True)
    svc = Service(config, workers=1)
    try:
        report = svc.update_index()
        assert report["errors"] == [], report["errors"]
        paths = {s["path"] for s in svc.call("sessions.list", {"limit": 1000})["sessions"]}
        assert {from_text(p) for p in paths} == made
        again = svc.update_index()
        # Stable keys: the second pass adds and removes nothing (fresh files are re-read while unsettled).
        assert {c["action"] for c in again["changed"]} <= {"updated"} and again["errors"] == []
    finally:
        svc.close()


@given(st.binary(max_size=40))
def test_text_form_round_trips(raw: bytes) -> None:
    path = os.fsdecode(raw)
    text = to_text(path)
    assert from_text(text) == path
    text.encode("utf-8")  # storable and printable
    if b"\\" not in raw:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            assert text == path  # ordinary names are unchanged


# -- 4. a file rewritten in place keeps its old copy in the archive -------------------------------
def test_in_place_rewrite_keeps_old_history(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path) -> None:
    data = tmp_path / "data"
    target = projects / PROJECT / "2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"
    old = target.read_bytes()
    inode = target.stat().st_ino
    assert cli(capsys, data, projects, "index")[0] == 0
    with open(target, "r+b") as fh:  # same inode: truncate to 0, then regrow with other content
        fh.truncate(0)
        fh.write(user_line("2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6", "a different history " * (len(old) // 10)))
    # Same inode, and longer than before: not a shrink, a rewrite.
    assert target.stat().st_ino == inode and target.stat().st_size > len(old)
    code, _doc, err = cli(capsys, data, projects, "index")
    assert code == 0, err
    folder = data / "archive" / ".zstore" / "claude-code" / PROJECT
    kept = [p.name for p in folder.iterdir() if p.name.startswith(target.name + ".agtail-conflict-")]
    assert len(kept) == 1 and kept[0].endswith(".zst")
    config = load_config(data_dir=str(data), root_options=[f"claude-code={projects}"], only_roots=True)
    assert read_archived(config, f"claude-code/{PROJECT}/{kept[0][:-4]}") == old
    assert read_archived(config, f"claude-code/{PROJECT}/{target.name}") == target.read_bytes()


# -- deeper folders and directory loops ------------------------------------------------------------
def test_sessions_at_any_depth_and_dir_loops(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path) -> None:
    data = tmp_path / "data"
    before = session_ids(capsys, data, projects)
    deep = projects / "backup-2025" / "-home-u-app"
    deep.mkdir(parents=True)
    (deep / "0000aaaa-1111-2222-3333-444455556666.jsonl").write_bytes(user_line("0000aaaa", "kept in a backup"))
    (projects / "backup-2025" / "loop").symlink_to(projects)  # a directory cycle
    (projects / "-a-link-to-root").symlink_to(projects)  # listed before the real project folders
    (deep / "self").symlink_to(deep)
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 0, err
    ids = session_ids(capsys, data, projects)
    assert ids == before | {"0000aaaa-1111-2222-3333-444455556666"}
    code, doc, _ = cli(capsys, data, projects, "list", "--limit", "1000", "--no-update")
    assert len(doc["sessions"]) == len(ids)  # the cycle listed nothing twice
    # Subagents stay attached to their parents.
    sub = [s for s in doc["sessions"] if s.get("parent")]
    assert sub and all(s["parent"]["id"] in ids for s in sub)


# -- 5. a corrupt index is moved aside and rebuilt --------------------------------------------------
def _scribble(path: Path, offset: int, size: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(os.urandom(size))


@pytest.mark.parametrize("where", ["header", "pages"])
def test_corrupt_index_is_set_aside_and_rebuilt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path, where: str
) -> None:
    data = tmp_path / "data"
    ids = session_ids(capsys, data, projects)
    index = data / "index.sqlite3"
    with sqlite3.connect(index) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = index.stat().st_size
    if where == "header":
        _scribble(index, 0, 100)
    else:
        _scribble(index, 4096, size - 8192)  # everything but the first and last pages
    code, doc, err = cli(capsys, data, projects, "reindex")
    assert code == 0, err
    assert doc["sessions"] == len(ids)
    aside = [p for p in data.iterdir() if p.name.startswith("index.sqlite3.corrupt-") and not p.name.endswith(("-wal", "-shm"))]
    assert len(aside) == 1 and aside[0].stat().st_size == size
    [said] = [line for line in err.splitlines() if "damaged" in line]
    assert str(aside[0]) in said and "Traceback" not in err
    assert session_ids(capsys, data, projects) == ids


def test_corrupt_index_heals_on_list(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path) -> None:
    data = tmp_path / "data"
    ids = session_ids(capsys, data, projects)
    _scribble(data / "index.sqlite3", 0, 100)
    assert session_ids(capsys, data, projects) == ids


# -- 9. a data dir that is a file -------------------------------------------------------------------
def test_data_dir_that_is_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("not a dir")
    code, doc, err = cli(capsys, plain, projects, "list")
    assert code == 2 and doc is None
    assert "is not a directory" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# -- 8. a read-only data dir -----------------------------------------------------------------------
@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for path in reversed(made):
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _mount(mounts: list[Path], *argv: str) -> None:
    if os.getuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting needs root and mount(8)")
    done = subprocess.run(["mount", *argv], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount is not permitted here: {done.stderr.strip()}")
    mounts.append(Path(argv[-1]))


def test_read_only_data_dir(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path, mounts: list[Path]) -> None:
    data = tmp_path / "data"
    ids = session_ids(capsys, data, projects)
    ro = tmp_path / "ro"
    ro.mkdir()
    _mount(mounts, "--bind", str(data), str(ro))
    _mount(mounts, "-o", "remount,ro,bind", str(ro))
    for args in (("--no-update",), ()):
        code, doc, err = cli(capsys, ro, projects, "list", "--limit", "1000", *args)
        assert code == 0, err
        assert {s["id"] for s in doc["sessions"]} == ids
        assert "Traceback" not in err
    assert "read-only" in err and "without updating" in err  # the update was skipped, and said so
    code, _hits, err = cli(capsys, ro, projects, "search", "hello")
    assert code == 0 and "Traceback" not in err
    code, _, err = cli(capsys, ro, projects, "reindex")
    assert code == 1 and "read-only" in err and "Traceback" not in err


# -- 7. disk full ------------------------------------------------------------------------------------
def test_disk_full_is_one_line_and_resumes(capsys: pytest.CaptureFixture[str], tmp_path: Path, projects: Path, mounts: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGTAIL_ARCHIVE", "0")  # the index alone fills the disk
    small = tmp_path / "small"
    small.mkdir()
    _mount(mounts, "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small))
    data = small / "data"
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 1 and doc is None
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(data) in lines[0] and "MB" in lines[0] and "full" in lines[0], err
    db = sqlite3.connect(data / "index.sqlite3")
    assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"  # consistent
    db.close()
    subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
    code, doc, err = cli(capsys, data, projects, "index")
    assert code == 0, err
    assert doc["sessions"] == len(session_ids(capsys, tmp_path / "roomy", projects))


def test_disk_full_in_service_status(tmp_path: Path, projects: Path) -> None:
    """SQLITE_FULL simulated with max_page_count: the service says so, then recovers."""
    from agtaild.config import load_config
    from agtaild.index.storage import DiskFull
    from agtaild.query.service import Service

    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={projects}"], only_roots=True)
    config.archive = False
    svc = Service(config, workers=1)
    try:
        pages = svc._db.execute("PRAGMA page_count").fetchone()[0]
        svc._db.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(DiskFull) as caught:
            svc.update_index()
        assert str(tmp_path / "data") in caught.value.message
        assert svc.index.status()["state"] == "disk_full"
        svc._db.execute("PRAGMA max_page_count = 1073741823")
        report = svc.update_index()
        assert report["sessions"] >= 6 and svc.index.status()["state"] == "ok"
    finally:
        svc.close()


# -- no noise without XDG_RUNTIME_DIR ------------------------------------------------------------------
def test_no_runtime_dir_warning(tmp_path: Path, projects: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    code = ("import warnings; warnings.simplefilter('error'); from agtaild.dirs import runtime_dir_choice as c; "
            "import json; p, why = c(); print(json.dumps([str(p), why]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(REPO), timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    path, why = json.loads(out.stdout)
    assert "XDG_RUNTIME_DIR is not set" in why and str(os.getuid()) in path
    doctor = subprocess.run(
        [AGTAIL, "--data-dir", str(tmp_path / "d"), "--only-roots", "--root",
         f"claude-code={projects}", "--json", "doctor"],
        capture_output=True, text=True, env=env, cwd=str(REPO), timeout=60,
    )
    assert "Warning" not in doctor.stderr
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "runtime dir"]
    assert path in check["message"] and "XDG_RUNTIME_DIR" in check["message"]


# -- a live daemon through all of it ---------------------------------------------------------------------
class HealthWatch:
    """Asks /api/v1/health every 0.1 s on its own thread; remembers the slowest answer."""

    def __init__(self, daemon: DaemonProc) -> None:
        self.daemon = daemon
        self.slowest = 0.0
        self.failures: list[str] = []
        self.storage_states: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        client = self.daemon.unix(timeout=5.0)
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                doc = client.health()
                self.storage_states.add(str((doc.get("storage") or {}).get("state")))
            except Exception as exc:
                self.failures.append(repr(exc))
            self.slowest = max(self.slowest, time.monotonic() - started)
            time.sleep(0.1)

    def __enter__(self) -> HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def test_live_daemon_survives_hostile_files_and_index_damage(tmp_path: Path, projects: Path) -> None:
    daemon = DaemonProc(tmp_path, {"claude-code": projects}, extra=["--watch", "off"])
    daemon.start()
    try:
        client = daemon.unix()

        def ids() -> set[str]:
            return {s["id"] for s in client.call("sessions.list", {"limit": 1000})["sessions"]}

        def scan() -> dict[str, Any]:
            return dict(client.call("index.update", {}))

        before = ids()
        assert len(before) >= 6
        with HealthWatch(daemon) as watch:
            folder = projects / PROJECT
            (folder / "a.jsonl").symlink_to(folder / "b.jsonl")
            (folder / "b.jsonl").symlink_to(folder / "a.jsonl")
            (projects / "loop").symlink_to(projects)
            with open(os.fsencode(folder) + b"/raw\xfe.jsonl", "wb") as fh:
                fh.write(user_line("raw", "a raw name under the daemon"))
            report = scan()
            assert report["errors"] and all("ELOOP" in e["error"] or "symbolic" in e["error"] for e in report["errors"])
            assert ids() == before | {"raw\\xfe"}
            target = folder / "c17426d0-3a0c-46ca-9b8c-d079169cd4a9.jsonl"
            old_size = target.stat().st_size
            with open(target, "r+b") as fh:
                fh.truncate(0)
                fh.write(user_line("c17426d0-3a0c-46ca-9b8c-d079169cd4a9", "rewritten in place " * (old_size // 10)))
            scan()
            assert ids() == before | {"raw\\xfe"}
            # The index files vanish under the daemon: it notices, rebuilds, and says so.
            for suffix in ("", "-wal", "-shm"):
                Path(f"{daemon.data_dir / 'index.sqlite3'}{suffix}").unlink(missing_ok=True)
            wait_until(lambda: ids() == before | {"raw\\xfe"}, 60, "the rebuilt index")
            hits = client.call("search", {"q": "rewritten"})
            assert hits["hits"], hits
            storage = client.health()["storage"]
            assert storage["state"] == "ok" and any(r["event"] == "rebuilt" for r in storage["repairs"]), storage
            # Then random bytes over the file (its pages checkpointed first, so that the bytes
            # on disk are the ones read); `reindex` finds the damage: set aside, rebuilt.
            index = daemon.data_dir / "index.sqlite3"
            with sqlite3.connect(index) as db:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            _scribble(index, 0, index.stat().st_size)
            report = client.call("index.update", {"full": True})
            assert report["sessions"] == len(before) + 1, report
            assert ids() == before | {"raw\\xfe"}
            aside = [p for p in daemon.data_dir.iterdir() if p.name.startswith("index.sqlite3.corrupt-")]
            assert aside, sorted(p.name for p in daemon.data_dir.iterdir())
            assert any("damaged" in r["message"] for r in client.health()["storage"]["repairs"])
        assert not watch.failures, watch.failures[:3]
        assert watch.slowest < 1.0, f"health took {watch.slowest:.2f}s"
        archive = daemon.data_dir / "archive" / ".zstore" / "claude-code" / PROJECT
        assert any(p.name.startswith(target.name + ".agtail-conflict-") for p in archive.iterdir())
    finally:
        daemon.cleanup()


def test_live_daemon_on_a_full_disk(tmp_path: Path, corpus: Path, mounts: list[Path]) -> None:
    """The data dir fills up under the daemon: it stays up, /health says disk_full with the
    data dir named, and once there is room the next update completes the index."""
    small = tmp_path / "small"
    small.mkdir()
    # Room for the empty index's schema (≈ 0.9 MB of 16 KB pages) and the daemon's state file,
    # not for the index of the corpus: the disk fills while the first index is written.
    _mount(mounts, "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(small))
    root = tmp_path / "projects"
    shutil.copytree(corpus / "claude-code" / "spotter" / "projects", root)
    daemon = DaemonProc(small, {"claude-code": root}, extra=["--watch", "off", "--no-archive"])
    daemon.start(wait_indexed=False)
    try:
        client = daemon.unix()
        storage = wait_until(
            lambda: (s := client.health()["storage"])["state"] == "disk_full" and s, 60, "the disk-full state"
        )
        assert str(daemon.data_dir) in storage["message"] and "MB" in storage["message"]
        assert client.health()["index"]["errors"] >= 1
        started = time.monotonic()
        client.health()
        assert time.monotonic() - started < 1.0
        subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
        report = client.call("index.update", {})
        assert report["sessions"] == 5, report
        assert client.health()["storage"]["state"] == "ok"
    finally:
        daemon.cleanup()


def test_daemon_refuses_a_data_dir_it_cannot_use(tmp_path: Path, projects: Path, mounts: list[Path]) -> None:
    """agtaild must write its data dir: a file or a read-only dir is one clear line, no traceback."""
    plain = tmp_path / "plain"
    plain.write_text("x")
    agtaild = [sys.executable, "-m", "agtaild.daemon", "--listen", "none", "--socket", str(tmp_path / "s.sock"),
               "--only-roots", "--root", f"claude-code={projects}"]
    out = subprocess.run([*agtaild, "--data-dir", str(plain)], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert out.returncode == 2 and "is not a directory" in out.stderr and "Traceback" not in out.stderr
    data = tmp_path / "data"
    data.mkdir()
    ro = tmp_path / "ro"
    ro.mkdir()
    _mount(mounts, "--bind", str(data), str(ro))
    _mount(mounts, "-o", "remount,ro,bind", str(ro))
    out = subprocess.run([*agtaild, "--data-dir", str(ro)], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert out.returncode == 1 and "read-only" in out.stderr and "Traceback" not in out.stderr, out.stderr
