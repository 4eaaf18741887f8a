"""Open Interpreter on its real recording (tests/corpus/real/open-interpreter-0.4.3, 0.4.3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agtaild.adapters.open_interpreter import OpenInterpreterAdapter
from agtaild.model import Session

CONV = Path(__file__).parent / "corpus" / "real" / "open-interpreter-0.4.3" / "conversations"
LATER = 4_000_000_000.0
BASIC = "[[Soicodebasic]]_Look__December_01_2026_20-36-54"
TWO_TURNS = "[[Soitext]]_Hello__December_01_2026_20-38-04"


def _read(root: Path) -> dict:
    adapter = OpenInterpreterAdapter()
    return {r.session.id: r for r in (adapter.read(u, None, now=LATER) for u in adapter.discover(root))}


def test_every_conversation_and_message() -> None:
    read = _read(CONV)
    assert sorted(read) == sorted(p.stem for p in CONV.glob("*.json")) and len(read) == 3
    for sid, r in read.items():
        messages = json.loads((CONV / f"{sid}.json").read_text())
        consoles = sum(m["type"] == "console" for m in messages)
        acct = r.session.accounting
        assert (acct.lines, acct.merged, acct.bad) == (len(messages), consoles, 0) and acct.balanced(), sid


def test_code_blocks_carry_their_output() -> None:
    r = _read(CONV)[BASIC]
    s = r.session
    assert s.started == s.ended == "2026-12-01T20:36:54.000Z" and not s.resumable
    assert s.title == "[[S:oi/codebasic]] Look around, make notes.txt, edit it, and try a failing command."
    tools = [e for e in r.events if e.kind == "tool_use"]
    assert [t.tool for t in tools] == ["shell", "python", "python", "shell"]
    assert tools[1].input == {"language": "python", "code": "open('notes.txt', 'w').write('alpha\\nbeta\\n')"}
    assert tools[1].result == "11" and "No such file or directory" in tools[3].result
    two = _read(CONV)[TWO_TURNS]
    assert [e.text for e in two.events if e.kind == "text" and e.role == "user"] == [
        "[[S:oi/text]] Hello there.", "[[S:oi/continue]] What does notes.txt say now?"
    ]  # fmt: skip
    assert OpenInterpreterAdapter().resume(two.session) is None


def test_a_torn_file_and_odd_messages(tmp_path: Path) -> None:
    root = tmp_path / "conversations"
    root.mkdir()
    src = CONV / f"{BASIC}.json"
    (root / "torn.json").write_bytes(src.read_bytes()[:-40])
    odd = json.loads(src.read_text())
    odd[3:3] = [{"role": "computer", "type": "image", "format": "base64.png", "content": "AAAA"}, 7]
    (root / "odd.json").write_text(json.dumps(odd))
    read = _read(root)
    torn = read["torn"].session
    assert (torn.bad_lines, torn.accounting.lines, torn.truncated) == (1, 1, True)
    r = read["odd"]
    assert r.session.accounting.balanced() and r.session.accounting.lines == len(odd)
    assert len([e for e in r.events if e.kind == "unknown"]) == 2
    assert r.session.started is None and r.session.id == "odd"


def test_roots(tmp_path: Path) -> None:
    adapter = OpenInterpreterAdapter()
    home = tmp_path / "h"
    assert adapter.default_roots({}, home) == [home / ".config" / "open-interpreter" / "conversations"]
    assert adapter.default_roots({"XDG_CONFIG_HOME": str(tmp_path / "c")}, home)[0] == tmp_path / "c" / "open-interpreter" / "conversations"
    shutil.rmtree(tmp_path)
    assert adapter.resume(Session(agent="open-interpreter", id="x")) is None
