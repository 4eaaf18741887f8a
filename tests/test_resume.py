"""Resume: the adapter's command in the session's cwd; imported and archived sessions refused."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import resume as cli_resume
from agtaild.cli.refs import ref_params
from agtaild.errors import Gone, Refused, UsageError
from agtaild.model import ParentRef, Session
from agtaild.resume import resume_command, resume_for_session


def test_claude_session_resumes_in_its_cwd(tmp_path: Path) -> None:
    info = resume_for_session(Session(agent="claude-code", id="abc-123", cwd=str(tmp_path)))
    assert info == {"agent": "claude-code", "id": "abc-123", "cwd": str(tmp_path), "cwd_exists": True,
                    "argv": ["claude", "--resume=abc-123"]}


def test_missing_cwd_is_reported_not_hidden(tmp_path: Path) -> None:
    info = resume_for_session(Session(agent="codex", id="0199", cwd=str(tmp_path / "gone")))
    assert info["argv"] == ["codex", "resume", "--", "0199"] and info["cwd_exists"] is False


def test_imported_session_refused_with_reason() -> None:
    with pytest.raises(Refused, match="imported from collection 'laptop'"):
        resume_for_session(Session(agent="claude-code", id="a", imported=True, collection="laptop", resumable=False))


def test_archived_session_refused_with_reason() -> None:
    with pytest.raises(Refused, match="archive"):
        resume_for_session({"agent": "claude-code", "id": "a", "archived": True, "resumable": False})


def test_subagent_transcript_refused() -> None:
    with pytest.raises(Refused, match="subagent"):
        resume_for_session(Session(agent="claude-code", id="a", parent=ParentRef(agent="claude-code", id="p")))


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "grok", "opencode", "kiro"])
@pytest.mark.parametrize(
    "sid", ["--dangerously-skip-permissions", "-x", "a b", "a=b", "id;rm -rf", "a\x1b[2J", "x" * 300]
)
def test_ids_that_could_act_as_options_are_refused_for_every_agent(agent: str, sid: str) -> None:
    """A file named ``--dangerously-skip-permissions.jsonl`` gives that id: never an argument."""
    with pytest.raises(Refused, match="refusing"):
        resume_for_session(Session(agent=agent, id=sid, cwd="/tmp"))


def test_every_adapter_declares_a_pattern_its_own_ids_fit() -> None:
    import re

    from agtaild.adapters import all_adapters

    for adapter in all_adapters():
        assert re.fullmatch(adapter.resume_id_pattern, "-x") is None, adapter.id
        assert re.fullmatch(adapter.resume_id_pattern, "--dangerously-skip-permissions") is None, adapter.id


def test_a_path_made_argument_may_not_start_with_a_dash() -> None:
    from agtaild.adapters.base import Adapter
    from agtaild.resume import check_argv

    session = Session(agent="x", id="ok-id", path="-rf")
    with pytest.raises(Refused, match="option"):
        check_argv(Adapter(), session, ["tool", "--session", "-rf"])
    check_argv(Adapter(), session, ["tool", "--session=/abs/path", "ok-id"])


@pytest.mark.parametrize(
    ("agent", "extra", "argv"),
    [
        ("codex", {"resumable": True}, ["codex", "resume", "--", "{id}"]),
        ("grok", {}, ["grok", "--resume={id}"]),
        ("kiro", {}, ["kiro-cli", "chat", "--resume-id={id}"]),
        ("oh-my-pi", {"path": "/s/--help.jsonl"}, ["omp", "--resume=/s/--help.jsonl"]),
    ],
)
def test_the_id_is_bound_to_its_option_or_after_the_end_of_options(
    agent: str, extra: dict[str, Any], argv: list[str]
) -> None:
    """Even an id that looks like an option (which agtaild.resume refuses before this) stays the
    option's value or a positional after ``--`` in the argv the adapter builds."""
    from agtaild.adapters import get_adapter

    sid = "--help"
    cmd = get_adapter(agent).resume(Session(agent=agent, id=sid, cwd="/tmp", **extra))
    assert cmd is not None and cmd.argv == [a.replace("{id}", sid) for a in argv]
    options_end = cmd.argv.index("--") if "--" in cmd.argv else len(cmd.argv)
    assert sid not in cmd.argv[:options_end]


