#!/usr/bin/env python3
"""Read speed per MB of the Qwen, Continue, Aider, Crush and Goose adapters next to Claude's.

Each format gets a synthetic larger sample made by repeating the records of a corpus sample
(``--mb`` MB each, in a temp dir); every unit is read from scratch, best CPU time of
``--repeat``. Prints one JSON line per format with MB/s and the ratio to Claude's MB/s
(>= 0.5 meets the "within 2x of Claude" target). Run: ``python bench/adapters_a_read_speed.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"


def _repeat_lines(src: Path, dst: Path, target: int) -> None:
    data = src.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as fh:
        written = 0
        while written < target:
            fh.write(data)
            written += len(data)


GEN_CORPUS = REPO.parent / "shared" / "bench" / "gen_corpus.py"


def make_claude(tmp: Path, target: int) -> Path:
    """The shared benchmark generator's Claude corpus (distinct messages, as bench/RESULTS.md
    measures Claude); repeating a real file instead would repeat its message ids."""
    import subprocess

    for gen in (GEN_CORPUS, Path("/work/shared/bench/gen_corpus.py")):
        if gen.is_file():
            out = tmp / "gen"
            mb = f"{target / 1e6:.2f}"
            subprocess.run([sys.executable, str(gen), str(out), "--mb", mb, "--codex-share", "0"], check=True,
                           capture_output=True)  # fmt: skip
            return out / "claude" / "projects"
    src = max((CORPUS / "real/claude-2.1.197/projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    _repeat_lines(src, tmp / "claude" / "-x" / src.name, target)
    return tmp / "claude"


def make_qwen(tmp: Path, target: int) -> Path:
    src = (
        CORPUS
        / "real/qwen-0.15.10/projects/-tmp-rt-qwen-home-src-demo-app/chats/71f3d6dc-4f49-4116-bbb0-74b6299299e8.jsonl"
    )
    _repeat_lines(src, tmp / "qwen" / "projects" / "-x" / "chats" / src.name, target)
    return tmp / "qwen"


def make_continue(tmp: Path, target: int) -> Path:
    src = CORPUS / "real/continue-1.5.47/sessions/c57ca217-7723-4f2a-b3f7-0146aca883c5.json"
    doc = json.loads(src.read_bytes())
    one = len(json.dumps(doc["history"]))
    doc["history"] = doc["history"] * max(1, target // one)
    out = tmp / "continue" / "sessions" / src.name
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(doc))
    shutil.copy(src.parent / "sessions.json", out.parent / "sessions.json")
    return tmp / "continue"


def make_aider(tmp: Path, target: int) -> Path:
    src = CORPUS / "real/aider-0.86.2/demo-app/.aider.chat.history.md"
    repo = tmp / "aider" / "repo"
    text = src.read_text()
    with open(repo.mkdir(parents=True) or repo / ".aider.chat.history.md", "w") as fh:
        written, n = 0, 0
        while written < target:
            # distinct run headers (a new second for every copy of the file's runs)
            chunk = text.replace(
                "# aider chat started at 2026-11-30 16:",
                f"# aider chat started at 2026-11-{1 + n % 28:02d} {n // 28 % 24:02d}:",
            )
            fh.write(chunk)
            written += len(chunk)
            n += 1
    return repo


def _copy_db(src: Path, dst: Path, table: str, key: str, target: int) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
    cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    plain = [c for c in cols if c != key]
    n = 0
    while dst.stat().st_size < target:
        if key == "id" and table == "messages" and "content_json" in cols:  # goose: integer ids
            conn.execute(f"INSERT INTO {table} ({', '.join(plain)}) SELECT {', '.join(plain)} FROM {table}")
        else:
            conn.execute(
                f"INSERT INTO {table} ({', '.join(cols)}) SELECT {key} || '-{n}', {', '.join(plain)} FROM {table}"
                f" WHERE {key} NOT LIKE '%-%-%-%-%-%'"
            )
        conn.commit()
        n += 1
    conn.close()


def make_crush(tmp: Path, target: int) -> Path:
    _copy_db(
        CORPUS / "crush/synthetic-agtail/demo/.crush/crush.db",
        tmp / "crush" / "crush.db",
        "messages",
        "id",
        target,
    )
    return tmp / "crush" / "crush.db"


def make_goose(tmp: Path, target: int) -> Path:
    db = tmp / "goose" / "sessions.db"
    _copy_db(
        CORPUS / "goose/synthetic-agtail/.local/share/goose/sessions/sessions.db",
        db,
        "messages",
        "id",
        target,
    )
    return db


def measure(agent: str, root: Path, repeat: int) -> dict[str, Any]:
    from agtaild.adapters import get_adapter

    adapter = get_adapter(agent)
    units = list(adapter.discover(root))
    files = {f for u in units for f in u.files if os.path.exists(f)}
    size = sum(os.path.getsize(f) for f in files)
    settled = time.time() + 3600.0
    best = float("inf")
    events = 0
    for _ in range(repeat):
        cpu = time.process_time()
        events = 0
        for unit in units:
            events += len(adapter.read(unit, None, now=settled).events)
        best = min(best, time.process_time() - cpu)
    mb = size / 1e6
    return {"agent": agent, "units": len(units), "mb": round(mb, 2), "events": events, "cpu_s": round(best, 3),
            "mb_per_s": round(mb / best, 2)}  # fmt: skip


MAKERS: dict[str, Callable[[Path, int], Path]] = {
    "claude-code": make_claude,
    "qwen": make_qwen,
    "continue": make_continue,
    "aider": make_aider,
    "crush": make_crush,
    "goose": make_goose,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    target = int(args.mb * 1e6)
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(agent, make(Path(tmp), target), args.repeat) for agent, make in MAKERS.items()]
    claude = results[0]["mb_per_s"]
    claude_events = results[0]["events"] / results[0]["cpu_s"]
    for r in results:
        r["vs_claude"] = round(r["mb_per_s"] / claude, 2)
        # per event too: a format whose MB holds many more (smaller) records than Claude's
        r["events_per_mb"] = round(r["events"] / r["mb"])
        r["events_vs_claude"] = round(r["events"] / r["cpu_s"] / claude_events, 2)
        r["load_avg"] = round(os.getloadavg()[0], 2)
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
