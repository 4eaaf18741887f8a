"""Rules label every present and future session a filter holds for; --where changes many
sessions at once (--dry-run first); and an upgrade of the index keeps every label, star,
title and hide."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.errors import UsageError
from agtaild.index.where import parse

CLAUDE = Path(__file__).resolve().parent / "corpus" / "real" / "claude-2.1.197" / "projects"
DEMO = "-tmp-rt-claude-home-src-demo-app"
HOOKED = "-tmp-rt-claude-home-src-hooked-app"
LATE = "6d4f83c7-6fe0-45b4-ae36-deb6afbc2e5e"


def run(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main(["--no-daemon", "--data-dir", str(tmp_path / "d"), "--only-roots", "--root", f"claude-code={root}", *args])
    out = capsys.readouterr().out
    return code, (json.loads(out) if "--json" in args and code == 0 else out)


def ids(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    code, doc = run(root, tmp_path, capsys, "list", "--json", *(args if "--hidden" in args else ("--all", *args)))
    assert code == 0
    return sorted(s["id"][:8] for s in doc["sessions"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The corpus without one demo-app session, which arrives later."""
    r = tmp_path / "projects"
    shutil.copytree(CLAUDE, r)
    shutil.move(str(r / DEMO / f"{LATE}.jsonl"), tmp_path / "late.jsonl")
    return r