def test_omp_offers_no_relative_session_file() -> None:
    from agtaild.adapters import get_adapter

    session = Session(agent="oh-my-pi", id="x", path="-x.jsonl", cwd="/tmp")
    assert get_adapter("oh-my-pi").resume(session) is None


def test_ref_params() -> None:
    assert ref_params("claude-code:abc:def") == {"agent": "claude-code", "id": "abc:def"}
    assert ref_params("no-colon") == {"id": "no-colon"}  # an id prefix of any agent
    for bad in ("", "claude-code:", ":abc"):
        with pytest.raises(UsageError):
            ref_params(bad)


class FakeService:
    def __init__(self, session: dict[str, Any]) -> None:
        self.session = session
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((method, params))
        return {"session": self.session}


def test_service_method_looks_the_session_up(tmp_path: Path) -> None:
    svc = FakeService({"agent": "claude-code", "id": "full-id", "cwd": str(tmp_path)})
    info = resume_command(svc, {"agent": "claude-code", "id": "full"})
    assert svc.calls == [("sessions.get", {"agent": "claude-code", "id": "full"})]
    assert info["argv"] == ["claude", "--resume=full-id"]
    with pytest.raises(UsageError):
        resume_command(svc, {"agent": "claude-code"})


class Ctx:
    def __init__(self, json: bool = False) -> None:
        self.json = json
        self.out: list[Any] = []
        self.errors: list[str] = []

    def out_json(self, doc: Any) -> None:
        self.out.append(doc)

    def err(self, message: str) -> None:
        self.errors.append(message)


def fake_agent(bin_dir: Path, name: str, code: int = 0) -> Path:
    """An executable that records its argv and cwd, standing in for the real agent."""
    bin_dir.mkdir(exist_ok=True)
    record = bin_dir / f"{name}.record"
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd()}}))\n"
        f"sys.exit({code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return record


def test_run_resume_runs_the_agent_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = fake_agent(tmp_path / "bin", "claude", code=7)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = tmp_path / "project"
    work.mkdir()
    info = resume_for_session(Session(agent="claude-code", id="s-1", cwd=str(work)))
    ctx = Ctx()
    assert cli_resume.run_resume(ctx, info, print_only=False) == 7
    ran = json.loads(record.read_text())
    assert ran == {"argv": ["--resume=s-1"], "cwd": str(work)}


def test_run_resume_print_only(tmp_path: Path) -> None:
    info = resume_for_session(Session(agent="claude-code", id="s-1", cwd=str(tmp_path)))
    ctx = Ctx(json=True)
    assert cli_resume.run_resume(ctx, info, print_only=True) == 0
    assert ctx.out == [{"agent": "claude-code", "id": "s-1", "cwd": str(tmp_path), "cwd_exists": True,
                        "argv": ["claude", "--resume=s-1"]}]


def test_run_resume_refuses_a_vanished_cwd_and_a_missing_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = resume_for_session(Session(agent="claude-code", id="s-1", cwd=str(tmp_path / "gone")))
    with pytest.raises(Gone, match="no longer exists"):
        cli_resume.run_resume(Ctx(), info, print_only=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    info = resume_for_session(Session(agent="claude-code", id="s-1", cwd=str(tmp_path)))
    with pytest.raises(Exception, match="not on PATH"):
        cli_resume.run_resume(Ctx(), info, print_only=False)


def test_plain_prompt_filters_then_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [("claude-code:a", "2026-01-01 10:00  claude-code  a  app  fix the login bug"),
             ("codex:b", "2026-01-02 10:00  codex        b  api  add pagination")]
    monkeypatch.setattr(sys, "stdin", io.StringIO("pagination\n1\n"))
    assert cli_resume._choose_prompt(lines, "") == "codex:b"
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert cli_resume._choose_prompt(lines, "") is None
