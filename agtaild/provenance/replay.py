"""Blame: replay a file's recorded changes in time order, then match the file as it is now.

The replay keeps a model of the file: a list of lines, each with the change that introduced
it (an index into the changes) or :data:`UNKNOWN` (there before any record, or written outside
every session). Unknown stretches of the file (before the first whole-file write, or around an
edit placed in a file the replay never saw whole) are one :data:`GAP` line standing for any
number of lines. Each change is applied as follows:

* ``write`` (a whole new text): every line is new unless it was already in the model (a line
  kept from the old text keeps its origin); when the recorded diff says which lines it added,
  only those are the change's, the others keep the model's origin or are unknown.
* ``replace old → new``: ``old`` is looked for in the model (exactly, then without trailing
  spaces, then as the best partial match: the file changed outside the record in between);
  the lines of ``new`` that ``old`` already had keep the origin of the model's line (unknown
  when the model lacked it: a line written by hand that the agent kept), the others are the
  change's. Not found at all: ``new`` is placed into a gap, its kept lines unknown.
* ``delete``: the model is empty again; a ``command``: nothing to replay (noted).

Failed changes are skipped. Finally the file on disk is aligned with the model line by line
(difflib's matching blocks): a line of the file matched to a model line gets that line's
origin; every other line is "not from a recorded session". A line is marked ``ambiguous``
when the change that wrote it was placed inexactly (its old text did not match the model, or
matched in several places with nothing to choose by).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import accumulate
from typing import Any

from agtaild.provenance.lines import canonical, find, matches
from agtaild.provenance.lines import kept as kept_lines

UNKNOWN = -1
#: How alike (difflib's ratio) a retouched line must be to the recorded one to place an edit by it.
SIMILAR = 0.8
#: ... and how much more alike than the next most alike line.
MARGIN = 0.02
#: Lines of an edit's old text compared that way.
SIMILAR_LINES = 4
#: A line found out of order counts when its run holds a line of at least this many characters.
MOVED_CHARS = 8
#: A gap in the model's text (an agent's text never holds NUL).
_GAP_TEXT = "\x00"


class _Gap:
    """An unknown stretch of the file (matches nothing)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "GAP"


GAP: Any = _Gap()


@dataclass
class Change:
    """One recorded change, as blame replays it (history.Record carries the rest)."""

    kind: str
    ops: list[list[Any]]
    failed: bool = False


@dataclass
class Outcome:
    """What the replay made of one change."""

    applied: bool = False
    exact: bool = True
    note: str | None = None


@dataclass
class Blame:
    origins: list[int]  # per line of the file: the change's index, or UNKNOWN
    ambiguous: list[bool]
    outcomes: list[Outcome] = field(default_factory=list)


