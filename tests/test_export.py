"""`agtail export`: native files + manifest.json; again into the same dir moves the difference."""

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


@pytest.fixture
def indexed(tmp_path: Path, corpus: Path):  # type: ignore[no-untyped-def]
    native = tmp_path / "claude" / "projects"
    shutil.copytree(corpus / CLAUDE, native)
    config = load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={native}"], only_roots=True)
    svc = Service(config, workers=1)
    svc.update_index()
    yield config, svc, native
    svc.close()


def test_export_writes_files_and_manifest(indexed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config, svc, native = indexed
    sessions = svc.call("sessions.list", {"limit": 100})["sessions"]
    parent = next(s for s in sessions if (Path(s["path"]).parent / Path(s["path"]).stem / "subagents").is_dir())
    other = next(s for s in sessions if s["id"] != parent["id"] and s["parent"] is None)
    out = tmp_path / "out"
    rep = export_sessions(config, [parent, other], out)
    manifest = load_manifest(out)
    assert manifest is not None and rep["errors"] == []
    paths = {f.path: f for f in manifest.files}
    assert f"claude-code/{Path(parent['path']).relative_to(native).as_posix()}" in paths
    for f in manifest.files:
        data = (out / f.path).read_bytes()
        assert (f.size, f.sha256, f.agent) == (len(data), hashlib.sha256(data).hexdigest(), "claude-code")
        assert f.mtime > 0
    main = paths[f"claude-code/{Path(other['path']).relative_to(native).as_posix()}"]
    assert main.session == other["id"] and main.sessions == [other["id"]]
    assert rep["files"] == len(manifest.files) and rep["sessions"] == [f"claude-code:{parent['id']}", f"claude-code:{other['id']}"]
    again = export_sessions(config, [parent, other], out)
    assert (again["files"], again["bytes"], again["skipped"]) == (0, 0, len(manifest.files))


def test_export_into_an_agent_directory_is_refused(indexed) -> None:  # type: ignore[no-untyped-def]
    config, svc, native = indexed
    session = svc.call("sessions.list", {"limit": 1})["sessions"][0]
    with pytest.raises(Refused, match="never writes"):
        export_sessions(config, [session], native / "exported")


def test_export_carries_the_chosen_sessions_state_to_a_pull(indexed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    from agtaild.sync.remote import pull
    from agtaild.userstate.store import Change, UserState

    config, svc, _native = indexed
    sessions = svc.call("sessions.list", {"limit": 100})["sessions"]
    chosen, left = sessions[0], sessions[1]
    st = UserState(config.data_dir)
    st.apply([Change(("", chosen["agent"], chosen["id"]), "label", "acme", key="client"),
              Change(("", left["agent"], left["id"]), "label", "no", key="other")])
    st.close()
    out = tmp_path / "exports" / "box"
    rep = export_sessions(config, [chosen], out)
    pack = json.loads((out / "state-pack.json").read_bytes())
    assert rep["state_pack"].endswith("state-pack.json")
    assert [r[:4] for r in pack["labels"]] == [[chosen["agent"], chosen["id"], "client", "acme"]]  # only its own
    other = load_config(data_dir=str(tmp_path / "other"), root_options=[], only_roots=True)
    got = pull(other, str(tmp_path / "exports"), "box")
    assert got["errors"] == [] and got["state"]["accepted"] == 1
    assert UserState(other.data_dir).of([("box", chosen["agent"], chosen["id"])])[("box", chosen["agent"], chosen["id"])]["labels"] == {"client": "acme"}
