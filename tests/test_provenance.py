"""Provenance (issue 27, docs/provenance.md): the edits index the writer keeps, the history of
a file, and blame's replay — unit by unit, on the sample corpus's real recordings, and on the
synthetic repository of tests/provenance_synth.py (three agents, hand edits, renames, a
reformat)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main
from agtaild.config import Config, RootSpec
from agtaild.errors import UsageError
from agtaild.provenance import paths, records, shell
from agtaild.provenance.blamefile import MAX_BYTES, blame_doc, changes_of, read_text
from agtaild.provenance.replay import UNKNOWN, Change, blame, reconstruct
from agtaild.query.service import Service
from tests import provenance_synth

HERE = Path(__file__).resolve().parent
REAL = HERE / "corpus" / "real"


# -- the parts ---------------------------------------------------------------------------------
def test_paths_are_made_absolute_without_touching_the_disk() -> None:
    assert paths.normalize("src/../app.py", "/w/proj") == "/w/proj/app.py"
    assert paths.normalize("/a/./b//c.py", None) == "/a/b/c.py"
    assert paths.normalize("rel.py", None) is None  # relative to what: no row
    assert paths.normalize("~/x.py", "/w") is None
    assert paths.normalize("C:\\w\\..\\x.py", None) == "C:\\x.py"
    assert paths.normalize(42, "/w") is None and paths.normalize("a\x00b", "/w") is None
    assert paths.name_of("/w/proj/app.py") == "app.py"


def test_shell_commands_name_the_files_they_write() -> None:
    assert shell.touched("cat > a.py <<'EOF'\nx = 1\nEOF") == [("a.py", None, "command")]
    assert shell.touched("sed -i 's/a/b/' f.py && echo ok > /dev/null") == [("f.py", None, "command")]
    assert shell.touched("git mv old.py new.py") == [("new.py", "old.py", "rename")]
    assert shell.touched(["bash", "-lc", "rm -f x.py"]) == [("x.py", None, "delete")]
    assert shell.touched("ruff format src/m.py") == [("src/m.py", None, "command")]
    assert shell.touched("ls -la; grep -r foo .") == []
    assert shell.touched("prettier --check a.js") == []


def _w(lines: list[str]) -> list[Any]:
    return ["write", lines, None]


def test_a_piece_of_a_line_replaced_is_the_editing_change_s_line() -> None:
    changes = [
        Change("create", [_w(["def greet(name):", '    return "Hello, " + name', "", "print(greet('x'))"])]),
        Change("edit", [["text", 'return "Hello, " + name', 'return f"Hello, {name}"', 0, False]]),
    ]
    now = ["def greet(name):", '    return f"Hello, {name}"', "", "print(greet('x'))"]
    assert blame(changes, now).origins == [0, 1, 0, 0]
    assert reconstruct(changes) == now


def test_hand_written_lines_stay_unattributed_even_when_an_agent_keeps_them() -> None:
    changes = [
        Change("create", [_w(["a = 1", "b = 2", "c = 3"])]),
        # by then someone had added "# by hand" after a = 1; the agent's edit shows it as context
        Change("edit", [["replace", ["a = 1", "# by hand", "b = 2"], ["a = 1", "# by hand", "b = 20"], 0, False]]),
    ]
    result = blame(changes, ["a = 1", "# by hand", "b = 20", "c = 3", "# later, by hand"])
    assert result.origins == [0, UNKNOWN, 1, 0, UNKNOWN]
    assert result.ambiguous[2]  # placed although its old text did not match the recorded state
    assert not result.ambiguous[0]


def test_failed_edits_are_not_replayed_and_deletes_forget_the_file() -> None:
    changes = [
        Change("create", [_w(["x = 1"])]),
        Change("edit", [["text", "x = 1", "x = 2", 0, False]], failed=True),
        Change("delete", [["delete"]]),
        Change("create", [_w(["x = 1", "y = 2"])]),
    ]
    result = blame(changes, ["x = 1", "y = 2"])
    assert result.origins == [3, 3]
    assert result.outcomes[1].note and "failed" in result.outcomes[1].note


def test_replace_all_and_several_places() -> None:
    base = Change("create", [_w(["v = 0", "w = 1", "v = 0"])])
    every = blame([base, Change("edit", [["text", "v = 0", "v = 9", 0, True]])], ["v = 9", "w = 1", "v = 9"])
    assert every.origins == [1, 0, 1] and not any(every.ambiguous)
    first = blame([base, Change("edit", [["text", "v = 0", "v = 9", 0, False]])], ["v = 9", "w = 1", "v = 0"])
    assert first.origins == [1, 0, 0] and first.ambiguous[0]  # which of the two: a guess, said so
    hinted = blame([base, Change("edit", [["replace", ["v = 0"], ["v = 9"], 3, False]])], ["v = 0", "w = 1", "v = 9"])
    assert hinted.origins == [0, 0, 1] and not hinted.ambiguous[2]


def test_a_formatter_s_lines_are_not_the_agent_s() -> None:
    changes = [
        Change("create", [_w(["x = f('a')", "y = 1", "z = 2"])]),
        # a formatter changed the quotes; then the agent edited below, its context shows them
        Change("edit", [["replace", ['x = f("a")', "y = 1"], ['x = f("a")', "y = 10"], 0, False]]),
    ]
    result = blame(changes, ['x = f("a")', "y = 10", "z = 2"])
    assert result.origins == [UNKNOWN, 1, 0]


def test_an_edit_nowhere_in_the_record_is_placed_and_found_out_of_order() -> None:
    changes = [
        Change("create", [_w(["one = 1", "two = 2"])]),
        Change("edit", [["replace", ["# never recorded"], ["# never recorded", "three = 3 and more"], 0, False]]),
    ]
    result = blame(changes, ["# never recorded", "three = 3 and more", "one = 1", "two = 2"])
    assert result.origins == [UNKNOWN, 1, 0, 0]
    assert result.ambiguous[1]


def _event(**kw: Any) -> Any:
    from agtaild.model import Event

    return Event(seq=kw.pop("seq", 1), kind=kw.pop("kind", "tool_use"), **kw)


def test_rows_from_events_prefer_the_most_exact_source() -> None:
    from agtaild.adapters.kit import edits

    numbered = edits.edit_doc([edits.from_texts("/p/a.py", "a\nb\n", "a\nB\n", start=1)])
    snippet = edits.edit_doc([edits.from_texts("a.py", "b", "B")])
    write = {"file_path": "a.py", "content": "x\ny\n"}
    got = records.rows(
        [
            _event(seq=1, tool="Edit", input={"file_path": "/p/a.py", "old_string": "b", "new_string": "B"},
                   extra={"edit": numbered}),
            _event(seq=2, tool="Edit", input={"file_path": "a.py", "old_string": "b", "new_string": "B"},
                   extra={"edit": snippet}, is_error=True),
            _event(seq=3, tool="Write", input=write, extra={"tool_category": "write"}),
            _event(seq=4, tool="Bash", input={"command": "mv a.py b.py"}, extra={"tool_category": "shell"}),
            _event(seq=5, tool="Read", input={"file_path": "a.py"}, extra={"tool_category": "read"}),
        ],
        "/p",
        lambda ts: None,
    )  # fmt: skip
    import msgspec

    rows = {r[0]: (r[2], r[4], r[5], r[6], msgspec.msgpack.decode(r[7])) for r in got}
    assert sorted(rows) == [1, 2, 3, 4]
    assert rows[1][:3] == ("/p/a.py", "edit", 0) and rows[1][4]["ops"] == [["replace", ["a", "b"], ["a", "B"], 1, False]]
    assert rows[2][2] == 1 and rows[2][4]["ops"] == [["text", "b", "B", 0, False]]  # failed, kept as failed
    assert rows[3][:2] == ("/p/a.py", "create") and rows[3][4]["ops"] == [["write", ["x", "y"], None]]
    assert rows[4][:2] == ("/p/b.py", "rename") and rows[4][3] == "/p/a.py" and rows[4][4]["command"] == "mv a.py b.py"


# -- the index -----------------------------------------------------------------------------------
def _service(data: Path, roots: list[RootSpec]) -> Service:
    svc = Service(Config(data_dir=str(data), roots=roots, archive=False))
    report = svc.update_index()
    assert not report.get("errors"), report["errors"]
    return svc


REAL_ROOTS = [
    RootSpec("claude-code", str(REAL / "claude-2.1.197" / "projects")),
    RootSpec("codex", str(REAL / "codex-0.171.0" / "sessions")),
    RootSpec("pi", str(REAL / "pi-0.73.1" / "sessions")),
    RootSpec("gemini", str(REAL / "gemini-0.61.0")),
    RootSpec("opencode", str(REAL / "opencode-1.18.33")),
]


def test_the_real_recordings_rebuild_and_blame_their_files(tmp_path: Path) -> None:
    """The agents of the sample corpus edited files in their scratch projects: each file whose
    history holds it whole is rebuilt from the recorded edits, and blame of that text
    attributes every line to the change that wrote it."""
    roots = [r for r in REAL_ROOTS if Path(r.path).exists()]
    svc = _service(tmp_path / "data", roots)
    try:
        db = sqlite3.connect(Path(svc.config.index_path))
        files = [row[0] for row in db.execute("SELECT DISTINCT path FROM edits WHERE kind != 'command'")]
        agents = {row[0] for row in db.execute("SELECT DISTINCT s.agent FROM edits e JOIN sessions s ON s.id = e.session_id")}
        db.close()
        assert {"claude-code", "pi"} <= agents and len(files) >= 5
        rebuilt = 0
        for path in files:
            history = svc.call("files.history", {"path": path, "replay": True})
            oldest_first = list(reversed(history["records"]))
            text = reconstruct(changes_of(oldest_first))
            if text is None:
                continue
            rebuilt += 1
            doc = blame_doc(history, "".join(x + "\n" for x in text))
            assert doc["not_recorded"] == 0, path
            assert all(not line["ambiguous"] for line in doc["lines"]), path
        assert rebuilt >= 5
        hello = "/tmp/rt/claude/home/src/demo-app/hello.py"
        history = svc.call("files.history", {"path": hello, "replay": True})
        assert [(r["kind"], r["tool"]) for r in history["records"]] == [("edit", "Edit"), ("create", "Write")]
        assert history["records"][0]["prompt"]["text"].startswith("Create hello.py")
        doc = blame_doc(history, "".join(x + "\n" for x in reconstruct(changes_of(list(reversed(history["records"])))) or []))
        by_line = {x["line"]: doc["records"][str(x["record"])]["tool"] for x in doc["lines"]}
        assert by_line[2] == "Edit" and by_line[1] == "Write"
    finally:
        svc.close()


def test_edits_live_and_die_with_their_events(tmp_path: Path) -> None:
    src = REAL / "claude-2.1.197" / "projects"
    copy = tmp_path / "projects"
    import shutil

    shutil.copytree(src, copy)
    svc = _service(tmp_path / "data", [RootSpec("claude-code", str(copy))])
    try:
        db = sqlite3.connect(Path(svc.config.index_path))

        def count() -> int:
            return int(db.execute("SELECT count(*) FROM edits").fetchone()[0])

        first = count()
        assert first >= 4
        target = next(copy.rglob("cd61be5e-*.jsonl"))
        with target.open("a") as f:  # an append: read again from where it stopped
            f.write("\n")
        svc.update_index()
        assert count() == first
        svc.update_index(full=True)
        assert count() == first  # a full re-read replaces, never doubles
        target.unlink()
        svc.update_index()
        assert count() < first
        assert db.execute(
            "SELECT count(*) FROM edits WHERE session_id NOT IN (SELECT id FROM sessions)"
        ).fetchone()[0] == 0
        db.close()
    finally:
        svc.close()


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> provenance_synth.Repo:
    return provenance_synth.build(tmp_path_factory.mktemp("synth") / "repo", seed=27)


def test_blame_is_accurate_on_the_synthetic_repository(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Three agents, hand edits between them, a rename each way, a reformat: over six
    repositories, at least 99 % of the agent-written lines go to the right session and event,
    and no hand-written line ever goes to an agent."""
    right = lines = 0
    for seed in (27, 1, 2, 3, 4, 5):
        base = tmp_path_factory.mktemp(f"acc{seed}")
        repo = provenance_synth.build(base / "repo", seed=seed)
        score = provenance_synth.score(repo, base / "data")
        assert score.hand_lines > 0 and score.hand_as_agent == 0, score.wrong[:5]
        right += score.agent_right
        lines += score.agent_lines
    assert right / lines >= 0.99, (right, lines)


