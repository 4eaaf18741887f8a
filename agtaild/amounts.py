"""Token counts and costs as a table cell shows them: ``4.4k``, ``$1.20``, ``$0.43+?``.

Only builtins here: the statusline's fast path (agtaild.statusline_fast) prints them without
importing the CLI. agtaild.cli.costs words the rest (the notes and sentences around a ``?``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def tokens(n: int | None) -> str:
    if not n:
        return "0"
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def cost(value: float | None) -> str:
    return "?" if value is None else f"${value:,.2f}"


def cost_cell(u: dict[str, Any]) -> str:
    """A usage document's cost in a table cell: ``$1.20``; with a model unpriced, the known part
    and a ``?`` for the rest (``$0.43+?``), or ``?`` when nothing of it is priced."""
    if u.get("cost_usd") is not None:
        return cost(u["cost_usd"])
    known = u.get("cost_known_usd")
    return f"{cost(known)}+?" if known else "?"
