#!/usr/bin/env python3
"""The secret scanner's figures (issue #24): throughput, recall, false findings, hostile input.

    bench/bench_secrets.py [--work DIR] [--mb 50] [--repeat 5] [--write-results]

* Throughput, in MB of decoded text (UTF-8) per CPU-second, of ``Scanner.results`` over every
  text of a corpus (batched, as the index would call it), of ``mask_many`` (a rescan plus
  the replacement), and of the straightforward loop it replaces — gitleaks' own method per
  text: lower-case it, and run every rule one of whose keywords it holds. Corpora: the
  sample corpus (tests/corpus, decoded) and ``bench/gen_corpus.py --mb MB`` (seed 1), decoded
  the same way. Best and median of ``--repeat`` runs (the machine is shared).
* One appended event: the cost of scanning one 2 KB text alone (what an append scans inline).
* Recall on the planted corpus (tests/secrets/corpus.py, seed 1), leaks after masking,
  findings in the look-alikes, false findings per 10 MB of the sample corpus.
* Hostile texts: CPU seconds of a 100 MB line, a 10 MB base64 blob, AKIA × 1e6 …

Prints one JSON document; ``--write-results`` also writes its block into bench/RESULTS.md
(between ``<!-- bench_secrets:start`` and ``<!-- bench_secrets:end -->``, kept by run_bench.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agtaild.secrets import Scanner, load_rules, mask_many  # noqa: E402
from tests.secrets.corpus import build  # noqa: E402
from tests.secrets.measure import lookalike_findings, recall, sample_corpus_findings, sample_record_findings  # noqa: E402
from tests.secrets.sample_text import corpus_texts  # noqa: E402
from tests.test_secrets_hostile import CASES  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"


def cpu(fn: Any, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        out.append(time.process_time() - started)
    return out


def naive(scanner: Scanner, texts: list[str]) -> None:
    """gitleaks' loop, in Python: per text, its lower case, then each rule whose keyword it holds."""
    rules = [(rule.regex, [k.decode() for k in rule.keywords]) for rule in scanner.rules]
    for text in texts:
        low = text.lower()
        for regex, keywords in rules:
            if not keywords or any(k in low for k in keywords):
                for _ in regex.finditer(text):
                    pass


def fragments(texts: list[str], size: int = 1 << 20) -> list[str]:
    """The texts joined into fragments of about ``size`` characters (no per-text cost left)."""
    out, part, n = [], [], 0
    for text in texts:
        part.append(text)
        n += len(text) + 1
        if n >= size:
            out.append("\n".join(part))
            part, n = [], 0
    if part:
        out.append("\n".join(part))
    return out


