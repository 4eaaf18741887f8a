"""What `agtail service` does with systemd (Linux) and launchd (macOS): plans of steps.

Each command is first a list of steps (make a dir, write a file, run a program, remove a file),
so that ``--dry-run`` prints exactly what would be done and a real run does exactly that.
The service manager's programs (systemctl, journalctl, launchctl, tail) are found on PATH
(tests put recording stand-ins there). A failing program stops the plan with its own words.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agtaild.autostart.units import LABEL, PLIST_NAME, UNIT_NAME, user_config_dir
from agtaild.errors import AgtailError

#: A log line that reports a failure (agtaild logs "<time> ERROR <logger>: <message>").
ERROR_LINE = re.compile(r"\b(ERROR|CRITICAL)\b|Traceback|^agtaild: ")


@dataclass
class Step:
    """One thing to do: ``mkdir``/``write``/``remove`` a path, or ``run`` argv."""

    action: str
    path: Path | None = None
    text: str = ""
    argv: list[str] = field(default_factory=list)
    #: For run: a failure is an error (else it is reported and the plan goes on).
    check: bool = True

    def describe(self) -> dict[str, Any]:
        if self.action == "run":
            return {"action": "run", "argv": self.argv}
        doc: dict[str, Any] = {"action": self.action, "path": str(self.path)}
        if self.action == "write":
            doc["text"] = self.text
        return doc


def run(argv: list[str], *, capture: bool = True, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a service-manager program (found on PATH); AgtailError when it is missing or, with
    ``check``, when it fails."""
    exe = shutil.which(argv[0])
    if exe is None:
        raise AgtailError(f"{argv[0]} not found on PATH: this system does not have the service manager it needs")
    proc = subprocess.run([exe, *argv[1:]], capture_output=capture, text=True, check=False)
    if check and proc.returncode != 0:
        said = ((proc.stderr or "") + (proc.stdout or "")).strip() if capture else ""
        hint = ""
        if "Failed to connect to bus" in said:
            hint = ("\nthere is no systemd user manager here (a container, or a session without one): run agtaild "
                    "yourself, or log in normally (`loginctl enable-linger $USER` keeps one running)")
        raise AgtailError(f"`{' '.join(argv)}` failed (exit {proc.returncode}){': ' + said if said else ''}{hint}")
    return proc


def execute(steps: list[Step]) -> list[dict[str, Any]]:
    """Do the steps in order → what was done (a run that may fail says its exit code)."""
    done = []
    for step in steps:
        doc = step.describe()
        doc.pop("text", None)
        if step.action == "mkdir":
            assert step.path is not None
            step.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        elif step.action == "write":
            assert step.path is not None
            write_atomically(step.path, step.text)
        elif step.action == "remove":
            assert step.path is not None
            step.path.unlink(missing_ok=True)
        elif step.action == "run":
            doc["exit"] = run(step.argv, check=step.check).returncode
        done.append(doc)
    return done


def write_atomically(path: Path, text: str) -> None:
    """``path`` holds ``text`` (UTF-8) whole, or is left as it was: the text is encoded first,
    written to a temporary file beside it, flushed to disk and renamed over it; the temporary
    file is removed on any failure (a unit half written, or a stray .tmp, is never left)."""
    import tempfile

    data = text.encode("utf-8")  # before any file exists: a text that cannot be written stops here
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def last_error(lines: list[str]) -> str | None:
    for line in reversed(lines):
        if ERROR_LINE.search(line):
            return line.strip()
    return None


