"""What the shared documents (Markdown, HTML, the handoff brief) have in common: the session's
header facts, cut blocks and counted words."""

from __future__ import annotations

import json
from typing import Any

#: Lines of a tool's result kept (the rest is counted).
RESULT_LINES = 40
#: Characters of one tool input or result line kept.
LINE_CHARS = 500


def cut_block(text: str, max_lines: int = RESULT_LINES) -> tuple[str, int]:
    lines = text.split("\n")
    kept = [x if len(x) <= LINE_CHARS else x[: LINE_CHARS - 1] + "…" for x in lines[:max_lines]]
    return "\n".join(kept), max(0, len(lines) - max_lines)


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def tokens(n: int | None) -> str:
    n = int(n or 0)
    return f"{n / 1e6:.1f}M" if n >= 1_000_000 else f"{n / 1e3:.1f}k" if n >= 1000 else str(n)


def header_facts(s: dict[str, Any]) -> list[tuple[str, str]]:
    usage = s.get("usage") or {}
    cost = usage.get("cost_usd")
    facts = [
        ("Agent", f"{s.get('agent')} {s.get('id')}" + (f" (v{s['version']})" if s.get("version") else "")),
        ("Models", ", ".join(s.get("models") or []) or "—"),
        ("Directory", s.get("cwd") or "—"),
        ("Project", s.get("project") or "—"),
        ("Git branch", s.get("git_branch") or "—"),
        ("Started", s.get("started") or "—"),
        ("Ended", s.get("ended") or "—"),
        ("Tokens", f"{tokens(usage.get('total_tokens'))} ({tokens(usage.get('input_tokens'))} in, "
                   f"{tokens(usage.get('output_tokens'))} out, {tokens(usage.get('cache_read_tokens'))} cache read)"),
        ("Cost", f"${cost:.2f}" if isinstance(cost, int | float) else "not priced"),
    ]  # fmt: skip
    if s.get("ending"):
        facts.append(("Ended by", str(s["ending"])))
    state = s.get("state") or {}  # the user's own marks (agtaild.userstate): labels, the star
    labels = state.get("labels") or s.get("labels") or {}
    if labels:
        facts.append(("Labels", ", ".join(f"{k}={v}" if v else str(k) for k, v in sorted(dict(labels).items()))))
    if state.get("starred"):
        facts.append(("Starred", "yes"))
    return facts
