#!/usr/bin/env python3
"""Read speed per MB of the Cursor, Copilot CLI, Copilot Chat, Droid, Kimi and Amp formats,
next to the Claude Code adapter on the same machine in the same run.

Each format gets one synthetic file of about ``--mb`` MB made by repeating the records of a
corpus sample (JSONL: the body lines; JSON documents: the messages/requests; the Cursor store:
message blobs), read from scratch ``--repeat`` times; the best CPU time counts (the machine is
shared: wall time measures the neighbours too). Claude is measured the same way on a repeated
real Claude Code 2.1.197 transcript. Run from the repo:
``.venv/bin/python bench/adapters_c_read_speed.py --mb 8``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agtaild.adapters.amp.adapter import AmpAdapter
from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.claude.adapter import ClaudeCodeAdapter
from agtaild.adapters.copilot_cli.adapter import CopilotCliAdapter
from agtaild.adapters.copilot_vscode.adapter import CopilotVscodeAdapter
from agtaild.adapters.cursor.adapter import CursorAdapter
from agtaild.adapters.droid.adapter import DroidAdapter
from agtaild.adapters.kimi.adapter import KimiAdapter
from tests.cursor_store_maker import SAMPLE_MESSAGES, make_store

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def repeat_jsonl(src: Path, dst: Path, mb: float, head: int = 1) -> None:
    """The first ``head`` lines once, then the rest again and again up to ``mb`` MB."""
    lines = src.read_bytes().splitlines(keepends=True)
    body = b"".join(lines[head:])
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as fh:
        fh.write(b"".join(lines[:head]))
        while fh.tell() < mb * 1e6:
            fh.write(body)


def repeat_doc(src: Path, dst: Path, mb: float, key: str) -> None:
    doc = json.loads(src.read_text(encoding="utf-8"))
    items = doc[key]
    one = len(json.dumps(items, ensure_ascii=False).encode())
    doc[key] = items * max(1, int(mb * 1e6 / max(one, 1)))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def build(work: Path, mb: float) -> dict[str, tuple[Adapter, Path]]:
    """format name → (adapter, root holding one big synthetic unit)."""
    out: dict[str, tuple[Adapter, Path]] = {}
    claude = CORPUS / "real/claude-2.1.197/projects/-tmp-rt-claude-home-src-demo-app/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl"
    repeat_jsonl(claude, work / "claude/p/2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6.jsonl", mb, head=0)
    out["claude-code (reference)"] = (ClaudeCodeAdapter(), work / "claude")
    cp = CORPUS / "real/copilot-1.0.102/session-state/7f6ae62c-987b-427b-a0b3-4b3bad09410e/events.jsonl"
    repeat_jsonl(cp, work / "copilot/s/events.jsonl", mb)
    out["copilot-cli events.jsonl"] = (CopilotCliAdapter(), work / "copilot")
    droid = CORPUS / "real/droid-0.225.2/sessions/-tmp-rt-droid-home-src-demo-app/05c715e6-0b1b-4fba-8ecd-5bd59cda720d.jsonl"
    repeat_jsonl(droid, work / "droid/slug/s.jsonl", mb)
    out["droid session JSONL"] = (DroidAdapter(), work / "droid")
    kimi = CORPUS / "real/kimi-1.51.0/sessions/9a7947a2fa46d9375f2653d098a36f7a/d6cbef0f-4972-4a22-9a3e-a4362f27af1d/wire.jsonl"
    repeat_jsonl(kimi, work / "kimi/b/s/wire.jsonl", mb)
    out["kimi-cli wire.jsonl"] = (KimiAdapter(), work / "kimi")
    code = next((CORPUS / "kimi/agent-sessions/sessions").glob("*/session_1bcbe023*/agents/main/wire.jsonl"))
    repeat_jsonl(code, work / "kimicode/wd_x/session_s/agents/main/wire.jsonl", mb)
    out["kimi-code wire.jsonl"] = (KimiAdapter(), work / "kimicode")
    cur = next((CORPUS / "cursor/agent-sessions/projects").glob("Users-*/agent-transcripts/*/*.jsonl"))
    repeat_jsonl(cur, work / "cursor/projects/p/agent-transcripts/t.jsonl", mb, head=0)
    out["cursor agent transcript"] = (CursorAdapter(), work / "cursor")
    # blobs are content-addressed: each copy gets its own text so that none collapse
    one = len(json.dumps(SAMPLE_MESSAGES).encode())
    copies = max(1, int(mb * 1e6 / one))
    messages = [
        {**m, "content": f"{m['content']} #{i}"} if isinstance(m["content"], str) else {**m, "id": f"{i}"}
        for i in range(copies)
        for m in SAMPLE_MESSAGES[1:]
    ]
    make_store(work / "cstore/chats/b/s/store.db", "s", messages, workspace="/w")
    out["cursor store.db"] = (CursorAdapter(), work / "cstore")
    amp = next((CORPUS / "amp/synthetic-agtail/.local/share/amp/threads").glob("T-5f*.json"))
    repeat_doc(amp, work / "amp/T-5f2c9a1e-8b3d-4c7a-9e1f-2a3b4c5d6e7f.json", mb, "messages")
    out["amp thread JSON"] = (AmpAdapter(), work / "amp")
    chats = CORPUS / "copilot-vscode/synthetic-agtail/.config/Code/User/workspaceStorage/9c1f0e2d3b4a59687766554433221100/chatSessions"
    repeat_doc(chats / "0b7e4a3c-1d2f-4e5a-9b6c-7d8e9f0a1b2c.json", work / "vsc/0b7e4a3c-1d2f-4e5a-9b6c-7d8e9f0a1b2c.json", mb, "requests")
    out["copilot-vscode snapshot .json"] = (CopilotVscodeAdapter(), work / "vsc")
    log = (chats / "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d.jsonl").read_text().splitlines(keepends=True)
    dst = work / "vscl/x.jsonl"
    dst.parent.mkdir(parents=True)
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(log[0])
        push = json.loads(log[1])
        line = json.dumps(push) + "\n"
        while fh.tell() < mb * 1e6:
            fh.write(line)
    out["copilot-vscode op log .jsonl"] = (CopilotVscodeAdapter(), work / "vscl")
    return out


def measure(adapter: Adapter, root: Path, repeat: int) -> dict[str, float]:
    units: list[Unit] = list(adapter.discover(root))
    size = 0
    for u in units:
        size += sum(os.path.getsize(f) for f in u.files if os.path.isfile(f))
    later = time.time() + 3600
    best = float("inf")
    events = 0
    for _ in range(repeat):
        start = time.process_time()
        events = sum(len(adapter.read(u, None, now=later).events) for u in units)
        best = min(best, time.process_time() - start)
    mb = size / 1e6
    return {
        "units": len(units), "mb": round(mb, 2), "events": events, "cpu_s": round(best, 3),
        "mb_per_s": round(mb / best, 1), "events_per_s": round(events / best), "events_per_mb": round(events / mb),
    }


def compare(
    build: Callable[[Path, float], dict[str, tuple[Adapter, Path]]],
    description: str | None,
    argv: list[str] | None,
    mb: float = 8.0,
) -> int:
    """The command line of a read-speed bench: ``build(work, mb)`` makes each format's sample
    in a scratch folder (one of them "claude-code (reference)"), each is measured, and the
    figures relative to Claude Code's are printed as JSON with the load."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=mb)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="agtail-bench-"))
    try:
        rows = {name: measure(adapter, root, args.repeat) for name, (adapter, root) in build(work, args.mb).items()}
        ref = rows["claude-code (reference)"]
        for row in rows.values():
            row["vs_claude"] = round(row["mb_per_s"] / ref["mb_per_s"], 2)
            row["events_vs_claude"] = round(row["events_per_s"] / ref["events_per_s"], 2)
        print(json.dumps({"load_avg": os.getloadavg()[0], "formats": rows}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=8.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="agtail-bench-"))
    try:
        formats = build(work, args.mb)
        rows: dict[str, dict[str, float]] = {}
        run: Callable[[Adapter, Path], dict[str, float]] = lambda a, r: measure(a, r, args.repeat)  # noqa: E731
        for name, (adapter, root) in formats.items():
            rows[name] = run(adapter, root)
        ref = rows["claude-code (reference)"]["mb_per_s"]
        ref_events = rows["claude-code (reference)"]["events_per_s"]
        for row in rows.values():
            row["vs_claude"] = round(row["mb_per_s"] / ref, 2)
            row["events_vs_claude"] = round(row["events_per_s"] / ref_events, 2)
        print(json.dumps({"load_avg": os.getloadavg()[0], "formats": rows}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