# -- the command line ----------------------------------------------------------------------------
def _cli(capsys: pytest.CaptureFixture[str], repo: provenance_synth.Repo, data: Path, *args: str) -> tuple[int, str, str]:
    base = ["--data-dir", str(data), "--no-daemon", "--only-roots"]
    for agent, path in repo.roots.items():
        base += ["--root", f"{agent}={path}"]
    code = main([*base, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_history_and_blame_from_the_command_line(
    capsys: pytest.CaptureFixture[str], synthetic: provenance_synth.Repo, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    helpers = str(synthetic.project / "helpers.py")
    code, out, _ = _cli(capsys, synthetic, data, "--json", "history", helpers, "--limit", "500")
    doc = json.loads(out)
    assert code == 0 and doc["records"] and not doc["truncated"]
    times = [r["time"] for r in doc["records"]]
    assert times == sorted(times, reverse=True)  # newest first
    assert any(r["match"] == "renamed" for r in doc["records"])  # util.py's changes, before the move
    assert {r["session"]["agent"] for r in doc["records"]} == {"claude-code", "codex", "pi"}
    code, out, _ = _cli(capsys, synthetic, data, "history", helpers, "--limit", "3")
    assert code == 0 and out.count("  > Round") == 3 and "@@" in out
    code, out, _ = _cli(capsys, synthetic, data, "--json", "blame", helpers, "-L", "2,5")
    doc = json.loads(out)
    assert [x["line"] for x in doc["lines"]] == [2, 3, 4, 5]
    code, out, _ = _cli(capsys, synthetic, data, "blame", helpers)
    lines = out.splitlines()
    assert code == 0 and len([x for x in lines if x[:1] and "  " in x]) >= len(synthetic.truth["helpers.py"])
    assert any(x.startswith("not recorded") for x in lines)  # the hand-written ones
    assert any(" — Round " in x for x in lines)  # the legend: each change's prompt
    code, out, _ = _cli(capsys, synthetic, data, "--json", "history", str(synthetic.project))
    assert {Path(r["path"]).name for r in json.loads(out)["records"]} >= {"app.py", "helpers.py", "journal.py"}


def test_bad_input_gets_a_clear_answer(
    capsys: pytest.CaptureFixture[str], synthetic: provenance_synth.Repo, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    code, _, err = _cli(capsys, synthetic, data, "blame", str(tmp_path / "gone.py"))
    assert code == 2 and "no such file" in err and "agtail history" in err
    code, _, err = _cli(capsys, synthetic, data, "blame", str(synthetic.project))
    assert code == 2 and "is a folder" in err
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x7fELF\x00\x01")
    code, _, err = _cli(capsys, synthetic, data, "blame", str(binary))
    assert code == 2 and "binary" in err
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    code, _, err = _cli(capsys, synthetic, data, "blame", str(huge))
    assert code == 2 and "50.0 MB is too large" in err
    code, _, err = _cli(capsys, synthetic, data, "blame", str(synthetic.project / "app.py"), "-L", "9,3")
    assert code == 2 and "-L" in err
    code, _, err = _cli(capsys, synthetic, data, "blame", str(synthetic.project / "app.py"), "-L", "100000")
    assert code == 2 and "lines" in err
    code, _, err = _cli(capsys, synthetic, data, "history", str(tmp_path / "never.py"))
    assert code == 0 and "no recorded session changed" in err
    with pytest.raises(UsageError, match="too large"):
        big = tmp_path / "big.txt"
        with big.open("wb") as f:
            f.truncate(MAX_BYTES + 1)
        read_text(str(big))


def test_symlinked_and_other_case_paths(
    capsys: pytest.CaptureFixture[str], synthetic: provenance_synth.Repo, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    link = tmp_path / "link"
    link.symlink_to(synthetic.project)
    code, out, _ = _cli(capsys, synthetic, data, "--json", "history", str(link / "app.py"))
    through = json.loads(out)
    assert code == 0 and through["records"] and through["real_path"] == str(synthetic.project / "app.py")
    code, out, _ = _cli(capsys, synthetic, data, "--json", "history", str(synthetic.project / "APP.py"))
    other = json.loads(out)
    assert other["records"] and {r["match"] for r in other["records"]} == {"case"}
    assert other["other_case"] == [str(synthetic.project / "app.py")]
    code, out, err = _cli(capsys, synthetic, data, "history", str(synthetic.project / "APP.py"))
    assert "another case" in out and "recorded with another case" in err


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_blame_with_git_rev_and_commit(
    capsys: pytest.CaptureFixture[str], synthetic: provenance_synth.Repo, tmp_path: Path
) -> None:
    project = synthetic.project
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "agents' work")
    app = project / "app.py"
    kept = app.read_text()
    app.write_text("# a line written after the commit\n" + kept)
    _git(project, "commit", "-qam", "by hand")
    data = tmp_path / "data"
    code, out, _ = _cli(capsys, synthetic, data, "--json", "blame", str(app), "--rev", "HEAD~1")
    at_first = json.loads(out)
    assert code == 0 and [x["text"] for x in at_first["lines"]] == kept.splitlines()
    code, out, _ = _cli(capsys, synthetic, data, "--json", "blame", "--commit", "HEAD", str(project))
    (f,) = json.loads(out)["files"]
    assert f["path"].endswith("app.py") and f["hunks"] == [{"lines": [1, 1], "sessions": [], "not_recorded": 1}]
    code, out, _ = _cli(capsys, synthetic, data, "blame", "--commit", "HEAD~1", str(project))
    assert code == 0 and "claude-code:" in out and "codex:" in out and "pi:" in out
    code, _, err = _cli(capsys, synthetic, data, "blame", str(app), "--rev", "no-such-rev")
    assert code == 2 and "git" in err


# -- the API and MCP -----------------------------------------------------------------------------
def test_files_history_method_checks_its_params(synthetic: provenance_synth.Repo, tmp_path: Path) -> None:
    svc = _service(tmp_path / "data", [RootSpec(a, str(p)) for a, p in synthetic.roots.items()])
    try:
        with pytest.raises(UsageError, match="path"):
            svc.call("files.history", {})
        with pytest.raises(UsageError, match="limit"):
            svc.call("files.history", {"path": "/x", "limit": 0})
        doc = svc.call("files.history", {"path": str(synthetic.project / "journal.py"), "limit": 2})
        assert len(doc["records"]) == 2 and doc["truncated"] and "ops" not in doc["records"][0]
        from agtaild.mcp.tools import BY_NAME, check_arguments

        tool = BY_NAME["file_history"]
        text = tool.run(svc.call, check_arguments(tool, {"path": "journal.py", "limit": 3}), str(synthetic.project))
        assert text.startswith(f"History of {synthetic.project / 'journal.py'}: 3 of ") and "prompt: Round" in text
    finally:
        svc.close()