def test_a_rule_labels_present_and_future_sessions_and_respects_removals(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    every = ids(root, tmp_path, capsys)
    code, out = run(root, tmp_path, capsys, "label", "--rule", "cwd:/tmp/rt/claude/home/src/demo-app/**", "client=acme", "--dry-run")
    assert code == 0 and "it would label 5 now (nothing changed)" in out
    assert ids(root, tmp_path, capsys, "--label", "client") == []
    code, out = run(root, tmp_path, capsys, "label", "--rule", "cwd:/tmp/rt/claude/home/src/demo-app/**", "client=acme")
    assert code == 0 and out.startswith("rule 1: client=acme on every session with cwd:") and "labelled 5 now" in out
    acme = ids(root, tmp_path, capsys, "--label", "client=acme")
    assert len(acme) == 5 and "d257ca0a" not in acme and set(acme) <= set(every)
    # the user takes the label off one; a user's label of the key on another stays
    assert run(root, tmp_path, capsys, "label", "claude-code:cd61", "client", "--remove")[0] == 0
    assert run(root, tmp_path, capsys, "label", "claude-code:2c4d", "client=mine")[0] == 0
    # a future session: labelled by the update that brings it
    shutil.copy(tmp_path / "late.jsonl", root / DEMO / f"{LATE}.jsonl")
    assert "6d4f83c7" in ids(root, tmp_path, capsys, "--label", "client=acme")
    # a reindex keeps it all, and the rule does not bring back what the user removed
    assert run(root, tmp_path, capsys, "reindex")[0] == 0
    acme_now = ids(root, tmp_path, capsys, "--label", "client=acme")
    assert "cd61be5e" not in acme_now and "2c4d36d7" not in acme_now and "6d4f83c7" in acme_now
    assert ids(root, tmp_path, capsys, "--label", "client=mine") == ["2c4d36d7"]
    code, doc = run(root, tmp_path, capsys, "show", "claude-code:7773", "--json")
    assert doc["session"]["state"]["labels"] == {"client": "acme"}
    code, doc = run(root, tmp_path, capsys, "rules", "--json")
    assert [(r["id"], r["key"], r["value"]) for r in doc["rules"]] == [(1, "client", "acme")]
    # removing the rule takes off the labels that are still the rule's, and only those
    code, out = run(root, tmp_path, capsys, "rules", "--remove", "1")
    assert code == 0 and "4 of its labels taken off" in out
    assert ids(root, tmp_path, capsys, "--label", "client") == ["2c4d36d7"]
    assert run(root, tmp_path, capsys, "rules", "--remove", "1")[0] == 4


def test_where_changes_many_sessions_with_a_dry_run_first(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(root, tmp_path, capsys, "hide", "--where", "messages<3 project=demo-app", "--dry-run")
    assert code == 0 and out.startswith("would hide 3 sessions (nothing changed):")
    assert ids(root, tmp_path, capsys, "--hidden") == []
    assert run(root, tmp_path, capsys, "hide", "--where", "messages<3 project=demo-app")[0] == 0
    assert ids(root, tmp_path, capsys, "--hidden") == ["77734736", "agent-ab", "c17426d0"]
    assert ids(root, tmp_path, capsys, "--where", "messages>=3") == ["2c4d36d7", "cd61be5e"]
    # a filter that holds for every session is refused without --yes, and nothing changes
    code, out = run(root, tmp_path, capsys, "star", "--where", "messages>0")
    assert code == 2 and ids(root, tmp_path, capsys, "--starred") == []
    assert run(root, tmp_path, capsys, "star", "--where", "messages>0", "--yes")[0] == 0
    assert len(ids(root, tmp_path, capsys, "--starred")) == len(ids(root, tmp_path, capsys))
    assert run(root, tmp_path, capsys, "label", "--where", "title:*hooks*", "kind=hooks")[0] == 0
    assert ids(root, tmp_path, capsys, "--label", "kind=hooks") == ["d257ca0a"]
    assert run(root, tmp_path, capsys, "unhide", "--where", "agent=claude-code", "--yes")[0] == 0
    assert ids(root, tmp_path, capsys, "--hidden") == []
    for bad in (("hide", "--where", "messages<two"), ("hide", "--where", "colour=red"), ("hide", "--where", "cwd<3"),
                ("hide", "claude-code:cd61", "--where", "messages<2"), ("hide",), ("label", "--where", "x:y", "bad key"),
                ("label", "--rule", "messages:3", "k=v"), ("hide", "--where", "title:'unclosed")):  # fmt: skip
        assert run(root, tmp_path, capsys, *bad)[0] == 2, bad
    assert ids(root, tmp_path, capsys, "--hidden") == []


def test_the_filter_language() -> None:
    def holds(text: str, **row: Any) -> bool:
        base = {"agent": "codex", "cwd": "/home/u/work/acme/api", "project": "api", "title": "Fix the flaky test",
                "collection": None, "models": ["gpt-5", "o3"], "messages": 1.0, "tokens": 120.0, "imported": False}  # fmt: skip
        return parse(text).holds({**base, **row})

    assert holds("cwd:/home/u/work/acme/**") and holds("cwd:/home/u/work/acme/**", cwd="/home/u/work/acme")
    assert not holds("cwd:/home/u/work/*") and holds("cwd:/home/u/work/*/api")
    assert holds("model:gpt-*") and holds("model=o3") and not holds("model=gpt")
    assert holds("messages<2 tokens>=120 agent!=claude-code") and not holds("messages<2 tokens>120")
    assert holds("title:'*flaky test'") and holds("imported=false") and not holds("imported=true")
    assert not holds("tokens<10", tokens=None)
    for bad in ("", "messages", "messages:2", "tokens>x", "agent<b", "imported=yes", "title=", "x=y", "a" * 2001):
        with pytest.raises(UsageError):
            parse(bad)


def test_an_upgrade_of_the_index_keeps_the_users_state(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(root, tmp_path, capsys, "star", "claude-code:cd61")[0] == 0
    assert run(root, tmp_path, capsys, "hide", "claude-code:agent-ab")[0] == 0
    assert run(root, tmp_path, capsys, "title", "claude-code:2c4d", "My README")[0] == 0
    assert run(root, tmp_path, capsys, "label", "claude-code:7773", "keep=me")[0] == 0
    db = sqlite3.connect(tmp_path / "d" / "index.sqlite3")
    db.execute("UPDATE meta SET value = '0' WHERE key = 'index_version'")  # an index of an older agtail
    db.commit()
    db.close()
    assert ids(root, tmp_path, capsys, "--starred") == ["cd61be5e"]
    assert ids(root, tmp_path, capsys, "--hidden") == ["agent-ab"]
    assert ids(root, tmp_path, capsys, "--label", "keep=me") == ["77734736"]
    assert run(root, tmp_path, capsys, "show", "claude-code:2c4d", "--json")[1]["session"]["title"] == "My README"
    db = sqlite3.connect(tmp_path / "d" / "index.sqlite3")
    assert db.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()[0] != "0"  # it was rebuilt
    db.close()
