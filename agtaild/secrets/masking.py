"""Masking: each secret's characters replaced by a fixed mask that keeps the text readable.

``«secret:github-pat …WXYZ»``: the rule that found it and its last characters (at most 4, at
most a quarter of it; none when they are spaces or a PEM dash run). The mask holds no quote,
backslash or control character, so a masked JSON string stays a valid JSON string, and it is
never itself found as a secret (masking masked text changes nothing).

When the scanner's budget stopped early in a text (hostile input: :data:`scanner.MAX_MATCHES`
matches of one rule), everything after the point it reached is withheld, not sent unexamined.
"""

from __future__ import annotations

from agtaild.secrets.scanner import MASK_OPEN, TextScan


def label(rule: str, tail: str) -> str:
    return f"{MASK_OPEN}{rule} …{tail}»" if tail else f"{MASK_OPEN}{rule}»"


def withheld(count: int) -> str:
    return f"{MASK_OPEN}unscanned {count} characters withheld»"


def apply(text: str, scan: TextScan) -> str:
    """``text`` with every span of ``scan`` (the scan of this very text) masked."""
    scanned = len(text) if scan.scanned is None else min(scan.scanned, len(text))
    if not scan.spans and scanned == len(text):
        return text
    out: list[str] = []
    pos = 0
    for span in scan.spans:
        out.append(text[pos : span.start])
        out.append(label(span.rule, span.tail))
        pos = span.end
    if scanned < len(text):
        stop = max(pos, scanned)
        out.append(text[pos:stop])
        out.append(withheld(len(text) - stop))
    else:
        out.append(text[pos:])
    return "".join(out)
