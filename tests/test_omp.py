"""Oh My Pi adapter: omp entry types, titles (title_change, the fixed-width title line),
subagent transcripts, profiles."""

from __future__ import annotations

import json
from pathlib import Path

from agtaild.adapters.base import Unit
from agtaild.adapters.pi.adapter import OhMyPiAdapter
from tests.replay_helpers import line_cuts, read_once, replay_growing_file

ROOT = "omp/synthetic-agtail/.omp/agent/sessions"
LONG_AGO = 1e12
PARENT_ID = "01a0f2c3d4e5f607"


def _units(corpus: Path) -> dict[str, Unit]:
    return {Path(u.path).name: u for u in OhMyPiAdapter().discover(corpus / ROOT)}


def test_discover_finds_session_and_subagent(corpus: Path) -> None:
    units = _units(corpus)
    assert sorted(units) == ["2026-07-10T12-30-00-000Z_01a0f2c3d4e5f607.jsonl", "Explore.jsonl"]
    assert units["Explore.jsonl"].hints == {"parent_id": PARENT_ID, "subagent": "Explore"}


def test_main_session(corpus: Path) -> None:
    unit = _units(corpus)[f"2026-07-10T12-30-00-000Z_{PARENT_ID}.jsonl"]
    res = OhMyPiAdapter().read(unit, None, now=LONG_AGO)
    s = res.session
    assert s.agent == "oh-my-pi" and s.id == PARENT_ID
    # the header says "Speed up session scanning"; the later title_change renamed it
    assert s.title == "Speed up session scanning (4 KiB head reads)"
    assert s.first_prompt == "Scanning 5k session files takes 9s. Profile `agtail scan` and make it faster."
    assert s.models == ["claude-sonnet-4-5"]  # the haiku "smol" role model never answered
    assert s.extra["additionalDirectories"] == ["/home/dev/src/agtail-fixtures"]
    assert s.ending is None  # session_exit kind "normal"
    acct = s.accounting
    assert (acct.lines, acct.metadata, acct.merged, acct.events) == (21, 1, 3, 17) and acct.balanced()
    by_sub = {e.subtype: e for e in res.events if e.kind == "system"}
    assert by_sub["ttsr_injection"].text == "python-style, no-print-debugging"
    assert by_sub["title_change"].extra["previousTitle"] == "Speed up session scanning"
    assert by_sub["service_tier_change"].extra["serviceTier"] == {"openai": "flex"}
    smol = [e for e in res.events if e.subtype == "model_change"]
    assert [e.text for e in smol] == ["anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5 (smol)"]
    assert [e.model for e in smol] == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    task = next(e for e in res.events if e.tool == "task")
    assert task.result.startswith("2 callers: scanner.py:88")
    assert task.extra["details"]["sessionFile"].endswith(f"{PARENT_ID}/Explore.jsonl")
    u = s.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        6240,
        378,
        51550,
        7300,
    )
    cmd = OhMyPiAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["omp", f"--resume={unit.path}"]


def test_subagent_links_to_its_parent(corpus: Path) -> None:
    res = OhMyPiAdapter().read(_units(corpus)["Explore.jsonl"], None, now=LONG_AGO)
    s = res.session
    assert s.id == "01a0f2c3d4e5f6aa"
    assert s.parent is not None and (s.parent.agent, s.parent.id) == ("oh-my-pi", PARENT_ID)
    assert s.forked_from is None and s.extra["subagent"] == "Explore"
    assert s.title == "Find every caller of read_whole_file()" and s.models == ["claude-haiku-4-5"]
    init = res.events[0]
    assert init.subtype == "session_init" and init.text == "Find every caller of read_whole_file()"
    grep = next(e for e in res.events if e.tool == "grep")
    assert "agtail/export.py:12" in grep.result
    assert s.accounting.balanced()


def _slot(title: str) -> bytes:
    """A 256-byte title line as current omp writes it (padded JSON)."""
    body = {"type": "title", "v": 1, "title": title, "updatedAt": "2026-07-10T12:31:20.000Z", "pad": ""}
    raw = json.dumps(body).encode()
    body["pad"] = " " * (255 - len(raw))
    line = json.dumps(body).encode() + b"\n"
    assert len(line) == 256
    return line


