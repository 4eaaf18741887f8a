"""Renders run_bench.py's measurements as bench/RESULTS.md (the figures, their targets, met or not)."""

from __future__ import annotations

from typing import Any


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _ok(cond: bool) -> str:
    return "met" if cond else "**not met**"


def render(r: dict[str, Any]) -> str:
    cc = r["ccusage"]["seconds"]
    cold = r["cold"]
    ratio = cold["seconds"] / cc
    rss_main = cold["rusage"]["maxrss_self_mb"]
    rss_kids = cold["rusage"]["maxrss_children_mb"]
    ap = r["append"]
    st = r["stats"]
    se = r["search"]
    ours = st["totals"]
    theirs = r["ccusage"]["totals"]
    equal = (
        ours["input_tokens"] == theirs["inputTokens"]
        and ours["output_tokens"] == theirs["outputTokens"]
        and ours["cache_read_tokens"] == theirs["cacheReadTokens"]
        and ours["cache_write_tokens"] == theirs["cacheCreationTokens"]
        and ours["total_tokens"] == theirs["totalTokens"]
    )
    corpus = r["corpus"]
    rows = [
        (
            "cold `agtail index`, 200 MB (archive on, as shipped)",
            "≤ 8× ccusage (aim 5×)",
            f"{_ms(cold['seconds'])} = {ratio:.1f}× ccusage ({_ms(cc)})",
            _ok(ratio <= 8),
        ),
        (
            "peak RSS of that index run",
            "< 250 MB",
            f"CLI {rss_main:.0f} MB, largest worker {rss_kids:.0f} MB (sum {rss_main + rss_kids:.0f} MB)",
            _ok(rss_main + rss_kids < 250),
        ),
        (
            f"append one line to a {ap['size_mb']:.0f} MB session, `agtail index`",
            "< 1/100 of its cold index",
            f"update {_ms(ap['append_inner'])} vs cold {_ms(ap['cold_inner'])} "
            f"(1/{ap['cold_inner'] / ap['append_inner']:.0f}); whole CLI {_ms(ap['append_cli'])} vs "
            f"{_ms(ap['cold_cli'])} (1/{ap['cold_cli'] / ap['append_cli']:.0f})",
            _ok(ap["append_inner"] * 100 < ap["cold_inner"])
            + " (update); "
            + _ok(ap["append_cli"] * 100 < ap["cold_cli"])
            + " (whole CLI)",
        ),
        (
            "same append, the daemon's path (`update_index(only_paths=…)`, in-process)",
            "",
            f"{_ms(ap['append_daemon'])} (1/{ap['cold_inner'] / ap['append_daemon']:.0f} of cold)",
            _ok(ap["append_daemon"] * 100 < ap["cold_inner"]),
        ),
        (
            "`agtail stats --json` (checks the files first)",
            "< 1/20 ccusage",
            f"{_ms(st['seconds'])} = 1/{cc / st['seconds']:.1f}",
            _ok(st["seconds"] * 20 < cc),
        ),
        (
            "`agtail stats --json --no-update`",
            "< 1/20 ccusage",
            f"{_ms(st['no_update'])} = 1/{cc / st['no_update']:.1f}",
            _ok(st["no_update"] * 20 < cc),
        ),
        (
            "stats token totals vs ccusage claude + codex",
            "equal",
            f"{ours['total_tokens']:,} vs {theirs['totalTokens']:,}",
            _ok(equal),
        ),
        (
            "`agtail search` rare word (checks the files first)",
            "< 1/20 `grep -rF` (warm)",
            f"{_ms(se['rare'])} vs grep {_ms(se['grep'])} = 1/{se['grep'] / se['rare']:.1f}",
            _ok(se["rare"] * 20 < se["grep"]),
        ),
        (
            f"`agtail search --no-update`, {se['queries']} mixed queries",
            "p95 recorded",
            f"p50 {_ms(se['p50'])}, p95 {_ms(se['p95'])}",
            "recorded",
        ),
        (
            "`agtail list --limit 50`, 50 MB / 200 MB index",
            "milliseconds, flat in corpus size",
            f"{_ms(r['list_small']['seconds'])} / {_ms(r['list_big']['seconds'])} "
            f"(`--no-update`: {_ms(r['list_small']['no_update'])} / {_ms(r['list_big']['no_update'])})",
            "",
        ),
        (
            "`agtail --help`",
            "well under 100 ms",
            f"{_ms(r['startup']['help'])} (bare `python -c pass`: {_ms(r['startup']['python'])})",
            _ok(r["startup"]["help"] < 0.1),
        ),
    ]
    out = [
        "# Benchmark results (index, search, stats)",
        "",
        "Produced by `bench/run_bench.py` (rerun it to refresh this page; it writes the raw numbers",
        "to `<work>/results.json`). Every agtail figure is a whole `agtail --no-daemon …` process,",
        "start-up included, unless the row says otherwise; medians of the repetitions.",
        "",
        f"Run {r['started']}, {r['seconds']:.0f} s; {r['env']['cpus']} CPUs, Python {r['env']['python']}, "
        f"SQLite {r['env']['sqlite']}; load average before {r['load']['before']}, after {r['load']['after']}.",
        f"Corpus: `gen_corpus.py --mb 200` = {corpus['sessions']} sessions, {corpus['lines']:,} lines, "
        f"{corpus['bytes'] / 2**20:.0f} MB (Claude Code + Codex layouts).",
        "",
        "| figure | target | measured | |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
        "",
        f"Cold index detail: {cold['report']['sessions']} sessions, {cold['report']['events']:,} events, "
        f"CPU {cold['rusage']['cpu_self']:.1f} s in the CLI + {cold['rusage']['cpu_children']:.1f} s in workers; "
        f"runs {', '.join(_ms(x) for x in cold['runs'])}; ccusage runs {', '.join(_ms(x) for x in r['ccusage']['runs'])}.",
        f"50 MB corpus cold index: {_ms(r['cold_small']['seconds'])}.",
        f"Queries with no hit (expected: the last one): {', '.join(se['zero_hits']) or 'none'}.",
        "",
    ]
    return "\n".join(out)
