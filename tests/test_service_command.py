"""`agtail service`: the unit and the plist rendered from one template each (the repository's
copies are the generic rendering; systemd-analyze accepts the unit, plistlib the plist), and
install/uninstall/status/logs against recording stand-ins for systemctl, journalctl, launchctl
and tail on PATH: what is written, and exactly which commands run."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agtaild import __version__, cli
from agtaild.autostart.units import (
    agtaild_path,
    installation,
    launchd_generic,
    launchd_plist,
    systemd_generic,
    systemd_quote,
    systemd_unit,
)
from agtaild.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
STUB = f"""#!{sys.executable}
import json, os, sys
name = os.path.basename(sys.argv[0])
with open(os.environ["STUB_LOG"], "a") as fh:
    fh.write(json.dumps([name, *sys.argv[1:]]) + "\\n")
sys.stdout.write(os.environ.get("STUB_OUT_" + name, ""))
sys.stderr.write(os.environ.get("STUB_ERR_" + name, ""))
sys.exit(int(os.environ.get("STUB_RC_" + name, "0")))
"""
TOOLS = ("systemctl", "journalctl", "launchctl", "tail")


class Env:
    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp / "home"
        self.bin = tmp / "bin"
        self.log = tmp / "stub.log"
        self.data = self.home / "data dir"
        self.home.mkdir()
        self.bin.mkdir()
        for tool in TOOLS:
            path = self.bin / tool
            path.write_text(STUB)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(self.home / ".config"))
        monkeypatch.setenv("PATH", str(self.bin))
        monkeypatch.setenv("STUB_LOG", str(self.log))
        monkeypatch.delenv("AGTAIL_DATA_DIR", raising=False)
        for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "AGTAIL_LISTEN", "AGTAIL_REMOTE_TOKEN", "XDG_DATA_HOME"):
            monkeypatch.delenv(var, raising=False)

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def agtail(self, *args: str) -> int:
        self.log.unlink(missing_ok=True)
        return cli.main(["--data-dir", str(self.data), "service", *args])

    @property
    def unit(self) -> Path:
        return self.home / ".config" / "systemd" / "user" / "agtaild.service"

    @property
    def plist(self) -> Path:
        return self.home / "Library" / "LaunchAgents" / "dev.agtail.agtaild.plist"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return Env(tmp_path, monkeypatch)


def unit_settings(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


# -- one template each ---------------------------------------------------------------------------


def test_the_repositorys_files_are_the_generic_rendering() -> None:
    assert (REPO / "systemd" / "agtaild.service").read_text() == systemd_generic()
    assert (REPO / "launchd" / "dev.agtail.agtaild.plist").read_text() == launchd_generic()
    doc = plistlib.loads(launchd_generic().encode())
    assert doc["StandardOutPath"] == "/Users/USER/Library/Logs/agtail/agtaild.log"


def test_the_installed_unit_names_this_installation(tmp_path: Path) -> None:
    env = {"CODEX_HOME": str(tmp_path / "codex home"), "AGTAIL_REMOTE_TOKEN": "secret", "AGTAIL_LISTEN": "127.0.0.1:7718",
           "UNRELATED": "x"}
    inst = installation(str(tmp_path / "data"), env, ["CODEX_HOME", "CLAUDE_CONFIG_DIR"], ["claude-code=rel/p"], True)
    text = systemd_unit(inst, __version__)
    s = unit_settings(text)
    assert s["ExecStart"] == [f"{agtaild_path()} --data-dir {tmp_path / 'data'} --only-roots --root claude-code={Path('rel/p').absolute()}"]
    assert sorted(s["Environment"]) == sorted([f'"CODEX_HOME={tmp_path / "codex home"}"', "AGTAIL_LISTEN=127.0.0.1:7718", "PYTHONUNBUFFERED=1"])
    assert "secret" not in text and "UNRELATED" not in text
    assert s["ReadWritePaths"] == [str(tmp_path / "data")]
    assert s["PrivateTmp"] == ["no"] if str(tmp_path).startswith("/tmp/") else ["yes"]
    # Every hardening line of the template survives, with its comment.
    generic = unit_settings(systemd_generic())
    for key in ("ProtectHome", "ProtectSystem", "NoNewPrivileges", "MemoryDenyWriteExecute", "Type", "UMask"):
        assert s[key] == generic[key]


def test_systemd_words_are_quoted_and_escaped() -> None:
    assert systemd_quote("/usr/bin/agtaild") == "/usr/bin/agtaild"
    assert systemd_quote("/a b/c") == '"/a b/c"'
    assert systemd_quote('say "hi"\\') == '"say \\"hi\\"\\\\"'
    assert systemd_quote("50%") == "50%%"
    assert systemd_quote("$HOME", command=True) == "$$HOME" and systemd_quote("$HOME") == "$HOME"
    with pytest.raises(UsageError, match="control character"):
        systemd_quote("a\nExecStartPre=/bin/evil")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed (apt package systemd)")
def test_systemd_analyze_accepts_the_unit(tmp_path: Path) -> None:
    odd = tmp_path / "a dir with spaces, 100% and $dollars"
    inst = installation(str(tmp_path / "data"), {"CLAUDE_CONFIG_DIR": str(odd)}, ["CLAUDE_CONFIG_DIR"], [f"codex={odd}"], False)
    unit = tmp_path / "agtaild.service"
    unit.write_text(systemd_unit(inst, __version__))
    proc = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # The same check fails on a unit whose program does not exist (it does look).
    unit.write_text(systemd_unit(installation(str(tmp_path), {}, [], [], False), __version__).replace(str(agtaild_path()), "/nonexistent/agtaild"))
    assert subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, timeout=120).returncode != 0


def test_the_plist_parses_with_this_installations_values(tmp_path: Path) -> None:
    odd = str(tmp_path / "R&D <agents> \"quoted\" -- dir")
    inst = installation(str(tmp_path / "data"), {"CODEX_HOME": odd}, ["CODEX_HOME"], [f"codex={odd}"], False,
                        log_path=str(tmp_path / "Logs" / "agtail" / "agtaild.log"))
    doc = plistlib.loads(launchd_plist(inst, __version__).encode())
    assert doc["Label"] == "dev.agtail.agtaild"
    assert doc["ProgramArguments"] == [str(agtaild_path()), "--data-dir", str(tmp_path / "data"), "--root", f"codex={odd}"]
    assert doc["EnvironmentVariables"] == {"CODEX_HOME": odd, "PYTHONUNBUFFERED": "1"}
    assert doc["StandardErrorPath"] == doc["StandardOutPath"] == inst.log_path
    assert doc["KeepAlive"] == {"SuccessfulExit": False} and doc["Umask"] == 0o077
    with pytest.raises(UsageError, match="control character"):
        launchd_plist(installation(str(tmp_path), {"CODEX_HOME": "a\x01b"}, ["CODEX_HOME"], [], False), __version__)


# -- the commands, with systemd -----------------------------------------------------------------


def test_systemd_install_writes_the_unit_and_starts_it(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.monkeypatch.setenv("CODEX_HOME", str(env.home / "codex"))
    assert env.agtail("install", "--manager", "systemd") == 0
    text = env.unit.read_text()
    assert f"--data-dir {systemd_quote(str(env.data))}" in text and f"Environment=CODEX_HOME={env.home / 'codex'}" in text
    assert env.data.is_dir()
    assert env.calls() == [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", "agtaild.service"]]
    assert "loginctl enable-linger" in capsys.readouterr().out
    # Again (after moving something): the running service is restarted on the new unit.
    assert env.agtail("install", "--manager", "systemd") == 0
    assert env.calls()[-1] == ["systemctl", "--user", "restart", "agtaild.service"]


def test_dry_run_prints_and_changes_nothing(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert env.agtail("install", "--manager", "systemd", "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"would write {env.unit}:" in out and "ProtectHome=read-only" in out
    assert "would run: systemctl --user enable --now agtaild.service" in out
    assert not env.unit.exists() and not env.data.exists() and env.calls() == []
    assert cli.main(["--json", "--data-dir", str(env.data), "service", "uninstall", "--manager", "systemd", "--dry-run"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dry_run"] and [s["action"] for s in doc["steps"]] == ["run", "remove", "run"] and env.calls() == []
    assert env.agtail("logs", "--manager", "systemd", "--dry-run") == 0
    assert "would run: journalctl --user -u agtaild.service" in capsys.readouterr().out and env.calls() == []


def test_systemd_status_shows_state_pid_socket_url_and_the_last_error(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.monkeypatch.setenv("STUB_OUT_systemctl", "LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=4242\n"
                           "UnitFileState=enabled\nResult=success\nExecMainStatus=0\n")
    env.monkeypatch.setenv("STUB_OUT_journalctl", "2026-01-01 INFO agtaild: started\n"
                           "2026-01-01 ERROR agtaild.daemon.watcher: cannot watch /x: permission denied\n2026-01-01 INFO agtaild: ok\n")
    env.data.mkdir(parents=True)
    (env.data / "agtaild.json").write_text(json.dumps({"socket": "/run/user/1/agtail/agtaild.sock", "url": "http://127.0.0.1:9", "pid": 4242}))
    assert cli.main(["--json", "--data-dir", str(env.data), "service", "status", "--manager", "systemd"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["active"], doc["sub"], doc["pid"], doc["enabled"]) == ("active", "running", 4242, True)
    assert (doc["socket"], doc["url"], doc["answers"]) == ("/run/user/1/agtail/agtaild.sock", "http://127.0.0.1:9", False)
    assert doc["last_error"] == "2026-01-01 ERROR agtaild.daemon.watcher: cannot watch /x: permission denied"
    assert env.calls()[0][:4] == ["systemctl", "--user", "show", "agtaild.service"]
    assert env.agtail("status", "--manager", "systemd") == 0
    out = capsys.readouterr().out
    assert "pid:        4242" in out and "url:        http://127.0.0.1:9" in out and "permission denied" in out


def test_systemd_logs_and_uninstall(env: Env) -> None:
    assert env.agtail("logs", "--manager", "systemd", "-n", "5", "-f") == 0
    assert env.calls() == [["journalctl", "--user", "-u", "agtaild.service", "--no-pager", "-o", "short-iso", "-n", "5", "-f"]]
    env.unit.parent.mkdir(parents=True)
    env.unit.write_text("[Unit]\n")
    assert env.agtail("uninstall", "--manager", "systemd") == 0
    assert not env.unit.exists()
    assert env.calls() == [["systemctl", "--user", "disable", "--now", "agtaild.service"], ["systemctl", "--user", "daemon-reload"]]


def test_a_failing_or_missing_systemctl_is_a_clear_error(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.monkeypatch.setenv("STUB_RC_systemctl", "1")
    env.monkeypatch.setenv("STUB_ERR_systemctl", "Failed to connect to bus: No medium found")
    assert env.agtail("install", "--manager", "systemd") == 1
    err = capsys.readouterr().err
    assert "systemctl --user daemon-reload` failed (exit 1): Failed to connect to bus" in err
    assert "no systemd user manager here" in err
    assert env.unit.exists()  # written: the user can start it once a user manager runs
    (env.bin / "systemctl").unlink()
    assert env.agtail("status", "--manager", "systemd") == 1
    assert "systemctl not found on PATH" in capsys.readouterr().err


# -- the commands, with launchd -----------------------------------------------------------------


def test_launchd_install_status_logs_uninstall(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    target = f"gui/{os.getuid()}/dev.agtail.agtaild"
    assert env.agtail("install", "--manager", "launchd") == 0
    doc: dict[str, Any] = plistlib.loads(env.plist.read_bytes())
    log = env.home / "Library" / "Logs" / "agtail" / "agtaild.log"
    assert doc["ProgramArguments"] == [str(agtaild_path()), "--data-dir", str(env.data)] and doc["StandardOutPath"] == str(log)
    assert log.parent.is_dir() and env.data.is_dir()
    assert env.calls() == [["launchctl", "bootout", target], ["launchctl", "bootstrap", f"gui/{os.getuid()}", str(env.plist)]]

    env.monkeypatch.setenv("STUB_OUT_launchctl", f"{target} = {{\n\tstate = running\n\tpid = 77\n\tlast exit code = 0\n}}\n")
    log.write_text("2026-01-01 INFO agtaild: listening\n2026-01-01 ERROR agtaild.index: disk full\n")
    capsys.readouterr()
    assert cli.main(["--json", "--data-dir", str(env.data), "service", "status", "--manager", "launchd"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["active"], status["pid"], status["last_error"]) == ("running", 77, "2026-01-01 ERROR agtaild.index: disk full")

    assert env.agtail("logs", "--manager", "launchd", "-n", "10") == 0
    assert env.calls() == [["tail", "-n", "10", str(log)]]
    assert env.agtail("uninstall", "--manager", "launchd") == 0
    assert env.calls() == [["launchctl", "bootout", target]] and not env.plist.exists()


def test_install_refuses_an_unknown_agent_before_writing_anything(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["--data-dir", str(env.data), "--root", "claud=/x", "service", "install", "--manager", "systemd"])
    assert code == 2 and "unknown agent 'claud'" in capsys.readouterr().err
    assert not env.unit.exists() and env.calls() == []
