#!/usr/bin/env python3
"""Read speed of the iFlow CLI, Qoder CLI, Claude Desktop and Google Antigravity formats
(issue 29), next to the Claude Code adapter on the same machine in the same run.

Each format gets one synthetic session of about ``--mb`` MB made by repeating the records of
its hand-made sample (tests/corpus/<agent>/handmade) with the call ids renumbered in each copy
(so iFlow's and Antigravity's call-to-result matching does real work): iFlow's ``-p`` session,
Qoder's main session, Claude Desktop's Cowork transcript (in its session folder, beside its
record), Antigravity's CLI step log (without its torn last line). It is read from scratch
``--repeat`` times; the best CPU time counts. Claude is measured the same way on a repeated
real Claude Code 2.1.197 transcript (bench/adapters_c_read_speed.py's reference).
Run from the repo: ``nice -n 5 .venv/bin/python bench/adapters_i_read_speed.py --mb 8``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.antigravity import AntigravityAdapter
from agtaild.adapters.base import Adapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude_desktop import ClaudeDesktopAdapter
from agtaild.adapters.iflow import IflowAdapter
from agtaild.adapters.qoder import QoderAdapter
from bench.adapters_c_read_speed import compare, repeat_jsonl

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
CLAUDE = (
    CORPUS
    / "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"
)


def repeat_renumbered(
    src: Path, dst: Path, mb: float, marker: bytes | None, *, drop_torn: bool = False
) -> None:
    """``src``'s complete lines again and again up to ``mb`` MB, ``marker`` (the start of every
    call id; None: no ids to renumber) made unique in each copy."""
    lines = src.read_bytes().splitlines(keepends=True)
    if drop_torn and lines and not lines[-1].endswith(b"\n"):
        lines = lines[:-1]
    body = b"".join(lines)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as fh:
        i = 0
        while fh.tell() < mb * 1e6:
            fh.write(body if marker is None else body.replace(marker, marker + b"r%d_" % i))
            i += 1


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    out: dict[str, tuple[Adapter, Path]] = {}
    repeat_jsonl(CLAUDE, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")
    iflow = (
        CORPUS
        / "iflow/handmade/projects/-home-dev-demo-app/session-7c1d5e20-93ab-4f61-b2c4-d8e9f0a1b2c3.jsonl"
    )
    repeat_renumbered(iflow, work / "iflow/p/session-big.jsonl", mb, b'"call_')
    out["iflow session JSONL"] = (IflowAdapter(), work / "iflow")
    qoder = CORPUS / "qoder/handmade/projects/-home-dev-demo-app/8e41c2d7-3a5f-4b96-a0d1-7c2e9f4b6a13.jsonl"
    repeat_renumbered(qoder, work / "qoder/p/8e41c2d7-3a5f-4b96-a0d1-7c2e9f4b6a13.jsonl", mb, b'"toolu_')
    out["qoder session JSONL"] = (QoderAdapter(), work / "qoder")
    cowork = next(
        (CORPUS / "claude-desktop/handmade/Claude/local-agent-mode-sessions").rglob(
            "e5f0a1b2-c3d4-4e5f-9a0b-1c2d3e4f5a6b.jsonl"
        )
    )
    record = next(
        (CORPUS / "claude-desktop/handmade/Claude/local-agent-mode-sessions").rglob("local_3c7a9e12-*.json")
    )
    folder = work / "desktop/local-agent-mode-sessions/o/a"
    folder.mkdir(parents=True)
    shutil.copy(record, folder / record.name)
    repeat_renumbered(
        cowork,
        folder / record.stem / ".claude/projects/-sessions-x" / cowork.name,
        mb,
        b'"toolu_',
        drop_torn=True,
    )
    out["claude-desktop Cowork transcript"] = (
        ClaudeDesktopAdapter(),
        work / "desktop/local-agent-mode-sessions",
    )
    steps = next((CORPUS / "antigravity/handmade/antigravity-cli").rglob("transcript_full.jsonl"))
    repeat_renumbered(
        steps,
        work / "antigravity-cli/brain/c1/.system_generated/logs/transcript_full.jsonl",
        mb,
        None,
        drop_torn=True,
    )
    out["antigravity CLI step log"] = (AntigravityAdapter(), work / "antigravity-cli")
    return out


def main(argv: list[str] | None = None) -> int:
    return compare(build, __doc__, argv, mb=8.0)


if __name__ == "__main__":
    sys.exit(main())
