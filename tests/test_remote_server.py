"""The CLI against a server it cannot trust (issue 22, items 12, 13, 14 and the trickling
server): AGTAIL_SERVER may name any machine, and what it answers is data.

* `agtail resume` / `pick` run only a command this agtail's adapter built (0.2 ran the argv
  the server sent: ``['/bin/sh', '-c', 'touch …']``).
* plain http:// to a host that is not loopback is refused before a byte is sent, unless
  ``--insecure`` / ``AGTAIL_INSECURE=1``, and then with a warning (0.2 sent the token).
* a recorded directory that is not absolute is never where an agent runs.
* a server that trickles its answer does not hold the CLI past its deadline.

The servers are tests/hostile_server.py on 127.0.0.1; the agents are stand-ins on PATH that
record how they were run.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agtail_client import Client
from agtail_client import transport as client_transport
from agtaild import cli
from agtaild.errors import Refused
from agtaild.model import Session
from agtaild.query.service import Service
from agtaild.resume import resume_for_session
from tests.daemon_proc import REPO, claude_user_line
from tests.hostile_server import HostileServer

SID = "3f0c9a52-7d41-4e8b-9a26-1b5c8e7d2f64"
AGTAIL = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]


def fake_agent(bin_dir: Path, name: str, record: Path) -> None:
    """An agent on PATH that writes its argv and cwd to ``record`` and exits 0."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd()}}))\n"
    )
    script.chmod(0o755)


