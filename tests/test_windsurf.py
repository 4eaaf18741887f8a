"""Windsurf (Cascade) on hand-made trajectories (tests/corpus/windsurf/handmade): each .pb is
listed as a session with no text, and says whether it looked encrypted."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.windsurf import WindsurfAdapter
from agtaild.adapters.windsurf.adapter import bits_per_byte
from agtaild.cli import main
from tests.conftest import CORPUS

CASCADE = CORPUS / "windsurf" / "handmade" / ".codeium" / "windsurf" / "cascade"
ENCRYPTED = {"3f6c2a1e-8b4d-4e7a-9c15-2d7e9b0a4c61": 48_213, "a91d0c57-62f3-4b8e-a0d4-7c3e15f28b90": 7_904}
PLAIN = "5e27b8c4-0a19-4d6f-b3e2-9f81c6d047ab"


def _read() -> dict:
    adapter = WindsurfAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=4e9) for u in adapter.discover(CASCADE))}


def test_every_trajectory_is_a_session_without_text() -> None:
    read = _read()
    assert set(read) == {*ENCRYPTED, PLAIN}  # the empty .pb and the .json are left out
    for cascade_id, size in ENCRYPTED.items():
        r = read[cascade_id]
        s = r.session
        assert (
            s.extra["bytes"] == size
            and s.extra["encrypted"] is True
            and s.extra["entropy_bits_per_byte"] > 7.9
        )
        assert s.title == f"Cascade conversation {cascade_id[:8]} (encrypted)" and not s.resumable
        assert s.mtime == os.stat(CASCADE / f"{cascade_id}.pb").st_mtime and s.ended is not None
        (event,) = r.events
        assert event.kind == "system" and event.subtype == "unreadable" and "encrypted at rest" in event.text
        assert s.accounting.lines == 1 and s.accounting.balanced() and not r.usage
    plain = read[PLAIN]
    assert plain.session.extra["encrypted"] is False and "not encrypted" in plain.events[0].text
    assert WindsurfAdapter().resume(plain.session) is None


def test_entropy() -> None:
    assert bits_per_byte(b"") == 0.0 and bits_per_byte(b"aaaa") == 0.0
    assert bits_per_byte(bytes(range(256))) == pytest.approx(8.0)


def test_roots_cli_and_doctor(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path("/h")
    assert WindsurfAdapter().default_roots({}, home) == [
        home / ".codeium/windsurf/cascade", home / ".codeium/windsurf-next/cascade", home / ".codeium/cascade"
    ]  # fmt: skip
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"windsurf={CASCADE}",
    ]
    assert main([*base, "list", "--json"]) == 0
    assert {row["id"] for row in json.loads(capsys.readouterr().out)["sessions"]} == {*ENCRYPTED, PLAIN}
    assert main([*base, "show", f"windsurf:{PLAIN}", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [e["subtype"] for e in shown["events"]] == ["unreadable"]
    shutil.copytree(CASCADE, isolated_home / ".codeium" / "windsurf" / "cascade")
    data = ["--no-daemon", "--data-dir", str(tmp_path / "d2")]
    assert main([*data, "list", "--agent", "windsurf", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 3
    main([*data, "doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert "encrypted at rest" in checks["agent windsurf"]["message"]
