"""`show` prints text exactly (indentation and tabs kept, long lines cut with a marker), and
every id the CLI prints is a prefix that `show` accepts, even for time-ordered ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.cli import format as fmt
from agtaild.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def base(data: Path, *roots: str) -> list[str]:
    args = ["--data-dir", str(data), "--no-daemon", "--only-roots"]
    for r in roots:
        args += ["--root", r]
    return args


def test_block_keeps_indentation_and_cuts_with_a_marker() -> None:
    lines = fmt._block("2\t    return x\n      deep\n" + "y" * 300, "    ", 6, width=200)
    assert lines[0] == "    2\t    return x"
    assert lines[1] == "          deep"
    assert lines[2] == "    " + "y" * 200 + "… (+100 chars)"


def test_show_keeps_the_indentation_of_tool_output(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    root = corpus / "claude-code" / "spotter" / "projects"
    args = base(tmp_path / "data", f"claude-code={root}")
    code, out, err = run(capsys, *args, "--json", "list", "--limit", "100")
    assert code == 0, err
    found: tuple[str, str] | None = None
    for s in json.loads(out)["sessions"]:
        code, out, err = run(capsys, *args, "--json", "show", f"claude-code:{s['id']}")
        for ev in json.loads(out)["events"]:
            result = ev.get("result")
            if ev["kind"] == "tool_use" and isinstance(result, str):
                for line in result.strip("\n").splitlines()[1:6]:
                    if "    " in line.strip() and len(line) < 150:
                        found = (s["id"], line)
                        break
            if found:
                break
        if found:
            break
    assert found, "no indented tool output in the samples"
    code, out, err = run(capsys, *args, "show", f"claude-code:{found[0]}")
    assert code == 0, err
    assert "    " + found[1] in out.splitlines()


def _codex_twins(corpus: Path, root: Path) -> tuple[str, str]:
    """Two copies of a real Codex session whose time-ordered ids share 12 characters."""
    src = next((corpus / "codex" / "agent-history" / "sessions").rglob("*019e9625-802f*.jsonl"))
    old = "019e9625-802f-7e91-840a-cfe88d14117a"
    ids = ("019e9625-802f-7e91-840a-000000000001", "019e9625-802a-7e91-840a-000000000002")
    for new in ids:
        dest = root / "2026" / "06" / "05" / src.name.replace(old, new)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(src.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    return ids


def test_printed_ids_are_unique_prefixes(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    root = tmp_path / "sessions"
    ids = _codex_twins(corpus, root)
    args = base(tmp_path / "data", f"codex={root}")
    code, out, err = run(capsys, *args, "--json", "list")
    assert code == 0, err
    shorts = {s["id"]: s["short_id"] for s in json.loads(out)["sessions"]}
    assert set(shorts) == set(ids)
    # 12 shared characters: the unique prefixes are 13 long, and different.
    assert {len(v) for v in shorts.values()} == {13} and len(set(shorts.values())) == 2
    # Only one of them on the page (--limit 1) still gets the index-wide unique prefix.
    code, out, err = run(capsys, *args, "list", "--limit", "1")
    shown = [w for w in out.split() if w.startswith("019e9625")]
    assert len(shown) == 1 and len(shown[0]) == 13
    # Search hits print the same prefix, and show accepts every printed one.
    code, out, err = run(capsys, *args, "search", "REDACTED_PROMPT")
    refs = {w for w in out.split() if w.startswith("codex:")}
    assert refs == {f"codex:{v}" for v in shorts.values()}
    for ref in refs:
        code, out, err = run(capsys, *args, "--json", "show", ref)
        assert code == 0, err
        assert shorts[json.loads(out)["session"]["id"]] == ref.split(":", 1)[1]
    # The 8-character prefix the CLI used to print is ambiguous: a usage error, not a guess.
    code, out, err = run(capsys, *args, "show", "codex:019e9625")
    assert code == 2 and "ambiguous" in err


def test_short_id_floor_for_subagents() -> None:
    docs: list[dict[str, Any]] = [{"agent": "claude-code", "id": "agent-a0ad4f44468bdf20d"}]
    assert fmt.unique_short_ids(docs) == ["agent-a0ad4f44"]


def test_compaction_is_a_divider_with_the_summary_folded(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    args = base(tmp_path / "data", f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}")
    code, out, err = run(capsys, *args, "show", "claude-code:ae4a77f8", "--from", "1143")
    assert code == 0, err
    lines = out.splitlines()
    # --from starts at that event (after the header).
    assert lines[3].endswith("#1143 ──── context compacted (manual, 142,431 tokens before) ────")
    assert lines[4].endswith("#1144 compaction summary")
    assert lines[5].startswith("  This session is being continued from a previous conversation")
    assert lines[8].startswith("  … summary folded: ") and lines[8].endswith(" more lines (--full)")
    code, full, err = run(capsys, *args, "show", "claude-code:ae4a77f8", "--from", "1143", "--full")
    assert "summary folded" not in full and len(full.splitlines()) > len(lines)
    code, around, err = run(
        capsys, *args, "show", "claude-code:ae4a77f8", "--around", "1143", "--context", "1"
    )
    seqs = [int(x.split("#")[1].split()[0]) for x in around.splitlines() if x.startswith("[") and "#" in x]
    assert seqs == [1142, 1143, 1144]


def test_pi_inactive_branch_is_left_out_of_show(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    """Pi marks only extra.branch: show leaves its abandoned branch out (saying so), --branches
    prints it."""
    root = corpus / "pi" / "synthetic-agtail" / ".pi" / "agent" / "sessions"
    args = base(tmp_path / "data", f"pi={root}")
    code, out, err = run(capsys, *args, "--json", "list")
    (s,) = json.loads(out)["sessions"]
    code, out, err = run(capsys, *args, "--json", "show", f"pi:{s['id']}")
    inactive = [e["seq"] for e in json.loads(out)["events"] if e["extra"].get("branch") == "inactive"]
    assert inactive
    code, out, err = run(capsys, *args, "show", f"pi:{s['id']}")
    shown = {int(x.split("#")[1].split()[0]) for x in out.splitlines() if x.startswith("[") and "] #" in x}
    assert not shown & set(inactive)
    assert "⑂ events on other branches are left out: show --branches" in out
    code, out, err = run(capsys, *args, "show", f"pi:{s['id']}", "--branches")
    assert code == 0, err
    shown = {int(x.split("#")[1].split()[0]) for x in out.splitlines() if x.startswith("[") and "] #" in x}
    assert set(inactive) <= shown and "⑂ on another branch (inactive)" in out