def session_doc(cwd: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = msgspec.to_builtins(Session(agent="claude-code", id=SID, path=f"/x/{SID}.jsonl", cwd=cwd))
    return doc


def run_cli(env: dict[str, str], *args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "clients" / "python")]), **env}
    return subprocess.run([*AGTAIL, "--data-dir", str(cwd / "nowhere"), *args], capture_output=True, text=True,
                          timeout=60, env=full, cwd=str(cwd), input=stdin)


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Any]:
    """A project folder, an agent stand-in and the environment of a CLI that uses a server."""
    project = tmp_path / "project"
    project.mkdir()
    record = tmp_path / "ran.json"
    fake_agent(tmp_path / "bin", "claude", record)
    env = {"HOME": str(tmp_path), "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "AGTAIL_TOKEN": "t" * 43}
    return {"project": project, "record": record, "env": env, "tmp": tmp_path}


# -- 12: never run an argv the server sent ------------------------------------------------------
def test_resume_never_runs_the_argv_a_server_answers(place: dict[str, Any]) -> None:
    pwned = place["tmp"] / "PWNED"
    answers = {
        "resume.command": {"agent": "claude-code", "id": SID, "cwd": str(place["project"]), "cwd_exists": True,
                           "argv": ["/bin/sh", "-c", f"touch {pwned}"]},
        "sessions.get": {"session": session_doc(str(place["project"]))},
        "sessions.list": {"sessions": [session_doc(str(place["project"]))], "next": None},
    }
    with HostileServer(answers) as server:
        env = {**place["env"], "AGTAIL_SERVER": server.url}
        done = run_cli(env, "resume", f"claude-code:{SID}", cwd=place["tmp"])
        assert done.returncode == 3, done.stderr
        assert "built itself" in done.stderr and "/bin/sh" in done.stderr
        done = run_cli(env, "pick", "--no-fzf", cwd=place["tmp"], stdin="1\n")
        assert done.returncode == 3, done.stderr
        done = run_cli(env, "resume", f"claude-code:{SID}", "--print", cwd=place["tmp"])
        assert done.returncode == 3 and done.stdout == "", (done.stdout, done.stderr)
    assert not pwned.exists()
    assert not place["record"].exists()  # no agent ran either


def test_resume_through_a_server_runs_what_the_local_adapter_builds(place: dict[str, Any]) -> None:
    answers = {
        "resume.command": {"agent": "claude-code", "id": SID, "cwd": str(place["project"]), "cwd_exists": True,
                           "argv": ["claude", f"--resume={SID}"]},
        "sessions.get": {"session": session_doc(str(place["project"]))},
    }
    with HostileServer(answers) as server:
        done = run_cli({**place["env"], "AGTAIL_SERVER": server.url}, "resume", f"claude-code:{SID[:8]}", cwd=place["tmp"])
    assert done.returncode == 0, done.stderr
    ran = json.loads(place["record"].read_text())
    assert ran == {"argv": [f"--resume={SID}"], "cwd": str(place["project"])}


def test_a_refusal_of_the_server_stands(place: dict[str, Any]) -> None:
    """A team server refuses another machine's session: the CLI says so and runs nothing."""
    with HostileServer({"sessions.get": {"session": session_doc(str(place["project"]))}}) as server:
        done = run_cli({**place["env"], "AGTAIL_SERVER": server.url}, "resume", f"claude-code:{SID}", cwd=place["tmp"])
    assert done.returncode != 0 and not place["record"].exists()
    assert [r["rpc"] for r in server.requests] == ["resume.command"]  # asked first; its refusal ended it


# -- 14: a relative recorded cwd is never a resume cwd --------------------------------------------
@pytest.mark.parametrize("cwd", ["relsub", "-rf", "./x/../relsub"])
def test_a_relative_recorded_directory_is_refused_not_taken_from_here(place: dict[str, Any], cwd: str) -> None:
    (place["tmp"] / "relsub").mkdir(exist_ok=True)
    (place["tmp"] / "-rf").mkdir(exist_ok=True)
    answers = {  # what an agtail that resolved nothing would answer
        "resume.command": {"agent": "claude-code", "id": SID, "cwd": cwd, "cwd_exists": True,
                           "argv": ["claude", f"--resume={SID}"]},
        "sessions.get": {"session": session_doc(cwd)},
    }
    with HostileServer(answers) as server:
        done = run_cli({**place["env"], "AGTAIL_SERVER": server.url}, "resume", f"claude-code:{SID}", cwd=place["tmp"])
    assert done.returncode == 3, done.stderr
    assert "not an absolute path" in done.stderr and not place["record"].exists()


def test_a_relative_directory_in_a_transcript_is_refused_locally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = tmp_path / "claude"
    (projects / "-relsub").mkdir(parents=True)
    (projects / "-relsub" / f"{SID}.jsonl").write_text(claude_user_line(SID, "hello", cwd="relsub")[0])
    args = ["--data-dir", str(tmp_path / "data"), "--only-roots", "--root", f"claude-code={projects}", "--no-daemon"]
    assert cli.main([*args, "index"]) == 0
    capsys.readouterr()
    assert cli.main([*args, "resume", f"claude-code:{SID}", "--print"]) == 3
    err = capsys.readouterr().err
    assert "'relsub'" in err and "not an absolute path" in err and f"claude --resume={SID}" in err
    with pytest.raises(Refused):
        resume_for_session(session_doc("relsub"))
    from agtaild.config import load_config

    svc = Service(load_config(data_dir=str(tmp_path / "data"), root_options=[f"claude-code={projects}"], only_roots=True))
    try:
        with pytest.raises(Refused):  # the service method too (HTTP 409)
            svc.call("resume.command", {"agent": "claude-code", "id": SID})
    finally:
        svc.close()


def test_a_directory_that_is_gone_or_a_file_is_not_run_in(place: dict[str, Any]) -> None:
    (place["tmp"] / "a-file").write_text("x")
    for cwd in (str(place["tmp"] / "gone"), str(place["tmp"] / "a-file")):
        answers = {"resume.command": {"agent": "claude-code", "id": SID, "cwd": cwd, "cwd_exists": False,
                                      "argv": ["claude", f"--resume={SID}"]},
                   "sessions.get": {"session": session_doc(cwd)}}
        with HostileServer(answers) as server:
            done = run_cli({**place["env"], "AGTAIL_SERVER": server.url}, "resume", f"claude-code:{SID}", cwd=place["tmp"])
        assert done.returncode == 5, done.stderr  # Gone: the session is there, its directory is not
        assert "no longer exists" in done.stderr and not place["record"].exists()


# -- 13: no token in clear to another machine ------------------------------------------------
pytestmark_linux = pytest.mark.skipif(sys.platform != "linux", reason="connect() to 0.0.0.0 reaches loopback on Linux")


@pytestmark_linux
def test_plain_http_to_a_host_that_is_not_loopback_is_refused_before_sending(place: dict[str, Any]) -> None:
    """0.0.0.0 is no loopback name (a careless --listen), yet on Linux it connects here: the
    server below would receive whatever the CLI sends."""
    with HostileServer({"sessions.list": {"sessions": [], "next": None}}) as server:
        env = {**place["env"], "AGTAIL_SERVER": f"http://0.0.0.0:{server.port}"}
        start = time.monotonic()
        done = run_cli(env, "list", "--json", cwd=place["tmp"])
        assert done.returncode == 2, done.stderr
        assert "in clear" in done.stderr and "https://" in done.stderr and "--insecure" in done.stderr
        assert time.monotonic() - start < 10
        assert server.requests == []  # not a byte, not the token
        done = run_cli(env, "--insecure", "list", "--json", cwd=place["tmp"])
        assert done.returncode == 0, done.stderr
        assert "agtail: warning:" in done.stderr and "in clear" in done.stderr
        done = run_cli({**env, "AGTAIL_INSECURE": "1"}, "list", "--json", cwd=place["tmp"])
        assert done.returncode == 0 and "agtail: warning:" in done.stderr, done.stderr
    assert [r["headers"].get("Authorization") for r in server.requests if r["rpc"]] == [f"Bearer {'t' * 43}"] * 2


@pytestmark_linux
def test_an_http_sync_remote_that_is_not_loopback_is_refused_too(place: dict[str, Any]) -> None:
    with HostileServer({}) as server:
        env = {**place["env"], "AGTAIL_REMOTE_TOKEN": "r" * 43}
        done = run_cli(env, "sync", "push", f"http://0.0.0.0:{server.port}", cwd=place["tmp"])
        assert done.returncode == 2, done.stderr
        assert "in clear" in done.stderr and server.requests == []


def test_the_client_refuses_plain_http_elsewhere_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    from agtail_client import InsecureConnectionWarning, InsecureServer

    monkeypatch.delenv("AGTAIL_INSECURE", raising=False)
    for url in ("http://192.0.2.1:7717", "http://example.com", "http://0.0.0.0:1", "http://10.0.0.1:80"):
        with pytest.raises(InsecureServer):
            Client(url=url, token="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for url in ("https://example.com", "http://localhost:1", "http://127.0.0.1:1", "http://127.9.9.9:1",
                    "http://[::1]:1", "http://LOCALHOST.:1"):
            Client(url=url, token="x").close()  # no warning, no error
    with pytest.warns(InsecureConnectionWarning, match="in clear"):
        Client(url="http://192.0.2.1:7717", token="x", insecure=True).close()
    monkeypatch.setenv("AGTAIL_INSECURE", "1")
    with pytest.warns(InsecureConnectionWarning):
        Client(url="http://192.0.2.1:7717", token="x").close()
    with pytest.raises(InsecureServer):
        Client(url="http://192.0.2.1:7717", token="x", insecure=False)


# -- a server that trickles ---------------------------------------------------------------------
def test_a_trickling_server_does_not_hold_a_request_past_its_deadline() -> None:
    with HostileServer({"sessions.list": {"sessions": [], "next": None, "pad": "x" * 400}}, trickle=0.05) as server:
        client = Client(url=server.url, token="x", timeout=1.5)
        start = time.monotonic()
        with pytest.raises(TimeoutError, match=r"no whole answer within 1\.5 s"):
            client.call("sessions.list", {})
        assert time.monotonic() - start < 3.0  # 0.2 waited 0.05 s at a time, for ever
        client.close()


def test_agtail_list_against_a_trickling_server_ends_with_a_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kwdefaults = dict(client_transport.Transport.__init__.__kwdefaults__ or {})
    monkeypatch.setattr(client_transport.Transport.__init__, "__kwdefaults__", {**kwdefaults, "timeout": 1.5})
    with HostileServer({"sessions.list": {"sessions": [], "next": None, "pad": "x" * 400}}, trickle=0.05) as server:
        monkeypatch.setenv("AGTAIL_SERVER", server.url)
        monkeypatch.setenv("AGTAIL_TOKEN", "x")
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        start = time.monotonic()
        code = cli.main(["--data-dir", str(tmp_path / "d"), "list"])
        took = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 1 and took < 4.0, (code, took, err)
    assert "sent no whole answer in time" in err and "Traceback" not in err
