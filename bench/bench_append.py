"""The incremental path's figures (issue #13): what one appended line costs, and appends to 100 files.

    bench/bench_append.py one  SESSION.jsonl [--repeat 7] [--fork] [--profile OUT.prof] [--cli]
    bench/bench_append.py many CORPUS_DIR   [--lines 10 100] [--no-archive] [--cli]

``one``: a copy of the session's folder is indexed cold (in-process, timed), then one line (a
continuation of the conversation: its parent is the file's last record, as Claude Code writes
it) is appended ``--repeat`` times and each time ``Service.update_index(only_paths=[file])``
(the daemon's path) and ``Service.update_index()`` (the whole update of ``agtail index``) are
timed in-process, and with ``--cli`` whole ``agtail --no-daemon index --json`` processes (wall,
their CPU, the update's "seconds").
``--duplicate`` appends prompts that reuse the uuid of the file's last record (a record
written again). ``--fork`` first rewinds the session's first prompt (a second prompt under the same parent, as
Claude Code writes a rewind), so every later append goes to a forked session (the output says
whether the session's state records a fork).

``many``: a copy of the corpus is indexed, then ``--lines`` lines are appended to each of 100
Claude Code session files and one ``Service.update_index()`` is timed (wall and CPU of this
process); the fixed part and the per-MB part come from the two sizes. Before the appends, an
update that finds nothing changed is timed in-process, and with ``--cli`` as whole
``agtail --no-daemon index --json`` processes (wall, their CPU, the update's "seconds").

Wall times are medians; CPU is user + sys of this process (steadier on a shared machine). The
load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from run_bench import last_uuid  # noqa: E402  (the same continuation as run_bench's append figure)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu() -> float:
    """CPU time of this process, all threads (ns resolution; os.times() counts 10 ms ticks)."""
    return time.process_time()


def prompt(uuid: str, parent: str | None, session: str, text: str) -> str:
    line = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": session,
        "cwd": "/home/dev/src/bench",
        "timestamp": "2026-03-30T00:00:00.000Z",
        "isSidechain": False,
        "userType": "external",
    }
    return json.dumps(line, separators=(",", ":")) + "\n"


def append(path: Path, text: str) -> None:
    with open(path, "a") as fh:
        fh.write(text)
    old = time.time() - 60  # settled: the update reads it whole
    os.utime(path, (old, old))


def settle_archive(data: Path) -> None:
    """Wait for the archive's finisher a first index started (agtaild.store.archive.finish), so
    that the appends are not timed beside it."""
    from agtaild.store.archive import finish as archive_finish

    archive_finish.wait(data / "archive" / ".zstore", 600)


def first_prompt_parent(path: Path) -> str | None:
    """The parent of the transcript's first typed prompt (what a rewind of it names)."""
    from agtaild.adapters.claude.branches import is_head

    with open(path, encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if isinstance(obj, dict) and isinstance(obj.get("uuid"), str) and is_head(obj):
                parent = obj.get("parentUuid")
                return parent if isinstance(parent, str) else None
    return None


def forked(svc: Any, path: Path) -> bool:
    """Whether the session's saved state records a fork (the rewind was taken as one)."""
    import sqlite3

    import msgspec

    from agtaild.adapters.claude.state import ClaudeState
    from agtaild.adapters.kit.jsonl import Continuation
    from agtaild.index import statepack

    db = sqlite3.connect(str(svc.config.index_path))
    try:
        (stored,) = db.execute("SELECT state FROM files WHERE path = ?", (str(path),)).fetchone()
    finally:
        db.close()
    cont = msgspec.msgpack.decode(statepack.unpack(stored), type=Continuation)
    return bool(msgspec.msgpack.decode(cont.parser, type=ClaudeState).branches.forked)


def service(data: Path, roots: list[str], archive: bool) -> Any:
    if not archive:
        os.environ["AGTAIL_ARCHIVE"] = "0"
    from agtaild.config import load_config
    from agtaild.query.service import Service

    return Service(load_config(data_dir=str(data), root_options=roots, only_roots=True))


def timed(fn: Any) -> tuple[float, float, Any]:
    c, t = cpu(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t, cpu() - c, out


def one(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="agtail-append-"))
    src = Path(args.path)
    projects = work / "projects"
    shutil.copytree(src.parent, projects / src.parent.name)
    big = projects / src.parent.name / src.name
    data = work / "data"
    roots = [f"claude-code={projects}"]
    out: dict[str, Any] = {"size_mb": round(big.stat().st_size / 2**20, 1), "load_before": load()}
    os.environ["TZ"] = "UTC"
    svc = service(data, roots, not args.no_archive)
    try:
        wall, c, rep = timed(svc.update_index)
        out["cold"] = {"wall_ms": round(wall * 1000), "cpu_ms": round(c * 1000), "events": rep["events"]}
        settle_archive(data)
        out["secrets_backlog"] = drain_secrets(svc)
        if args.fork:  # rewind the first prompt: a second prompt under its parent
            append(
                big,
                prompt(
                    "00000000-0000-4000-8fff-000000000000",
                    first_prompt_parent(big),
                    big.stem,
                    "rewound prompt",
                ),
            )
            wall, c, _ = timed(lambda: svc.update_index(only_paths=[str(big)]))
            out["rewind"] = {"wall_ms": round(wall * 1000, 1), "cpu_ms": round(c * 1000, 1)}
            out["forked"] = forked(svc, big)
        runs: dict[str, list[tuple[float, float]]] = {"paths": [], "update": []}
        prof = cProfile.Profile(time.process_time) if args.profile else None
        for i in range(args.repeat):
            for kind in ("paths", "update"):
                uid = f"00000000-0000-4000-{'9' if kind == 'paths' else 'a'}000-{i:012d}"
                if args.duplicate:  # a prompt again with a uuid the session has (its last one)
                    append(big, prompt(last_uuid(big) or uid, None, big.stem, f"one more appended line {i}"))
                else:
                    append(big, prompt(uid, last_uuid(big), big.stem, f"one more appended line {i}"))
                call = (
                    (lambda: svc.update_index(only_paths=[str(big)])) if kind == "paths" else svc.update_index
                )
                if prof is not None and kind == "paths" and i:
                    prof.enable()
                wall, c, rep = timed(call)
                if prof is not None and kind == "paths" and i:
                    prof.disable()
                assert rep["read"] == 1, rep
                runs[kind].append((wall, c))
        if prof is not None:
            prof.dump_stats(args.profile)
        for kind, xs in runs.items():
            out[kind] = {
                "wall_ms": round(statistics.median(w for w, _ in xs) * 1000, 2),
                "cpu_ms": round(statistics.median(c for _, c in xs) * 1000, 2),
                "runs_ms": [round(w * 1000, 1) for w, _ in xs],
            }
    finally:
        svc.close()
    if args.cli:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["HOME"] = str(work)
        walls, cpus, inner = [], [], []
        for i in range(args.repeat):
            append(
                big, prompt(f"00000000-0000-4000-b000-{i:012d}", last_uuid(big), big.stem, f"cli line {i}")
            )
            # The CLI of this checkout (also when the venv's console script is another's).
            boot = f"import sys; sys.path.insert(0, {str(REPO)!r}); from agtaild.cli import main; sys.exit(main())"
            argv = [sys.executable, "-c", boot, "--no-daemon", "--data-dir", str(data), "--only-roots",
                    "--root", roots[0], "--json", "index"]  # fmt: skip
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
            walls.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            inner.append(json.loads(proc.stdout)["seconds"])
        out["cli"] = {
            "wall_ms": round(statistics.median(walls) * 1000),
            "cpu_ms": round(statistics.median(cpus) * 1000),
            "seconds_ms": round(statistics.median(inner) * 1000, 1),
        }
    out["load_after"] = load()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return out


def drain_secrets(svc: Any) -> dict[str, Any]:
    """Scan what the cold index left to the secrets pass, as the daemon's writer does when idle:
    until then every update spends its inline budget on that backlog (agtaild.index.findings),
    and an update's figure would be the backlog's, not its own."""
    wall, c, rep = timed(svc.scan_secrets)
    return {"wall_ms": round(wall * 1000), "cpu_ms": round(c * 1000), "events": rep["scanned"]}


def cli_runs(home: Path, data: Path, roots: list[str], repeat: int) -> dict[str, Any]:
    """``repeat`` whole ``agtail --no-daemon index --json`` processes of an update that finds
    nothing to read: medians of their wall time, their CPU (user + sys) and the update's own
    "seconds"."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(home)
    boot = f"import sys; sys.path.insert(0, {str(REPO)!r}); from agtaild.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", boot, "--no-daemon", "--data-dir", str(data), "--only-roots"]
    for root in roots:
        argv += ["--root", root]
    walls, cpus, inner = [], [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run([*argv, "--json", "index"], env=env, capture_output=True, text=True, check=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        doc = json.loads(proc.stdout)
        assert doc["read"] == 0, doc
        inner.append(doc["seconds"])
    return {
        "wall_ms": round(statistics.median(walls) * 1000),
        "cpu_ms": round(statistics.median(cpus) * 1000),
        "seconds_ms": round(statistics.median(inner) * 1000, 1),
        "load": load(),
    }


def many(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="agtail-append100-"))
    corpus = work / "c"
    shutil.copytree(args.path, corpus)
    roots = [f"claude-code={corpus / 'claude' / 'projects'}", f"codex={corpus / 'codex' / 'sessions'}"]
    os.environ["TZ"] = "UTC"
    svc = service(work / "data", roots, not args.no_archive)
    out: dict[str, Any] = {"load_before": load(), "runs": []}
    try:
        wall, c, rep = timed(svc.update_index)
        out["cold"] = {"wall_ms": round(wall * 1000), "cpu_ms": round(c * 1000), "sessions": rep["sessions"]}
        settle_archive(work / "data")
        out["secrets_backlog"] = drain_secrets(svc)
        wall, c, rep = timed(svc.update_index)
        out["nothing_changed"] = {"wall_ms": round(wall * 1000, 1), "cpu_ms": round(c * 1000, 1)}
        if args.cli:  # the same, as whole `agtail index` processes (start-up, imports, a cold cache)
            out["nothing_changed_cli"] = cli_runs(work, work / "data", roots, args.repeat)
        files = sorted((corpus / "claude" / "projects").glob("*/*.jsonl"))[:100]
        # The daemon's path on a whole corpus: one line appended to one file, update_index(only_paths).
        paths = []
        for i in range(args.repeat):
            path = files[i % len(files)]
            append(
                path, prompt(f"00000000-0000-4000-e000-{i:012d}", last_uuid(path), path.stem, f"watched {i}")
            )
            wall, c, rep = timed(lambda: svc.update_index(only_paths=[str(path)]))  # noqa: B023
            assert rep["read"] == 1, rep
            paths.append((wall, c))
        out["paths_one_file"] = {
            "wall_ms": round(statistics.median(w for w, _ in paths) * 1000, 2),
            "cpu_ms": round(statistics.median(c for _, c in paths) * 1000, 2),
            "load": load(),
        }
        for rnd in range(args.rounds):
            for n in args.lines:
                added = 0
                for i, path in enumerate(files):
                    parent = last_uuid(path)
                    chunk = ""
                    for j in range(n):
                        uid = f"00000000-0000-4000-a{n:03d}-{rnd:02d}{i:04d}{j:06d}"
                        chunk += prompt(
                            uid, parent, path.stem, f"appended line {n} {j} of file {i} round {rnd}"
                        )
                        parent = uid
                    append(path, chunk)
                    added += len(chunk.encode())
                prof = cProfile.Profile(time.process_time) if args.profile and rnd == 0 else None
                if prof is not None:
                    prof.enable()
                wall, c, rep = timed(svc.update_index)
                if prof is not None:
                    prof.disable()
                    prof.dump_stats(f"{args.profile}.{n}")
                assert rep["read"] == len(files), rep["read"]
                out["runs"].append({"lines": n, "mb": round(added / 2**20, 3), "wall_ms": round(wall * 1000, 1),
                                    "cpu_ms": round(c * 1000, 1), "load": load()})  # fmt: skip
    finally:
        svc.close()
    shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p1 = sub.add_parser("one")
    p1.add_argument("path")
    p1.add_argument("--repeat", type=int, default=7)
    p1.add_argument("--fork", action="store_true")
    p1.add_argument("--duplicate", action="store_true", help="append prompts whose uuid the session already has")
    p1.add_argument("--profile")
    p1.add_argument("--cli", action="store_true")
    p1.add_argument("--no-archive", action="store_true")
    p1.add_argument("--keep", help="work in this (new) folder and keep it")
    p2 = sub.add_parser("many")
    p2.add_argument("path")
    p2.add_argument("--lines", type=int, nargs="+", default=[10, 100])
    p2.add_argument("--rounds", type=int, default=2)
    p2.add_argument("--repeat", type=int, default=9)
    p2.add_argument("--profile", help="profile the first round's updates to PROFILE.<lines>")
    p2.add_argument("--no-archive", action="store_true")
    p2.add_argument("--cli", action="store_true", help="also time no-change `agtail index` processes")
    args = ap.parse_args()
    print(json.dumps(one(args) if args.cmd == "one" else many(args)))


if __name__ == "__main__":
    main()
