"""The systemd user unit and the launchd plist: they start agtaild the way it expects, every
hardening line says when to relax it, and nothing hides the transcripts under $HOME."""

from __future__ import annotations

import plistlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UNIT = REPO / "systemd" / "agtaild.service"
PLIST = REPO / "launchd" / "dev.agtail.agtaild.plist"
HARDENING = ("Protect", "Private", "Restrict", "NoNewPrivileges", "ReadWritePaths", "LockPersonality", "MemoryDeny")


def unit_lines() -> list[str]:
    return UNIT.read_text().splitlines()


def settings() -> dict[str, str]:
    out = {}
    for line in unit_lines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def test_unit_starts_agtaild_as_a_notify_service() -> None:
    s = settings()
    assert s["Type"] == "notify"  # agtaild sends READY=1 / STOPPING=1
    assert s["ExecStart"].endswith("agtaild")
    assert s["KillSignal"] == "SIGTERM"
    assert s["RuntimeDirectoryMode"] == "0700"
    assert s["UMask"] == "0077"


def test_home_stays_readable() -> None:
    s = settings()
    assert s.get("ProtectHome") in (None, "read-only", "tmpfs")
    assert s.get("ProtectHome") != "yes"
    assert ".local/share/agtail" in s["ReadWritePaths"]


def test_every_hardening_line_is_commented() -> None:
    lines = unit_lines()
    for i, line in enumerate(lines):
        if line.startswith(HARDENING):
            # The comment block right above (possibly shared by a group of lines) says when to relax.
            j = i - 1
            while j >= 0 and lines[j].startswith(HARDENING):
                j -= 1
            assert lines[j].startswith("#"), f"uncommented hardening line: {line}"
            block = []
            while j >= 0 and lines[j].startswith("#"):
                block.append(lines[j])
                j -= 1
            assert any("elax" in c or "never" in c.lower() for c in block), f"no word on when to relax: {line}"


def test_plist_is_valid_and_matches_its_name() -> None:
    doc = plistlib.loads(PLIST.read_bytes())
    assert doc["Label"] == PLIST.stem
    assert doc["ProgramArguments"][0].endswith("/agtaild")
    assert doc["KeepAlive"] == {"SuccessfulExit": False}
    assert doc["Umask"] == 0o077
