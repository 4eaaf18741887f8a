"""Side files travel with the sessions they describe: Kimi's ``kimi.json`` (the cwd), Droid's
``state/task-invocations.json`` (a subagent's parent) and Cline's ``state/taskHistory.json``
(a task's title). Archived, exported and synced copies keep what they say once the agent's own
folder is gone; a side file that is a symlink, huge or malformed is an error in the report,
never fatal and never a deletion; a changed side file re-reads the sessions it describes."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters.kit.sidecars import SIDE_DIR
from agtaild.config import Config, load_config
from agtaild.query.service import Service
from agtaild.sync.export import export_sessions
from agtaild.sync.remote import pull, push

KIMI_CWD = "/tmp/rt/kimi/home/src/demo-app"
DROID_CHILD, DROID_PARENT = "833758c6-9907-4a13-9ca1-6d6cfe3ab282", "f28363a7-d66a-40de-a013-f0414e61aa54"
CLINE_TASK, CLINE_TITLE = "1796055228103", "Title kept only in the task index"


class Case:
    """One agent: its real corpus, the root below it, its side file and what it says."""

    def __init__(
        self, agent: str, corpus: str, root: str, side: str, check: Callable[[list[dict[str, Any]]], bool]
    ):
        self.agent, self.corpus, self.root, self.side, self.check = agent, corpus, root, side, check


def _kimi(sessions: list[dict[str, Any]]) -> bool:
    return bool(sessions) and all(s["cwd"] == KIMI_CWD for s in sessions)


def _droid(sessions: list[dict[str, Any]]) -> bool:
    child = next((s for s in sessions if s["id"] == DROID_CHILD), None)
    return child is not None and (child["parent"] or {}).get("id") == DROID_PARENT


def _cline(sessions: list[dict[str, Any]]) -> bool:
    task = next((s for s in sessions if s["id"] == CLINE_TASK), None)
    return task is not None and task["title"] == CLINE_TITLE


CASES = [
    Case("kimi", "real/kimi-1.51.0", "sessions", "kimi.json", _kimi),
    Case("droid", "real/droid-0.225.2", "sessions", "state/task-invocations.json", _droid),
    Case("cline", "real/cline-2.18.0", "", "state/taskHistory.json", _cline),
]


def home_of(case: Case, base: Path, corpus: Path) -> Path:
    """A copy of the agent's real folder (Cline's index given a title of its own)."""
    home = base / case.agent
    shutil.copytree(corpus / case.corpus, home)
    if case.agent == "cline":
        index = home / "state" / "taskHistory.json"
        doc = json.loads(index.read_text())
        next(t for t in doc if t["id"] == CLINE_TASK)["task"] = CLINE_TITLE
        index.write_text(json.dumps(doc))
    if case.agent == "droid":  # the recorded child never appeared (offline): written where Droid would
        slug = next((home / "sessions").iterdir())
        start = {
            "type": "session_start",
            "id": DROID_CHILD,
            "title": "Count lines",
            "version": 2,
            "cwd": "/src",
        }
        user = {
            "type": "message",
            "id": "m1",
            "timestamp": "2026-11-30T10:00:00Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "Count lines in hello.py"}]},
        }
        (slug / f"{DROID_CHILD}.jsonl").write_text(json.dumps(start) + "\n" + json.dumps(user) + "\n")
        os.utime(
            slug / f"{DROID_CHILD}.jsonl", (1_790_000_000, 1_790_000_000)
        )  # settled: not re-read for being new
    return home


def machine(base: Path, case: Case | None, home: Path | None) -> Config:
    roots = [f"{case.agent}={home / case.root if case.root else home}"] if case and home else []
    return load_config(data_dir=str(base / "data"), root_options=roots, only_roots=True)


def listed(config: Config) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    roots = [f"{r.agent}={r.path}" for r in config.roots if r.kind == "native"]
    svc = Service(load_config(data_dir=config.data_dir, root_options=roots, only_roots=True), workers=1)
    try:
        report = svc.update_index()
        return svc.call("sessions.list", {"limit": 1000})["sessions"], report
    finally:
        svc.close()


@pytest.fixture(params=CASES, ids=[c.agent for c in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    return request.param  # type: ignore[no-any-return]


def test_the_side_file_is_what_says_it(case: Case, tmp_path: Path, corpus: Path) -> None:
    """The check below holds with the side file and fails without it (so the others mean it)."""
    home = home_of(case, tmp_path, corpus)
    with_side, _ = listed(machine(tmp_path / "a", case, home))
    assert case.check(with_side)
    (home / case.side).unlink()
    without, _ = listed(machine(tmp_path / "b", case, home))
    assert len(without) == len(with_side) and not case.check(without)


def test_archived_sessions_keep_it_once_the_agent_folder_is_gone(
    case: Case, tmp_path: Path, corpus: Path
) -> None:
    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path, case, home)
    before, _ = listed(config)
    assert case.check(before) and not any(s["archived"] for s in before)
    shutil.rmtree(home)
    after, report = listed(config)
    assert report["errors"] == []
    assert sorted(s["id"] for s in after) == sorted(s["id"] for s in before)
    assert all(s["archived"] for s in after) and case.check(after)
    side = list((Path(config.archive_dir) / case.agent / SIDE_DIR).glob(f"*/{case.side}"))
    assert len(side) == 1  # written back beside the sessions it describes


def _victim(case: Case, sessions: list[dict[str, Any]], side_unit: str) -> dict[str, Any]:
    """The session to delete: the one the check is about (for Kimi, every session is: one
    other than the unit the archive stored the side file with)."""
    if case.agent == "kimi":
        return next(s for s in sessions if s["parent"] is None and s["path"] != side_unit)
    return next(s for s in sessions if s["id"] == (DROID_CHILD if case.agent == "droid" else CLINE_TASK))


def test_one_archived_session_keeps_it_while_the_others_stay_native(
    case: Case, tmp_path: Path, corpus: Path
) -> None:
    """The side file is written back for the one deleted session, whichever unit stored it."""
    from agtaild.store.archive.blobs import ZStore

    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path, case, home)
    before, _ = listed(config)
    store = ZStore(Path(config.archive_dir))
    try:
        side_unit = next(
            u for p, _s, u, _n, _m in store.heads() if f"/{SIDE_DIR}/" in p and p.endswith(case.side)
        )
    finally:
        store.close()
    victim = _victim(case, before, side_unit or "")
    main = Path(victim["path"])
    if case.agent == "droid":
        main.unlink()
    else:
        shutil.rmtree(main.parent if case.agent == "kimi" else main)
    after, report = listed(config)
    assert report["errors"] == [] and len(after) == len(before)
    kept = next(s for s in after if s["id"] == victim["id"])
    assert kept["archived"] and not any(s["archived"] for s in after if s["id"] != victim["id"])
    assert case.check([kept] if case.agent == "kimi" else after)


def test_an_export_pulled_elsewhere_keeps_it(case: Case, tmp_path: Path, corpus: Path) -> None:
    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path / "a", case, home)
    before, _ = listed(config)
    out = tmp_path / "exports" / "box"
    rep = export_sessions(config, before, out)
    assert rep["errors"] == []
    assert list((out / case.agent / SIDE_DIR).glob(f"*/{case.side}"))
    shutil.rmtree(home)
    other = machine(tmp_path / "b", None, None)
    assert pull(other, str(tmp_path / "exports"), "box")["errors"] == []
    got, report = listed(other)
    assert report["errors"] == [] and len(got) == len(before)
    assert all(s["imported"] for s in got) and case.check(got)


def test_a_sync_keeps_it(case: Case, tmp_path: Path, corpus: Path) -> None:
    home = home_of(case, tmp_path, corpus)
    a = machine(tmp_path / "a", case, home)
    before, _ = listed(a)
    share = tmp_path / "share"
    share.mkdir()
    assert push(a, str(share), "laptop")["errors"] == []
    shutil.rmtree(home)
    b = machine(tmp_path / "b", None, None)
    assert pull(b, str(share), "laptop")["errors"] == []
    got, _ = listed(b)
    assert len(got) == len(before) and case.check(got)


def test_a_changed_side_file_rereads_the_sessions(case: Case, tmp_path: Path, corpus: Path) -> None:
    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path, case, home)
    before, _ = listed(config)
    assert case.check(before)
    side = home / case.side
    text = side.read_text()
    if case.agent == "kimi":
        side.write_text(text.replace(KIMI_CWD, "/elsewhere"))  # the bucket's MD5 no longer matches
    elif case.agent == "droid":
        side.write_text(text.replace(DROID_CHILD, "00000000-0000-0000-0000-000000000000"))
    else:
        side.write_text(text.replace(CLINE_TITLE, "Another title"))
    os.utime(side, (1, 1))  # another mtime even within the clock's resolution
    after, _ = listed(config)
    assert len(after) == len(before) and not case.check(after)


def _symlink(side: Path, tmp: Path) -> None:
    target = tmp / "elsewhere.json"
    shutil.copyfile(side, target)
    side.unlink()
    side.symlink_to(target)


def _huge(side: Path, tmp: Path) -> None:
    with open(side, "r+b") as fh:
        fh.truncate(17 << 20)  # sparse: over the 16 MiB read


def _malformed(side: Path, tmp: Path) -> None:
    side.write_bytes(b'{"work_dirs": [ {"path": "/tr')


@pytest.mark.parametrize("spoil", [_symlink, _huge, _malformed], ids=["symlink", "huge", "malformed"])
def test_a_hostile_side_file_is_reported_never_fatal_never_a_deletion(
    case: Case, spoil: Callable[[Path, Path], None], tmp_path: Path, corpus: Path
) -> None:
    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path, case, home)
    before, report = listed(config)
    assert report["errors"] == []
    side = home / case.side
    spoil(side, tmp_path)
    after, report = listed(config)
    assert sorted(s["id"] for s in after) == sorted(s["id"] for s in before)
    assert [e["path"] for e in report["errors"]] == [str(side)]
    assert "side file" in report["errors"][0]["error"]
    # a copy made now never carries it (a symlink is not followed, a huge one not read)
    if spoil is not _malformed:
        out = tmp_path / "out" / "box"
        export_sessions(config, after, out)
        assert not list((out / case.agent).glob(f"{SIDE_DIR}/*/{case.side}"))


def test_two_roots_side_files_merged_into_one_archive_each_keep_their_own(
    tmp_path: Path, corpus: Path
) -> None:
    """Two Kimi share dirs, each with its kimi.json, archived into one folder: each copy sits
    under the digest of its own path, and each session keeps the cwd its own file gave."""
    import hashlib

    a = home_of(CASES[0], tmp_path / "a", corpus)
    b = home_of(CASES[0], tmp_path / "b", corpus)
    bucket = next((b / "sessions").iterdir())
    only = next(f for f in sorted(bucket.iterdir()) if not (f / "subagents").exists())
    for folder in bucket.iterdir():
        if folder != only:
            shutil.rmtree(folder)
    only.rename(bucket / "bbbbbbbb-0000-4000-8000-000000000001")
    other = "/elsewhere/other-app"
    bucket.rename(bucket.parent / hashlib.md5(other.encode()).hexdigest())
    (b / "kimi.json").write_text(json.dumps({"work_dirs": [{"path": other, "kaos": "local"}]}))
    roots = [f"kimi={a / 'sessions'}", f"kimi={b / 'sessions'}"]
    config = load_config(data_dir=str(tmp_path / "data"), root_options=roots, only_roots=True)
    before, _ = listed(config)
    cwd_of = {s["id"]: s["cwd"] for s in before}
    assert cwd_of["bbbbbbbb-0000-4000-8000-000000000001"] == other and KIMI_CWD in cwd_of.values()
    shutil.rmtree(a)
    shutil.rmtree(b)
    after, report = listed(config)
    assert report["errors"] == [] and all(s["archived"] for s in after)
    assert {s["id"]: s["cwd"] for s in after} == cwd_of
    assert len(list((Path(config.archive_dir) / "kimi" / SIDE_DIR).glob("*/kimi.json"))) == 2


def test_an_export_of_one_session_carries_only_what_speaks_of_it(
    case: Case, tmp_path: Path, corpus: Path
) -> None:
    """An export is made to hand sessions to someone: the side file it writes holds the
    entries of the sessions chosen, never the titles, work dirs or links of the others."""
    home = home_of(case, tmp_path, corpus)
    side = home / case.side
    doc = json.loads(side.read_text())
    if case.agent == "kimi":
        doc["work_dirs"].append({"path": "/private/other-project", "kaos": "local"})
    elif case.agent == "droid":
        doc["invocations"].append(
            {**doc["invocations"][0], "childSessionId": "other-child", "description": "private"}
        )
    side.write_text(json.dumps(doc))
    config = machine(tmp_path / "a", case, home)
    sessions, _ = listed(config)
    wanted = {"droid": DROID_CHILD, "cline": CLINE_TASK}.get(case.agent)
    chosen = next(s for s in sessions if (s["id"] == wanted if wanted else s["parent"] is None))
    out = tmp_path / "exports" / "box"
    assert export_sessions(config, [chosen], out)["errors"] == []
    (copy,) = (out / case.agent / SIDE_DIR).glob(f"*/{case.side}")
    sent = copy.read_text()
    if case.agent == "kimi":
        assert [w["path"] for w in json.loads(sent)["work_dirs"]] == [KIMI_CWD]
    elif case.agent == "droid":
        assert [i["childSessionId"] for i in json.loads(sent)["invocations"]] == [DROID_CHILD]
    else:
        assert [t["id"] for t in json.loads(sent)] == [CLINE_TASK] and len(doc) > 1
    shutil.rmtree(home)
    other = machine(tmp_path / "b", None, None)
    assert pull(other, str(tmp_path / "exports"), "box")["errors"] == []
    got, _ = listed(other)
    assert [s["id"] for s in got if s["id"] == chosen["id"]] and case.check(got)


def test_an_export_does_not_send_a_side_file_it_cannot_read(tmp_path: Path, corpus: Path) -> None:
    case = CASES[0]
    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path, case, home)
    sessions, _ = listed(config)
    (home / case.side).write_bytes(b'{"work_dirs": [')
    out = tmp_path / "out" / "box"
    rep = export_sessions(config, sessions[:1], out)
    assert [e["message"] for e in rep["errors"]] == ["not sent: the side file could not be read"]
    assert not list((out / case.agent).glob(f"{SIDE_DIR}/*/{case.side}"))
    assert (out / "manifest.json").is_file()


def test_a_change_to_other_entries_rereads_no_session_it_does_not_touch(
    case: Case, tmp_path: Path, corpus: Path
) -> None:
    """Cline rewrites its task index at every save of any task, Kimi its kimi.json at every new
    session: what is re-read is the sessions whose own entry changed, not all of them."""
    home = home_of(case, tmp_path, corpus)
    config = machine(tmp_path, case, home)
    before, _ = listed(config)
    side = home / case.side
    doc = json.loads(side.read_text())
    touched: list[str] = []
    if case.agent == "kimi":
        doc["work_dirs"].append({"path": "/another/project", "kaos": "local"})
    elif case.agent == "droid":
        doc["invocations"].append({**doc["invocations"][0], "childSessionId": "other-child"})
    else:
        other = next(t for t in doc if t["id"] != CLINE_TASK)
        other["task"] = "Renamed elsewhere"
        touched = [other["id"]]
    side.write_text(json.dumps(doc))
    os.utime(side, (1, 1))
    svc = Service(
        load_config(
            data_dir=config.data_dir,
            root_options=[f"{r.agent}={r.path}" for r in config.roots if r.kind == "native"],
            only_roots=True,
        ),
        workers=1,
    )
    try:
        report = svc.update_index()
    finally:
        svc.close()
    assert sorted(c["id"] for c in report["changed"]) == touched
    after, _ = listed(config)
    assert len(after) == len(before) and case.check(after)
