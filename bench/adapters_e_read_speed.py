#!/usr/bin/env python3
"""Read speed of the chat services' export formats (ChatGPT, Claude.ai, Gemini Apps; issue 29),
next to the Claude Code adapter on the same machine in the same run.

Each format gets one stored conversation of about ``--mb`` MB made by repeating the records of
its hand-made sample (tests/corpus/<agent>/synthetic-agtail/store): ChatGPT's message nodes
of the larger sample (both branches, ids renumbered into one chain), Claude.ai's chat messages of the branched
sample (parents renumbered into one chain), Gemini's entries (times spread a minute apart, so
one session). It is read from scratch ``--repeat`` times; the best CPU time counts. Claude is
measured the same way on a repeated real Claude Code 2.1.197 transcript
(bench/adapters_c_read_speed.py's reference).
Run from the repo: ``.venv/bin/python bench/adapters_e_read_speed.py --mb 4``.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.base import Adapter
from agtaild.adapters.chatgpt import ChatGptAdapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.claude_ai import ClaudeAiAdapter
from agtaild.adapters.gemini_apps import GeminiAppsAdapter
from bench.adapters_c_read_speed import compare, repeat_jsonl
from bench.adapters_d_read_speed import CLAUDE

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def _sample(agent: str) -> list[Any]:
    folder = CORPUS / agent / "synthetic-agtail" / "store"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def _times(n: int) -> int:
    return max(1, n)


def chatgpt_doc(dst: Path, mb: float) -> None:
    conv = max(_sample("chatgpt"), key=lambda c: len(c["mapping"]))
    nodes = [n for n in conv["mapping"].values() if n.get("message")]
    one = len(json.dumps(nodes).encode())
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    prev = "root"
    for i in range(_times(int(mb * 1e6 / one))):
        for n in nodes:
            nid = f"{n['id']}-{i}"
            mapping[prev]["children"] = [nid]
            mapping[nid] = {**n, "id": nid, "parent": prev, "children": [],
                            "message": {**n["message"], "id": nid}}  # fmt: skip
            prev = nid
    dst.parent.mkdir(parents=True)
    dst.write_text(json.dumps({**conv, "mapping": mapping, "current_node": prev}), encoding="utf-8")


def claude_ai_doc(dst: Path, mb: float) -> None:
    conv = next(
        c for c in _sample("claude-ai") if any("parent_message_uuid" in m for m in c["chat_messages"])
    )
    msgs = conv["chat_messages"]
    one = len(json.dumps(msgs).encode())
    out: list[Any] = []
    prev = "00000000-0000-4000-8000-000000000000"
    for i in range(_times(int(mb * 1e6 / one))):
        for m in msgs:
            text = json.dumps(m).replace('"toolu_01"', f'"toolu_{i}"')
            uuid = f"{m['uuid']}-{i}"
            out.append({**json.loads(text), "uuid": uuid, "parent_message_uuid": prev})
            prev = uuid
    dst.parent.mkdir(parents=True)
    dst.write_text(
        json.dumps({**conv, "chat_messages": out, "current_leaf_message_uuid": prev}), encoding="utf-8"
    )


def gemini_doc(dst: Path, mb: float) -> None:
    entries = [e for group in _sample("gemini-apps") for e in group]
    one = len(json.dumps(entries).encode())
    start = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i in range(_times(int(mb * 1e6 / one)) * len(entries)):
        e = entries[i % len(entries)]
        out.append({**e, "time": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")})
    dst.parent.mkdir(parents=True)
    dst.write_text(json.dumps(out), encoding="utf-8")


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    out: dict[str, tuple[Adapter, Path]] = {}
    repeat_jsonl(CLAUDE, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")
    chatgpt_doc(work / "chatgpt/big.json", mb)
    out["chatgpt conversation .json"] = (ChatGptAdapter(), work / "chatgpt")
    claude_ai_doc(work / "claude-ai/big.json", mb)
    out["claude-ai conversation .json"] = (ClaudeAiAdapter(), work / "claude-ai")
    gemini_doc(work / "gemini-apps/big.json", mb)
    out["gemini-apps session .json"] = (GeminiAppsAdapter(), work / "gemini-apps")
    return out


def main(argv: list[str] | None = None) -> int:
    return compare(build, __doc__, argv, mb=4.0)


if __name__ == "__main__":
    sys.exit(main())
