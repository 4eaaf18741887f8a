"""`agtail index | reindex | list | search | show | stats` on the real corpus, in-process and as a
subprocess: JSON shapes of CONTRACT.md, exit codes, readable output, lazy imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import main

SESSION_FIELDS = {
    "agent",
    "id",
    "path",
    "title",
    "cwd",
    "project",
    "git_branch",
    "models",
    "started",
    "ended",
    "mtime",
    "messages",
    "usage",
    "origin",
    "programmatic",
    "parent",
    "imported",
    "collection",
    "archived",
    "bad_lines",
    "truncated",
    "ending",
    "compactions",
    "resumable",
    "accounting",
}
EVENT_FIELDS = {
    "seq",
    "kind",
    "ts",
    "role",
    "text",
    "tool",
    "input",
    "result",
    "is_error",
    "hook",
    "model",
    "usage",
    "uuid",
    "parent_uuid",
    "source",
    "raw",
}
USAGE_FIELDS = {
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_tokens",
    "cost_usd",
}


@pytest.fixture
def roots(corpus: Path, tmp_path: Path) -> list[str]:
    return [
        "--data-dir",
        str(tmp_path / "data"),
        "--no-daemon",
        "--only-roots",
        "--root",
        f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}",
        "--root",
        f"codex={corpus / 'codex' / 'agent-sessions' / 'sessions'}",
    ]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def test_list_on_the_corpus_in_process(capsys: pytest.CaptureFixture[str], roots: list[str]) -> None:
    doc = run_json(capsys, *roots, "list")
    assert set(doc) == {"sessions", "next"}
    agents = {s["agent"] for s in doc["sessions"]}
    assert agents == {"claude-code", "codex"}
    for s in doc["sessions"]:
        assert set(s) >= SESSION_FIELDS and set(s["usage"]) >= USAGE_FIELDS
        assert Path(s["path"]).exists()
    ends = [s["ended"] or "" for s in doc["sessions"]]
    assert len(ends) > 5


def test_list_as_a_subprocess_with_options_after_the_command(corpus: Path, tmp_path: Path) -> None:
    root = corpus / "claude-code" / "spotter" / "projects"
    env = {**os.environ, "AGTAIL_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "agtail"),
            "list",
            "--json",
            "--no-daemon",
            "--only-roots",
            "--root",
            f"claude-code={root}",
            "--limit",
            "3",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["sessions"]) == 3 and doc["next"]
    assert all(s["agent"] == "claude-code" and s["path"].startswith(str(root)) for s in doc["sessions"])


def test_index_and_reindex_report(capsys: pytest.CaptureFixture[str], roots: list[str]) -> None:
    first = run_json(capsys, *roots, "index")
    assert list(first)[:5] == ["sessions", "events", "files", "bad_lines", "seconds"]
    assert first["sessions"] > 5 and first["added"] == first["sessions"] and first["errors"] == []
    again = run_json(capsys, *roots, "index")
    assert again["read"] == 0 and again["sessions"] == first["sessions"]
    rebuilt = run_json(capsys, *roots, "reindex", "--changes")
    assert rebuilt["events"] == first["events"] and len(rebuilt["changed"]) == first["sessions"]
    code, out, _ = run(capsys, *roots, "index")
    assert code == 0 and f"{first['sessions']} sessions" in out


def test_show_prints_every_event_from_the_index(capsys: pytest.CaptureFixture[str], roots: list[str]) -> None:
    listed = run_json(capsys, *roots, "list", "--agent", "claude-code", "--limit", "1000")["sessions"]
    biggest = max(listed, key=lambda s: s["messages"])
    doc = run_json(capsys, *roots, "show", f"claude-code:{biggest['id'][:12]}")
    assert set(doc) == {"session", "events"}
    assert doc["session"]["id"] == biggest["id"]
    seqs = [e["seq"] for e in doc["events"]]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)) and len(seqs) > 200
    assert all(set(e) >= EVENT_FIELDS for e in doc["events"])
    code, out, _ = run(capsys, *roots, "show", f"claude-code:{biggest['id']}")
    assert code == 0 and biggest["id"] in out and "▸" in out


def test_search_and_stats(capsys: pytest.CaptureFixture[str], roots: list[str]) -> None:
    doc = run_json(capsys, *roots, "search", "error", "--limit", "5")
    assert set(doc) == {"hits", "next"} and len(doc["hits"]) == 5 and doc["next"]
    for hit in doc["hits"]:
        assert set(hit) == {"session", "event", "snippet"} and "«" in hit["snippet"].lower()
    nxt = run_json(capsys, *roots, "search", "error", "--limit", "5", "--cursor", doc["next"])
    assert {h["event"]["seq"] for h in nxt["hits"]}.isdisjoint(
        {h["event"]["seq"] for h in doc["hits"]}
    ) or any(h["session"]["id"] != g["session"]["id"] for h in nxt["hits"] for g in doc["hits"])
    stats = run_json(capsys, *roots, "stats", "--by", "model")
    assert set(stats) == {"totals", "rows"} and set(stats["totals"]) == USAGE_FIELDS
    assert sum(r["total_tokens"] for r in stats["rows"]) == stats["totals"]["total_tokens"] > 0
    code, out, _ = run(capsys, *roots, "stats")
    assert code == 0 and "TOTAL" in out.splitlines()[-1]
    code, out, _ = run(capsys, *roots, "search", "error", "--limit", "2")
    assert code == 0 and ("claude-code:" in out or "codex:" in out)


@pytest.mark.parametrize(
    ("argv", "exit_code"),
    [
        (["show", "claude-code:does-not-exist"], 4),
        (["show", "no-colon"], 4),  # an id prefix of any agent: no such session
        (["show", "claude-code:"], 2),
        (["show", "nobody:abc"], 2),
        (["search", "x", "--kind", "nonsense"], 2),
        (["list", "--limit", "0"], 2),
        (["list", "--since", "the other day"], 2),
        (["stats", "--by", "week"], 2),
    ],
)
def test_exit_codes(
    capsys: pytest.CaptureFixture[str], roots: list[str], argv: list[str], exit_code: int
) -> None:
    try:
        code = main([*roots, *argv])
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    assert code == exit_code
    assert capsys.readouterr().err


def test_readable_list(capsys: pytest.CaptureFixture[str], roots: list[str]) -> None:
    code, out, _ = run(capsys, *roots, "list", "--limit", "3")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:4] == ["LAST", "ACTIVE", "AGENT", "ID"] and len(lines) == 4


def test_list_does_not_import_the_daemon_stack(corpus: Path, tmp_path: Path) -> None:
    root = corpus / "claude-code" / "spotter" / "projects"
    code = (
        "import sys, json\n"
        "from agtaild.cli import main\n"
        f"main(['--json', '--no-daemon', '--data-dir', {str(tmp_path)!r}, '--only-roots',"
        f" '--root', 'claude-code={root}', 'list'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'aiohttp', 'watchdog', 'agtaild.api'})\n"
        "print(json.dumps(heavy), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_the_cli_highlights_the_markers_the_api_sends() -> None:
    from agtaild.cli import format as fmt
    from agtaild.index import text

    assert (fmt.MARK_START, fmt.MARK_END) == (text.MARK_START, text.MARK_END)


def test_short_ids_in_a_listing_are_unique_prefixes() -> None:
    from agtaild.cli.format import short_id, unique_short_ids

    rows = [
        {"agent": "pi", "id": "01a229d9-3f00-7000-8000-000000000001"},
        {"agent": "pi", "id": "01a229d9-26aa-7000-8000-000000000002"},
        {"agent": "pi", "id": "01a229d9-21bb-7000-8000-000000000003"},
        {"agent": "codex", "id": "01a229d9-3f00-7000-8000-0000000000ff"},
        {"agent": "claude-code", "id": "agent-a36efb2a1231c41e2"},
    ]
    shorts = unique_short_ids(rows)
    assert shorts[:3] == ["01a229d9-3", "01a229d9-26", "01a229d9-21"]
    assert shorts[3] == "01a229d9"  # alone among codex rows: 8 characters are enough
    assert shorts[4] == "agent-a36efb2a"
    for row, short in zip(rows, shorts, strict=True):
        assert row["id"].startswith(short)
    assert short_id("abc") == "abc"
