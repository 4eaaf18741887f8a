"""Conversation branches and compaction boundaries in `agtail show`.

Adapters mark events on a conversation branch with ``extra.branch`` (``active``/``inactive``),
``extra.fork`` (where the line leaves the active chain), ``extra.alt`` and ``extra.alts``
(agtaild.adapters.claude.branches, pi_tree, grok_updates). `show` prints the active branch and
a one-line marker at each fork; ``--branches`` prints every branch, each group under a marker
saying which alternative of which fork it is. Compactions become a divider line; the summary
the agent wrote is folded under it (``--full`` prints it whole).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agtaild.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

#: Event subtypes that mark a compaction boundary (Claude, Codex, OpenCode, Pi).
BOUNDARY_SUBTYPES = frozenset({"compact_boundary", "compaction"})
#: Event subtypes that carry the summary written at a compaction.
SUMMARY_SUBTYPES = frozenset({"compact_summary", "compactionSummary"})
#: Lines of a compaction summary shown without ``--full``.
FOLDED_SUMMARY_LINES = 3


def is_boundary(ev: dict[str, Any]) -> bool:
    return ev.get("kind") in ("system", "summary") and ev.get("subtype") in BOUNDARY_SUBTYPES


def is_compact_summary(ev: dict[str, Any]) -> bool:
    return ev.get("kind") == "summary" and ev.get("subtype") in SUMMARY_SUBTYPES


def branch_of(ev: dict[str, Any]) -> tuple[str, str, int, int] | None:
    """(branch, fork, alt, alts) of a marked event, else None. Agents that mark only
    ``branch`` (Pi, Grok) give their inactive events the fork ``?``: left out by default too."""
    extra = ev.get("extra") or {}
    branch, fork = extra.get("branch"), extra.get("fork")
    if branch == "inactive" and not isinstance(fork, str):
        return "inactive", "?", 0, 0
    if branch not in ("active", "inactive") or not isinstance(fork, str):
        return None
    alt, alts = extra.get("alt"), extra.get("alts")
    return branch, fork, int(alt) if isinstance(alt, int) else 0, int(alts) if isinstance(alts, int) else 0


def fork_label(fork: str, alt: int, alts: int, branch: str) -> str:
    if fork == "?":
        return "⑂ on another branch (inactive)"
    state = "active" if branch == "active" else "inactive"
    return f"⑂ branch {alt} of {alts} at fork {fork[:8]} ({state})"


def walk(
    events: Iterable[dict[str, Any]], *, all_branches: bool
) -> Iterator[tuple[str | None, dict[str, Any] | None]]:
    """Yield (marker line, None) and (None, event) in transcript order.

    Without ``all_branches``, inactive events are left out and each fork the active chain
    passes gets one marker (with how many other branches were left out, counted so far).
    Events without marks (sessions that never forked, the trunk before the first fork,
    agents without branches) pass through untouched, so this costs nothing for them."""
    last: tuple[str, int] | None = None
    announced: set[str] = set()
    for ev in events:
        mark = branch_of(ev)
        if mark is None:
            yield None, ev
            continue
        branch, fork, alt, alts = mark
        if not all_branches:
            if branch == "inactive":
                if fork == "?" and fork not in announced:
                    announced.add(fork)
                    yield "⑂ events on other branches are left out: show --branches", None
                continue
            if fork not in announced:
                announced.add(fork)
                others = alts - 1
                hint = f"; {count(others, 'other branch')}: show --branches" if others > 0 else ""
                yield f"⑂ branch {alt} of {alts} at fork {fork[:8]}{hint}", None
            yield None, ev
            continue
        if (fork, alt) != last:
            last = (fork, alt)
            yield fork_label(fork, alt, alts, branch), None
        yield None, ev


def divider(ev: dict[str, Any], width: int = 60) -> str:
    """The line a compaction boundary prints as."""
    extra = ev.get("extra") or {}
    found = extra.get("compactMetadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    bits = [str(meta[k]) for k in ("trigger",) if meta.get(k)]
    if isinstance(meta.get("preTokens"), int):
        bits.append(f"{meta['preTokens']:,} tokens before")
    label = " context compacted" + (f" ({', '.join(bits)})" if bits else "") + " "
    side = max(3, (width - len(label)) // 2)
    return "─" * side + label + "─" * side


def folded_summary(text: str, *, full: bool) -> list[str]:
    """A compaction summary under its divider: the first lines, then how much is folded."""
    lines = (text or "").strip("\n").splitlines() or [""]
    if full or len(lines) <= FOLDED_SUMMARY_LINES:
        return lines
    rest = len(lines) - FOLDED_SUMMARY_LINES
    return [*lines[:FOLDED_SUMMARY_LINES], f"… summary folded: {count(rest, 'more line')} (--full)"]
