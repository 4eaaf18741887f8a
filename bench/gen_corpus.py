#!/usr/bin/env python3
"""A deterministic synthetic corpus of Claude Code and Codex transcripts, for the benchmarks.

    bench/gen_corpus.py OUT --mb 200 [--seed 1] [--codex-share 0.3]
    bench/gen_corpus.py OUT --one-session --mb 50      # one long Claude Code session
    bench/gen_corpus.py OUT --mb 200 --standalone-subagents

``--standalone-subagents``: the subagent transcripts are written as sessions of their own (their
records carry the file's name, ``agent-<id>``, as ``sessionId``, no ``agentId``, and are not
marked as a sidechain) and a compaction's summary starts with a shorter sentence — the record
shapes of the other reference generator of these benchmarks (a shared ``bench/gen_corpus.py``
beside the project). Both write about 900 lines (450 events) per MiB: 200 MiB gave 186,405
lines and 94,399 events here, 189,170 lines and 93,364 events there.

Native layouts under OUT (so ``--root claude-code=OUT/claude/projects`` and
``--root codex=OUT/codex/sessions`` read it, and so does ccusage with CLAUDE_CONFIG_DIR=OUT/claude,
CODEX_HOME=OUT/codex):

    OUT/claude/projects/<encoded cwd>/<uuid>.jsonl       (+ <uuid>/subagents/agent-<id>.jsonl, .meta.json)
    OUT/codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl

The records have the shapes that cost time in a real index: an assistant response split over one
line per content block that repeat its message id and usage, thinking, tool calls and their
results (with Claude's ``toolUseResult`` copy), compaction, file-history snapshots, titles,
subagents; Codex turns with reasoning, shell calls, outputs and running ``token_count`` totals.
Whether agtail reads the formats *correctly* is tested on real files (tests/corpus), not here.

Prints one JSON line: ``sessions``, ``lines``, ``bytes`` and ``needles``: rare words, each planted
in the first prompt of exactly one session (every 97th), for search figures.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

VOCABULARY: tuple[str, ...] = tuple(
    str.split(
        "the parser fails when a fixture path has spaces so refactor adapters into one module and add "
        "an index migration for sqlite fts5 trigram search watcher debounce inotify rename truncate "
        "resume session cwd token usage cost model cache read write branch compact summary hook "
        "subagent tool result error traceback assert expected actual timeout retry socket http json rpc "
        "daemon systemd launchd import store collection sync push pull rsync checksum manifest conflict "
        "merge テスト 失敗 原因 調べて 修正 して ください 設計 索引 検索 並行 例外 "
        "def class return async await import from self None True False lambda yield"
    )
)

CLAUDE_MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001")
CLAUDE_TOOLS = ("Bash", "Read", "Edit", "Grep", "Write", "Task")


class Words:
    """Random prose from a small vocabulary (English, Japanese and code words)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, low: int, high: int) -> str:
        return " ".join(self.rng.choices(VOCABULARY, k=self.rng.randint(low, high)))


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    path.write_text(body, encoding="utf-8")
    return len(body.encode())


