"""Regular-expression search with RE2: time linear in the text, whatever the pattern.

Python's ``re`` backtracks: ``(a+)+b`` over forty ``a`` takes longer than the universe, holds
the GIL meanwhile (so one search froze every request of the daemon, ``/health`` included) and
cannot be interrupted from outside. RE2 (the ``google-re2`` wheel) never backtracks, releases
the GIL while it matches, and refuses up front the few constructs that would need
backtracking: backreferences (``\\1``) and lookaround (``(?=…)``, ``(?<!…)``). Everything else
people type — classes, ``\\d \\w \\s \\b``, ``(?i)``, alternation, repetition, named groups —
means the same as in Python.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Protocol

import re2

from agtaild.errors import bad_param

#: The memory RE2 may use to compile one pattern (its default is 8 MiB; a pattern past it is
#: refused as too big, e.g. ``(x{1000}){1000}``).
MAX_PROGRAM_MEMORY = 8 << 20


class Pattern(Protocol):
    def search(self, text: str) -> Any: ...

    def finditer(self, text: str) -> Any: ...


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print each refused pattern on stderr
    options.max_mem = MAX_PROGRAM_MEMORY
    return options


@lru_cache(maxsize=64)
def compile_regex(pattern: str) -> Pattern:
    """The compiled pattern, or UsageError saying why RE2 refuses it."""
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise bad_param(
            "q",
            f"is not a regular expression RE2 accepts: {reason} (backreferences and lookaround are "
            "not supported: they need backtracking, which can take forever)",
        ) from None


def matches(pattern: str, value: str | None) -> bool:
    """The SQL function ``agtail_regexp(pattern, value)``."""
    return value is not None and compile_regex(pattern).search(value) is not None