def throughput(scanner: Scanner, texts: list[str], repeat: int, naive_share: float) -> dict[str, Any]:
    mb = sum(len(t.encode("utf-8", "replace")) for t in texts) / 1e6
    scan = cpu(lambda: scanner.results(texts), repeat)
    findings = sum(len(r.findings) for r in scanner.results(texts))
    masked = cpu(lambda: mask_many(texts, scanner=scanner), max(1, repeat // 2))
    part = texts[: max(1, int(len(texts) * naive_share))]
    part_mb = sum(len(t.encode("utf-8", "replace")) for t in part) / 1e6
    slow = cpu(lambda: naive(scanner, part), 1)
    joined = fragments(texts)
    big = cpu(lambda: naive(scanner, joined), 1)
    return {
        "texts": len(texts),
        "mb": round(mb, 2),
        "findings": findings,
        "scan_mb_per_cpu_s": {"best": round(mb / min(scan), 1), "median": round(mb / statistics.median(scan), 1)},
        "scan_cpu_s": [round(x, 3) for x in scan],
        "mask_mb_per_cpu_s": {"best": round(mb / min(masked), 1), "median": round(mb / statistics.median(masked), 1)},
        "naive_mb_per_cpu_s": round(part_mb / slow[0], 1),
        "naive_share": naive_share,
        "naive_fragments_mb_per_cpu_s": round(mb / big[0], 1),
    }


def one_event(scanner: Scanner) -> dict[str, float]:
    text = ("I ran the tests again and the parser still fails on the fixture path with spaces; " * 25)[:2000]
    runs = []
    for _ in range(2000):
        started = time.perf_counter()
        scanner.results([text])
        runs.append(time.perf_counter() - started)
    return {"chars": len(text), "median_us": round(statistics.median(runs) * 1e6, 1), "p95_us": round(sorted(runs)[1900] * 1e6, 1)}


def quality(scanner: Scanner) -> dict[str, Any]:
    ruleset = load_rules()
    corpus = build(1, ruleset=ruleset)
    report = recall(corpus, scanner)
    look = lookalike_findings(corpus, scanner)
    sample = sample_corpus_findings(scanner)
    records, record_findings = sample_record_findings(scanner)
    return {
        "planted": report.planted,
        "found": report.found,
        "recall": round(report.rate, 4),
        "missed": [(p.family, p.rule) for p in report.missed],
        "leaked_after_masking": len(report.leaked),
        "named_by_another_rule": sum(report.named_otherwise.values()),
        "lookalike_records": len(corpus.lookalike_records),
        "lookalike_findings": [(k, f.rule) for k, f, _ in look],
        "sample_texts": sample.texts,
        "sample_mb": round(sample.bytes / 1e6, 2),
        "sample_findings": [(p, f.rule, f.confidence) for p, f, _ in sample.findings],
        "sample_false_per_10_mb": round(sample.per_10_mb(), 3),
        "sample_records": records,
        "sample_record_findings": [(p, f.rule) for p, f in record_findings],
        "rules": len(scanner.rules),
    }


def hostile(scanner: Scanner) -> dict[str, float]:
    out = {}
    for name, make in CASES.items():
        text = make()
        started = time.process_time()
        scanner.results([text])
        out[name] = round(time.process_time() - started, 2)
    return out


def block(r: dict[str, Any]) -> str:
    s, g, q, e = r["sample"], r["generated"], r["quality"], r["one_event"]
    h = "; ".join(f"{name} {sec} CPU-s" for name, sec in r["hostile"].items())

    def row(c: dict[str, Any]) -> str:
        return (
            f"**{c['scan_mb_per_cpu_s']['best']}** best, {c['scan_mb_per_cpu_s']['median']} median "
            f"({c['texts']:,} texts, {c['mb']} MB); masking {c['mask_mb_per_cpu_s']['median']}; "
            f"the keyword loop {c['naive_mb_per_cpu_s']} per text, {c['naive_fragments_mb_per_cpu_s']} over 1 MB fragments"
        )

    met = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    return f"""<!-- bench_secrets:start (bench/bench_secrets.py --write-results; keep this block when regenerating the rest) -->
## The secret scanner (bench/bench_secrets.py, issue #24)

Run {r["when"]}, {r["machine"]}; load average before {r["load"][0]}, after {r["load"][1]}.
The scanner package alone (agtaild/secrets/), outside the index pipeline and the exits (their costs: blocks `masking_cost`, `bench_export`, `bench_redact`).
MB = UTF-8 bytes of decoded text (each string a JSONL line, JSON file or SQLite row holds).

| figure | target | measured | |
|---|---|---|---|
| scan, sample corpus (tests/corpus, decoded), MB per CPU-second | ≥ 30 | {row(s)} | {met(s["scan_mb_per_cpu_s"]["median"] >= 30)} |
| scan, `gen_corpus.py --mb {r["gen_mb"]:g}`, decoded | ≥ 30 | {row(g)} | {met(g["scan_mb_per_cpu_s"]["median"] >= 30)} |
| one 2 KB text scanned alone (an append) | within noise | median {e["median_us"]} µs, p95 {e["p95_us"]} µs | recorded |
| recall, planted corpus ({q["planted"]} secrets: every family by hand + one sample of every rule) | ≥ 99 % | {q["found"]} of {q["planted"]} = {q["recall"] * 100:.2f} %; {q["leaked_after_masking"]} left after masking | {met(q["recall"] >= 0.99 and not q["leaked_after_masking"])} |
| look-alikes (UUIDs, SHAs, base64 images, lock-file hashes, digests, docs' example keys, placeholders) | 0 | {len(q["lookalike_findings"])} findings in {q["lookalike_records"]} records | {met(not q["lookalike_findings"])} |
| false findings, sample corpus | < 1 per 10 MB | {len(q["sample_findings"])} in {q["sample_mb"]} MB = {q["sample_false_per_10_mb"]} per 10 MB; through `scan_json` (keys as context) {len(q["sample_record_findings"])} in {q["sample_records"]:,} records; the generated corpus {g["findings"]} in {g["mb"]} MB | {met(q["sample_false_per_10_mb"] < 1)} |
| hostile texts, one scan each | bounded, linear | {h} | recorded |

{q["rules"]} rules run (gitleaks v8.30.1 less the 5 that need a file path, plus agtail's own).
"The keyword loop" is gitleaks' method written in Python (per text: lower-case it, run each
rule one of whose keywords it holds): per text over {s["naive_share"] * 100:.0f} % / {g["naive_share"] * 100:.0f} % of the texts, and over
the texts joined into 1 MB fragments (no cost per text left: the rules' own cost).
Reproduce: `.venv/bin/python bench/bench_secrets.py --work /tmp/secrets-bench` (prints JSON).
<!-- bench_secrets:end -->"""


def write_block(text: str) -> None:
    old = RESULTS.read_text()
    pattern = re.compile(r"<!-- bench_secrets:start.*?<!-- bench_secrets:end -->", re.DOTALL)
    new = pattern.sub(lambda _: text, old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text + "\n"
    RESULTS.write_text(new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-results", action="store_true")
    a = parser.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="agtail-secrets-bench-"))
    gen = work / f"gen-{a.mb:g}"
    if not gen.exists():
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_corpus.py"), str(gen), "--mb", str(a.mb)], check=True, stdout=subprocess.DEVNULL)
    load_before = os.getloadavg()
    scanner = Scanner(load_rules())
    sample = [t for _, t in corpus_texts()]
    generated = [t for _, t in corpus_texts(gen)]
    r: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
        "gen_mb": a.mb,
        "sample": throughput(scanner, sample, a.repeat, 0.25),
        "generated": throughput(scanner, generated, a.repeat, 0.05),
        "one_event": one_event(scanner),
        "quality": quality(scanner),
        "hostile": hostile(scanner),
    }
    r["load"] = [" ".join(f"{x:.2f}" for x in load_before), " ".join(f"{x:.2f}" for x in os.getloadavg())]
    print(json.dumps(r, indent=1))
    if a.write_results:
        write_block(block(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
