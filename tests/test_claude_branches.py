"""Claude Code conversation branches (rewinds, edited prompts): marks, incremental re-marking,
the index's re-marks, and `show` / `show --branches` — on files built from a real sample."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.cli import main
from tests.claude_code_helpers import SETTLED, find_unit
from tests.claude_rewind import (
    SESSION_ID,
    answer,
    last_uuid,
    prompt,
    rewound_session,
    sample_lines,
    write_lines,
)
from tests.replay_helpers import Store


def _root(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "projects"
    return root, root / "-tmp-rt-claude-home-src-demo-app" / f"{SESSION_ID}.jsonl"


def _marks(events: list[Any]) -> dict[str | None, tuple[Any, ...]]:
    out = {}
    for ev in events:
        e = ev if isinstance(ev, dict) else {"uuid": ev.uuid, "extra": ev.extra}
        x = e["extra"]
        if "branch" in x:
            out[e["uuid"]] = (x["branch"], x["fork"], x["alt"], x["alts"])
    return out


def _read(adapter: ClaudeCodeAdapter, root: Path, path: Path, store: Store) -> Any:
    result = adapter.read(find_unit(adapter, root, path), store.state, now=os.stat(path).st_mtime + 100)
    store.apply(result)
    return result


def test_rewind_marks_the_old_continuation_inactive(tmp_path: Path) -> None:
    root, path = _root(tmp_path)
    ids = rewound_session(path)
    adapter = ClaudeCodeAdapter()
    result = adapter.read(find_unit(adapter, root, path), None, now=SETTLED)
    fork = last_uuid()
    assert _marks(result.events) == {
        ids["p2"]: ("inactive", fork, 1, 2),
        ids["a2"]: ("inactive", fork, 1, 2),
        ids["p2b"]: ("active", fork, 2, 2),
        ids["a2b"]: ("active", fork, 2, 2),
    }
    # The sample's own events (the trunk before the fork) carry no marks.
    assert sum(1 for e in result.events if "branch" not in e.extra) == len(result.events) - 4
    forks = result.session.extra["forks"]
    assert [(f["fork"], f["alts"], f["active"], f["on_active_chain"]) for f in forks] == [(fork, 2, 2, True)]


def test_sessions_without_a_fork_carry_no_marks(corpus: Path) -> None:
    adapter = ClaudeCodeAdapter()
    root = corpus / "real" / "claude-2.1.197" / "projects"
    for unit in adapter.discover(root):
        result = adapter.read(unit, None, now=SETTLED)
        assert not any("branch" in e.extra for e in result.events), unit.path
        assert "forks" not in result.session.extra


def test_parallel_tool_results_are_not_forks(corpus: Path) -> None:
    """ef958aa1 has parallel tool calls and progress lines sharing parents: no branch."""
    adapter = ClaudeCodeAdapter()
    root = corpus / "claude-code" / "claude-code-log" / "projects"
    path = root / "-experiments-worktrees" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    result = adapter.read(find_unit(adapter, root, path), None, now=SETTLED)
    assert not any("branch" in e.extra for e in result.events)


def test_rewinding_the_first_prompt_forks_at_the_start(tmp_path: Path) -> None:
    root, path = _root(tmp_path)
    write_lines(path, sample_lines())
    write_lines(path, [p := prompt("Create hello.py, but in Rust", None), answer("Done in Rust", p["uuid"])],
                append=True)  # fmt: skip
    adapter = ClaudeCodeAdapter()
    result = adapter.read(find_unit(adapter, root, path), None, now=SETTLED)
    marks = _marks(result.events)
    first = next(o["uuid"] for o in sample_lines() if o.get("type") == "user")
    assert marks[first] == ("inactive", "start", 1, 2)
    assert marks[p["uuid"]] == ("active", "start", 2, 2)
    assert all(m[0] == "inactive" for u, m in marks.items() if u != p["uuid"] and m[2] == 1)


def test_appends_re_mark_only_what_changed(tmp_path: Path) -> None:
    root, path = _root(tmp_path)
    adapter = ClaudeCodeAdapter()
    store = Store()
    last = last_uuid()
    write_lines(path, sample_lines())
    p2, a2 = prompt("Now add a farewell() function", last), None
    a2 = answer("Added farewell()", p2["uuid"])
    write_lines(path, [p2, a2], append=True)
    first = _read(adapter, root, path, store)
    assert not first.marks and not _marks(list(store.events.values()))

    # Until a session forks its state keeps no tree (a 50 MB session's tree would be most of
    # it): the read that meets the first fork reads the file again from the start, once.
    p2b = prompt("Now add a farewell() function in French", last)
    a2b = answer("Ajouté farewell()", p2b["uuid"])
    write_lines(path, [p2b, a2b], append=True)
    second = _read(adapter, root, path, store)
    assert second.reset and not second.marks
    old_seqs = {s for s, e in store.events.items() if e["uuid"] in (p2["uuid"], a2["uuid"])}
    assert {store.events[s]["extra"]["branch"] for s in old_seqs} == {"inactive"}

    # From then on appends are incremental. A new prompt on the active branch marks only itself.
    p2c = prompt("And a docstring", a2b["uuid"])
    write_lines(path, [p2c], append=True)
    extend = _read(adapter, root, path, store)
    assert not extend.reset and not extend.marks and {e.uuid for e in extend.events} == {p2c["uuid"]}
    assert extend.events[0].extra["branch"] == "active"

    # Continuing the old branch moves the leaf back: both branches flip, nothing else moves.
    p3 = prompt("Actually keep the English one and add a test", a2["uuid"])
    write_lines(path, [p3], append=True)
    third = _read(adapter, root, path, store)
    assert not third.reset
    flipped = {s for s, e in store.events.items() if e["uuid"] in (p2b["uuid"], a2b["uuid"], p2c["uuid"])}
    assert set(third.marks) == old_seqs | flipped
    assert all(patch["branch"] == "active" for s, patch in third.marks.items() if s in old_seqs)
    assert all(patch["branch"] == "inactive" for s, patch in third.marks.items() if s in flipped)
    marks = _marks(list(store.events.values()))
    assert marks[p2["uuid"]][0] == marks[p3["uuid"]][0] == "active"
    assert marks[a2b["uuid"]][0] == "inactive"

    # A read from scratch stores exactly what the three incremental reads stored.
    whole = Store()
    whole.apply(adapter.read(find_unit(adapter, root, path), None, now=SETTLED))
    assert store.snapshot() == whole.snapshot()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_re_marks_and_show_prints_the_active_branch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root, path = _root(tmp_path)
    last = last_uuid()
    write_lines(path, sample_lines())
    write_lines(path, [p2 := prompt("Now add a farewell() function", last),
                       answer("Added farewell() to hello.py (first try)", p2["uuid"])], append=True)  # fmt: skip
    args = [
        "--data-dir",
        str(tmp_path / "data"),
        "--no-daemon",
        "--only-roots",
        "--root",
        f"claude-code={root}",
    ]
    ref = f"claude-code:{SESSION_ID}"
    code, out, err = _cli(capsys, *args, "show", ref)
    assert code == 0 and "first try" in out and "⑂" not in out

    write_lines(path, [p2b := prompt("Now add a farewell() function in French", last),
                       answer("Ajouté farewell() en français", p2b["uuid"])], append=True)  # fmt: skip
    os.utime(path, (os.stat(path).st_atime, os.stat(path).st_mtime + 1))
    code, out, err = _cli(capsys, *args, "--json", "show", ref)
    incremental = json.loads(out)["events"]
    assert _marks(incremental)[p2["uuid"]][0] == "inactive"

    # Plain show: the active branch with a fork marker; the old continuation is left out.
    code, out, err = _cli(capsys, *args, "show", ref)
    assert code == 0, err
    assert "en français" in out and "first try" not in out
    assert f"⑂ branch 2 of 2 at fork {last[:8]}; 1 other branch: show --branches" in out
    # --branches: both, each under its marker, in file order.
    code, out, err = _cli(capsys, *args, "show", ref, "--branches")
    first_try = out.index("first try")
    assert out.index(f"⑂ branch 1 of 2 at fork {last[:8]} (inactive)") < first_try
    assert first_try < out.index(f"⑂ branch 2 of 2 at fork {last[:8]} (active)") < out.index("en français")
    # Search says when a hit is on an inactive branch, and how to see it.
    code, out, err = _cli(capsys, *args, "search", "first try")
    assert "(inactive branch 1 of 2: show --around" in out
    seq = next(e["seq"] for e in incremental if e["uuid"] == p2["uuid"])
    code, out, err = _cli(capsys, *args, "show", ref, "--around", str(seq), "--context", "2")
    assert "first try" in out and "(inactive)" in out
    # The index re-marked the stored events exactly as a reindex from scratch does.
    code, out, err = _cli(capsys, *args, "reindex")
    code, out, err = _cli(capsys, *args, "--json", "show", ref)
    assert json.loads(out)["events"] == incremental
