"""Comparing lines for blame's replay (agtaild.provenance.replay): exact runs, runs as a
formatter leaves them, and which lines two texts have in common."""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any

_SPACE = re.compile(r"\s+")


def canonical(line: str) -> str:
    """A line as a formatter leaves its meaning: without white space, one kind of quote."""
    return _SPACE.sub("", line).replace("'", '"')


def kept(old: list[str], new: list[str]) -> dict[int, int]:
    """Index in ``new`` → index in ``old`` of the lines an edit kept: its context (the lines
    both begin and end with) one to one, then the lines in common in between."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    kept = {j: j for j in range(head)}
    kept.update({len(new) - 1 - t: len(old) - 1 - t for t in range(tail)})
    middle = matches(old[head : len(old) - tail], new[head : len(new) - tail])
    kept.update({head + j: head + k for j, k in middle.items()})
    return kept


def matches(a: Sequence[Any], b: Sequence[Any]) -> dict[int, int]:
    """Index in ``b`` → index in ``a`` of the lines the two have in common, in order."""
    found: dict[int, int] = {}
    if not a or not b:
        return found
    for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            found[block.b + k] = block.a + k
    return found


def find(lines: list[Any], old: list[str], *, loose: bool = False) -> list[tuple[int, int]]:
    """Every place ``old`` runs in ``lines`` (non-overlapping), as (start, end)."""
    if loose:
        want = [canonical(x) for x in old]
        have = [canonical(x) if isinstance(x, str) else x for x in lines]
    else:
        want, have = list(old), lines
    n = len(want)
    pivot = max(range(n), key=lambda k: len(want[k]))  # the longest line: the fewest false starts
    key = want[pivot]
    spots: list[tuple[int, int]] = []
    i = pivot
    limit = len(have) - n + pivot
    while i <= limit:
        try:
            i = have.index(key, i, limit + 1)
        except ValueError:
            break
        start = i - pivot
        if have[start : start + n] == want and (not spots or start >= spots[-1][1]):
            spots.append((start, start + n))
        i += 1
    return spots
