#!/usr/bin/env python3
"""The index figures of bench/RESULTS.md, measured in one run against what a user would
otherwise run (ccusage, grep). Every agtail figure is a whole CLI process (start-up included,
`--no-daemon`, in-process index), unless a row says "in-process".

Usage: bench/run_bench.py [--work DIR] [--mb 200] [--small-mb 50] [--big-mb 50] [--repeat 3]
                          [--out bench/RESULTS.md]
       bench/run_bench.py --scale [--scale-corpus DIR]   # issue #32 at scale: bench/bench_scale.py

Corpora come from bench/gen_corpus.py (deterministic, seed 1) and are generated
into --work when missing; the 50 MB single session is built with the same generator.
ccusage 20.0.24 must be installed at .ci/node/node_modules/.bin/ccusage (as CI does).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GEN = REPO / "bench" / "gen_corpus.py"
CCUSAGE = REPO / ".ci/node/node_modules/.bin/ccusage"
RUSAGE = Path(__file__).resolve().parent / "cli_rusage.py"


def last_uuid(path: Path) -> str | None:
    """The uuid of a Claude transcript's last record, which an appended prompt continues (as
    Claude Code writes it; a parentless prompt would be a rewind of the first one)."""
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 262144))
        for raw in reversed(fh.read().splitlines()[1:]):
            try:
                uuid = json.loads(raw).get("uuid")
            except ValueError:
                continue
            if isinstance(uuid, str):
                return uuid
    return None


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def warm(corpus: Path) -> None:
    """Read every file of ``corpus`` once, into the page cache."""
    for folder, _dirs, names in os.walk(corpus):
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                while fh.read(1 << 20):
                    pass


class Bench:
    def __init__(self, work: Path, repeat: int) -> None:
        self.work = work
        self.repeat = repeat
        self.home = Path(tempfile.mkdtemp(prefix="agtail-bench-home-"))
        # PYTHONDONTWRITEBYTECODE is dropped: an installed package has its .pyc files, and
        # compiling every module on every start would be measured as start-up.
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AGTAIL_", "CLAUDE_", "CODEX_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        self.env.update({"HOME": str(self.home), "TZ": "UTC", "XDG_DATA_HOME": str(self.home / "share")})
        self.archive_wait = 0.0

    # -- running things -------------------------------------------------------------------
    def timed(
        self, argv: list[str], env: dict[str, str] | None = None, stdout: Any = subprocess.PIPE
    ) -> tuple[float, str]:
        t = time.perf_counter()
        proc = subprocess.run(argv, env=env or self.env, stdout=stdout, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t
        if proc.returncode not in (0, 1) or (proc.returncode == 1 and argv[0] != "grep"):
            raise RuntimeError(f"{argv[:4]}… exited {proc.returncode}: {proc.stderr[-2000:]}")
        return wall, proc.stdout if stdout is subprocess.PIPE else ""

    def agtail(self, data: Path, roots: list[str], *args: str) -> tuple[float, Any, dict[str, float]]:
        out = self.work / "rusage.json"
        argv = [sys.executable, str(RUSAGE), str(out), "--no-daemon", "--data-dir", str(data), "--only-roots"]
        for r in roots:
            argv += ["--root", r]
        wall, stdout = self.timed([*argv, "--json", *args])
        self.archive_wait = self.settle_archive(data)
        return wall, json.loads(stdout), json.loads(out.read_text())

    def settle_archive(self, data: Path) -> float:
        """Wait for the archive's finisher a first index started (agtaild.store.archive.finish:
        it archives the pinned files after ``agtail index`` returned), so that no timed run
        shares the machine with it and no data dir is put away under it; the seconds waited."""
        store = data / "archive" / ".zstore"
        if not (store / "pins").is_dir():
            return 0.0
        sys.path.insert(0, str(REPO))
        from agtaild.store.archive import finish as archive_finish

        t = time.perf_counter()
        if not archive_finish.wait(store, 600):
            raise RuntimeError(f"the archive's finisher did not end within 600 s ({store})")
        return time.perf_counter() - t

    # -- corpora --------------------------------------------------------------------------
    def corpus(self, name: str, mb: float) -> tuple[Path, dict[str, Any]]:
        path = self.work / name
        summary = self.work / f"{name}.json"
        if not summary.exists():
            shutil.rmtree(path, ignore_errors=True)
            out = subprocess.run(
                [sys.executable, str(GEN), str(path), "--mb", str(mb)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            summary.write_text(out)
        return path, json.loads(summary.read_text())

    def big_session(self, mb: float) -> Path:
        """One Claude Code session of about ``mb`` MB (the generator's shapes, many turns)."""
        root = self.work / f"big{int(mb)}"
        target = (
            root / "claude" / "projects" / "-home-dev-src-big" / "0b1c2d3e-4f50-4617-8899-aabbccddeeff.jsonl"
        )
        if not target.exists() or target.stat().st_size < mb * 0.9 * 2**20:
            subprocess.run(
                [sys.executable, str(GEN), str(root), "--one-session", "--mb", str(mb)],
                check=True,
                capture_output=True,
            )
        old = time.time() - 3600  # settled: written an hour ago
        os.utime(target, (old, old))
        return target

    @staticmethod
    def roots(corpus: Path) -> list[str]:
        return [f"claude-code={corpus / 'claude' / 'projects'}", f"codex={corpus / 'codex' / 'sessions'}"]

    # -- figures --------------------------------------------------------------------------
    def ccusage(self, corpus: Path) -> dict[str, Any]:
        env = {**self.env, "CLAUDE_CONFIG_DIR": str(corpus / "claude"), "CODEX_HOME": str(corpus / "codex")}
        walls, docs = [], {}
        for _ in range(self.repeat + 1):  # the first run warms the page cache
            w1, claude = self.timed([str(CCUSAGE), "claude", "daily", "--offline", "--json"], env)
            w2, codex = self.timed([str(CCUSAGE), "codex", "daily", "--offline", "--json"], env)
            walls.append(w1 + w2)
            docs = {"claude": json.loads(claude)["totals"], "codex": json.loads(codex)["totals"]}
        t = {
            k: docs["claude"].get(k, 0) + docs["codex"].get(k, 0)
            for k in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens")
        }
        return {"seconds": median(walls[1:]), "runs": walls[1:], "totals": t}

    def discard(self, path: Path) -> None:
        """Put ``path`` out of the way, into the trash that main() empties at the very end: ext4
        skips the inodes of files deleted in the last minute or so when it creates new ones
        (measured by the archive work: the mirror's sys time doubled right after the previous run's
        data dir was deleted), so no timed run comes right after a big delete."""
        if path.exists() or path.is_symlink():
            trash = self.work / "trash"
            trash.mkdir(exist_ok=True)
            path.rename(trash / f"{path.name}.{time.monotonic_ns()}")

    def cold_index(self, corpus: Path, tag: str) -> dict[str, Any]:
        """Cold `agtail index` runs: the process's wall time, and (``archived``) until the
        archive's finisher has stored every file the index pinned."""
        walls, archived, last = [], [], {}
        for i in range(self.repeat):
            data = self.work / f"data-{tag}"
            self.discard(data)
            wall, report, usage = self.agtail(data, self.roots(corpus), "index")
            walls.append(wall)
            archived.append(wall + self.archive_wait)
            last = {"report": report, "rusage": usage}
            if i == 0:
                assert report["errors"] == [], report["errors"][:3]
        return {
            "seconds": median(walls),
            "runs": walls,
            "archived": median(archived),
            "archived_runs": archived,
            **last,
        }

    def scale(self, mb: float, existing: str | None, base: Path) -> dict[str, Any]:
        """The cold index of a corpus ``mb`` big, once, between two of the base corpus (archive
        off both times, the same minutes): the time ratio and the peak RSS."""
        corpus = Path(existing) if existing else self.corpus(f"c{int(mb)}", mb)[0]
        warm(corpus)  # as the base corpus is (ccusage's first run reads it): no figure times the disk
        saved = self.repeat, self.env
        self.env = {**self.env, "AGTAIL_ARCHIVE": "0"}
        try:
            self.repeat = 1
            before = self.cold_index(base, "scale-base")
            big = self.cold_index(corpus, "scale")
            after = self.cold_index(base, "scale-base")
        finally:
            self.repeat, self.env = saved
            self.discard(self.work / "data-scale")
        base_s = (before["seconds"] + after["seconds"]) / 2
        return {
            "mb": mb,
            "seconds": big["seconds"],
            "base": base_s,
            "base_runs": [before["seconds"], after["seconds"]],
            "ratio": big["seconds"] / base_s,
            "rusage": big["rusage"],
            "base_rusage": after["rusage"],
            "report": {k: big["report"][k] for k in ("sessions", "events", "files")},
        }

    def breakdown(self, corpus: Path) -> dict[str, float]:
        """Where the cold index's CPU goes: the adapters alone, then the writer's statements."""
        sys.path.insert(0, str(REPO))
        from agtaild.adapters import get_adapter
        from agtaild.config import load_config
        from agtaild.query.service import Service

        t = time.process_time()
        for agent, sub in (("claude-code", "claude/projects"), ("codex", "codex/sessions")):
            adapter = get_adapter(agent)
            for unit in adapter.discover(corpus / sub):
                adapter.read(unit, None, now=time.time())
        parts = {"adapters": time.process_time() - t}
        data = self.work / "data-breakdown"
        self.discard(data)
        config = load_config(data_dir=str(data), root_options=self.roots(corpus), only_roots=True)
        config.archive = False
        svc = Service(config)
        real = svc.index.db  # the writer connection (Service._db reads it from the keeper)
        spent: dict[str, float] = {}

        def kind(sql: str) -> str:
            s = " ".join(sql.split())
            if "events_fts" in s or "events_cjk" in s:
                return "fts"
            if s.startswith("INSERT INTO events"):
                return "events"
            return "commit" if s.startswith("COMMIT") else "other_sql"

        class Timed:
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def execute(self, sql: str, *args: Any) -> Any:
                t = time.process_time()
                try:
                    return real.execute(sql, *args)
                finally:
                    spent[kind(sql)] = spent.get(kind(sql), 0.0) + time.process_time() - t

            def executemany(self, sql: str, *args: Any) -> Any:
                t = time.process_time()
                try:
                    return real.executemany(sql, *args)
                finally:
                    spent[kind(sql)] = spent.get(kind(sql), 0.0) + time.process_time() - t

        svc.index.db = Timed()  # type: ignore[assignment]
        t = time.process_time()
        try:
            svc.update_index()
        finally:
            svc.index.db = real
            svc.close()
        parts.update(spent)
        parts["writer_total"] = time.process_time() - t
        return parts

    def archive_breakdown(self, corpus: Path) -> dict[str, float]:
        """The archive mirror alone (what the cold index waits for at its end): every native
        unit mirrored into a fresh data dir, one unit at a time with deferred durability and a
        flush at the end, as the index's mirror process does; then again with ``os.fsync`` made
        a no-op, to show how much of it is waiting for the disk."""
        sys.path.insert(0, str(REPO))
        from agtaild.adapters import get_adapter
        from agtaild.config import load_config
        from agtaild.store.archive import archiver as archive

        out: dict[str, float] = {}
        real_fsync = os.fsync
        for tag in ("", "_no_fsync"):
            data = self.work / "data-archive"
            self.discard(data)
            config = load_config(data_dir=str(data), root_options=self.roots(corpus), only_roots=True)
            arch = archive.Archiver(config)
            pairs = [
                (get_adapter(r.agent), u)
                for r in config.roots
                for u in get_adapter(r.agent).discover(Path(r.path))
            ]
            if tag:
                os.fsync = lambda fd: None
            try:
                cpu, wall = time.process_time(), time.perf_counter()
                for pair in pairs:
                    arch.mirror_pairs([pair], defer=True)
                arch.flush()
                out[f"cpu{tag}"] = time.process_time() - cpu
                out[f"wall{tag}"] = time.perf_counter() - wall
            finally:
                os.fsync = real_fsync
                arch.cache.close()
                arch.store.close()
            out["units"] = len(pairs)
        self.discard(self.work / "data-archive")
        return out

    def cold_index_env(self, corpus: Path, extra: dict[str, str]) -> dict[str, Any]:
        """The cold index again, with ``extra`` in the environment (e.g. the archive off)."""
        saved = self.env
        self.env = {**saved, **extra}
        try:
            return self.cold_index(corpus, "env")
        finally:
            self.env = saved

    def append_figure(self, big: Path) -> dict[str, Any]:
        data = self.work / "data-session"
        root = [f"claude-code={big.parent.parent}"]
        colds, cold_inner = [], []
        for _ in range(self.repeat):
            self.discard(data)
            wall, report, _ = self.agtail(data, root, "index")
            colds.append(wall)
            cold_inner.append(report["seconds"])
        appends, append_inner, daemon = [], [], []
        line = {
            "type": "user",
            "message": {"role": "user", "content": "one more appended line"},
            "uuid": "",
            "parentUuid": None,
            "sessionId": big.stem,
            "cwd": "/home/dev/src/big",
            "timestamp": "2026-03-30T00:00:00.000Z",
            "isSidechain": False,
            "userType": "external",
        }
        for _i in range(self.repeat):
            line["parentUuid"] = last_uuid(big)
            line["uuid"] = str(uuid.uuid4())  # new in every run: the session file is kept between runs
            with open(big, "a") as fh:
                fh.write(json.dumps(line, separators=(",", ":")) + "\n")
            old = time.time() - 60
            os.utime(big, (old, old))
            wall, report, _ = self.agtail(data, root, "index")
            assert report["read"] == 1, report
            appends.append(wall)
            append_inner.append(report["seconds"])
        # The daemon's path: its watcher hands the changed file to update_index.
        sys.path.insert(0, str(REPO))
        from agtaild.config import load_config
        from agtaild.query.service import Service

        os.environ["TZ"] = "UTC"
        svc = Service(load_config(data_dir=str(data), root_options=root, only_roots=True))
        try:
            svc.update_index()  # the daemon has been running: its modules are loaded
            for _i in range(self.repeat):
                line["parentUuid"] = last_uuid(big)
                line["uuid"] = str(uuid.uuid4())
                with open(big, "a") as fh:
                    fh.write(json.dumps(line, separators=(",", ":")) + "\n")
                old = time.time() - 60
                os.utime(big, (old, old))
                t = time.perf_counter()
                svc.update_index(only_paths=[str(big)])
                daemon.append(time.perf_counter() - t)
        finally:
            svc.close()
        return {
            "size_mb": big.stat().st_size / 2**20,
            "cold_cli": median(colds),
            "cold_inner": median(cold_inner),
            "append_cli": median(appends),
            "append_inner": median(append_inner),
            "append_daemon": median(daemon),
        }

    def append_100(self, corpus: Path, lines_per_file: tuple[int, ...] = (10, 100)) -> dict[str, Any]:
        """Appends to 100 session files of an indexed copy of the corpus, then one update each
        time (the update's own "seconds"): the cost should follow the appended bytes."""
        copy = self.work / "append100"
        self.discard(copy)
        shutil.copytree(corpus, copy, symlinks=False)
        data = self.work / "data-append100"
        self.discard(data)
        roots = self.roots(copy)
        self.agtail(data, roots, "index")
        files = sorted((copy / "claude" / "projects").glob("*/*.jsonl"))[:100]
        out: dict[str, Any] = {"files": len(files), "runs": []}
        for n in lines_per_file:
            added = 0
            for i, path in enumerate(files):
                parent = last_uuid(path)
                uuids = [f"00000000-0000-4000-a{n:03d}-{i:06d}{j:06d}" for j in range(n)]
                chunk = "".join(
                    json.dumps(
                        {
                            "type": "user",
                            "message": {"role": "user", "content": f"appended line {n} {j} of file {i}"},
                            "uuid": uuids[j],
                            "parentUuid": uuids[j - 1] if j else parent,
                            "sessionId": path.stem,
                            "cwd": "/home/dev/src/appended",
                            "timestamp": "2026-03-30T00:00:00.000Z",
                            "isSidechain": False,
                            "userType": "external",
                        },
                        separators=(",", ":"),
                    )
                    + "\n"
                    for j in range(n)
                )
                with open(path, "a") as fh:
                    fh.write(chunk)
                added += len(chunk.encode())
                old = time.time() - 60
                os.utime(path, (old, old))
            wall, report, usage = self.agtail(data, roots, "index")
            assert report["read"] == len(files), report["read"]
            out["runs"].append(
                {"lines": n, "bytes": added, "seconds": report["seconds"], "wall": wall, "cpu": usage}
            )
        self.discard(copy)
        self.discard(data)
        return out

    def stats_figure(self, corpus: Path, data: Path) -> dict[str, Any]:
        walls, stale = [], []
        doc: dict[str, Any] = {}
        for _ in range(self.repeat + 1):
            w, doc, _ = self.agtail(data, self.roots(corpus), "stats")
            walls.append(w)
            w2, _, _ = self.agtail(data, self.roots(corpus), "stats", "--no-update")
            stale.append(w2)
        return {"seconds": median(walls[1:]), "no_update": median(stale[1:]), "totals": doc["totals"]}

    def search_figure(self, corpus: Path, data: Path, needles: list[str]) -> dict[str, Any]:
        grep = []
        for needle in needles[:5]:
            self.timed(["grep", "-rF", "-l", needle, str(corpus)])  # warm
            grep.append(self.timed(["grep", "-rF", "-l", needle, str(corpus)])[0])
        queries: list[list[str]] = [[n] for n in needles[:20]]
        queries += [[w] for w in ("session", "parser", "trigram", "checksum", "daemon", "rsync")]
        queries += [
            ["fails because"],
            ["refactor the parser"],
            ["token usage cost"],
            ["import store collection"],
        ]
        queries += [["テスト"], ["索引"], ["調べて"], ["原因"], ["修正 して"]]
        queries += [
            ["trig", "--mode", "prefix"],
            ["needle00", "--mode", "prefix"],
            ["cost model", "--mode", "words"],
        ]
        queries += [
            ["session", "--agent", "codex"],
            ["parser", "--kind", "thinking"],
            ["watcher", "--kind", "tool_use"],
        ]
        queries += [[needles[0], "--agent", "claude-code"], ["sqlite fts5"], ["debounce inotify"]]
        queries += [["timeout retry"], ["launchd"], ["yield"], ["manifest conflict"], ["rename truncate"]]
        queries += [
            ["失敗", "--kind", "text"],
            ["cache read write"],
            ["json rpc daemon"],
            ["assert expected actual"],
        ]
        queries += [
            ["push pull", "--mode", "words"],
            ["hook subagent tool"],
            ["lambda yield", "--agent", "codex"],
        ]
        queries += [["xyzzy-not-there"]]
        queries = queries[:50]
        walls, found = [], {}
        for q in queries:
            w, doc, _ = self.agtail(data, self.roots(corpus), "search", "--no-update", *q)
            walls.append(w)
            found[" ".join(q)] = len(doc["hits"])
        rare = []
        for needle in needles[:5]:
            w, doc, _ = self.agtail(data, self.roots(corpus), "search", needle)
            rare.append(w)
            assert len({h["session"]["id"] for h in doc["hits"]}) == 1, (needle, doc["hits"][:2])
        return {
            "grep": median(grep),
            "rare": median(rare),
            "p50": median(walls),
            "p95": p95(walls),
            "queries": len(queries),
            "zero_hits": sorted(q for q, n in found.items() if n == 0),
        }

    def in_process(self, big: Path, small: Path, needles: list[str]) -> dict[str, Any]:
        """What the daemon does per request (no process start-up): the service on the index."""
        sys.path.insert(0, str(REPO))
        from agtaild.config import Config
        from agtaild.query.service import Service

        def timed(svc: Service, method: str, params: dict[str, Any], n: int = 5) -> float:
            svc.call(method, params)  # warm: the daemon has served requests before
            runs = []
            for _ in range(n):
                t = time.perf_counter()
                svc.call(method, params)
                runs.append(time.perf_counter() - t)
            return median(runs)

        out: dict[str, Any] = {}
        for name, data in (("big", big), ("small", small)):
            svc = Service(Config(data_dir=str(data), roots=[], archive=False))
            try:
                out[f"list_{name}"] = timed(svc, "sessions.list", {"limit": 50})
                if name == "big":
                    out["stats_day"] = timed(svc, "stats", {"by": "day"})
                    out["stats_session"] = timed(svc, "stats", {"by": "session"})
                    out["rare"] = median([timed(svc, "search", {"q": n}, 3) for n in needles[:10]])
                    mixed = [
                        "session",
                        "fails because",
                        "テスト",
                        "索引",
                        "token usage cost",
                        "parser",
                        "trigram",
                        "needle0",
                        "調べて",
                        "import store collection",
                    ]
                    lat = [timed(svc, "search", {"q": q}, 3) for q in mixed]
                    lat += [
                        timed(svc, "search", {"q": q, "mode": "prefix"}, 3)
                        for q in ("trig", "sess", "needle00")
                    ]
                    out["search_p50"], out["search_p95"] = median(lat), p95(lat)
            finally:
                svc.close()
        return out

    def api_figure(self, corpus: Path, data: Path, needles: list[str]) -> dict[str, Any]:
        """Search and stats over the daemon's REST API (HTTP on 127.0.0.1), best of 7 each: what a
        client of a running agtaild waits for. The daemon serves the index the cold run built."""
        sys.path.insert(0, str(REPO))
        from agtail_client import Client
        from tests.daemon_proc import DaemonProc

        base = Path(tempfile.mkdtemp(prefix="agtail-bench-api-"))
        (base / "data").symlink_to(data)
        roots = {"claude-code": corpus / "claude" / "projects", "codex": corpus / "codex" / "sessions"}
        d = DaemonProc(base, roots, env={k: v for k, v in self.env.items() if k != "HOME"})
        d.start(timeout=120)
        try:
            client = Client(url=d.url, token=d.token)

            def best(path: str, params: dict[str, Any], n: int = 7, *, fresh: bool = False) -> float:
                """``fresh``: computed anew each time (stats answers are kept while the index is
                unchanged, agtaild/api/answers.py; the figure is the computation's)."""
                from agtail_client.transport import API, document, query

                def get() -> Any:
                    if not fresh:
                        return client.get(path, params)
                    status, raw = client.request(
                        "GET", API + path + query(params), headers={"Cache-Control": "no-cache"}
                    )
                    return document(status, raw)

                get()
                runs = []
                for _ in range(n):
                    t = time.perf_counter()
                    get()
                    runs.append(time.perf_counter() - t)
                return min(runs)

            from bench_search_api import PHRASES as phrases

            out: dict[str, Any] = {
                "phrase": {q: best("/search", {"q": q}) for q in phrases},
                "rare": median([best("/search", {"q": n}) for n in needles[:5]]),
                "common": {q: best("/search", {"q": q}) for q in ("session", "parser")},
                "cjk": {q: best("/search", {"q": q}) for q in ("テスト", "索引")},
                "prefix": {q: best("/search", {"q": q, "mode": "prefix"}) for q in ("trig", "sess")},
                "stats_day": best("/stats", {"by": "day"}, fresh=True),
                "stats_session": best("/stats", {"by": "session"}, fresh=True),
                "stats_session_kept": best("/stats", {"by": "session"}),
            }
            client.close()
        finally:
            d.cleanup()
            shutil.rmtree(base, ignore_errors=True)
        out["phrase_worst"] = max(out["phrase"].values())
        return out

    def list_figure(self, corpus: Path, data: Path) -> dict[str, Any]:
        walls, stale = [], []
        for _ in range(self.repeat + 1):
            walls.append(self.agtail(data, self.roots(corpus), "list", "--limit", "50")[0])
            stale.append(self.agtail(data, self.roots(corpus), "list", "--limit", "50", "--no-update")[0])
        return {"seconds": median(walls[1:]), "no_update": median(stale[1:])}

    def script(self, name: str, *args: str) -> dict[str, Any]:
        """Another benchmark script of bench/ as a process of its own; its JSON document."""
        wall, out = self.timed([sys.executable, str(REPO / "bench" / name), *args])
        doc: dict[str, Any] = json.loads(out)
        doc["wall_seconds"] = wall
        return doc

    def first_minute(self, corpus: Path) -> dict[str, Any]:
        """Issue #13 figures 3 and 4 (bench/bench_first_minute.py): agtaild started on a cold data
        dir over a copy of the corpus (its files' mtimes set to their last records'), archive on;
        then the CLI's start-up through the running daemon."""
        copy = self.work / f"{corpus.name}-first-minute"
        if not copy.exists():
            shutil.copytree(corpus, copy)
        return self.script(
            "bench_first_minute.py", str(copy), "--runs", "3", "--startup-runs", "20", "--archive"
        )

    def live_append(self, corpus: Path, summary: Path, appends: int = 50) -> dict[str, Any]:
        """Issue #13 figure 5, append → searchable (bench/bench_daemon.py's append figure): one
        line at a time appended to a session a running agtaild watches, until `follow` delivers
        it and until /search finds it. The daemon reads a copy of this corpus."""
        work = self.work / "daemon"
        mine = work / "corpus-200mb"  # where bench_daemon.py looks for a generated corpus
        if not (mine / "gen.json").exists():
            shutil.rmtree(mine, ignore_errors=True)
            mine.mkdir(parents=True)
            for part in ("claude", "codex"):
                (mine / part).symlink_to(corpus / part)
            shutil.copy(summary, mine / "gen.json")
        doc = self.script(
            "bench_daemon.py",
            "--work",
            str(work),
            "--mb",
            "200",
            "--only",
            "append",
            "--appends",
            str(appends),
        )
        return dict(doc["append"])

    def startup(self) -> dict[str, float]:
        agtail = str(Path(sys.executable).parent / "agtail")

        def best(argv: list[str]) -> float:
            return median([self.timed(argv)[0] for _ in range(5)])

        py = sys.executable
        return {
            "python": best([py, "-c", "pass"]),
            "msgspec_sqlite": best([py, "-c", "import msgspec, sqlite3"]),
            "config": best(
                [py, "-c", "from agtaild.config import load_config; load_config(only_roots=True)"]
            ),
            "cli_frame": best([py, "-c", "from agtaild.cli import build_parser; build_parser()"]),
            "help": best([agtail, "--help"]),
        }


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def run_scale(b: Bench, a: argparse.Namespace) -> int:
    """bench/bench_scale.py on the large corpus (cached: generated once) and the --mb one; its
    section of the results page written anew, the rest of the page kept."""
    base, _ = b.corpus(f"c{int(a.mb)}", a.mb)
    shared = Path("/work/cache/corpus-10000")
    if a.scale_corpus:
        large = Path(a.scale_corpus)
    elif shared.with_name(shared.name + ".json").exists():
        large = shared
    else:
        mb = a.scale_mb or 10000
        large, _ = b.corpus(f"c{int(mb)}", mb)
        shutil.copy(b.work / f"c{int(mb)}.json", large.with_name(large.name + ".json"))
    doc = b.script(
        "bench_scale.py", "--corpus", str(large), "--base", str(base), "--work", str(b.work / "scale"),
        "--json", str(b.work / "scale.json"),
    )  # fmt: skip
    from bench_scale import render

    out = Path(a.out)
    old = out.read_text() if out.exists() else ""
    section = render(doc)
    block = re.compile(r"<!-- bench_scale:start.*?<!-- bench_scale:end -->\n?", re.DOTALL)
    text = (
        block.sub(lambda _m: section, old, count=1)
        if block.search(old)
        else old.rstrip("\n") + "\n\n" + section
    )
    out.write_text(text)
    print(json.dumps(doc, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "agtail-bench"))
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--small-mb", type=float, default=50)
    ap.add_argument("--big-mb", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--scale-mb",
        type=float,
        default=0,
        help="also index a corpus this big once (issue #13: 2000, against the 200 MB time; archive off)",
    )
    ap.add_argument(
        "--scale-corpus", help="an existing corpus made by gen_corpus.py --mb SCALE_MB (saves ~2.5 min)"
    )
    ap.add_argument(
        "--scale",
        action="store_true",
        help="only issue #32's run at scale (bench/bench_scale.py): a running agtaild on --scale-corpus"
        " (default /work/cache/corpus-10000, else a 10 GB corpus generated once into --work) against the"
        " --mb corpus; its section of RESULTS.md is replaced",
    )
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "RESULTS.md"))
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    b = Bench(work, a.repeat)
    if a.scale:
        return run_scale(b, a)
    shutil.rmtree(work / "trash", ignore_errors=True)  # an interrupted run's (see Bench.discard)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "agtaild")], check=True)
    started = time.time()
    load_before = load_average()
    big_corpus, big_summary = b.corpus(f"c{int(a.mb)}", a.mb)
    small_corpus, _ = b.corpus(f"c{int(a.small_mb)}", a.small_mb)
    big_session = b.big_session(a.big_mb)
    r: dict[str, Any] = {"started": datetime.now(UTC).isoformat(timespec="seconds")}
    r["corpus"] = {k: big_summary[k] for k in ("sessions", "lines", "bytes")}
    r["startup"] = b.startup()
    r["ccusage"] = b.ccusage(big_corpus)
    r["cold"] = b.cold_index(big_corpus, "big")
    r["cold_small"] = b.cold_index(small_corpus, "small")
    r["append"] = b.append_figure(big_session)
    r["append100"] = b.append_100(big_corpus)
    r["stats"] = b.stats_figure(big_corpus, work / "data-big")
    r["search"] = b.search_figure(big_corpus, work / "data-big", big_summary["needles"])
    r["api"] = b.api_figure(big_corpus, work / "data-big", big_summary["needles"])
    r["list_big"] = b.list_figure(big_corpus, work / "data-big")
    r["list_small"] = b.list_figure(small_corpus, work / "data-small")
    r["in_process"] = b.in_process(work / "data-big", work / "data-small", big_summary["needles"])
    r["first_minute"] = b.first_minute(big_corpus)
    r["live_append"] = b.live_append(big_corpus, work / f"{big_corpus.name}.json")
    r["cold_no_archive"] = b.cold_index_env(big_corpus, {"AGTAIL_ARCHIVE": "0"})
    if a.scale_mb:
        r["scale"] = b.scale(a.scale_mb, a.scale_corpus, big_corpus)
    r["breakdown"] = b.breakdown(big_corpus)
    r["archive"] = b.archive_breakdown(big_corpus)
    r["load"] = {"before": load_before, "after": load_average()}
    r["seconds"] = time.time() - started
    r["env"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "sqlite": sqlite3.sqlite_version}
    shutil.rmtree(work / "trash", ignore_errors=True)
    (work / "results.json").write_text(json.dumps(r, indent=1))
    from results_md import render

    out = Path(a.out)
    text = render(r)
    # Blocks written by hand into the same page (the daemon figures of bench/bench_daemon.py,
    # measurements made on the side) sit between <!-- NAME:start … --> and <!-- NAME:end -->:
    # keep them when the rest is regenerated.
    old = out.read_text() if out.exists() else ""
    for block in re.finditer(r"<!-- (\w+):start.*?<!-- \1:end -->", old, re.DOTALL):
        text = text.rstrip("\n") + "\n\n" + block.group(0) + "\n"
    out.write_text(text)
    print(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