class ClaudeSession:
    """One Claude Code session file, built record by record along a parentUuid chain."""

    def __init__(
        self, rng: random.Random, session_id: str, cwd: str, start: datetime, standalone: bool = False
    ) -> None:
        self.rng, self.words, self.clock = rng, Words(rng), start
        self.standalone = standalone  # the shapes of --standalone-subagents
        self.records: list[dict[str, Any]] = []
        self.last_uuid: str | None = None
        self.common = {
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session_id,
            "version": f"2.0.{rng.randint(1, 60)}",
            "gitBranch": "main",
        }
        self.cwd = cwd

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, low_ms: int, high_ms: int) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(low_ms, high_ms))
        return stamp(self.clock)

    def chained(self, record: dict[str, Any]) -> None:
        record = {**self.common, **record, "uuid": self.new_id(), "parentUuid": self.last_uuid}
        self.last_uuid = record["uuid"]
        self.records.append(record)

    def prompt(self, text: str) -> None:
        self.chained(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "timestamp": self.tick(5000, 300000),
            }
        )

    def response(self) -> None:
        """One API response: a line per content block, each repeating the id and the usage."""
        rng, words = self.rng, self.words
        message_id = "msg_" + self.new_id().replace("-", "")[:24]
        usage = {
            "input_tokens": rng.randint(1, 50),
            "cache_creation_input_tokens": rng.randint(0, 5000),
            "cache_read_input_tokens": rng.randint(0, 90000),
            "output_tokens": rng.randint(10, 2000),
            "service_tier": "standard",
        }
        blocks: list[dict[str, Any]] = []
        if rng.random() < 0.5:
            blocks.append(
                {"type": "thinking", "thinking": words(20, 200), "signature": "sig" + self.new_id()}
            )
        blocks.append({"type": "text", "text": words(10, 150)})
        call_id = None
        if rng.random() < 0.7:
            call_id = "toolu_" + self.new_id().replace("-", "")[:24]
            tool = rng.choice(CLAUDE_TOOLS)
            tool_input = (
                {"command": words(6, 6)}
                if tool == "Bash"
                else {"file_path": f"{self.cwd}/src/{rng.choice(VOCABULARY)}.py"}
            )
            blocks.append({"type": "tool_use", "id": call_id, "name": tool, "input": tool_input})
        model = rng.choice(CLAUDE_MODELS)
        for block in blocks:
            message = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            self.chained(
                {
                    "type": "assistant",
                    "requestId": "req_" + message_id[4:],
                    "message": message,
                    "timestamp": self.tick(50, 4000),
                }
            )
        if call_id:
            output = words(5, 800)
            result = {
                "tool_use_id": call_id,
                "type": "tool_result",
                "content": output,
                "is_error": rng.random() < 0.1,
            }
            self.chained(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [result]},
                    "toolUseResult": {"stdout": output[:200], "stderr": "", "interrupted": False},
                    "timestamp": self.tick(100, 20000),
                }
            )

    def compaction(self) -> None:
        now = stamp(self.clock)
        lead = (
            "This session is being continued. "
            if self.standalone
            else ("This session is being continued from an earlier conversation. ")
        )
        self.chained(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "level": "info",
                "compactMetadata": {"trigger": "auto", "preTokens": self.rng.randint(100000, 170000)},
                "timestamp": now,
            }
        )
        summary = lead + self.words(120, 120)
        self.chained(
            {
                "type": "user",
                "isCompactSummary": True,
                "isVisibleInTranscriptOnly": True,
                "message": {"role": "user", "content": summary},
                "timestamp": now,
            }
        )

    def snapshot(self) -> None:
        self.records.append(
            {
                "type": "file-history-snapshot",
                "messageId": self.new_id(),
                "isSnapshotUpdate": False,
                "snapshot": {
                    "messageId": self.new_id(),
                    "trackedFileBackups": {},
                    "timestamp": stamp(self.clock),
                },
            }
        )

    def conversation(self, turns: int, needle: str | None) -> None:
        for turn in range(turns):
            text = self.words(5, 60)
            self.prompt(f"{text} {needle}" if turn == 0 and needle else text)
            for _ in range(self.rng.randint(1, 4)):
                self.response()
            if self.rng.random() < 0.03:
                self.compaction()
            if self.rng.random() < 0.2:
                self.snapshot()
        self.records.append(
            {"type": "ai-title", "sessionId": self.common["sessionId"], "aiTitle": self.words(5, 5)}
        )


def claude_session(
    rng: random.Random,
    folder: Path,
    cwd: str,
    start: datetime,
    turns: int,
    needle: str | None,
    standalone: bool = False,
) -> tuple[int, int]:
    """Write one session (and sometimes a subagent beside it); returns (lines, bytes)."""
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    session = ClaudeSession(rng, session_id, cwd, start, standalone)
    session.conversation(turns, needle)
    size = write_jsonl(folder / f"{session_id}.jsonl", session.records)
    lines = len(session.records)
    if rng.random() < 0.15:
        agent_id = str(uuid.UUID(int=rng.getrandbits(128))).replace("-", "")[:16]
        sub_folder = folder / session_id / "subagents"
        sub = ClaudeSession(rng, session_id, cwd, session.clock, standalone)
        if standalone:  # a transcript of its own: its own name as the session id
            sub.common["sessionId"] = f"agent-{agent_id}"
        else:
            sub.common["isSidechain"] = True
            sub.common["agentId"] = agent_id
        sub.conversation(rng.randint(1, 4), None)
        size += write_jsonl(sub_folder / f"agent-{agent_id}.jsonl", sub.records)
        meta = {"agentType": "general-purpose", "description": Words(rng)(4, 4)}
        (sub_folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(meta))
        lines += len(sub.records)
    return lines, size