def test_title_slot_line_and_in_place_rename(corpus: Path, tmp_path: Path) -> None:
    src = corpus / ROOT / "-src-agtail-demo" / f"2026-07-10T12-30-00-000Z_{PARENT_ID}.jsonl"
    body = src.read_bytes().replace(b',"title":"Speed up session scanning"', b"", 1)
    body = b"\n".join(line for line in body.split(b"\n") if b'"title_change"' not in line)
    dst = tmp_path / "-b" / src.name
    dst.parent.mkdir()
    dst.write_bytes(_slot("Scan speed") + body)
    unit = Unit(agent="oh-my-pi", path=str(dst), files=[str(dst)], root=str(tmp_path))
    adapter = OhMyPiAdapter()
    first = adapter.read(unit, None, now=LONG_AGO)
    assert first.session.title == "Scan speed"
    assert first.session.accounting.metadata == 2 and first.session.accounting.balanced()
    # omp renames by rewriting the slot in place; the next read must notice
    with open(dst, "r+b") as fh:
        fh.write(_slot("Scan speed, renamed"))
    second = adapter.read(unit, first.state, now=LONG_AGO)
    assert second.reset and second.session.title == "Scan speed, renamed"


def test_incremental_equals_one_shot(corpus: Path, tmp_path: Path) -> None:
    adapter = OhMyPiAdapter()
    for name, unit in _units(corpus).items():
        src = Path(unit.path)
        dst = tmp_path / name / "-b" / src.name
        dunit = Unit(
            agent="oh-my-pi", path=str(dst), files=[str(dst)], root=str(tmp_path / name), hints=unit.hints
        )
        for settled in (True, False):
            if dst.exists():
                dst.unlink()
            replayed = replay_growing_file(
                adapter, src, dst, line_cuts(src.read_bytes()), dunit, settled=settled
            )
            assert replayed.snapshot() == read_once(adapter, dunit, now=LONG_AGO).snapshot()


def test_default_roots_profiles_and_xdg(tmp_path: Path) -> None:
    adapter = OhMyPiAdapter()
    home = tmp_path
    assert adapter.default_roots({}, home) == [home / ".omp" / "agent" / "sessions"]
    (home / ".omp" / "profiles" / "work" / "agent" / "sessions").mkdir(parents=True)
    roots = adapter.default_roots({"OMP_PROFILE": "work"}, home)
    assert roots == [
        home / ".omp" / "profiles" / "work" / "agent" / "sessions",
        home / ".omp" / "agent" / "sessions",
    ]
    # without a profile selected every existing profile is still read
    assert home / ".omp" / "profiles" / "work" / "agent" / "sessions" in adapter.default_roots({}, home)
    # an explicitly empty OMP_PROFILE selects the default profile even if PI_PROFILE is set
    assert adapter.default_roots({"OMP_PROFILE": "", "PI_PROFILE": "work"}, home)[0] == (
        home / ".omp" / "agent" / "sessions"
    )
    xdg = tmp_path / "xdg"
    (xdg / "omp").mkdir(parents=True)
    assert adapter.default_roots({"XDG_DATA_HOME": str(xdg)}, home)[0] == xdg / "omp" / "sessions"
    assert adapter.default_roots({"PI_CONFIG_DIR": ".pio"}, home)[0] == home / ".pio" / "agent" / "sessions"
    # PI_CODING_AGENT_DIR counts for omp only when it holds omp's own files
    moved = tmp_path / "agentdir"
    moved.mkdir()
    assert (
        adapter.default_roots({"PI_CODING_AGENT_DIR": str(moved)}, home)[0]
        == home / ".omp" / "agent" / "sessions"
    )
    (moved / "history.db").write_bytes(b"")
    assert adapter.default_roots({"PI_CODING_AGENT_DIR": str(moved)}, home)[0] == moved / "sessions"
