"""Mistral Vibe adapter on hand-made session folders (and a pre-2.0 single file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.adapters.base import ReadResult
from agtaild.adapters.vibe.adapter import VibeAdapter
from agtaild.model import ParentRef, Session

ROOT = "vibe/synthetic-agtail/.vibe"
S1 = "3b7e2f90-6a1c-4d8e-9f02-5c4b3a291d8e"
S2 = "8d2c1b0a-9e8f-4a7b-b6c5-d4e3f2a1b0c9"
OLD = "c0ffee00-1111-4222-8333-444455556666"


def _by_id(root: Path) -> dict[str, ReadResult]:
    a = VibeAdapter()
    return {r.session.id: r for r in (a.read(u, None, now=1e12) for u in a.discover(root))}


def test_roots_and_discovery(corpus: Path, tmp_path: Path) -> None:
    assert VibeAdapter().default_roots({}, tmp_path) == [tmp_path / ".vibe/logs/session"]
    assert VibeAdapter().default_roots({"VIBE_HOME": str(tmp_path / "v")}, tmp_path) == [tmp_path / "v/logs/session"]
    ids = sorted(_by_id(corpus / ROOT))
    assert ids == sorted([S1, S2, OLD])
    assert sorted(_by_id(corpus / ROOT / "logs" / "session")) == ids


def test_session_folder(corpus: Path) -> None:
    res = _by_id(corpus / ROOT)[S1]
    s = res.session
    assert s.title == "Add retries to the HTTP client" and s.cwd == "/home/dev/src/vibe-demo"
    assert s.git_branch == "feature/retry" and s.models == ["devstral-medium-latest"]
    assert (s.started, s.ended) == ("2026-06-15T08:15:02.114Z", "2026-06-15T08:16:40.870Z")
    assert [(e.kind, e.tool or e.subtype or e.role) for e in res.events] == [
        ("text", "user"), ("thinking", "assistant"), ("text", "assistant"), ("tool_use", "read_file"),
        ("tool_use", "bash"), ("system", "injected"), ("text", "assistant"),
    ]
    read, bash = (e for e in res.events if e.kind == "tool_use")
    assert read.input == {"path": "client.py"} and read.is_error is False
    assert bash.is_error is True and "exit code 1" in (bash.result or "")
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (8, 1, 2, 5) and acct.balanced()


def test_usage_equals_the_session_stats(corpus: Path) -> None:
    for sid, res in _by_id(corpus / ROOT).items():
        stats = res.session.extra["stats"]
        u = res.session.usage
        assert (u.input_tokens, u.output_tokens) == (stats["session_prompt_tokens"], stats["session_completion_tokens"]), sid
        assert len(res.usage) == 1


def test_continuation_and_cancellation(corpus: Path) -> None:
    s = _by_id(corpus / ROOT)[S2].session
    assert s.forked_from == ParentRef(agent="vibe", id=S1) and s.parent is None
    assert s.ending == "interrupted"


def test_pre_2_single_file(corpus: Path) -> None:
    res = _by_id(corpus / ROOT)[OLD]
    assert res.session.extra["format"] == "pre-2.0 single file"
    assert [e.kind for e in res.events] == ["text", "text"] and res.session.accounting.metadata == 2
    assert res.session.cwd == "/home/dev/src/old-vibe"


def test_resume(corpus: Path) -> None:
    s = _by_id(corpus / ROOT)[S1].session
    cmd = VibeAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["vibe", "--resume", S1] and cmd.cwd == "/home/dev/src/vibe-demo"
    assert VibeAdapter().resume(Session(agent="vibe", id="--help")) is None


def test_torn_line_and_bad_meta(corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / ".vibe"
    shutil.copytree(corpus / ROOT, root)
    (folder,) = [p for p in (root / "logs/session").iterdir() if p.name.endswith(S1[:8])]
    with open(folder / "messages.jsonl", "a") as fh:
        fh.write('{"role": "assistant", "content": "half')
    (folder / "meta.json").write_text("{")
    res = VibeAdapter().read(next(u for u in VibeAdapter().discover(root) if u.path == str(folder)), None, now=1e12)
    s = res.session
    assert s.accounting.bad == 2 and s.accounting.balanced() and s.truncated
    assert s.id == folder.name  # without meta.json the folder names the session
    # While still being written (not settled) the torn line is left for the next read.
    fresh = VibeAdapter().read(next(u for u in VibeAdapter().discover(root) if u.path == str(folder)), None)
    assert fresh.session.accounting.bad == 1
    assert json.loads((folder / "messages.jsonl").read_text().splitlines()[0])["role"] == "user"


def test_mirror_layout_is_found_again(corpus: Path, tmp_path: Path) -> None:
    a = VibeAdapter()
    for unit in a.discover(corpus / ROOT):
        for f in a.native_files(unit):
            target = tmp_path / a.relative_path(unit, f)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
    assert sorted(_by_id(tmp_path)) == sorted(_by_id(corpus / ROOT))


def test_every_cut_of_the_append_only_log_reads_as_a_prefix(corpus: Path, tmp_path: Path) -> None:
    """messages.jsonl only grows: a read at any line boundary (or mid-line) sees a prefix of
    the full read's events, and the accounting always adds up."""
    root = tmp_path / ".vibe"
    shutil.copytree(corpus / ROOT, root)
    (folder,) = [p for p in (root / "logs/session").iterdir() if p.name.endswith(S1[:8])]
    data = (folder / "messages.jsonl").read_bytes()
    full = _by_id(root)[S1]
    shape = [(e.kind, e.text, e.tool) for e in full.events]
    for cut in range(len(data) + 1):
        (folder / "messages.jsonl").write_bytes(data[:cut])
        unit = next(u for u in VibeAdapter().discover(root) if u.path == str(folder))
        res = VibeAdapter().read(unit, None)  # just written: not settled, a torn tail waits
        got = [(e.kind, e.text, e.tool) for e in res.events]
        assert got == shape[: len(got)], cut
        assert res.session.accounting.balanced() and res.session.accounting.bad == 0, cut
    assert [(e.kind, e.text, e.tool, e.result) for e in res.events] == [
        (e.kind, e.text, e.tool, e.result) for e in full.events
    ]
