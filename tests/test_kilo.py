"""Kilo Code adapter: kilo.db from Kilo CLI 7.7.7 (the OpenCode reader) and legacy task folders."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from agtaild.adapters.base import ReadResult
from agtaild.adapters.kilo.adapter import KiloAdapter
from agtaild.model import ParentRef, Session

REAL = "real/kilo-7.7.7"
LEGACY = "kilo/synthetic-agtail/.config/Code/User/globalStorage/kilocode.kilo-code"
LATER = 1e12


def _by_id(root: Path) -> dict[str, ReadResult]:
    a = KiloAdapter()
    out = {}
    for unit in a.discover(root):
        res = a.read(unit, None, now=LATER)
        out[res.session.id] = res
    return out


def test_discovers_database_sessions_from_the_file_or_the_data_dir(corpus: Path) -> None:
    ids = sorted(_by_id(corpus / REAL))
    assert ids == sorted(_by_id(corpus / REAL / "kilo.db"))
    assert ids == [
        "ses_dd2cda514ffeEPc6U0jYTTO4h2",
        "ses_dd2cdb520ffes2ll2DbLRzbJ2O",
        "ses_dd2cdcc89ffeQ9TSU8fWmF7QwY",
        "ses_dd2cdf755ffe8eJcdSfkDHImvv",
    ]


def test_default_roots(tmp_path: Path) -> None:
    roots = KiloAdapter().default_roots({}, tmp_path)
    assert roots[0] == tmp_path / ".local/share/kilo/kilo.db"
    assert tmp_path / ".config/Code/User/globalStorage/kilocode.kilo-code" in roots
    env = {"XDG_DATA_HOME": str(tmp_path / "x"), "KILO_DB": "other.db"}
    roots = KiloAdapter().default_roots(env, tmp_path)
    assert roots[:2] == [tmp_path / "x/kilo/kilo.db", tmp_path / "x/kilo/other.db"]


def test_basic_session(corpus: Path) -> None:
    res = _by_id(corpus / REAL)["ses_dd2cdf755ffe8eJcdSfkDHImvv"]
    s = res.session
    # Kilo keeps the default "New session - <time>" title; the first prompt stands in.
    assert s.title == '"Create hello.py, run it, add a Japanese greeting. [[S:kilo/basic]]"'
    assert s.cwd == "/tmp/rt/kilo/home/src/demo-app" and s.models == ["mock-model"]
    assert s.extra["mode"] == "code" and s.version == "7.7.7"
    tools = [(e.tool, e.is_error) for e in res.events if e.kind == "tool_use"]
    assert tools == [
        ("bash", False), ("write", False), ("read", False), ("edit", False),
        ("bash", False), ("read", True), ("bash", False), ("todowrite", False),
    ]
    assert all(e.result is not None for e in res.events if e.kind == "tool_use")
    assert s.accounting.balanced() and s.accounting.lines == 44


def test_usage_equals_kilos_session_columns(corpus: Path) -> None:
    conn = sqlite3.connect(f"file:{corpus / REAL / 'kilo.db'}?mode=ro", uri=True)
    cols = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT id, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write FROM session"
        )
    }
    conn.close()
    for sid, res in _by_id(corpus / REAL).items():
        u = res.session.usage
        inp, out, reasoning, read, write = cols[sid]
        # Kilo's output excludes reasoning; agtail's output includes it.
        assert (u.input_tokens, u.output_tokens, u.reasoning_tokens) == (inp, out + reasoning, reasoning), sid
        assert (u.cache_read_tokens, u.cache_write_tokens) == (read, write), sid


def test_subagent_child_links_to_the_task_call(corpus: Path) -> None:
    sessions = _by_id(corpus / REAL)
    child = sessions["ses_dd2cdb520ffes2ll2DbLRzbJ2O"].session
    (task,) = [e for e in sessions["ses_dd2cdcc89ffeQ9TSU8fWmF7QwY"].events if e.tool == "task"]
    assert child.parent == ParentRef(agent="kilo", id="ses_dd2cdcc89ffeQ9TSU8fWmF7QwY", tool_use_id=task.tool_use_id)
    assert child.title == "Count lines in hello.py (@general subagent)" and child.extra["mode"] == "general"


def test_resume_uses_kilo_session_flag(corpus: Path) -> None:
    s = _by_id(corpus / REAL)["ses_dd2cda514ffeEPc6U0jYTTO4h2"].session
    users = [e for e in _by_id(corpus / REAL)[s.id].events if e.kind == "text" and e.role == "user"]
    assert len(users) == 3  # --continue appended mt2 and mt3 to the same session
    cmd = KiloAdapter().resume(s)
    assert cmd is not None and cmd.argv == ["kilo", "--session", "ses_dd2cda514ffeEPc6U0jYTTO4h2"]
    assert cmd.cwd == "/tmp/rt/kilo/home/src/demo-app"
    assert KiloAdapter().resume(Session(agent="kilo", id="-x", extra={"store": "kilo.db"})) is None


def test_legacy_task_folder(corpus: Path) -> None:
    (res,) = _by_id(corpus / LEGACY).values()
    s = res.session
    assert s.id == "1781100000000" and s.title == "Add a --verbose flag to main.go"
    assert s.cwd == "/home/dev/src/kilo-legacy" and s.models == ["anthropic/claude-sonnet-4"]
    assert s.ending == "interrupted" and s.extra["store"] == "tasks"
    assert [e.tool for e in res.events if e.kind == "tool_use"] == ["read_file", "execute_command"]
    assert (s.usage.input_tokens, s.usage.cache_read_tokens) == (31, 14120)
    assert KiloAdapter().resume(s) is None and not s.resumable
    assert s.accounting.balanced()


def test_a_missing_database_is_no_session(tmp_path: Path) -> None:
    assert list(KiloAdapter().discover(tmp_path / "kilo.db")) == []
    (tmp_path / "kilo.db").write_bytes(b"not a database")
    shutil.copy(tmp_path / "kilo.db", tmp_path / "kilo-beta.db")
    assert list(KiloAdapter().discover(tmp_path)) == []


def test_mirror_layout_is_found_again(corpus: Path, tmp_path: Path) -> None:
    a = KiloAdapter()
    for i, rel in enumerate((REAL, f"{REAL}/kilo.db", LEGACY)):
        mirror = tmp_path / str(i)
        for unit in a.discover(corpus / rel):
            for f in a.native_files(unit):
                target = mirror / a.relative_path(unit, f)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, target)
        assert sorted(_by_id(mirror)) == sorted(_by_id(corpus / rel)), rel
