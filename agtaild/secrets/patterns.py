"""RE2 for the secret rules: compiling them, and the cheaper "superset" form the prefilter runs.

Every rule is an RE2 pattern (gitleaks writes its rules for Go's regexp, which is RE2 too), so
matching is linear in the text whatever the pattern or the input. The scanner runs a rule in
two steps (agtaild/secrets/scanner.py): once over a batch of many texts joined together, to
learn which texts *might* hold a match, then exactly over each of those texts alone. The
first step uses :func:`superset_pattern`, a form of the rule that matches wherever the rule
does (and sometimes elsewhere) but that RE2 runs several times faster, because it starts with
a literal RE2 can jump to (measured: ``\\b`` before ``AKIA`` keeps RE2 from using memchr,
5.6 GB/s without it vs 0.4 GB/s with; the leading ``[\\w.-]{0,50}?`` of gitleaks'
name-driven rules costs 3× per byte).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import re2

#: The memory RE2 may use for one rule (its default). A pattern whose program needs more is
#: refused at load, with RE2's reason.
RULE_MAX_MEM = 8 << 20

#: The keyword set's own budget: one automaton for every keyword of every rule.
KEYWORD_SET_MAX_MEM = 64 << 20

UNANCHORED = re2._Anchor.UNANCHORED
NO_SPAN = (-1, -1)


def options(max_mem: int = RULE_MAX_MEM, *, literal: bool = False, case_sensitive: bool = True) -> Any:
    opts = re2.Options()
    opts.log_errors = False  # RE2 would print every refused pattern on stderr
    opts.max_mem = max_mem
    opts.literal = literal
    opts.case_sensitive = case_sensitive
    return opts


def compile_pattern(pattern: str) -> Any:
    """The compiled RE2 program, or ``ValueError`` with RE2's reason."""
    try:
        return re2.compile(pattern, options())
    except re2.error as exc:
        raise ValueError(_reason(exc)) from None


def _reason(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else ""
    text = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
    return text or "RE2 refuses the pattern"


def matches_empty(compiled: Any) -> bool:
    """True when the pattern can match the empty string (it would "find" a secret everywhere)."""
    spans = compiled._regexp.Match(UNANCHORED, b"", 0, 0)
    return bool(spans[0] != NO_SPAN)


# In a batch, texts are joined with "\n" between them: where a text starts or ends, a
# multi-line ^ or $ holds, so these stand for the text's anchors (and hold at its own line
# breaks too: only wider). \b and \B see a non-word character there, as at a text's edge.
_ANCHORS = {"^": "(?m:^)", "$": "(?m:$)", "\\A": "(?m:^)", "\\z": "(?m:$)"}
# gitleaks' name-driven rules all start like this (up to 50 name characters before the
# keyword, widened below): a match of the rule contains a match of the rest.
_NAME_PREFIX = "[\\w.-]*?"
_COUNT = re.compile(r"\d+(?:,\d*)?")
_NAME_COUNT = re.compile(r"\[\\w\.-\]\{0,(\d+)\}\??")


def superset_pattern(pattern: str) -> str:
    return superset(pattern)[0]


def superset(pattern: str) -> tuple[str, int]:
    """A pattern that matches in every text where ``pattern`` matches, within the span of
    that match, also when the text is one of a batch joined with ``\\n``: its anchors
    (``^ $ \\A \\z``) made multi-line, every counted repetition open-ended (``{m,n}`` →
    ``{m,}``), and a leading ``\\b`` or ``[\\w.-]{0,50}?`` dropped. A pattern with a
    quoted literal (``\\Q…\\E``, where those characters are not syntax) is returned as it is.

    Also returns the *lead*: how many bytes before a match of the superset a match of the
    pattern may start (the dropped name prefix: 50), so the exact scan may start there."""
    if "\\Q" in pattern:
        return pattern, 0
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            pair = pattern[i : i + 2]
            out.append(pair if in_class else _ANCHORS.get(pair, pair))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            elif c == "[" and pattern.startswith("[:", i):  # a POSIX class [:alpha:] inside [...]
                end = pattern.find(":]", i + 2)
                if end != -1:
                    out.append(pattern[i : end + 2])
                    i = end + 2
                    continue
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            # A ']' right after '[' or '[^' is a literal member, not the end of the class.
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):
                out.append("]")
                i += 1
            continue
        if c in "^$":
            out.append(_ANCHORS[c])
            i += 1
            continue
        if c == "{" and (close := pattern.find("}", i)) != -1 and _COUNT.fullmatch(pattern[i + 1 : close]):
            # x{m,n} and x{m} → x{m,}: RE2's automaton counts each repetition with states of
            # its own; a loop costs one. Allowing more repetitions only widens the pattern.
            low = pattern[i + 1 : close].split(",")[0]
            out.append("*" if low in ("", "0") else "{" + low + ",}")
            i = close + 1
            continue
        out.append(c)
        i += 1
    text = "".join(out)
    flags = ""
    if text.startswith("(?") and (close := text.find(")")) != -1 and text[2:close].isalpha():
        flags, text = text[: close + 1], text[close + 1 :]
    lead = 0
    if text.startswith(_NAME_PREFIX) and (count := _NAME_COUNT.match(pattern.removeprefix(flags))):
        text = text[len(_NAME_PREFIX) :]
        lead = int(count.group(1))  # [\w.-] is ASCII: characters are bytes
    while text.startswith("\\b"):  # a leading \b keeps RE2 from jumping to the literal after it
        text = text[2:]
    return flags + text, lead


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (gitleaks' measure: over its characters)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in Counter(text).values())
