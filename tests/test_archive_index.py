"""A session whose native file the agent deleted stays listed and searchable from the archive."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from agtaild.config import load_config
from agtaild.errors import Refused
from agtaild.query.service import Service
from agtaild.sync.export import export_sessions
from agtaild.sync.manifest import load_manifest

CLAUDE = "real/claude-2.1.197/projects"


def test_deleted_native_file_is_kept_archived_and_searchable(tmp_path: Path, corpus: Path) -> None:
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    svc = Service(config, workers=1)
    try:
        svc.update_index()
        before = svc.call("sessions.list", {"limit": 1000})["sessions"]
        victim = next(s for s in before if s["path"].endswith(".jsonl") and s["parent"] is None and s["title"])
        assert not victim["archived"] and victim["resumable"]
        archived_copy = Path(config.archive_dir) / "claude-code" / Path(victim["path"]).relative_to(native)
        original = Path(victim["path"]).read_bytes()
        assert not archived_copy.exists()  # only the compressed copy while the native file exists
        word = victim["title"].split()[0]
        Path(victim["path"]).unlink()
        svc.update_index()
        after = svc.call("sessions.list", {"limit": 1000})["sessions"]
        assert len(after) == len(before)
        assert hashlib.sha256(archived_copy.read_bytes()).digest() == hashlib.sha256(original).digest()
        kept = next(s for s in after if s["id"] == victim["id"])
        assert kept["archived"] is True and kept["resumable"] is False and not kept["imported"]
        assert [s["id"] for s in svc.call("sessions.list", {"archived": True, "limit": 1000})["sessions"]] == [victim["id"]]
        hits = svc.call("search", {"q": word, "limit": 50})["hits"]
        assert any(h["session"]["id"] == victim["id"] and h["session"]["archived"] for h in hits)
        with pytest.raises(Refused, match="archive"):
            svc.call("resume.command", {"agent": "claude-code", "id": victim["id"]})
        # The archived session can still be exported, from the archive.
        out = export_sessions(config, [kept], tmp_path / "out")
        manifest = load_manifest(tmp_path / "out")
        assert out["errors"] == [] and manifest is not None
        assert [f.session for f in manifest.files] == [victim["id"]]
        assert (tmp_path / "out" / manifest.files[0].path).read_bytes() == original
    finally:
        svc.close()
