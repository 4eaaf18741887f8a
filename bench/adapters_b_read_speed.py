#!/usr/bin/env python3
"""Read speed per MB of the Cline, Kilo, Roo, OpenHands, Zed and Vibe formats, next to Claude's.

Each format gets a larger synthetic copy of its own corpus sample: the sample's records
repeated (``--copies`` sessions, each holding its records ``--repeat`` times), laid out
natively under ``WORK``. Every unit is then read from scratch, best of ``--rounds``, and
the MB/s (bytes of the units' native files / CPU seconds) printed as JSON lines. With
``--claude PATH`` (a ``gen_corpus.py`` corpus's ``claude/projects``) each round first reads
that corpus with the Claude adapter as bench/claude_read_speed.py does, so both figures are
taken under the same load, and the ratio Claude MB/s ÷ format MB/s is printed too.

    .venv/bin/python bench/adapters_b_read_speed.py /tmp/abench --claude /tmp/gc/claude/projects
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

from agtaild.adapters import get_adapter
from agtaild.adapters.base import Adapter

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def _repeat_json_list(path: Path, times: int) -> None:
    items = json.loads(path.read_text())
    path.write_text(json.dumps(items * times))


def cline_tasks(work: Path, copies: int, repeat: int) -> Path:
    src = CORPUS / "real/cline-2.18.0/tasks/1796055228103"
    root = work / "cline2"
    for i in range(copies):
        dst = root / "tasks" / f"17960552{i:05d}"
        shutil.copytree(src, dst)
        for name in ("api_conversation_history.json", "ui_messages.json"):
            _repeat_json_list(dst / name, repeat)
    return root


def cline_sdk(work: Path, copies: int, repeat: int) -> Path:
    sid = "1796054485464_ib83g"
    src = CORPUS / "real/cline-3.0.65/sessions" / sid
    root = work / "cline3"
    for i in range(copies):
        new = f"17960544{i:05d}_bench"
        dst = root / "sessions" / new
        dst.mkdir(parents=True)
        manifest = json.loads((src / f"{sid}.json").read_text())
        manifest["session_id"] = new
        (dst / f"{new}.json").write_text(json.dumps(manifest))
        doc = json.loads((src / f"{sid}.messages.json").read_text())
        doc["messages"] = doc["messages"] * repeat
        (dst / f"{new}.messages.json").write_text(json.dumps(doc))
    return root


def kilo_db(work: Path, copies: int, repeat: int) -> Path:
    """The real kilo.db with every session's messages and parts cloned under new ids."""
    root = work / "kilo"
    root.mkdir(parents=True)
    db = root / "kilo.db"
    shutil.copy(CORPUS / "real/kilo-7.7.7/kilo.db", db)
    conn = sqlite3.connect(db)
    sessions = conn.execute("SELECT * FROM session").fetchall()
    s_cols = [d[1] for d in conn.execute("PRAGMA table_info(session)")]
    m_cols = [d[1] for d in conn.execute("PRAGMA table_info(message)")]
    p_cols = [d[1] for d in conn.execute("PRAGMA table_info(part)")]
    for i in range(copies):
        for row in sessions:
            rec = dict(zip(s_cols, row, strict=True))
            old = rec["id"]
            rec["id"] = f"{old}_{i}"
            if rec.get("parent_id"):
                rec["parent_id"] = f"{rec['parent_id']}_{i}"
            _insert(conn, "session", rec)
            for r in range(repeat):
                for mrow in conn.execute("SELECT * FROM message WHERE session_id = ?", (old,)).fetchall():
                    m = dict(zip(m_cols, mrow, strict=True))
                    mid = m["id"]
                    m.update(id=f"{mid}_{i}_{r}", session_id=rec["id"])
                    _insert(conn, "message", m)
                    for prow in conn.execute("SELECT * FROM part WHERE message_id = ?", (mid,)).fetchall():
                        p = dict(zip(p_cols, prow, strict=True))
                        p.update(id=f"{p['id']}_{i}_{r}", message_id=m["id"], session_id=rec["id"])
                        _insert(conn, "part", p)
    conn.commit()
    conn.close()
    return db


def _insert(conn: sqlite3.Connection, table: str, rec: dict[str, Any]) -> None:
    cols = ", ".join(f'"{c}"' for c in rec)
    conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(rec))})", list(rec.values()))


def openhands(work: Path, copies: int, repeat: int) -> Path:
    src = CORPUS / "real/openhands-1.16.0/conversations/8a0801db9b5c4ed1a0564888b675e043"
    root = work / "openhands" / "conversations"
    names = sorted(p.name for p in (src / "events").iterdir())
    for i in range(copies):
        dst = root / f"{i:032x}"
        (dst / "events").mkdir(parents=True)
        shutil.copy(src / "base_state.json", dst / "base_state.json")
        n = 0
        for _ in range(repeat):
            for name in names:
                shutil.copy(src / "events" / name, dst / "events" / f"event-{n:05d}-{name[12:]}")
                n += 1
    return root.parent


