"""Aider histories are found by default when no other agent ran in their repository: in the
shell history's aider commands and below the usual project folders, a bounded search
(agtaild/adapters/aider/nearby.py); `agtail doctor` says where they are and how to add more."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from agtaild.adapters.aider import nearby
from agtaild.adapters.aider.adapter import AiderAdapter
from tests.conftest import CORPUS

REPO = CORPUS / "real" / "aider-0.86.2" / "demo-app"
RUNS = 7  # the sample history's runs


def repo_at(folder: Path) -> Path:
    """A copy of the real Aider sample repository at ``folder`` (a git repository)."""
    shutil.copytree(REPO, folder)
    (folder / ".git").mkdir()
    return folder


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:
    from agtaild.cli import main

    assert main(["--json", *argv, "list", "--limit", "500"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)["sessions"]


def test_a_repository_in_a_project_folder_is_found_by_default(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_at(isolated_home / "src" / "demo-app")
    sessions = [s for s in listed(capsys, "--no-daemon") if s["agent"] == "aider"]
    assert len(sessions) == RUNS and {s["cwd"] for s in sessions} == {str(repo)}
    # --only-roots: only the roots given (no search).
    assert [s for s in listed(capsys, "--data-dir", str(tmp_path / "d2"), "--only-roots") if s["agent"] == "aider"] == []


@pytest.mark.parametrize(
    ("shell_file", "line"),
    [
        (".bash_history", "cd {repo} && aider --model openai/mock-model"),
        (".bash_history", "#1796054000\nAIDER_X=1 aider --chat-history-file {repo}/.aider.chat.history.md"),
        (".zsh_history", ": 1796054000:0;cd {repo}; aider --yes-always hello.py"),
        (".zsh_history", ": 1796054000:0;aider {repo}/hello.py"),
        (".local/share/fish/fish_history", "- cmd: cd {repo}; and aider\n  when: 1796054000"),
    ],
)
def test_the_shell_history_names_repositories_outside_the_project_folders(
    isolated_home: Path, tmp_path: Path, shell_file: str, line: str
) -> None:
    repo = repo_at(tmp_path / "elsewhere" / "demo-app")
    history = isolated_home / shell_file
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text(f"ls\ngit status\n{line.format(repo=repo)}\nvim x\n")
    found = AiderAdapter().roots_nearby(os.environ, isolated_home)
    assert found == [repo / ".aider.chat.history.md"]


def test_atuin_records_the_working_directory(isolated_home: Path, tmp_path: Path) -> None:
    repo = repo_at(tmp_path / "elsewhere" / "demo-app")
    db_path = isolated_home / ".local" / "share" / "atuin" / "history.db"
    db_path.parent.mkdir(parents=True)
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE history (id TEXT PRIMARY KEY, timestamp INTEGER, duration INTEGER, exit INTEGER,"
               " command TEXT, cwd TEXT, session TEXT, hostname TEXT, deleted_at INTEGER)")
    db.executemany("INSERT INTO history (id, command, cwd) VALUES (?, ?, ?)",
                   [("1", "aider --model x", str(repo / "sub")), ("2", "ls", "/tmp"), ("3", "raider", "/nowhere")])
    db.commit()
    db.close()
    (repo / "sub").mkdir()
    assert AiderAdapter().roots_nearby(os.environ, isolated_home) == [repo / ".aider.chat.history.md"]


def test_the_search_is_bounded(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = repo_at(isolated_home / "src" / "a" / "b" / "c" / "deep")  # 4 levels below ~/src
    shallow = repo_at(isolated_home / "code" / "z" / "shallow")
    assert nearby.in_project_folders(isolated_home, ".aider.chat.history.md") == [shallow / ".aider.chat.history.md"]
    assert deep.is_dir()
    for i in range(30):
        (isolated_home / "projects" / f"p{i:02d}").mkdir(parents=True)
    monkeypatch.setattr(nearby, "MAX_FOLDERS", 12)
    # 12 folders: the project folders first (breadth first), then ~/code's … never ~/code/z/shallow.
    assert nearby.in_project_folders(isolated_home, ".aider.chat.history.md") == []
    big = isolated_home / ".bash_history"
    big.write_text(f"cd {shallow.parent} && aider\n" + "echo filler\n" * (nearby.HISTORY_BYTES // 12 + 10))
    assert nearby.from_shell_history(os.environ, isolated_home) == []  # beyond the last 4 MB


def test_doctor_says_where_and_how_to_add_more(isolated_home: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from agtaild.cli import main

    assert main(["--no-daemon", "doctor"]) in (0, 1)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "agent aider: no history found; Aider keeps a history in each repository" in text
    assert "--root aider=REPO" in text and f"at most {nearby.MAX_FOLDERS} folders" in text
    repo = repo_at(isolated_home / "src" / "demo-app")
    main(["--no-daemon", "index"])
    capsys.readouterr()
    main(["--no-daemon", "doctor"])
    out = capsys.readouterr()
    line = next(ln for ln in (out.out + out.err).splitlines() if "agent aider" in ln)
    assert f"{RUNS} sessions in {repo}/.aider.chat.history.md (found beyond the configured roots)" in line
    assert "import store" not in line and "--root aider=REPO" in line


def test_doctor_names_where_indexed_sessions_came_from_not_the_import_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An index holding Aider sessions read from a root the doctor's config does not name (a
    `--root aider=` run on that data dir, in 0.2.0): they are where the index read them."""
    from agtaild.cli import main
    from agtaild.cli.doctor_agents import agent_report
    from agtaild.config import load_config

    repo = repo_at(tmp_path / "elsewhere" / "demo-app")
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "--root", f"aider={repo}", "index"]) == 0
    capsys.readouterr()
    _, checks = agent_report(load_config(data_dir=data))  # this HOME's defaults: no aider root
    (check,) = [c for c in checks if c["name"] == "agent aider"]
    assert check["message"].startswith(f"{RUNS} sessions in {repo} (found beyond the configured roots)")
    assert "import store" not in check["message"]
