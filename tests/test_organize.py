"""Labels, stars, titles and hides from the CLI, as filters and in the answers; kept across a
reindex and a rebuilt index, because they are the user's and live apart from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agtaild.cli import main

CLAUDE = Path(__file__).resolve().parent / "corpus" / "real" / "claude-2.1.197" / "projects"


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--no-daemon", "--data-dir", str(tmp_path / "d"), "--only-roots", "--root", f"claude-code={CLAUDE}", *args])
    return code, capsys.readouterr().out


def ids(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    code, out = run(tmp_path, capsys, "list", "--json", *args)
    assert code == 0
    return [s["id"][:8] for s in json.loads(out)["sessions"]]


def test_label_star_title_hide_as_filters_and_in_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    everything = ids(tmp_path, capsys)
    assert run(tmp_path, capsys, "label", "claude-code:cd61", "client=acme", "wip")[0] == 0
    assert run(tmp_path, capsys, "star", "claude-code:cd61", "claude-code:2c4d")[0] == 0
    assert run(tmp_path, capsys, "hide", "claude-code:agent-abeadf39")[0] == 0
    assert run(tmp_path, capsys, "title", "claude-code:cd61", "Greeting script")[0] == 0
    assert ids(tmp_path, capsys, "--label", "client=acme") == ["cd61be5e"]
    assert ids(tmp_path, capsys, "--label", "client=other") == []
    assert sorted(ids(tmp_path, capsys, "--starred")) == ["2c4d36d7", "cd61be5e"]
    assert ids(tmp_path, capsys, "--hidden") == ["agent-ab"]
    assert "agent-ab" not in ids(tmp_path, capsys) and sorted(ids(tmp_path, capsys, "--all")) == sorted(everything)
    _, out = run(tmp_path, capsys, "show", "claude-code:cd61", "--json")
    session = json.loads(out)["session"]
    assert session["title"] == "Greeting script" and session["agent_title"].startswith("Create hello.py")
    assert session["state"] == {"labels": {"client": "acme", "wip": ""}, "starred": True, "hidden": False, "title": "Greeting script"}
    _, out = run(tmp_path, capsys, "search", "Count the lines", "--json")
    assert all(h["session"]["id"] != "agent-abeadf394adf045da" for h in json.loads(out)["hits"])
    _, out = run(tmp_path, capsys, "search", "Count the lines", "--all", "--json")
    assert any(h["session"]["id"] == "agent-abeadf394adf045da" for h in json.loads(out)["hits"])
    # undo
    assert run(tmp_path, capsys, "unhide", "claude-code:agent-abeadf39")[0] == 0
    assert run(tmp_path, capsys, "label", "claude-code:cd61", "wip", "--remove")[0] == 0
    assert run(tmp_path, capsys, "title", "claude-code:cd61", "--clear")[0] == 0
    assert sorted(ids(tmp_path, capsys)) == sorted(everything)
    _, out = run(tmp_path, capsys, "show", "claude-code:cd61", "--json")
    assert json.loads(out)["session"]["state"]["labels"] == {"client": "acme"}
    assert json.loads(out)["session"]["title"].startswith("Create hello.py")


def test_the_state_survives_a_reindex_and_a_rebuilt_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, capsys, "star", "claude-code:cd61")[0] == 0
    assert run(tmp_path, capsys, "label", "claude-code:cd61", "keep=me")[0] == 0
    assert run(tmp_path, capsys, "reindex")[0] == 0
    assert ids(tmp_path, capsys, "--starred", "--label", "keep=me") == ["cd61be5e"]
    index = tmp_path / "d" / "index.sqlite3"
    assert index.exists()
    for extra in ("-wal", "-shm"):
        Path(str(index) + extra).unlink(missing_ok=True)
    index.write_bytes(b"garbage" * 4096)  # a damaged index is set aside and rebuilt
    assert ids(tmp_path, capsys, "--starred") == ["cd61be5e"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("label", "claude-code:cd61", "bad key"), 2),
        (("label", "claude-code:cd61", "k=" + "v" * 10_000), 2),
        (("label", "claude-code:cd61", "k=a\x1bb"), 2),
        (("title", "claude-code:cd61"), 2),
        (("star", "claude-code:nosuch"), 4),
        (("hide", "claude-code:cd61", "claude-code:nosuch"), 4),
        (("label", "claude-code:nosuch", "ok=1"), 4),
        (("label", "claude-code:cd61", "ok=1", "k\x07=v"), 2),  # a control character in a key
        (("label", "claude-code:cd61", "ok=1", "k=a\x00b"), 2),  # ... in a value, after a good label
        (("label", "claude-code:cd61", "ok=1", "k=a\u202eb"), 2),  # a bidi override (format character)
        (("title", "claude-code:cd61", "x" * 10_000), 2),
        (("label", "claude-code:cd61", *[f"k{i}" for i in range(10_000)]), 2),  # 10,000 labels on one session
    ],
    ids=lambda v: v[:2] if isinstance(v, tuple) else v,
)
def test_bad_input_is_refused_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], code: int) -> None:
    assert run(tmp_path, capsys, *args)[0] == code
    assert ids(tmp_path, capsys, "--starred") == [] and ids(tmp_path, capsys, "--hidden") == []
    _, out = run(tmp_path, capsys, "show", "claude-code:cd61", "--json")
    assert "state" not in json.loads(out)["session"]


def test_a_kept_answer_does_not_outlive_a_change_of_state(tmp_path: Path) -> None:
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service
    from agtaild.userstate.store import Change

    svc = Service(Config(data_dir=str(tmp_path / "d"), roots=[RootSpec("claude-code", str(CLAUDE))], archive=False))
    try:
        svc.update_index()
        before = svc.data_version()
        assert before == svc.data_version()
        svc.state.apply([Change(("", "claude-code", "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"), "hide", "1")])
        assert svc.data_version() != before
    finally:
        svc.close()
