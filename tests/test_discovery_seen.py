"""What discovery's walks saw, reused by the rest of the update (agtaild.index.discovery):
the ``stat`` results become the fingerprints (no second ``stat`` of every file), and the files
found under the native roots tell the archive's write-back which native files are there
(no ``lstat`` of each) — only for files a walk really saw, and before the archive roots are
walked."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from agtaild.config import RootSpec, load_config
from agtaild.index.discovery import Discovery
from agtaild.index.update import fingerprint
from agtaild.query.service import Service
from agtaild.store.archive.archiver import Archiver, archiver_for
from agtaild.store.archive.view import prepare_view

CLAUDE = "claude-code/claude-code-log/projects"
CODEX = "codex/claude-code-log/sessions"


def _roots(tmp_path: Path, corpus: Path) -> tuple[Path, Path, list[RootSpec]]:
    claude = tmp_path / "claude" / "projects"
    codex = tmp_path / "codex" / "sessions"
    shutil.copytree(corpus / CLAUDE, claude)
    shutil.copytree(corpus / CODEX, codex)
    archive = tmp_path / "data" / "archive" / "claude-code"
    (archive / "-old-project").mkdir(parents=True)
    (archive / "-old-project" / "gone.jsonl").write_text('{"type":"summary","summary":"x"}\n')
    roots = [
        RootSpec("claude-code", str(archive), kind="archive"),  # listed first: walked last all the same
        RootSpec("claude-code", str(claude)),
        RootSpec("codex", str(codex)),
    ]
    return claude, codex, roots


def test_the_archive_hook_gets_the_native_files_before_the_archive_roots_are_walked(
    tmp_path: Path, corpus: Path
) -> None:
    claude, codex, roots = _roots(tmp_path, corpus)
    found = Discovery([])
    given: list[set[str]] = []

    def before_archive(present: set[str]) -> None:
        given.append(present)
        # The archive root is not walked yet: none of its files is among the seen ones.
        assert not any(p.startswith(roots[0].path) for p in found.seen.files)

    candidates = found.candidates(roots, before_archive=before_archive)
    assert len(given) == 1
    natives = [c for c in candidates if c.root.kind == "native"]
    native_files = {f for c in natives for f in c.unit.files}
    # Every file of a native unit, and only files there (a 0-byte session is seen, not a unit).
    assert native_files <= given[0] and all(os.path.exists(f) for f in given[0])
    assert any(f.endswith(".meta.json") for f in native_files)  # sidecars are seen too
    assert {c.root.path for c in natives} == {str(claude), str(codex)}
    # The order of the units is the order of the roots given (the archive root first).
    assert candidates[0].root.kind == "archive" and candidates[0].unit.path.endswith("gone.jsonl")


def test_the_fingerprints_from_discovery_equal_a_fresh_stat(tmp_path: Path, corpus: Path) -> None:
    _claude, _codex, roots = _roots(tmp_path, corpus)
    found = Discovery([])
    candidates = found.candidates(roots)
    assert found.stats  # the Claude walk stats every session file (it skips 0-byte ones)
    for c in candidates:
        files = c.unit.files or [c.unit.path]
        assert fingerprint(files, found.stats) == fingerprint(files)
    for path, st in found.stats.items():
        again = os.stat(path)
        assert (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (
            again.st_dev,
            again.st_ino,
            again.st_size,
            again.st_mtime_ns,
        )


def test_a_listed_file_that_is_not_there_is_still_looked_at(tmp_path: Path, corpus: Path) -> None:
    """``present`` only speeds up the check: an archived file whose native copy is gone is
    written back even if a (wrong) caller does not list it, and one listed is taken as there."""
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(
        data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True
    )
    adapter_units = _units(native)
    Archiver(config).mirror_units(adapter_units)
    victim = Path(sorted(u.path for u in adapter_units if not u.hints.get("subagent"))[0])
    victim.unlink()
    view = Path(config.archive_dir) / "claude-code" / victim.relative_to(native)
    arch = archiver_for(config)
    errors: list[dict[str, str]] = []
    prepare_view(arch, errors, present={str(victim)})  # claimed present: not written back
    assert errors == [] and not view.exists()
    prepare_view(arch, errors, present=set())  # nothing claimed: every native file is looked at
    assert errors == [] and view.exists()


def test_an_update_writes_back_a_deleted_session_and_keeps_the_others(tmp_path: Path, corpus: Path) -> None:
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(
        data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True
    )
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        before = {s["id"] for s in svc.call("sessions.list", {"limit": 1000})["sessions"]}
        victim = sorted(native.glob("*/*.jsonl"))[0]
        victim.unlink()
        report = svc.update_index()
        assert report["errors"] == []
        after = svc.call("sessions.list", {"limit": 1000})["sessions"]
        assert {s["id"] for s in after} == before
        view = Path(config.archive_dir) / "claude-code" / victim.relative_to(native)
        assert view.exists()  # written back: the session is read from the archive now
        archived = [p for p in (Path(config.archive_dir) / "claude-code").rglob("*") if p.is_file()]
        assert archived == [view]  # and nothing else was
    finally:
        svc.close()


def _units(native: Path) -> list[Any]:
    from agtaild.adapters import get_adapter

    return list(get_adapter("claude-code").discover(native))
