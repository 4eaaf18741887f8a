"""Limits on what one query may cost, so that no request can hold the index for long.

* :func:`time_budget` bounds a statement's run time with SQLite's progress handler: past the
  budget the handler asks SQLite to stop, the statement fails with "interrupted", and that
  becomes :class:`TooExpensive` (HTTP 400 / exit 2, "query too expensive"). The handler runs
  between virtual-machine steps, off the event loop (reads run in the reader threads), so a
  stopped query frees its thread for the next request.
* :data:`MAX_QUERY_CHARS` and :data:`MAX_QUERY_TERMS` bound a text query before it is run:
  every word of a ``words`` query is one more full-text lookup joined with the rest.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from agtaild.errors import UsageError

#: How long one search (or list with a query) may run, in seconds.
SEARCH_SECONDS = 10.0
#: How many virtual-machine steps between two looks at the clock.
STEPS = 20_000
#: A query's longest text (the API refuses longer strings anyway).
MAX_QUERY_CHARS = 1000
#: At most this many words (words mode) or phrases and substrings (other modes).
MAX_QUERY_TERMS = 32


class TooExpensive(UsageError):
    """The query ran over its budget or is over a size limit."""


def check_query_size(q: str, terms: int) -> None:
    if len(q) > MAX_QUERY_CHARS:
        raise TooExpensive(
            f"query too expensive: it is {len(q)} characters long, the limit is {MAX_QUERY_CHARS}"
        )
    if terms > MAX_QUERY_TERMS:
        raise TooExpensive(
            f"query too expensive: it has {terms} separate terms, the limit is {MAX_QUERY_TERMS}; "
            "use a phrase, or fewer words"
        )


@contextmanager
def time_budget(db: sqlite3.Connection, seconds: float | None = None) -> Iterator[None]:
    """Run the statements of the ``with`` block under a deadline (see the module docstring)."""
    limit = SEARCH_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + limit
    expired = False

    def check() -> int:
        nonlocal expired
        expired = time.monotonic() > deadline
        return 1 if expired else 0

    db.set_progress_handler(check, STEPS)
    try:
        yield
    except (sqlite3.OperationalError, UsageError) as exc:
        # Stopped by the handler: SQLite says "interrupted" (or, stopped while opening a
        # full-text table, "vtable constructor failed"), and search may have wrapped it.
        if expired and not isinstance(exc, TooExpensive):
            raise TooExpensive(
                f"query too expensive: stopped after {limit:g} s; narrow it (--agent, "
                "--session, --since, --kind) or make it more specific"
            ) from None
        raise
    finally:
        db.set_progress_handler(None, 0)
