"""`agtail pick` through the plain prompt (no fzf, no tty): the chosen session's command."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agtaild import cli
from agtaild.query.service import Service
from tests.synctools import make_machine


def test_pick_lists_recent_sessions_and_prints_the_chosen_command(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agtaild.cli.commands.COMMAND_MODULES", ["agtaild.cli.resume"])
    a = make_machine(tmp_path / "a", corpus, claude=True)
    svc = Service(a, workers=1)
    try:
        svc.update_index()
        newest = next(s for s in svc.call("sessions.list", {"limit": 100})["sessions"] if s["resumable"])
    finally:
        svc.close()
    roots = [f"--root=claude-code={r.path}" for r in a.roots if r.kind == "native"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n"))
    code = cli.main(["--data-dir", a.data_dir, "--only-roots", "--no-daemon", *roots, "--json", "pick", "--no-fzf", "--print"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["argv"] == ["claude", f"--resume={newest['id']}"]
    assert "number to resume" in err and f"claude-code  {newest['short_id']}" in err
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(["--data-dir", a.data_dir, "--only-roots", "--no-daemon", *roots, "--json", "pick", "--no-fzf", "--print"])
    assert code == 1 and "nothing picked" in capsys.readouterr().err
