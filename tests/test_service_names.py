"""`agtail service install` with a name that is not UTF-8, and a unit written whole or not at
all (issue 22, item 15).

0.2 died with UnicodeEncodeError (with --json, and without --dry-run) and left a 0-byte
``agtaild.service.tmp``. A systemd unit and a launchd property list cannot name such a path
(systemd ignores an Environment= that is not UTF-8, a plist is XML), so the install is refused
with one sentence naming it — before anything is written, run or printed on stdout.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agtaild.autostart import managers
from tests.test_service_command import Env

BAD = os.fsdecode(b"d\xff")  # the name as Python holds it: a lone surrogate for the byte 0xff


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return Env(tmp_path, monkeypatch)


def left_behind(env: Env) -> list[str]:
    """Every file under the places a unit or plist goes (a .tmp included)."""
    places = [env.home / ".config" / "systemd", env.home / "Library"]
    return sorted(str(p) for place in places if place.exists() for p in place.rglob("*") if p.is_file())


@pytest.mark.parametrize("manager", ["systemd", "launchd"])
@pytest.mark.parametrize("flags", [[], ["--json"], ["--dry-run"], ["--json", "--dry-run"]])
@pytest.mark.parametrize("where", ["data dir", "root", "variable"])
def test_a_name_that_is_not_utf8_is_refused_with_a_sentence(
    env: Env, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    manager: str, flags: list[str], where: str,
) -> None:
    odd = str(env.home / BAD)
    args = ["install", "--manager", manager, *flags]
    if where == "data dir":
        env.data = Path(odd)
    elif where == "root":
        args = ["--root", f"codex={odd}", *args]
    else:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", odd)
    assert env.agtail(*args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "not valid UTF-8" in err and "d\\xff" in err and "Traceback" not in err
    assert {"data dir": "the data dir", "root": "the root", "variable": "CLAUDE_CONFIG_DIR"}[where] in err
    assert left_behind(env) == [] and env.calls() == []


def test_a_good_install_leaves_only_the_unit(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert env.agtail("install") == 0
    assert left_behind(env) == [str(env.unit)]
    assert "[Service]" in env.unit.read_text()


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agtaild.autostart.managers import write_atomically

    unit = tmp_path / "agtaild.service"
    unit.write_text("the old unit\n")

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(managers.os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_atomically(unit, "the new unit\n")
    assert unit.read_text() == "the old unit\n" and sorted(p.name for p in tmp_path.iterdir()) == ["agtaild.service"]
    monkeypatch.undo()
    with pytest.raises(UnicodeEncodeError):  # a text that cannot be written makes no file at all
        write_atomically(tmp_path / "new.service", f"ExecStart=/{BAD}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agtaild.service"]
    write_atomically(unit, "the new unit\n")
    assert unit.read_text() == "the new unit\n" and sorted(p.name for p in tmp_path.iterdir()) == ["agtaild.service"]
