#!/usr/bin/env python3
"""Read the per-token prices ccusage applies, by feeding it one synthetic request per model
and token kind (--tokens each, one day apart) and reading back the cost it reports.

Used to cross-check agtaild/data/pricing.json against the LiteLLM snapshot that
ccusage embeds (``--offline``). Prints one JSON object: model -> {input, output, cache_write,
cache_read} in USD per million tokens (null where ccusage reports no cost).

Usage: probe_ccusage_prices.py [--ccusage PATH] MODEL...
Models starting with "gpt", "o3", "o4" or "codex" are probed through the Codex reader.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

KINDS = ("input", "output", "cache_write", "cache_read")
DEFAULT_CCUSAGE = Path(__file__).resolve().parent.parent / ".ci/node/node_modules/.bin/ccusage"


def claude_lines(model: str, n: int = 100_000) -> list[dict]:
    lines = []
    for i, kind in enumerate(KINDS):
        usage = {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        key = {
            "input": "input_tokens",
            "output": "output_tokens",
            "cache_write": "cache_creation_input_tokens",
            "cache_read": "cache_read_input_tokens",
        }[kind]
        usage[key] = n
        lines.append(
            {
                "parentUuid": None,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/probe",
                "sessionId": "probe",
                "version": "2.0.1",
                "gitBranch": "main",
                "type": "assistant",
                "timestamp": f"2026-01-0{i + 1}T12:00:00.000Z",
                "requestId": f"req_{i}",
                "uuid": f"00000000-0000-4000-8000-00000000000{i}",
                "message": {
                    "id": f"msg_{i:024d}",
                    "model": model,
                    "role": "assistant",
                    "type": "message",
                    "content": [{"type": "text", "text": "x"}],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "service_tier": "standard"},
                },
            }
        )
    return lines


def codex_lines(model: str, n: int = 100_000) -> list[dict]:
    lines = [
        {
            "timestamp": "2026-01-01T00:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "probe", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/probe"},
        },
        {
            "timestamp": "2026-01-01T00:00:00.000Z",
            "type": "turn_context",
            "payload": {"cwd": "/probe", "model": model},
        },
    ]
    total = {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "output_tokens": 0,
        "reasoning_output_tokens": 0,
        "total_tokens": 0,
    }
    for i, kind in enumerate(("input", "output", "cache_read")):
        last = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0}
        if kind == "input":
            last["input_tokens"] = n
        elif kind == "output":
            last["output_tokens"] = n
        else:
            last["input_tokens"] = last["cached_input_tokens"] = n
        last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
        for k in total:
            total[k] += last[k]
        lines.append(
            {
                "timestamp": f"2026-01-0{i + 1}T12:00:00.000Z",
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {"total_token_usage": dict(total), "last_token_usage": last},
                },
            }
        )
    return lines


def run(ccusage: str, sub: str, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [ccusage, sub, "daily", "--offline", "--json", "--breakdown"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ccusage", default=str(DEFAULT_CCUSAGE))
    ap.add_argument(
        "--tokens",
        type=int,
        default=100_000,
        help="tokens per request (default 100k: under the 200k long-context tier)",
    )
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    result: dict[str, dict[str, float | None]] = {}
    for model in a.models:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            env = {
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(t / "home"),
                "TZ": "UTC",
                "CLAUDE_CONFIG_DIR": str(t / "claude"),
                "CODEX_HOME": str(t / "codex"),
            }
            codex = model.startswith(("gpt", "o1", "o3", "o4", "codex"))
            if codex:
                d = t / "codex/sessions/2026/01/01"
                d.mkdir(parents=True)
                lines, sub, kinds = codex_lines(model, a.tokens), "codex", ("input", "output", "cache_read")
                (d / "rollout-2026-01-01T00-00-00-probe.jsonl").write_text(
                    "\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n"
                )
            else:
                d = t / "claude/projects/-probe"
                d.mkdir(parents=True)
                lines, sub, kinds = claude_lines(model, a.tokens), "claude", KINDS
                (d / "probe.jsonl").write_text(
                    "\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n"
                )
            days = run(a.ccusage, sub, env).get("daily", [])
            prices: dict[str, float | None] = {}
            for i, kind in enumerate(kinds):
                day = f"2026-01-0{i + 1}"
                row = next((r for r in days if r.get("date") == day), None)
                cost = None if row is None else row.get("totalCost", row.get("costUSD"))
                prices[kind] = None if cost is None else round(cost * 1_000_000 / a.tokens, 6)
            result[model] = prices
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