def zed(work: Path, copies: int, repeat: int) -> Path:
    src = CORPUS / "zed/synthetic-agtail/.local/share/zed/threads/threads.db"
    root = work / "zed"
    root.mkdir(parents=True)
    db = root / "threads.db"
    shutil.copy(src, db)
    conn = sqlite3.connect(db)
    (data_type, blob) = conn.execute(
        "SELECT data_type, data FROM threads WHERE id = 'a7c3e9d1-0b2f-4e5a-9c8d-1f2e3d4c5b6a'"
    ).fetchone()
    doc = json.loads(zstandard.ZstdDecompressor().decompress(blob, max_output_size=1 << 26))
    doc["messages"] = doc["messages"] * repeat
    big = zstandard.ZstdCompressor(level=3).compress(json.dumps(doc).encode())
    for i in range(copies):
        conn.execute(
            "INSERT INTO threads (id, summary, updated_at, data_type, data, folder_paths, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (f"bench-{i}", f"bench {i}", "2026-06-12T09:15:42+00:00", data_type, big, "/tmp/x", "2026-06-12T09:00:00+00:00"),
        )
    conn.commit()
    conn.close()
    return db


def vibe(work: Path, copies: int, repeat: int) -> Path:
    base = CORPUS / "vibe/synthetic-agtail/.vibe/logs/session"
    (src,) = [p for p in base.iterdir() if p.name.endswith("3b7e2f90")]
    root = work / "vibe" / "logs" / "session"
    lines = (src / "messages.jsonl").read_text()
    for i in range(copies):
        dst = root / f"session_20260615_0815{i:02d}_{i:08x}"
        dst.mkdir(parents=True)
        shutil.copy(src / "meta.json", dst / "meta.json")
        (dst / "messages.jsonl").write_text(lines * repeat)
    return root


def unit_bytes(adapter: Adapter, units: list[Any]) -> int:
    seen: set[str] = set()
    total = 0
    for unit in units:
        for f in adapter.native_files(unit):
            if f not in seen and os.path.isfile(f) and not f.endswith(("-wal", "-shm")):
                seen.add(f)
                total += os.path.getsize(f)
    return total


def json_bytes(agent: str, root: Path) -> int | None:
    """Zed stores zstd-compressed JSON: its per-MB figure is also given per JSON MB."""
    if agent != "zed":
        return None
    conn = sqlite3.connect(f"file:{root}?mode=ro", uri=True)
    total = 0
    for data_type, blob in conn.execute("SELECT data_type, data FROM threads"):
        total += len(zstandard.ZstdDecompressor().decompress(blob, max_output_size=1 << 28)) if data_type == "zstd" else len(blob)
    conn.close()
    return total


def read_all(adapter: Adapter, units: list[Any]) -> tuple[float, int]:
    """CPU seconds to read every unit from scratch (CPU time: the machine is shared, and
    wall time under load measures the neighbours as much as the reader)."""
    later = time.time() + 3600.0
    start = time.process_time()
    events = 0
    for unit in units:
        events += len(adapter.read(unit, None, now=later).events)
    return time.process_time() - start, events


def measure(agent: str, root: Path, rounds: int, claude: Path | None) -> dict[str, Any]:
    """Best of ``rounds`` for the format, each round right after a Claude read, so that both
    figures see the same load; the ratio is Claude's MB/s over the format's."""
    adapter = get_adapter(agent)
    units = list(adapter.discover(root))
    mb = unit_bytes(adapter, units) / 1e6
    ref = get_adapter("claude-code")
    ref_units = list(ref.discover(claude)) if claude else []
    ref_mb = unit_bytes(ref, ref_units) / 1e6 if ref_units else 0.0
    best = ref_best = float("inf")
    events = ref_events = 0
    for _ in range(rounds):
        if ref_units:
            ref_wall, ref_events = read_all(ref, ref_units)
            ref_best = min(ref_best, ref_wall)
        wall, events = read_all(adapter, units)
        best = min(best, wall)
    out: dict[str, Any] = {"agent": agent, "units": len(units), "mb": round(mb, 2), "events": events,
                           "cpu_s": round(best, 3), "mb_per_s": round(mb / best, 1),
                           "events_per_s": round(events / best)}
    jb = json_bytes(agent, root)
    if jb is not None:
        out["json_mb"] = round(jb / 1e6, 2)
        out["json_mb_per_s"] = round(jb / 1e6 / best, 1)
    if ref_units:
        out["claude_mb_per_s"] = round(ref_mb / ref_best, 1)
        out["claude_events_per_s"] = round(ref_events / ref_best)
        per_mb = out.get("json_mb_per_s", out["mb_per_s"])
        out["claude_over_format"] = round(out["claude_mb_per_s"] / per_mb, 2)
    out["load_avg"] = round(os.getloadavg()[0], 2)
    return out


BUILDERS: dict[str, tuple[str, Callable[[Path, int, int], Path]]] = {
    "cline tasks (CLI 2.18)": ("cline", cline_tasks),
    "cline SDK sessions (CLI 3.0.65)": ("cline", cline_sdk),
    "kilo.db (Kilo 7.7.7)": ("kilo", kilo_db),
    "openhands conversations (1.16.0)": ("openhands", openhands),
    "zed threads.db": ("zed", zed),
    "vibe session folders": ("vibe", vibe),
}


#: Formats with small records get more sessions, so that each read set is several MB.
SMALL_RECORDS = {"cline SDK sessions (CLI 3.0.65)": 5, "zed threads.db": 5, "vibe session folders": 10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work", type=Path, help="an empty scratch folder")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--claude", type=Path, help="a gen_corpus.py claude/projects folder")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    for name, (agent, build) in BUILDERS.items():
        copies = args.copies * SMALL_RECORDS.get(name, 1)
        root = build(args.work / name.replace(" ", "_"), copies, args.repeat)
        print(json.dumps({"name": name, **measure(agent, root, args.rounds, args.claude)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
