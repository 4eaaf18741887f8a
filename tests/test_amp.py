"""Amp adapter, on two real threads (tests/corpus/amp/git-ai, Amp CLI 0.0.1772237000) and the
hand-made ones (tests/corpus/amp/synthetic-agtail)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agtaild.adapters.amp.adapter import AmpAdapter, amp_usage
from agtaild.model import Session, Usage

ROOT = "amp/synthetic-agtail/.local/share/amp/threads"
MAIN = "T-5f2c9a1e-8b3d-4c7a-9e1f-2a3b4c5d6e7f"
CANCELLED = "T-0a1b2c3d-4e5f-4061-8728-394a5b6c7d8e"
LATER = 4_000_000_000.0


@pytest.fixture
def adapter() -> AmpAdapter:
    return AmpAdapter()


def read_all(adapter: AmpAdapter, root: Path) -> dict[str, object]:
    out = {}
    for u in adapter.discover(root):
        res = adapter.read(u, None, now=LATER)
        out[res.session.id] = res
    return out


def test_roots_and_discovery(adapter: AmpAdapter, corpus: Path, tmp_path: Path) -> None:
    roots = adapter.default_roots({"XDG_DATA_HOME": str(tmp_path / "d")}, tmp_path)
    assert roots[0] == tmp_path / "d" / "amp" / "threads"
    assert any(str(r).endswith("globalStorage/sourcegraph.amp/threads3") for r in roots[1:])
    (tmp_path / "amp" / "threads").mkdir(parents=True)
    shutil.copy(corpus / ROOT / f"{MAIN}.json", tmp_path / "amp" / "threads")
    (tmp_path / "amp" / "threads" / "history.json").write_text("{}")  # not a thread
    assert [Path(u.path).name for u in adapter.discover(tmp_path / "amp")] == [f"{MAIN}.json"]


def test_thread_fields_tools_and_usage(adapter: AmpAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / ROOT)[MAIN]
    s: Session = res.session  # type: ignore[attr-defined]
    assert (s.title, s.cwd, s.project, s.git_branch, s.origin) == (
        "Add a retry to the fetcher",
        "/home/dev/src/agtail-demo",
        "agtail-demo",
        "main",
        "cli",
    )
    assert (s.started, s.ended) == ("2026-03-03T09:40:00.000Z", "2026-03-03T09:40:15.500Z")
    events = res.events  # type: ignore[attr-defined]
    assert [e.kind for e in events] == ["text", "thinking", "text", "tool_use", "tool_use", "text"]
    read, bash = events[3], events[4]
    assert read.tool == "Read" and read.result.startswith("def fetch_page") and read.is_error is False
    assert bash.is_error and bash.result == "1 failed"
    doc = json.loads((corpus / ROOT / f"{MAIN}.json").read_text())
    expected = Usage()
    for m in doc["messages"]:
        expected.add(amp_usage(m.get("usage")) or Usage())
    assert s.usage == expected.fix_total() and len(res.usage) == 3  # type: ignore[attr-defined]
    assert s.usage.cache_write_tokens == 5300 and s.models == ["claude-sonnet-4-5-20250929"]
    assert s.accounting.balanced() and (s.accounting.lines, s.accounting.merged) == (7, 2)
    cmd = adapter.resume(s)
    assert cmd is not None and cmd.argv == ["amp", "threads", "continue", MAIN]


def test_cancelled_thread_and_bad_ids(adapter: AmpAdapter, corpus: Path) -> None:
    s = read_all(adapter, corpus / ROOT)[CANCELLED].session  # type: ignore[attr-defined]
    assert s.ending == "interrupted" and s.usage.is_zero()
    assert adapter.resume(Session(agent="amp", id="--help")) is None
    assert adapter.resume(Session(agent="amp", id="T-x y")) is None


def test_rewritten_and_torn_documents(adapter: AmpAdapter, corpus: Path, tmp_path: Path) -> None:
    dst = tmp_path / f"{MAIN}.json"
    text = (corpus / ROOT / f"{MAIN}.json").read_text()
    dst.write_text(text[: len(text) // 2])
    unit = next(iter(adapter.discover(tmp_path)))
    torn = adapter.read(unit, None, now=LATER).session
    assert torn.bad_lines == 1 and torn.truncated and torn.accounting.balanced()
    dst.write_text(text)  # the agent finished rewriting it
    whole = adapter.read(unit, None, now=LATER)
    assert whole.reset and len(whole.events) == 6 and whole.session.bad_lines == 0


REAL = "amp/git-ai/.local/share/amp/threads"
JOKES_CLI = "T-019ca1ce-3ae2-7686-a41e-ccc078837f8a"
APPEND_ROW = "T-019ca1f6-7f21-77b5-a308-65416ebbdf48"


def _file_usage(path: Path) -> tuple[Usage, int]:
    """The thread's own counters, summed straight from the file."""
    doc = json.loads(path.read_text())
    total, n = Usage(), 0
    for m in doc["messages"]:
        u = m.get("usage")
        if u:
            n += 1
            total.add(
                Usage(
                    input_tokens=u["inputTokens"],
                    output_tokens=u["outputTokens"],
                    cache_read_tokens=u["cacheReadInputTokens"],
                    cache_write_tokens=u["cacheCreationInputTokens"],
                )
            )
    return total.fix_total(), n