class Systemd:
    """A systemd user unit: ~/.config/systemd/user/agtaild.service, logs in the journal."""

    name = "systemd"

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.path = user_config_dir(environ) / "systemd" / "user" / UNIT_NAME

    def install(self, text: str, data_dir: Path) -> list[Step]:
        again = self.path.exists()
        steps = [Step("mkdir", self.path.parent), Step("mkdir", data_dir), Step("write", self.path, text),
                 Step("run", argv=["systemctl", "--user", "daemon-reload"]),
                 Step("run", argv=["systemctl", "--user", "enable", "--now", UNIT_NAME])]
        if again:  # a running service keeps its old unit until restarted
            steps.append(Step("run", argv=["systemctl", "--user", "restart", UNIT_NAME]))
        return steps

    def uninstall(self) -> list[Step]:
        return [Step("run", argv=["systemctl", "--user", "disable", "--now", UNIT_NAME], check=False),
                Step("remove", self.path),
                Step("run", argv=["systemctl", "--user", "daemon-reload"])]

    def status_argv(self) -> list[str]:
        return ["systemctl", "--user", "show", UNIT_NAME,
                "--property=LoadState,ActiveState,SubState,MainPID,UnitFileState,Result,ExecMainStatus"]

    def status(self) -> dict[str, Any]:
        props = dict(line.partition("=")[::2] for line in run(self.status_argv()).stdout.splitlines() if "=" in line)
        pid = int(props.get("MainPID") or 0)
        result = props.get("Result", "")
        journal = run(self.logs_argv(200, False), check=False)
        error = last_error(journal.stdout.splitlines()) if journal.returncode == 0 else None
        if error is None and result and result != "success":
            error = f"{UNIT_NAME}: {result} (exit status {props.get('ExecMainStatus', '?')})"
        return {
            "loaded": props.get("LoadState") == "loaded",
            "enabled": props.get("UnitFileState", "") == "enabled",
            "active": props.get("ActiveState", "unknown"),
            "sub": props.get("SubState", ""),
            "pid": pid or None,
            "last_error": error,
        }

    def logs_argv(self, lines: int, follow: bool) -> list[str]:
        return ["journalctl", "--user", "-u", UNIT_NAME, "--no-pager", "-o", "short-iso", "-n", str(lines),
                *(["-f"] if follow else [])]


class Launchd:
    """A LaunchAgent: ~/Library/LaunchAgents/dev.agtail.agtaild.plist, in the gui/<uid> domain,
    logging to ~/Library/Logs/agtail/agtaild.log."""

    name = "launchd"

    def __init__(self, environ: Mapping[str, str]) -> None:
        home = Path(environ.get("HOME") or Path.home())
        self.path = home / "Library" / "LaunchAgents" / PLIST_NAME
        self.log_path = home / "Library" / "Logs" / "agtail" / "agtaild.log"
        self.domain = f"gui/{os.getuid()}"
        self.target = f"{self.domain}/{LABEL}"

    def install(self, text: str, data_dir: Path) -> list[Step]:
        return [Step("mkdir", self.path.parent), Step("mkdir", self.log_path.parent), Step("mkdir", data_dir),
                Step("write", self.path, text),
                # An older copy may be loaded: unload it (fails harmlessly when none is).
                Step("run", argv=["launchctl", "bootout", self.target], check=False),
                Step("run", argv=["launchctl", "bootstrap", self.domain, str(self.path)])]

    def uninstall(self) -> list[Step]:
        return [Step("run", argv=["launchctl", "bootout", self.target], check=False), Step("remove", self.path)]

    def status_argv(self) -> list[str]:
        return ["launchctl", "print", self.target]

    def status(self) -> dict[str, Any]:
        proc = run(self.status_argv(), check=False)
        fields: dict[str, str] = {}
        for line in proc.stdout.splitlines():
            key, sep, value = line.strip().partition(" = ")
            if sep and key not in fields:
                fields[key] = value.strip()
        pid = int(fields["pid"]) if fields.get("pid", "").isdigit() else None
        error = last_error(_tail(self.log_path, 200))
        code = fields.get("last exit code", "")
        if error is None and code not in ("", "0", "(never exited)"):
            error = f"{LABEL}: last exit code {code}"
        return {
            "loaded": proc.returncode == 0,
            "enabled": self.path.exists(),
            "active": fields.get("state", "not loaded" if proc.returncode else "unknown"),
            "sub": "",
            "pid": pid,
            "last_error": error,
        }

    def logs_argv(self, lines: int, follow: bool) -> list[str]:
        return ["tail", "-n", str(lines), *(["-F"] if follow else []), str(self.log_path)]


def _tail(path: Path, lines: int) -> list[str]:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 256 * 1024))
            return fh.read().decode("utf-8", "replace").splitlines()[-lines:]
    except OSError:
        return []


Manager = Systemd | Launchd


def manager_for(name: str, environ: Mapping[str, str]) -> Manager:
    return Launchd(environ) if name == "launchd" else Systemd(environ)
