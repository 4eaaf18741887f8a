#!/usr/bin/env python3
"""The archive's figures (issue #15): data dir size after a cold index, and reading a session
whose only copy is the archive against reading its native file.

    bench/bench_archive.py CORPUS [--work DIR] [--sessions 20]

CORPUS is a bench/gen_corpus.py output. Prints one JSON document:

* ``cold``: wall seconds of ``agtail --no-daemon index`` (archive on), then the bytes of the
  data dir, of the index (index.sqlite3 + -wal/-shm), of the archive, of its compressed blobs
  and catalog, and of the corpus;
* ``read``: for the ``--sessions`` largest sessions, seconds to read each through its adapter
  from the native file, and, after deleting the native file, to write it back from the
  compressed store (what the update before discovery does) plus reading it from there;
  also the sha256 check that the written-back file equals the original.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def roots(corpus: Path) -> list[str]:
    return [f"claude-code={corpus / 'claude' / 'projects'}", f"codex={corpus / 'codex' / 'sessions'}"]


def cold_index(corpus: Path, data: Path, env: dict[str, str]) -> dict[str, Any]:
    shutil.rmtree(data, ignore_errors=True)
    argv = [str(ROOT / ".venv" / "bin" / "agtail"), "--no-daemon", "--data-dir", str(data), "--only-roots"]
    for r in roots(corpus):
        argv += ["--root", r]
    load = load_average()
    t = time.perf_counter()
    proc = subprocess.run([*argv, "--json", "index"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"index failed: {proc.stderr[-2000:]}")
    report = json.loads(proc.stdout)
    index = sum(tree_bytes(p) if p.is_dir() else p.stat().st_size for p in data.glob("index.sqlite3*"))
    store = data / "archive" / ".zstore"
    catalog = sum(p.stat().st_size for p in store.glob("catalog.sqlite3*"))
    return {
        "seconds": round(wall, 2),
        "load_before": load,
        "load_after": load_average(),
        "errors": len(report.get("errors", [])),
        "sessions": report.get("sessions"),
        "corpus_bytes": tree_bytes(corpus),
        "data_dir_bytes": tree_bytes(data),
        "index_bytes": index,
        "archive_bytes": tree_bytes(data / "archive"),
        "archive_blob_bytes": tree_bytes(store) - catalog,
        "archive_catalog_bytes": catalog,
    }


def best(fn: Any, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def read_figure(corpus: Path, data: Path, n: int) -> dict[str, Any]:
    """For the ``n`` largest Claude sessions: reading the native file through its adapter,
    against writing the archived copy back from the store and reading that (best of 3 each,
    warm page cache for both); plus the update's pass over the catalog (what every update
    pays, whether or not anything was deleted) and the full write-back of a deleted session."""
    from agtaild.adapters import get_adapter
    from agtaild.config import load_config
    from agtaild.store.archive.archiver import archiver_for
    from agtaild.store.archive.view import prepare_view

    config = load_config(data_dir=str(data), root_options=roots(corpus), only_roots=True)
    adapter = get_adapter("claude-code")
    native_root = corpus / "claude" / "projects"
    units = sorted(adapter.discover(native_root), key=lambda u: -os.path.getsize(u.path))[:n]
    arch = archiver_for(config)
    prepare_view(arch, [], convert=False)
    idle_pass = best(lambda: prepare_view(arch, [], convert=False))
    hidden = Path(tempfile.mkdtemp(prefix="agtail-bench-"))
    rows = []
    try:
        for unit in units:
            native_s = best(lambda u=unit: adapter.read(u))
            native_events = len(adapter.read(unit).events)
            original = Path(unit.path).read_bytes()
            rel = adapter.relative_path(unit, unit.path)
            key = f"claude-code/{rel}"
            aside = hidden / rel.replace("/", "_")
            shutil.move(unit.path, aside)  # the agent "deletes" it
            try:
                view = Path(config.archive_dir) / key
                errors: list[dict[str, str]] = []
                t = time.perf_counter()
                prepare_view(arch, errors, convert=False)
                update_pass = time.perf_counter() - t
                same = hashlib.sha256(view.read_bytes()).digest() == hashlib.sha256(original).digest()
                archived_unit = next(
                    u
                    for u in adapter.discover(Path(config.archive_dir) / "claude-code")
                    if u.path == str(view)
                )
                same_events = len(adapter.read(archived_unit).events) == native_events

                def from_archive(v: Path = view, k: str = key, au: Any = archived_unit) -> None:
                    v.unlink()
                    arch.store.materialise(k, v)
                    adapter.read(au)

                archived_s = best(from_archive)
                rows.append(
                    {
                        "bytes": len(original),
                        "native_s": native_s,
                        "archived_s": archived_s,
                        "update_pass_s": update_pass,
                        "ratio": archived_s / native_s,
                        "sha256_equal": same,
                        "same_events": same_events,
                        "errors": errors,
                    }
                )
            finally:
                shutil.move(aside, unit.path)
                prepare_view(arch, [], convert=False)  # the native is back: the copy goes
    finally:
        shutil.rmtree(hidden, ignore_errors=True)
    return {
        "sessions": len(rows),
        "bytes": sum(r["bytes"] for r in rows),
        "native_s": round(sum(r["native_s"] for r in rows), 3),
        "archived_s": round(sum(r["archived_s"] for r in rows), 3),
        "ratio_total": round(sum(r["archived_s"] for r in rows) / sum(r["native_s"] for r in rows), 2),
        "ratio_median": round(statistics.median(r["ratio"] for r in rows), 2),
        "ratio_max": round(max(r["ratio"] for r in rows), 2),
        "catalog_rows": len(arch.store.rows()),
        "idle_update_pass_s": round(idle_pass, 4),
        "update_pass_with_one_deleted_s_median": round(
            statistics.median(r["update_pass_s"] for r in rows), 4
        ),
        "all_sha256_equal": all(r["sha256_equal"] for r in rows),
        "all_same_events": all(r["same_events"] for r in rows),
        "errors": [e for r in rows for e in r["errors"]],
        "load": load_average(),
    }


def legacy_figure(corpus: Path, cold_data: Path, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """An archive as agtail 0.1 wrote it (every file plain) converted by the next update: its
    seconds, the archive's size before and after, and every file read back against the corpus."""
    from agtaild.config import load_config
    from agtaild.store.archive.archiver import read_archived
    from agtaild.store.archive.view import verify_store

    data = work / "legacy"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    shutil.copy(cold_data / "index.sqlite3", data / "index.sqlite3")
    shutil.copytree(cold_data / "sync", data / "sync")
    shutil.copytree(corpus / "claude" / "projects", data / "archive" / "claude-code")
    shutil.copytree(corpus / "codex" / "sessions", data / "archive" / "codex")
    before = tree_bytes(data / "archive")
    argv = [str(ROOT / ".venv" / "bin" / "agtail"), "--no-daemon", "--data-dir", str(data), "--only-roots"]
    for r in roots(corpus):
        argv += ["--root", r]
    load = load_average()
    t = time.perf_counter()
    proc = subprocess.run([*argv, "--json", "index"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    report = json.loads(proc.stdout) if proc.stdout.strip() else {"errors": [proc.stderr[-500:]]}
    plain_left = sum(
        1 for p in (data / "archive").rglob("*") if p.is_file() and ".zstore" not in p.relative_to(data).parts
    )
    config = load_config(data_dir=str(data), root_options=roots(corpus), only_roots=True)
    equal = 0
    total = 0
    for base, agent in (
        (corpus / "claude" / "projects", "claude-code"),
        (corpus / "codex" / "sessions", "codex"),
    ):
        for f in base.rglob("*"):
            if f.is_file():
                total += 1
                equal += read_archived(config, f"{agent}/{f.relative_to(base)}") == f.read_bytes()
    verified = verify_store(config)
    return {
        "seconds": round(wall, 2),
        "load_before": load,
        "errors": len(report.get("errors", [])),
        "archive_bytes_before": before,
        "archive_bytes_after": tree_bytes(data / "archive"),
        "plain_files_left": plain_left,
        "files_equal_to_corpus": f"{equal}/{total}",
        "damaged": len(verified["damaged"]),
    }


def append_figure(corpus: Path, work: Path, mb: int = 48, appends: int = 30) -> dict[str, Any]:
    """The archive's share of an append: one line added to a ``mb`` MB session, archived
    (boundary check on the first and last frames, a new frame, read back and checked)."""
    from agtaild.adapters import get_adapter
    from agtaild.config import load_config
    from agtaild.store.archive.archiver import Archiver

    base = work / "append"
    shutil.rmtree(base, ignore_errors=True)
    project = base / "projects" / "-home-dev-src-big"
    project.mkdir(parents=True)
    big = project / "0b0b0b0b-0000-4000-8000-000000000001.jsonl"
    sources = sorted((corpus / "claude" / "projects").glob("*/*.jsonl"))
    with open(big, "wb") as out:
        while out.tell() < mb * 1_000_000:
            for src in sources:
                out.write(src.read_bytes())
                if out.tell() >= mb * 1_000_000:
                    break
    config = load_config(
        data_dir=str(base / "data"), root_options=[f"claude-code={base / 'projects'}"], only_roots=True
    )
    adapter = get_adapter("claude-code")
    arch = Archiver(config)
    t = time.perf_counter()
    arch.mirror_units(list(adapter.discover(base / "projects")))
    first = time.perf_counter() - t
    line = sources[0].read_bytes().splitlines(keepends=True)[0]
    times = []
    for _ in range(appends):
        with open(big, "ab") as fh:
            fh.write(line)
        unit_list = list(adapter.discover(base / "projects"))
        t = time.perf_counter()
        rep = arch.mirror_units(unit_list)
        times.append(time.perf_counter() - t)
        assert rep["errors"] == [] and rep["appended"] + rep["copied"] == 1, rep
    times.sort()
    row = arch.store.get(f"claude-code/{big.relative_to(base / 'projects')}")
    assert row is not None
    return {
        "session_bytes": big.stat().st_size,
        "first_archive_s": round(first, 3),
        "append_median_ms": round(statistics.median(times) * 1000, 1),
        "append_p95_ms": round(times[int(len(times) * 0.95) - 1] * 1000, 1),
        "append_max_ms": round(times[-1] * 1000, 1),
        "frames": len(row.frames),
        "stored_bytes": row.zsize,
        "load": load_average(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "agtail-bench-archive")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument(
        "--reuse", action="store_true", help="keep the data dir of an earlier run: skip the cold index"
    )
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="agtail-bench-home-"))
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "cfg"),
        "PYTHONPATH": str(ROOT),
    }
    os.environ.update({k: env[k] for k in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")})
    data = args.work / "data"
    doc: dict[str, Any] = {"cpus": os.cpu_count()}
    if not args.reuse:
        doc["cold"] = cold_index(args.corpus, data, env)
    doc["read"] = read_figure(args.corpus, data, args.sessions)
    doc["legacy"] = legacy_figure(args.corpus, data, args.work, env)
    doc["append"] = append_figure(args.corpus, args.work)
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
