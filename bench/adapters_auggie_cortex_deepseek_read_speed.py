#!/usr/bin/env python3
"""Read speed of the Auggie, Snowflake Cortex Code and DeepSeek TUI formats (issue 29), next to the
Claude Code adapter on the same machine in the same run.

Each format gets one synthetic session of about ``--mb`` MB made by repeating the records of its
hand-made sample (tests/corpus/<agent>/synthetic-agtail), tool ids renumbered per copy so every
result still merges into its own call: Auggie's chatHistory items (one document), Cortex Code's
history messages (once inside the document, once moved to the ``.history.jsonl`` beside it),
DeepSeek TUI's messages. It is read from scratch ``--repeat`` times; the best CPU time counts.
Claude is measured the same way on a repeated real Claude Code 2.1.197 transcript (the reference
of bench/adapters_c_read_speed.py). Run from the repo:
``.venv/bin/python bench/adapters_auggie_cortex_deepseek_read_speed.py --mb 8``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.auggie import AuggieAdapter
from agtaild.adapters.base import Adapter
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.cortex_code import CortexCodeAdapter
from agtaild.adapters.deepseek_tui import DeepSeekTuiAdapter
from bench.adapters_c_read_speed import compare, repeat_jsonl

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
CLAUDE = (
    CORPUS
    / "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"
)
AUGGIE = CORPUS / "auggie/synthetic-agtail/.augment/sessions/5b1c7f0e-2d4a-4c61-9f7e-0a1b2c3d4e5f.json"
CORTEX = (
    CORPUS
    / "cortex-code/synthetic-agtail/.snowflake/cortex/conversations/3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c.json"
)
DEEPSEEK = (
    CORPUS / "deepseek-tui/synthetic-agtail/.deepseek/sessions/a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.json"
)


def copies(items: list[Any], mb: float, prefixes: tuple[str, ...]) -> list[Any]:
    """``items`` again and again up to ``mb`` MB, each copy's tool ids made its own."""
    text = json.dumps(items, ensure_ascii=False)
    out: list[Any] = []
    for i in range(max(1, int(mb * 1e6 / len(text.encode())))):
        copy = text
        for prefix in prefixes:
            copy = copy.replace(f'"{prefix}', f'"{prefix}{i}_')
        out += json.loads(copy)
    return out


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    out: dict[str, tuple[Adapter, Path]] = {}
    repeat_jsonl(CLAUDE, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")

    doc = json.loads(AUGGIE.read_text(encoding="utf-8"))
    doc["chatHistory"] = copies(doc["chatHistory"], mb, ("toolu_", "req-a"))
    doc["subAgents"] = []
    (work / "auggie/sessions").mkdir(parents=True)
    (work / "auggie/sessions/big.json").write_text(
        json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    out["auggie session JSON"] = (AuggieAdapter(), work / "auggie")

    doc = json.loads(CORTEX.read_text(encoding="utf-8"))
    history = copies(doc["history"], mb, ("tu_",))
    (work / "cortex").mkdir()
    (work / "cortex/big.json").write_text(json.dumps({**doc, "history": history}, indent=2), encoding="utf-8")
    out["cortex-code conversation JSON"] = (CortexCodeAdapter(), work / "cortex")
    (work / "cortex-split").mkdir()
    (work / "cortex-split/big.json").write_text(
        json.dumps({k: v for k, v in doc.items() if k != "history"}), encoding="utf-8"
    )
    lines = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in history)
    (work / "cortex-split/big.history.jsonl").write_text(lines, encoding="utf-8")
    out["cortex-code .history.jsonl"] = (CortexCodeAdapter(), work / "cortex-split")

    doc = json.loads(DEEPSEEK.read_text(encoding="utf-8"))
    doc["messages"] = copies(doc["messages"], mb, ("call_", "srv_"))
    (work / "deepseek").mkdir()
    (work / "deepseek/big.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    out["deepseek-tui SavedSession JSON"] = (DeepSeekTuiAdapter(), work / "deepseek")
    return out


def main(argv: list[str] | None = None) -> int:
    return compare(build, __doc__, argv, mb=8.0)


if __name__ == "__main__":
    sys.exit(main())
