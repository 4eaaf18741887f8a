#!/usr/bin/env python3
"""Read speed of the Codebuff, Junie, Tabnine CLI, TRAE CLI and Windsurf formats (issue 29), next
to the Claude Code adapter on the same machine in the same run.

Codebuff: the hand-made main chat's messages repeated into one ``chat-messages.json`` of about
``--mb`` MB (ids and tool-call ids made unique per copy). Junie: the real IDE-hosted session's
``events.jsonl`` lines (tests/corpus/junie/observer) repeated, the ``stepId``s renamed per copy
so that each copy's blocks stay their own steps. Tabnine CLI and TRAE CLI: their derived samples'
main session repeated after its header line (Tabnine's message ids made unique per copy; the
Gemini CLI and Codex readers). Windsurf: ``.pb`` files of random bytes (what
an encrypted trajectory looks like), 200 KB each, one session and one event each. Each is read
from scratch ``--repeat`` times; the best CPU time counts. Claude is measured the same way on a
repeated real Claude Code 2.1.197 transcript (bench/adapters_c_read_speed.py's reference).
Run from the repo: ``nice -n 5 .venv/bin/python bench/adapters_f_read_speed.py --mb 4``.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.base import Adapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.codebuff import CodebuffAdapter
from agtaild.adapters.junie import JunieAdapter
from agtaild.adapters.tabnine import TabnineAdapter
from agtaild.adapters.trae_cli import TraeCliAdapter
from agtaild.adapters.windsurf import WindsurfAdapter
from bench.adapters_c_read_speed import compare, repeat_jsonl

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
CLAUDE = (
    CORPUS
    / "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"
)
CODEBUFF_CHAT = CORPUS / "codebuff/handmade/manicode/projects/demo-app/chats/2026-11-30T09-15-02.114Z"
JUNIE_LOG = CORPUS / "junie/observer/sessions/session-260816-220304-lrfz/events.jsonl"
TABNINE_CHAT = (
    CORPUS / "tabnine/derived/.tabnine/agent/tmp/demo-app/chats/session-2026-11-30T00-28-3ebd1d67.jsonl"
)
TRAE_ROLLOUT = CORPUS / (
    "trae-cli/derived/.trae/cli/sessions/2026/11/30/rollout-2026-11-30T00-25-36-01a229d7-c676-78a1-a3ee-2b022b275b04.jsonl"
)
_IDS = re.compile(r'"(id|toolCallId|spawnToolCallId|agentId)": "([^"]+)"')
_STEP = re.compile(rb'"stepId":"([^"]+)"')
_ID = re.compile(rb'"id":"([^"]+)"')


def codebuff_chat(dst: Path, mb: float) -> None:
    text = (CODEBUFF_CHAT / "chat-messages.json").read_text(encoding="utf-8")
    one = len(text.encode())
    copies = []
    for i in range(max(1, int(mb * 1e6 / one))):
        copies.extend(json.loads(_IDS.sub(lambda m, i=i: f'"{m.group(1)}": "{m.group(2)}-{i}"', text)))
    dst.mkdir(parents=True)
    (dst / "chat-messages.json").write_text(json.dumps(copies, indent=2), encoding="utf-8")
    shutil.copy(CODEBUFF_CHAT / "run-state.json", dst / "run-state.json")


def junie_log(dst: Path, mb: float) -> None:
    lines = JUNIE_LOG.read_bytes().splitlines(keepends=True)
    dst.parent.mkdir(parents=True)
    with open(dst, "wb") as fh:
        i = 0
        while fh.tell() < mb * 1e6:
            for line in lines:
                fh.write(_STEP.sub(lambda m, i=i: b'"stepId":"' + m.group(1) + f"-{i}".encode() + b'"', line))
            i += 1


def repeat_renamed(src: Path, dst: Path, mb: float) -> None:
    """The header line once, then the rest again and again with every ``"id"`` made unique per copy
    (a replay that keys messages by id would otherwise fold the copies into one)."""
    lines = src.read_bytes().splitlines(keepends=True)
    dst.parent.mkdir(parents=True)
    with open(dst, "wb") as fh:
        fh.write(lines[0])
        i = 0
        while fh.tell() < mb * 1e6:
            for line in lines[1:]:
                fh.write(_ID.sub(lambda m, i=i: b'"id":"' + m.group(1) + f"-{i}".encode() + b'"', line))
            i += 1


def windsurf_files(dst: Path, mb: float) -> None:
    dst.mkdir(parents=True)
    rng = random.Random(29)
    for i in range(max(1, int(mb * 1e6 / 200_000))):
        (dst / f"{i:08d}-0000-4000-8000-000000000000.pb").write_bytes(rng.randbytes(200_000))


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    out: dict[str, tuple[Adapter, Path]] = {}
    repeat_jsonl(CLAUDE, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")
    codebuff_chat(work / "codebuff/demo-app/chats/2026-11-30T09-15-02.114Z", mb)
    out["codebuff chat-messages.json"] = (CodebuffAdapter(), work / "codebuff")
    junie_log(work / "junie/session-260816-220304-lrfz/events.jsonl", mb)
    out["junie events.jsonl"] = (JunieAdapter(), work / "junie")
    repeat_renamed(TABNINE_CHAT, work / "tabnine/demo-app/chats" / TABNINE_CHAT.name, mb)
    out["tabnine chat JSONL (Gemini CLI reader)"] = (TabnineAdapter(), work / "tabnine")
    repeat_jsonl(TRAE_ROLLOUT, work / "trae/2026/11/30" / TRAE_ROLLOUT.name, mb, head=1)
    out["trae-cli rollout JSONL (Codex reader)"] = (TraeCliAdapter(), work / "trae")
    windsurf_files(work / "windsurf", mb)
    out["windsurf cascade .pb (listing)"] = (WindsurfAdapter(), work / "windsurf")
    return out


def main(argv: list[str] | None = None) -> int:
    return compare(build, __doc__, argv, mb=4.0)


if __name__ == "__main__":
    sys.exit(main())