class Model:
    def __init__(self) -> None:
        self.lines: list[Any] = [GAP]
        self.origin: list[int] = [UNKNOWN]
        self.inexact: set[int] = set()
        self.moved: set[int] = set()  # file lines matched out of order (see _moved)

    # -- whole texts --------------------------------------------------------------------
    def write(self, index: int, new: list[str], added: Sequence[int] | None) -> Outcome:
        known = matches(self.lines, new)
        origin = []
        added_set = set(added) if added is not None else None
        for j in range(len(new)):
            i = known.get(j)
            if added_set is not None and (j + 1) in added_set:
                origin.append(index)
            elif i is not None:
                origin.append(self.origin[i])
            elif added_set is None:
                origin.append(index)
            else:
                origin.append(UNKNOWN)
        self.lines, self.origin = list(new), origin
        return Outcome(applied=True)

    def delete(self) -> Outcome:
        self.lines, self.origin = [], []
        return Outcome(applied=True)

    # -- replacements -------------------------------------------------------------------
    def replace(self, index: int, old: list[str], new: list[str], hint: int, every: bool) -> Outcome:
        if not old:
            return self._insert(index, new, hint)
        spots = find(self.lines, old)
        exact = remap = True
        if spots:
            remap = False
        else:
            spots = find(self.lines, old, loose=True)  # retouched by a formatter: kept lines are matched by text
        if not spots:
            region = self._best_region(old)
            if region is None:
                return self._into_gap(index, old, new, hint)
            spots, exact = [region], False
        elif len(spots) > 1 and not every:
            if hint > 0:
                spots = [min(spots, key=lambda s: abs(s[0] + 1 - hint))]
            else:
                spots, exact = spots[:1], False
        for start, end in sorted(spots, reverse=True):
            self._splice(index, start, end, old, new, exact, remap=remap)
        return Outcome(applied=True, exact=exact, note=None if exact else "its old text did not match the file")

    def replace_text(self, index: int, old: str, new: str, hint: int, every: bool) -> Outcome:
        """``old`` → ``new`` as pieces of text (an agent's old/new strings need not be whole
        lines): the lines the match touches become the lines of the replaced text."""
        if not old:
            return self._insert(index, new.splitlines(), hint)
        text = "\n".join(x if isinstance(x, str) else _GAP_TEXT for x in self.lines)
        found = []
        at = text.find(old)
        while at >= 0:
            found.append(at)
            at = text.find(old, at + len(old))
        if not found:
            return self.replace(index, old.splitlines(), new.splitlines(), hint, every)
        starts = list(accumulate((len(x) + 1 if isinstance(x, str) else len(_GAP_TEXT) + 1 for x in self.lines), initial=0))
        exact = True
        if len(found) > 1 and not every:
            if hint > 0:
                found = [min(found, key=lambda a: abs(bisect_right(starts, a) - hint))]
            else:
                found, exact = found[:1], False
        for at in sorted(found, reverse=True):
            first = bisect_right(starts, at) - 1
            last = max(bisect_right(starts, at + len(old) - 1) - 1, first)
            region = "\n".join(self.lines[first : last + 1]) + "\n"
            a = at - starts[first]
            replaced = region[:a] + new + region[a + len(old) :]
            new_lines = (replaced[:-1] if replaced.endswith("\n") else replaced).split("\n") if replaced else []
            self._splice(index, first, last + 1, self.lines[first : last + 1], new_lines, True)
            if not exact:
                self.inexact.add(index)
        return Outcome(applied=True, exact=exact, note=None if exact else "its old text is in several places")

    def _splice(
        self, index: int, start: int, end: int, old: list[str], new: list[str], exact: bool, *, remap: bool = False
    ) -> None:
        """Model lines [start, end) were ``old``; they become ``new``. (``remap``: the model's
        lines there are not exactly ``old``: a kept line keeps its origin only where its text
        is the model's.)"""
        here = self.lines[start:end]
        to_model = matches(here, old) if remap or not exact else {k: k for k in range(len(old))}
        kept = kept_lines(old, new)
        origin = []
        for j in range(len(new)):
            k = kept.get(j)
            if k is None:
                origin.append(index)
            else:
                i = to_model.get(k)
                origin.append(self.origin[start + i] if i is not None else UNKNOWN)
        self.lines[start:end] = new
        self.origin[start:end] = origin
        if not exact:
            self.inexact.add(index)

    def _insert(self, index: int, new: list[str], hint: int) -> Outcome:
        if self.lines == [GAP]:
            self.lines, self.origin = [*new, GAP], [index] * len(new) + [UNKNOWN]
            return Outcome(applied=True, exact=False, note="placed at the start of a file the record never showed whole")
        at = min(max(hint - 1, 0), len(self.lines)) if hint > 0 else len(self.lines)
        self.lines[at:at] = new
        self.origin[at:at] = [index] * len(new)
        if hint <= 0:
            self.inexact.add(index)
        return Outcome(applied=True, exact=hint > 0)

    def _into_gap(self, index: int, old: list[str], new: list[str], hint: int) -> Outcome:
        """``old`` is nowhere in the model: it was in a part the replay never saw (or was
        changed outside the record). ``new`` goes there, between gaps; its lines that ``old``
        had are unknown (not written by this change)."""
        kept = matches(old, new)
        origin = [UNKNOWN if j in kept else index for j in range(len(new))]
        gaps = [i for i, line in enumerate(self.lines) if line is GAP]
        if hint > 0:
            at = min(hint - 1, len(self.lines))
        elif gaps:
            at = gaps[-1]
        else:
            at = len(self.lines)
        self.lines[at:at] = [GAP, *new, GAP]
        self.origin[at:at] = [UNKNOWN, *origin, UNKNOWN]
        self.inexact.add(index)
        return Outcome(applied=True, exact=False, note="its old text is not in the file as recorded")

    def _best_region(self, old: list[str]) -> tuple[int, int] | None:
        """The stretch of the model that was ``old`` (the file changed outside the record in
        between). Anchored by the lines of ``old`` found once in the model (compared as a
        formatter leaves them, see :func:`canonical`; else, by the one line clearly most like
        it): the anchors that agree on where ``old`` starts bound the stretch, grown past them
        while the neighbours still match. None without an anchor."""
        keys = [canonical(x) if x is not GAP else x for x in self.lines]
        old_keys = [canonical(x) for x in old]
        where: dict[str, list[int]] = {}
        wanted = set(old_keys)
        for i, key in enumerate(keys):
            if key is not GAP and key in wanted:
                where.setdefault(key, []).append(i)
        anchors: list[tuple[int, int]] = []
        for k, key in enumerate(old_keys):
            spots = where.get(key)
            if spots is not None and len(spots) == 1 and old_keys.count(key) == 1:
                anchors.append((k, spots[0]))
        if not anchors:
            anchors = self._similar_anchors(old)
        if not anchors:
            return None
        votes: dict[int, int] = {}
        for k, at in anchors:
            votes[at - k] = votes.get(at - k, 0) + 1
        guess = max(votes, key=lambda v: (votes[v], -v))
        slack = max(2, len(old) // 3)
        agreeing = sorted((k, at) for k, at in anchors if abs(at - k - guess) <= slack)
        (k1, first), (k2, last) = agreeing[0], agreeing[-1]
        if last < first:
            return None
        start, j = first, k1 - 1
        while j >= 0 and start > 0 and keys[start - 1] == old_keys[j]:
            start, j = start - 1, j - 1
        end, j = last + 1, k2 + 1
        while j < len(old_keys) and end < len(keys) and keys[end] == old_keys[j]:
            end, j = end + 1, j + 1
        return start, end

    def _similar_anchors(self, old: list[str]) -> list[tuple[int, int]]:
        """Anchors from lines like those of ``old`` (a line retouched outside the record: a
        comment added), for an ``old`` with no exact anchor: (line of ``old``, model line)
        for the first lines of ``old``, each with the one model line clearly most like it."""
        anchors: list[tuple[int, int]] = []
        for k, want in enumerate(old[:SIMILAR_LINES]):
            if len(want.strip()) < 8:
                continue
            scored: list[tuple[float, int]] = []
            matcher = SequenceMatcher(None, autojunk=False)
            matcher.set_seq2(want)
            for i, line in enumerate(self.lines):
                if line is GAP or abs(len(line) - len(want)) > len(want) // 2:
                    continue
                matcher.set_seq1(line)
                if matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR:
                    ratio = matcher.ratio()
                    if ratio >= SIMILAR:
                        scored.append((ratio, i))
            scored.sort(reverse=True)
            if scored and (len(scored) == 1 or scored[0][0] - scored[1][0] >= MARGIN):
                anchors.append((k, scored[0][1]))
        return anchors


def blame(changes: Sequence[Change], current: list[str]) -> Blame:
    """Replay ``changes`` (oldest first) and attribute each line of ``current``."""
    model, outcomes = _replay(changes)
    origins = [UNKNOWN] * len(current)
    ambiguous = [False] * len(current)
    matched = kept_lines(model.lines, current)  # the same start and end one to one, then difflib between
    matched.update(_moved(model, current, matched))
    for j, i in matched.items():
        origins[j] = model.origin[i]
        ambiguous[j] = model.origin[i] in model.inexact or j in model.moved
    return Blame(origins=origins, ambiguous=ambiguous, outcomes=outcomes)


def reconstruct(changes: Sequence[Change]) -> list[str] | None:
    """The file's text after ``changes``, when the record holds all of it (a whole-file write
    and exact edits after it); None when part of it was never recorded."""
    model, _ = _replay(changes)
    if any(line is GAP for line in model.lines):
        return None
    return [str(x) for x in model.lines]


def _replay(changes: Sequence[Change]) -> tuple[Model, list[Outcome]]:
    model = Model()
    outcomes: list[Outcome] = []
    for index, change in enumerate(changes):
        if change.failed:
            outcomes.append(Outcome(note="the tool failed: not replayed"))
            continue
        outcome = Outcome()
        for op in change.ops:
            if not isinstance(op, list) or not op:
                continue
            if op[0] == "write" and len(op) >= 3:
                outcome = model.write(index, [str(x) for x in op[1]], op[2])
            elif op[0] == "replace" and len(op) >= 5:
                one = model.replace(index, [str(x) for x in op[1]], [str(x) for x in op[2]], int(op[3] or 0), bool(op[4]))
                outcome = Outcome(applied=True, exact=outcome.exact and one.exact, note=one.note or outcome.note)
            elif op[0] == "text" and len(op) >= 5:
                one = model.replace_text(index, str(op[1]), str(op[2]), int(op[3] or 0), bool(op[4]))
                outcome = Outcome(applied=True, exact=outcome.exact and one.exact, note=one.note or outcome.note)
            elif op[0] == "delete":
                outcome = model.delete()
        if change.kind == "command":
            outcome = Outcome(note="a command: its changes are not recorded")
        outcomes.append(outcome)
    return model, outcomes


def _distinct(line: str) -> bool:
    return len(canonical(line)) >= MOVED_CHARS


def _moved(model: Model, current: list[str], matched: dict[int, int]) -> dict[int, int]:
    """Lines the in-order alignment left out, found elsewhere in the model: an edit placed in
    the wrong gap, or a block moved by hand. A run of unmatched file lines equal to a run of
    unmatched model lines written by a change, holding a line of some length (a lone ``}`` or
    blank line proves nothing), and found once."""
    used = set(matched.values())
    free: dict[str, list[int]] = {}
    for i, line in enumerate(model.lines):
        if i not in used and line is not GAP and model.origin[i] != UNKNOWN:
            free.setdefault(line, []).append(i)
    found: dict[int, int] = {}
    j = 0
    while j < len(current):
        spots = free.get(current[j]) if j not in matched else None
        if not spots:
            j += 1
            continue
        best: tuple[int, int] | None = None  # (length, model start)
        for i in spots:
            n = 0
            while (j + n < len(current) and i + n < len(model.lines) and j + n not in matched
                   and i + n not in used and model.lines[i + n] == current[j + n]):  # fmt: skip
                n += 1
            if best is None or n > best[0]:
                best, unique = (n, i), True
            elif n == best[0]:
                unique = False
        assert best is not None
        n, i = best
        if unique and any(_distinct(x) for x in current[j : j + n]):
            for k in range(n):
                found[j + k] = i + k
                used.add(i + k)
                model.moved.add(j + k)
            j += n
        else:
            j += 1
    return found
