"""The words every match of a regular expression starts, for the word index to find first.

A regex search is a scan: each event's text is matched. When the pattern holds a literal run
of ASCII letters and digits that every match must contain at the *start of a word* — after the
pattern's start or after something that can only match a separator (a space, ``\\s+``, a
``/``, a ``.``) — every event that matches also holds a word beginning with that run, and the
word index (events_fts, unicode61: ASCII letters and digits make words, every other ASCII
character separates them, case folded) finds those events as a prefix query (``"run" *``).
The regex then checks only them, newest first, and stops at the page.

Only what is certain is used: the pattern's top-level sequence (an alternation ``|`` outside
any group gives no words at all), literals that are not optional (``x?``, ``x*``, ``x{0,}``
end a run), and nothing is read inside groups or classes. ``(?x)`` (spaces ignored) or ``\\Q``
quoting gives no words either. A pattern without such a run is scanned as before.
"""

from __future__ import annotations

import re

_QUANT = re.compile(r"\{(\d+)(,(\d*))?\}")
#: Escapes that match only characters the word tokenizer treats as separators.
_SEP_ESCAPES = set("stnrfv")
#: Flags a leading ``(?flags)`` may set without changing what a literal means.
_SAFE_FLAGS = set("imsU")
#: At most this many words go into the word-index query.
MAX_TERMS = 4
#: Shorter runs are left out: a prefix of one or two letters matches most words, and reading
#: its postings costs more than it saves.
MIN_CHARS = 3


def prefix_terms(pattern: str) -> list[str]:
    """The (lower-case) ASCII runs every match of ``pattern`` has at the start of a word,
    longest first."""
    atoms = _atoms(pattern)
    if atoms is None:
        return []
    terms: set[str] = set()
    run: list[str] = []
    boundary = False  # the next literal starts a word (after ^ or a certain separator)
    for kind, char, low in atoms:
        if kind == "lit" and low >= 1 and (run or boundary):
            run.append(char)
            boundary = False
            continue
        if run:
            terms.add("".join(run).lower())
            run = []
        boundary = kind in ("sep", "start") and low >= 1
    if run:
        terms.add("".join(run).lower())
    useful = [t for t in terms if len(t) >= MIN_CHARS]
    return sorted(useful, key=lambda t: (-len(t), t))[:MAX_TERMS]


def _atoms(p: str) -> list[tuple[str, str, int]] | None:
    """The top-level atoms of ``p``: (kind, literal character or '', minimum repetitions);
    kinds ``lit`` (an ASCII letter or digit), ``sep`` (only separators), ``start`` (^ or \\A),
    ``other``. A repeated literal (``a+``) is one atom that ends a run after it; None when the
    pattern cannot be read safely."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(p)
    flags = re.match(r"\(\?([a-zA-Z]+)\)", p)
    if flags:
        if not set(flags.group(1)) <= _SAFE_FLAGS:
            return None
        i = flags.end()
    while i < n:
        c = p[i]
        if c == "|":
            return None
        if c == "\\":
            if i + 1 >= n:
                return None
            e = p[i + 1]
            i += 2
            if e == "Q":
                return None
            if e in _SEP_ESCAPES:
                kind, char = "sep", ""
            elif e == "A":
                kind, char = "start", ""
            elif e in "pPx" and i < n and p[i] == "{":
                end = p.find("}", i)
                if end < 0:
                    return None
                i = end + 1
                kind, char = "other", ""
            elif e in "pP":
                i += 1
                kind, char = "other", ""
            elif e == "x":
                i += 2
                kind, char = "other", ""
            elif e.isascii() and not e.isalnum():
                kind, char = "sep", ""
            else:
                kind, char = "other", ""
        elif c == "[":
            after = _class_end(p, i)
            if after is None:
                return None
            i = after
            kind, char = "other", ""
        elif c == "(":
            if p.startswith("(?x", i) or p.startswith("(?-", i):
                return None
            after = _group_end(p, i)
            if after is None:
                return None
            i = after
            kind, char = "other", ""
        elif c == "^":
            i += 1
            kind, char = "start", ""
        elif c in ".$)":
            i += 1
            kind, char = "other", ""
        elif c.isascii() and c.isalnum():
            i += 1
            kind, char = "lit", c
        elif c.isascii():
            i += 1
            kind, char = "sep", ""
        else:
            i += 1
            kind, char = "other", ""
        low, i, quantified = _quantifier(p, i)
        if kind == "start" and quantified:
            kind = "other"
        out.append((kind, char, low))
        if quantified and kind == "lit":
            # ``ab+c``: "ab" is certain, what follows the repeated b is not adjacent to it.
            out.append(("other", "", 1))
    return out


def _quantifier(p: str, i: int) -> tuple[int, int, bool]:
    """(minimum repetitions, the index after the quantifier, whether there was one)."""
    if i >= len(p):
        return 1, i, False
    c = p[i]
    if c in "?*+":
        low = 1 if c == "+" else 0
        i += 1
    else:
        m = _QUANT.match(p, i)
        if not m:
            return 1, i, False
        low = int(m.group(1))
        i = m.end()
    if i < len(p) and p[i] in "?+":
        i += 1
    return low, i, True


def _class_end(p: str, i: int) -> int | None:
    """The index after the character class starting at ``p[i]`` ('[')."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p):
        if p[j] == "\\":
            j += 2
            continue
        if p.startswith("[:", j):
            end = p.find(":]", j + 2)
            if end < 0:
                return None
            j = end + 2
            continue
        if p[j] == "]":
            return j + 1
        j += 1
    return None


def _group_end(p: str, i: int) -> int | None:
    """The index after the group starting at ``p[i]`` ('('), classes and escapes skipped."""
    depth, j = 0, i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            end = _class_end(p, j)
            if end is None:
                return None
            j = end
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None