def codex_session(
    rng: random.Random, root: Path, cwd: str, start: datetime, turns: int, needle: str | None
) -> tuple[int, int]:
    """Write one Codex rollout; returns (lines, bytes)."""
    words = Words(rng)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    clock = start
    records: list[dict[str, Any]] = []

    def put(kind: str, payload: dict[str, Any]) -> None:
        records.append({"timestamp": stamp(clock), "type": kind, "payload": payload})

    put(
        "session_meta",
        {
            "id": session_id,
            "timestamp": stamp(clock),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": f"0.{rng.randint(40, 60)}.0",
            "instructions": None,
            "git": {"commit_hash": uuid.UUID(int=rng.getrandbits(128)).hex, "branch": "main"},
        },
    )
    running = dict.fromkeys(
        ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"), 0
    )
    for turn in range(turns):
        clock += timedelta(seconds=rng.randint(5, 300))
        prompt = words(5, 60) + (f" {needle}" if turn == 0 and needle else "")
        put(
            "turn_context",
            {
                "cwd": cwd,
                "approval_policy": "on-request",
                "model": "gpt-5-codex",
                "effort": "medium",
                "summary": "auto",
            },
        )
        put(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
        )
        put("event_msg", {"type": "user_message", "message": prompt, "images": []})
        put("event_msg", {"type": "task_started", "model_context_window": 272000})
        for _ in range(rng.randint(1, 4)):
            clock += timedelta(milliseconds=rng.randint(100, 5000))
            thought = words(10, 100)
            put("event_msg", {"type": "agent_reasoning", "text": thought})
            put(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": thought}],
                    "content": None,
                    "encrypted_content": "gAAA" + uuid.UUID(int=rng.getrandbits(128)).hex,
                },
            )
            call_id = "call_" + uuid.UUID(int=rng.getrandbits(128)).hex[:24]
            command = ["bash", "-lc", words(4, 4)]
            put(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps({"command": command}),
                    "call_id": call_id,
                },
            )
            put(
                "event_msg",
                {"type": "exec_command_begin", "call_id": call_id, "command": command, "cwd": cwd},
            )
            output = words(5, 600)
            put(
                "event_msg",
                {
                    "type": "exec_command_end",
                    "call_id": call_id,
                    "stdout": output,
                    "stderr": "",
                    "exit_code": 0,
                    "duration": {"secs": 0, "nanos": 1000},
                },
            )
            put(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": json.dumps(
                        {"output": output, "metadata": {"exit_code": 0, "duration_seconds": 0.1}}
                    ),
                },
            )
            # Codex counts cached input inside input and reasoning inside output.
            prompt_tokens, answer_tokens = rng.randint(1000, 60000), rng.randint(10, 3000)
            last = {
                "input_tokens": prompt_tokens,
                "cached_input_tokens": rng.randint(0, prompt_tokens),
                "output_tokens": answer_tokens,
                "reasoning_output_tokens": rng.randint(0, answer_tokens),
                "total_tokens": prompt_tokens + answer_tokens,
            }
            for key, value in last.items():
                running[key] += value
            put(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": dict(running),
                        "last_token_usage": last,
                        "model_context_window": 272000,
                    },
                },
            )
        answer = words(10, 150)
        put("event_msg", {"type": "agent_message", "message": answer})
        put(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
        )
        if turn < turns - 1 or rng.random() < 0.9:  # some sessions end mid-turn (interrupted)
            put("event_msg", {"type": "task_complete", "last_agent_message": answer})
    day = root / start.strftime("%Y/%m/%d")
    size = write_jsonl(day / f"rollout-{start.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl", records)
    return len(records), size


def corpus(
    out: Path, mb: float, seed: int = 1, codex_share: float = 0.3, standalone: bool = False
) -> dict[str, Any]:
    rng = random.Random(seed)
    projects = [f"/home/dev/src/{rng.choice(VOCABULARY)}-{i}" for i in range(40)]
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    target = int(mb * 2**20)
    totals = {"sessions": 0, "lines": 0, "bytes": 0}
    needles: list[str] = []
    while totals["bytes"] < target:
        clock += timedelta(minutes=rng.randint(1, 600))
        cwd = rng.choice(projects)
        needle = None
        if totals["sessions"] % 97 == 0:
            needle = f"needle{totals['sessions']:06d}zq"
            needles.append(needle)
        turns = max(1, int(rng.expovariate(1 / 12)))
        if rng.random() < codex_share:
            lines, size = codex_session(rng, out / "codex" / "sessions", cwd, clock, turns, needle)
        else:
            folder = out / "claude" / "projects" / cwd.replace("/", "-").replace(".", "-")
            lines, size = claude_session(rng, folder, cwd, clock, turns, needle, standalone)
        totals["sessions"] += 1
        totals["lines"] += lines
        totals["bytes"] += size
    return {**totals, "needles": needles}


def one_session(out: Path, mb: float, seed: int = 7) -> dict[str, Any]:
    """One long Claude Code session of about ``mb`` MB (no subagents)."""
    rng = random.Random(seed)
    cwd = "/home/dev/src/big"
    session = ClaudeSession(
        rng, "0b1c2d3e-4f50-4617-8899-aabbccddeeff", cwd, datetime(2026, 3, 1, tzinfo=UTC)
    )
    session.conversation(max(1, int(mb * 78)), None)
    path = out / "claude" / "projects" / "-home-dev-src-big" / "0b1c2d3e-4f50-4617-8899-aabbccddeeff.jsonl"
    size = write_jsonl(path, session.records)
    return {"sessions": 1, "lines": len(session.records), "bytes": size, "path": str(path), "needles": []}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--codex-share", type=float, default=0.3)
    parser.add_argument("--one-session", action="store_true", help="one long Claude Code session instead")
    parser.add_argument(
        "--standalone-subagents", action="store_true", help="subagents as sessions of their own (see above)"
    )
    args = parser.parse_args()
    if args.one_session:
        print(json.dumps(one_session(args.out, args.mb, args.seed if args.seed != 1 else 7)))
    else:
        print(json.dumps(corpus(args.out, args.mb, args.seed, args.codex_share, args.standalone_subagents)))


if __name__ == "__main__":
    main()
