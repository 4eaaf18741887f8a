"""Counts in sentences: ``1 match``, ``2 matches``, ``(1 more line)``.

Every message that puts a number before a noun goes through :func:`count`, so the grammar is
decided once ("1 matches" and "(1 events)" were written by hand in a dozen places). English
only: agtail's messages are English. Part of the foundation: it imports nothing.
"""

from __future__ import annotations

#: Nouns whose plural is not the regular one (the rules of :func:`plural` cover the rest).
_IRREGULAR = {"entry": "entries", "child": "children", "copy": "copies", "directory": "directories"}


def plural(noun: str) -> str:
    """The regular English plural of ``noun``: ``match`` → ``matches``, ``query`` →
    ``queries``, ``line`` → ``lines``; a noun of several words changes its last one."""
    head, sep, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        word = _IRREGULAR[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    elif len(last) > 1 and last.endswith("y") and last[-2] not in "aeiou":
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return head + sep + word


def count(n: int | float, noun: str, many: str | None = None, *, grouped: bool = True) -> str:
    """``n`` and the noun in the form that goes with it: ``count(1, "match")`` → ``1 match``,
    ``count(1200, "event")`` → ``1,200 events`` (``grouped=False``: ``1200 events``).
    ``many`` gives a plural the rules do not know."""
    number = f"{n:,}" if grouped else f"{n}"
    return f"{number} {noun if n == 1 else (many or plural(noun))}"
