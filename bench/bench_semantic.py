"""What search by meaning costs on this machine (issue #31), and how well it finds (recall@5).

    python bench/bench_semantic.py cost [--rows 200000] [--model DIR]
    python bench/bench_semantic.py quality --model DIR
    python bench/bench_semantic.py quality-sample --model DIR
    python bench/bench_semantic.py scale --data DIR [--runs 52]
    python bench/bench_semantic.py cli --data DIR --root AGENT=PATH… [--runs 11]

``cost``: exact kNN over an int8 store of ``--rows`` random unit vectors (256-d; p50/p95 of 50
queries, the matrix already in memory, as in a running daemon), the store's size per 100k
chunks, and with ``--model`` the local model's embedding throughput on sample texts.

``quality-sample``: the same over the sample corpus (tests/corpus, Claude Code and Codex): the
23 queries of bench/semantic_queries_sample.json, each with its target sessions.

``scale --data DIR``: against a data dir already indexed and embedded (the 2 GB corpus: see
bench/RESULTS.md for the commands): vector store size per 100k chunks, loading the matrix,
exact and listed (inverted-file) kNN with the listed search's recall@10 against exact, and
whole semantic, hybrid and full-text searches in-process (kNN + fusion), p50/p95.

``cli --data DIR --root …``: a daemon started on that data dir (no archive);
``python -c pass``, ``agtail search`` (full-text) and ``agtail search --mode hybrid|semantic``
as whole processes, alternating, medians of ``--runs`` rounds (at least 7), and their ratios
to the bare Python start.

``quality``: bench/semantic_queries.json — a synthetic index of sessions, each with a
paraphrased query written without the session's distinctive words — indexed in a temporary data
dir; recall@5 (the target session among the first five sessions found) for full-text (phrase,
and words), semantic and hybrid search. Temporary HOME and data dir; no agent directory is read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

#: Written for agtail (issue #31): no real transcript. Beside the bench, not in tests/corpus,
#: whose every file the adapters' corpus tests read.
QUERIES = REPO / "bench" / "semantic_queries.json"


def cost(rows: int, model_dir: Path | None) -> dict[str, Any]:
    import numpy as np

    from agtaild.semantic.knn import Matrix
    from agtaild.semantic.store import VectorStore

    dim = 256
    rng = np.random.default_rng(1)
    out: dict[str, Any] = {"rows": rows, "dimension": dim}
    with tempfile.TemporaryDirectory() as tmp:
        store = VectorStore(Path(tmp) / "v.sqlite3", Path(tmp) / "index.sqlite3")
        store.use_model("bench", dim)
        started = time.perf_counter()
        for start in range(0, rows, 10_000):
            n = min(10_000, rows - start)
            vecs = rng.normal(size=(n, dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            ids = range(start, start + n)
            store.add([(i, i // 50, i % 50) for i in ids], [(i, 0) for i in ids], vecs)
        out["write_seconds"] = round(time.perf_counter() - started, 2)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out["store_bytes_per_100k_chunks"] = int(store.size_bytes() * 100_000 / rows)
        matrix = Matrix()
        started = time.perf_counter()
        matrix.refresh(store, dim)
        out["load_seconds"] = round(time.perf_counter() - started, 2)
        times = []
        for _ in range(50):
            q = rng.normal(size=dim).astype(np.float32)
            q /= np.linalg.norm(q)
            t = time.perf_counter()
            matrix.nearest_events(q, 100)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        out["knn_ms_p50"] = round(statistics.median(times), 1)
        out["knn_ms_p95"] = round(times[int(len(times) * 0.95) - 1], 1)
        store.close()
    if model_dir is not None:
        from agtaild.semantic.static import StaticModel

        model = StaticModel.load(model_dir)
        doc = json.loads(QUERIES.read_text())
        texts = [m for s in doc["sessions"] for m in s["messages"]] * 20
        started = time.perf_counter()
        for start in range(0, len(texts), 256):
            model.embed(texts[start : start + 256])
        out["model"] = model.model_id
        out["texts_per_second"] = round(len(texts) / (time.perf_counter() - started))
    return out


def quality(model_dir: Path) -> dict[str, Any]:
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service

    doc = json.loads(QUERIES.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp
        root = Path(tmp) / "projects" / "-work-app"
        root.mkdir(parents=True)
        for n, s in enumerate(doc["sessions"]):
            lines = []
            for i, text in enumerate(s["messages"]):
                role = "user" if i % 2 == 0 else "assistant"
                content: Any = text if role == "user" else [{"type": "text", "text": text}]
                lines.append(
                    json.dumps(
                        {
                            "type": role,
                            "sessionId": s["id"],
                            "uuid": f"{s['id']}-{i}",
                            "cwd": "/work/app",
                            "timestamp": f"2025-03-{1 + n % 28:02d}T10:{i:02d}:00Z",
                            "message": {"role": role, "content": content},
                        }
                    )
                )
            (root / f"{s['id']}.jsonl").write_text("\n".join(lines) + "\n")
        data = Path(tmp) / "data"
        cfg = Config(
            data_dir=str(data), roots=[RootSpec("claude-code", str(Path(tmp) / "projects"))], archive=False
        )
        svc = Service(cfg)
        svc.update_index()
        (data / "semantic.json").write_text(json.dumps({"backend": "static", "model_dir": str(model_dir)}))
        started = time.perf_counter()
        status = svc.call("embeddings.build", {})
        build_s = time.perf_counter() - started
        found: dict[str, int] = {}
        latency: dict[str, list[float]] = {}
        for mode in ("phrase", "words", "semantic", "hybrid"):
            found[mode] = 0
            latency[mode] = []
            for q in doc["queries"]:
                t = time.perf_counter()
                # reveal: the search alone (masking every answer is measured in RESULTS.md already)
                hits = svc.call("search", {"q": q["query"], "mode": mode, "limit": 20}, reveal=True)["hits"]
                latency[mode].append((time.perf_counter() - t) * 1000)
                top: list[str] = []
                for h in hits:
                    if h["session"]["id"] not in top:
                        top.append(h["session"]["id"])
                found[mode] += q["target"] in top[:5]
        svc.close()
    total = len(doc["queries"])
    return {
        "sessions": len(doc["sessions"]),
        "queries": total,
        "events": status["events"],
        "build_seconds": round(build_s, 2),
        "recall_at_5": {m: round(v / total, 3) for m, v in found.items()},
        "found": found,
        "query_ms_p95": {m: round(sorted(v)[int(len(v) * 0.95) - 1], 1) for m, v in latency.items()},
    }


SAMPLE_QUERIES = REPO / "bench" / "semantic_queries_sample.json"


def quality_sample(model_dir: Path) -> dict[str, Any]:
    """bench/semantic_queries_sample.json over the sample corpus (tests/corpus/claude-code and
    tests/corpus/codex, every source a root), indexed and embedded in a temporary data dir."""
    from agtaild.config import Config, RootSpec
    from agtaild.query.service import Service

    doc = json.loads(SAMPLE_QUERIES.read_text())
    corpus = REPO / "tests" / "corpus"
    roots = [RootSpec("claude-code", str(p)) for p in sorted((corpus / "claude-code").glob("*/projects"))]
    roots += [RootSpec("codex", str(p)) for p in sorted((corpus / "codex").glob("*/sessions"))]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp
        data = Path(tmp) / "data"
        svc = Service(Config(data_dir=str(data), roots=roots, archive=False))
        svc.update_index()
        (data / "semantic.json").write_text(json.dumps({"backend": "static", "model_dir": str(model_dir)}))
        status = svc.call("embeddings.build", {})
        found: dict[str, int] = {}
        for mode in ("phrase", "words", "semantic", "hybrid"):
            found[mode] = 0
            for q in doc["queries"]:
                hits = svc.call("search", {"q": q["query"], "mode": mode, "limit": 50}, reveal=True)["hits"]
                top: list[str] = []
                for h in hits:
                    ref = f"{h['session']['agent']}:{h['session']['id']}"
                    if ref not in top:
                        top.append(ref)
                found[mode] += any(t in top[:5] for t in q["targets"])
        svc.close()
    total = len(doc["queries"])
    return {
        "queries": total,
        "events": status["events"],
        "chunks": status["chunks"],
        "recall_at_5": {m: round(v / total, 3) for m, v in found.items()},
        "found": found,
    }


def _pcts(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 1),
    }


def scale(data: Path, runs: int) -> dict[str, Any]:
    """Against a data dir that already holds an index and its vectors (embedded with the local
    model: ``agtail --data-dir DATA embeddings build``): the store's size, loading, exact and
    listed kNN (with recall against exact), and whole semantic / hybrid searches in-process."""
    import sqlite3

    import numpy as np

    from agtaild.config import Config
    from agtaild.query.service import Service

    out: dict[str, Any] = {}
    with sqlite3.connect(data / "vectors.sqlite3") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    svc = Service(Config(data_dir=str(data), roots=[], archive=False))
    engine = svc.semantic
    store = engine.store()
    seen, chunks = store.counts()
    out.update(
        events_embedded=seen,
        chunks=chunks,
        store_bytes=store.size_bytes(),
        store_bytes_per_100k_chunks=int(store.size_bytes() * 100_000 / max(1, chunks)),
        model=store.model_id,
    )
    dim = int(store.meta("dimension") or 0)
    t = time.perf_counter()
    engine.matrix.refresh(store, dim)
    out["load_seconds"] = round(time.perf_counter() - t, 2)
    doc = json.loads(QUERIES.read_text())
    queries = [q["query"] for q in doc["queries"]][:runs]
    vecs = [engine.query_vector(q) for q in queries]
    t = time.perf_counter()
    engine.warm()
    part = engine.matrix.partition
    out["partition_seconds"] = round(time.perf_counter() - t, 2)
    out["lists"] = part.lists if part is not None else 0
    exact_ms, listed_ms, recall = [], [], []
    for v in vecs:
        t = time.perf_counter()
        exact = engine.matrix.nearest_events(v, 100, exact=True)
        exact_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        listed = engine.matrix.nearest_events(v, 100)
        listed_ms.append((time.perf_counter() - t) * 1000)
        recall.append(len({e for e, _ in exact[:10]} & {e for e, _ in listed[:10]}) / 10)
    from agtaild.semantic import knn

    default_share = knn.PROBE_SHARE
    by_share: dict[str, Any] = {}
    for share in (1 / 32, 1 / 16, 1 / 8):  # how much of the lists a search reads: speed and recall
        knn.PROBE_SHARE = share
        ms, rec = [], []
        for v in vecs:
            exact = {e for e, _ in engine.matrix.nearest_events(v, 10, exact=True)}
            t = time.perf_counter()
            listed = engine.matrix.nearest_events(v, 100)
            ms.append((time.perf_counter() - t) * 1000)
            rec.append(len(exact & {e for e, _ in listed[:10]}) / 10)
        by_share[f"1/{round(1 / share)}"] = {**_pcts(ms), "recall_at_10": round(float(np.mean(rec)), 3)}
    knn.PROBE_SHARE = default_share
    out["knn_listed_by_probe_share"] = by_share
    out["knn_exact_ms"] = _pcts(exact_ms)
    out["knn_listed_ms"] = _pcts(listed_ms)
    out["knn_listed_recall_at_10"] = round(float(np.mean(recall)), 3)
    embed_ms = []
    for q in queries:
        t = time.perf_counter()
        engine.query_vector(q)
        embed_ms.append((time.perf_counter() - t) * 1000)
    out["query_embedding_ms"] = _pcts(embed_ms)
    from agtaild.index.budget import time_budget
    from agtaild.index.search import SearchScope, ranked_rows
    from agtaild.query import semantic as meaning

    scope = SearchScope()
    for mode in ("semantic", "hybrid"):  # the ranking alone: kNN (+ full-text ranking + fusion)
        times = []
        for q in queries:
            t = time.perf_counter()
            meaning.rank(svc, q, mode, scope, meaning.FUSE_DEPTH)
            times.append((time.perf_counter() - t) * 1000)
        out[f"rank_{mode}_ms"] = _pcts(times)
    times = []
    db = svc._reader()
    for q in queries:  # hybrid's full-text side alone: any of the words, bm25, 100 deep
        t = time.perf_counter()
        with time_budget(db):
            ranked_rows(
                db, meaning._or_query(q, db, str(svc.config.index_path)), scope, limit=meaning.FUSE_DEPTH
            )
        times.append((time.perf_counter() - t) * 1000)
    out["rank_full_text_side_ms"] = _pcts(times)
    for mode in ("semantic", "hybrid", "phrase"):
        svc.call("search", {"q": queries[0], "mode": mode, "limit": 20})  # warm
        times = []
        for q in queries:
            t = time.perf_counter()
            svc.call("search", {"q": q, "mode": mode, "limit": 20})
            times.append((time.perf_counter() - t) * 1000)
        out[f"search_{mode}_ms"] = _pcts(times)
    svc.close()
    return out


def cli(data: Path, roots: list[str], runs: int, word: str) -> dict[str, Any]:
    """Whole CLI processes through a daemon serving ``data`` (already indexed and embedded),
    against ``python -c pass``, alternating, ``runs`` rounds: medians of wall and CPU (the
    child's own, reaped with wait4), as bench/bench_first_minute.py measures the others."""
    import shutil
    import subprocess

    import agtail_client
    import agtaild
    from tests.daemon_proc import DaemonProc

    agtail = str(Path(sys.executable).parent / "agtail")
    # As an installed package runs: compiled once (bench_first_minute.py does the same).
    for pkg in (agtaild, agtail_client):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(pkg.__file__).parent)], check=True)
    base = Path(tempfile.mkdtemp(prefix="agtail-bench-semantic-cli-"))
    (base / "data").symlink_to(data.resolve())
    d = DaemonProc(base, dict(r.split("=", 1) for r in roots), extra=["--no-archive"])
    d.start(timeout=600)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {
        "HOME": str(base / "home")
    }

    def run(argv: list[str]) -> tuple[int, float, float]:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        return os.waitstatus_to_exitcode(status), time.perf_counter() - t0, usage.ru_utime + usage.ru_stime

    try:
        deadline = time.monotonic() + 1800
        while True:  # the figure is the CLI's: wait for the vectors in memory and their lists
            emb = (d.unix().health() or {}).get("embeddings") or {}
            if emb.get("ready") and emb.get("lists"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the daemon's vectors are not ready: {emb}")
            time.sleep(1)
        q = "the session where we fixed the flaky login test"
        dd = ["--data-dir", str(d.data_dir)]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "search WORD (full-text)": [agtail, *dd, "search", "--mode", "phrase", word],
            "search --mode hybrid": [agtail, *dd, "search", "--mode", "hybrid", q],
            "search --mode semantic": [agtail, *dd, "search", "--mode", "semantic", q],
        }
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for name, argv in commands.items():  # once each, to warm the page cache
            code, _w, _c = run(argv)
            if code != 0:
                raise RuntimeError(f"{name} exited {code}")
        for _ in range(runs):
            for name, argv in commands.items():
                _code, wall, cpu = run(argv)
                walls[name].append(wall)
                cpus[name].append(cpu)
    finally:
        d.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    bw, bc = statistics.median(walls["python -c pass"]), statistics.median(cpus["python -c pass"])
    return {
        name: {
            "wall_ms": round(statistics.median(walls[name]) * 1000, 1),
            "cpu_ms": round(statistics.median(cpus[name]) * 1000, 1),
            "wall_ratio": round(statistics.median(walls[name]) / bw, 2),
            "cpu_ratio": round(statistics.median(cpus[name]) / bc, 2),
        }
        for name in commands
    } | {"runs": runs}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("cost", "quality", "quality-sample", "scale", "cli"))
    ap.add_argument(
        "--root", action="append", default=[], help="cli: AGENT=PATH, the roots of --data's index"
    )
    ap.add_argument("--word", default="needle000097zq", help="cli: the full-text search's word (a rare one)")
    ap.add_argument("--data", type=Path, help="scale: a data dir with an index and its vectors")
    ap.add_argument("--runs", type=int, default=52, help="scale: queries (at most the 52 of the quality set)")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--model", type=Path)
    args = ap.parse_args()
    if args.what == "quality" and args.model is None:
        ap.error("quality needs --model DIR")
    if args.what == "quality-sample":
        if args.model is None:
            ap.error("quality-sample needs --model DIR")
        result = quality_sample(args.model)
    elif args.what == "cli":
        if args.data is None:
            ap.error("cli needs --data DIR")
        result = cli(args.data, args.root, max(7, args.runs if args.runs != 52 else 11), args.word)
    elif args.what == "scale":
        if args.data is None:
            ap.error("scale needs --data DIR")
        result = scale(args.data, args.runs)
    else:
        result = cost(args.rows, args.model) if args.what == "cost" else quality(args.model)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
