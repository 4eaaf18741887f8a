"""Branch marks for a conversation kept as a tree of messages (ids and parent ids).

Chat services keep every regenerated answer and every edited prompt: a message with two or
more children is a *fork*, its children (in the order given) its *alternatives* 1, 2, …, and
the *active chain* runs from the leaf the service shows back to the root. The marks are the
ones the viewer and ``agtail show`` already read for Claude Code's rewinds
(agtaild.adapters.claude.branches): below a fork an event carries ``extra.branch``
(``active``/``inactive``), ``extra.fork`` (where its line leaves the active chain; for an
active event the nearest fork above it), ``extra.alt`` and ``extra.alts``; the session lists
the forks in ``extra.forks``. A tree without a fork gives no marks at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: How many forks the session summary lists.
MAX_LISTED_FORKS = 200

Mark = tuple[str, str, int, int]  # (branch, fork id, alt, alts)


def active_chain(parents: dict[str, str | None], leaf: str | None) -> list[str]:
    """The ids from ``leaf`` up to its root, root first (a loop ends the walk)."""
    chain: list[str] = []
    seen: set[str] = set()
    cur = leaf
    while cur is not None and cur in parents and cur not in seen:
        seen.add(cur)
        chain.append(cur)
        cur = parents[cur]
    chain.reverse()
    return chain


def branch_marks(
    nodes: Iterable[tuple[str, str | None]], leaf: str | None
) -> tuple[dict[str, Mark], list[dict[str, Any]]]:
    """Each node's mark (only nodes below a fork have one) and the fork list.

    ``nodes`` are (id, parent id) pairs in the order the children of a node are to be
    numbered; a parent that is not a node makes a root."""
    parents: dict[str, str | None] = {}
    children: dict[str, list[str]] = {}
    for node, parent in nodes:
        if node in parents:
            continue
        parents[node] = parent
    for node, parent in parents.items():
        if parent is not None and parent in parents and parent != node:
            children.setdefault(parent, []).append(node)
    forks = {p: kids for p, kids in children.items() if len(kids) > 1}
    if not forks:
        return {}, []
    active = set(active_chain(parents, leaf))
    listed: list[dict[str, Any]] = []
    for fork, kids in forks.items():
        if len(listed) >= MAX_LISTED_FORKS:
            break
        on = [i for i, k in enumerate(kids) if k in active]
        listed.append({"fork": fork, "alts": len(kids), "active": on[0] + 1 if on else None,
                       "on_active_chain": fork in active, "heads": kids})  # fmt: skip
    alt_of = {k: (fork, i + 1, len(kids)) for fork, kids in forks.items() for i, k in enumerate(kids)}
    marks: dict[str, Mark] = {}
    roots = [n for n, p in parents.items() if p is None or p not in parents or p == n]
    stack: list[tuple[str, Mark | None]] = [(r, None) for r in reversed(roots)]
    seen: set[str] = set()
    while stack:
        node, above = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        spot = alt_of.get(node)
        if spot is not None and (above is None or above[0] == "active"):
            above = ("active" if node in active else "inactive", *spot)
        if above is not None:
            marks[node] = above
        for kid in reversed(children.get(node, ())):
            stack.append((kid, above))
    return marks, listed


def mark_extra(mark: Mark | None) -> dict[str, Any]:
    """The ``extra`` keys of one mark ({} for an unmarked node)."""
    if mark is None:
        return {}
    branch, fork, alt, alts = mark
    return {"branch": branch, "fork": fork, "alt": alt, "alts": alts}


def tree_order(nodes: Iterable[tuple[str, str | None]]) -> list[str]:
    """The ids in depth-first order from the roots, each node's children in the order given
    (every alternative's continuation follows it); nodes a loop cuts off come last."""
    parents: dict[str, str | None] = {}
    for node, parent in nodes:
        parents.setdefault(node, parent)
    children: dict[str, list[str]] = {}
    for node, parent in parents.items():
        if parent is not None and parent in parents and parent != node:
            children.setdefault(parent, []).append(node)
    roots = [n for n, p in parents.items() if p is None or p not in parents or p == n]
    out: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        out.append(node)
        stack.extend(reversed(children.get(node, ())))
    out.extend(n for n in parents if n not in seen)
    return out
