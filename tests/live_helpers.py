"""Synthetic Claude Code and Codex sessions with known response times, indexed for real:
what the live-usage tests (API, `top`, statusline, report) read."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agtaild.config import Config, RootSpec
from tests.claude_code_helpers import assistant_line, usage_dict

#: The tests' "now": 2026-03-01 12:00 UTC.
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC).timestamp()
REPO_TESTS = Path(__file__).resolve().parent


def stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def claude_session(root: Path, sid: str, cwd: str, times: list[float], tokens: int = 1000, prompt: str = "do it") -> Path:
    """A Claude Code session: one user prompt, then an assistant response at each time, each
    with ``tokens`` input and a tenth of them output."""
    path = root / ("-" + cwd.strip("/").replace("/", "-")) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    first = times[0] - 5 if times else NOW - 3600
    lines: list[dict[str, Any]] = [
        {"type": "user", "uuid": f"{sid}-u", "timestamp": stamp(first), "sessionId": sid, "cwd": cwd,
         "version": "2.1.100", "message": {"role": "user", "content": prompt}},
    ]  # fmt: skip
    for i, t in enumerate(times):
        line = assistant_line(f"{sid}-a{i}", f"msg_{sid}_{i}", f"req_{sid}_{i}", usage_dict(tokens, tokens // 10))
        line.update(timestamp=stamp(t), sessionId=sid, cwd=cwd)
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    settle = (times[-1] if times else first) + 1
    os.utime(path, (settle, settle))
    return path


def codex_rollout(root: Path, sid: str, when: float, limits: Any, cwd: str = "/w/codex-app") -> Path:
    """A Codex rollout with one response and its token_count carrying ``limits`` as rate_limits."""
    day = datetime.fromtimestamp(when, UTC)
    path = root / day.strftime("%Y/%m/%d") / f"rollout-{day.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    usage = {"input_tokens": 5000, "cached_input_tokens": 1000, "output_tokens": 200, "reasoning_output_tokens": 50, "total_tokens": 5200}
    lines = [
        {"timestamp": stamp(when - 10), "type": "session_meta",
         "payload": {"id": sid, "timestamp": stamp(when - 10), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.200.0"}},
        {"timestamp": stamp(when - 9), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.5"}},
        {"timestamp": stamp(when - 8), "type": "event_msg", "payload": {"type": "user_message", "message": "fix the build"}},
        {"timestamp": stamp(when - 1), "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        {"timestamp": stamp(when), "type": "event_msg",
         "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}, "rate_limits": limits}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (when + 1, when + 1))
    return path


def live_config(tmp: Path) -> tuple[Config, Path, Path]:
    claude = tmp / "claude" / "projects"
    codex = tmp / "codex" / "sessions"
    claude.mkdir(parents=True)
    codex.mkdir(parents=True)
    config = Config(
        data_dir=str(tmp / "data"), roots=[RootSpec("claude-code", str(claude)), RootSpec("codex", str(codex))], archive=False
    )
    return config, claude, codex


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