def test_real_thread_with_reads_and_thinking(adapter: AmpAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[JOKES_CLI]
    s = res.session  # type: ignore[attr-defined]
    assert (s.title, s.cwd, s.project, s.git_branch) == (
        "Add jokes CLI with CSV data source",
        "/Users/svarlamov/projects/testing-git-amp",
        "testing-git-amp",
        "master",
    )
    assert (s.origin, s.extra["client"], s.version) == ("cli", "CLI", "0.0.1772237000-g924883")
    assert (s.started, s.ended) == ("2026-02-28T01:12:53.221Z", "2026-02-28T01:13:38.821Z")
    events = res.events  # type: ignore[attr-defined]
    assert [e.kind for e in events] == [
        "text",
        "text",
        "thinking",
        "text",
        "tool_use",
        "tool_use",
        "tool_use",
        "tool_use",
        "text",
    ]
    reads = [e for e in events if e.kind == "tool_use"]
    assert [e.tool for e in reads] == ["Read"] * 4 and all(e.is_error is False for e in reads)
    # the Read result is the file's text (a {absolutePath, content} object in the file)
    assert reads[0].result.startswith("1: id,setup,punchline\n2: 1,Why do programmers prefer dark mode?")
    assert (
        reads[2].input == {"path": "/Users/svarlamov/projects/testing-git-amp/src"}
        and reads[2].result == "index.ts"
    )
    expected, n = _file_usage(corpus / REAL / f"{JOKES_CLI}.json")
    assert s.usage == expected and len(res.usage) == n == 3  # type: ignore[attr-defined]
    assert (s.usage.output_tokens, s.usage.cache_read_tokens) == (555, 39744) and s.models == [
        "claude-opus-4-6"
    ]
    assert (
        s.ending is None and s.accounting.balanced() and (s.accounting.lines, s.accounting.merged) == (7, 2)
    )


def test_real_thread_edit_has_the_recorded_diff(adapter: AmpAdapter, corpus: Path) -> None:
    res = read_all(adapter, corpus / REAL)[APPEND_ROW]
    s = res.session  # type: ignore[attr-defined]
    assert s.title == "Read jokes CSV and append new row" and s.extra["client"] == "CLI Execute Mode"
    events = res.events  # type: ignore[attr-defined]
    assert [(e.kind, e.tool) for e in events] == [
        ("text", None),
        ("tool_use", "Read"),
        ("tool_use", "edit_file"),
        ("text", None),
    ]
    edit = events[2]
    assert edit.result.startswith("```diff\nIndex: /Users/svarlamov/projects/testing-git-amp/jokes.csv")
    (change,) = edit.extra["edit"]["files"]
    assert change["path"] == "/Users/svarlamov/projects/testing-git-amp/jokes.csv" and change["numbered"]
    (hunk,) = change["hunks"]
    assert (hunk["old_start"], hunk["new_start"]) == (11, 11)
    assert [ln for ln in hunk["lines"] if ln[0] != " "] == [
        "+14,Why do programmers hate nature?,It has too many bugs and no documentation."
    ]
    expected, n = _file_usage(corpus / REAL / f"{APPEND_ROW}.json")
    assert s.usage == expected and len(res.usage) == n  # type: ignore[attr-defined]
    assert (
        s.usage.cache_write_tokens == 17711 and s.first_prompt == "Read jokes.csv and append one new joke row"
    )
