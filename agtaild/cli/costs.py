"""The cost of a usage document in words: a table cell, a sentence, what a ``?`` stands for.

A model without a price makes ``cost_usd`` null (never a guess), and the usage then says what
is known (``cost_known_usd``) and what is not (``unpriced_tokens``, ``unpriced_models``):
agtaild.index.queries.usage_doc. Nothing here hides the known part behind the unknown one.
"""

from __future__ import annotations

from agtaild.amounts import cost, cost_cell, tokens
from agtaild.words import count

__all__ = ["cost", "cost_cell", "cost_phrase", "tokens", "unpriced_note"]

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any


def _unpriced_models(u: dict[str, Any]) -> str:
    names = [str(m) for m in u.get("unpriced_models") or []]
    return ", ".join(names[:5]) + (f" and {count(len(names) - 5, 'more')}" if len(names) > 5 else "")


def unpriced_note(u: dict[str, Any]) -> str:
    """What the ``?`` of a table's cost stands for (empty when everything is priced)."""
    if u.get("cost_usd") is not None or not u.get("unpriced_tokens"):
        return ""
    models = _unpriced_models(u)
    return f"? = {count(int(u['unpriced_tokens']), 'token')} of models without a price" + (
        f" ({models})" if models else ""
    )


def cost_phrase(u: dict[str, Any]) -> str:
    """A usage document's cost in a sentence (the `show` header): the known part first."""
    if u.get("cost_usd") is not None:
        return cost(u["cost_usd"])
    dark = int(u.get("unpriced_tokens") or u.get("total_tokens") or 0)
    models = _unpriced_models(u)
    what = f"{tokens(dark)} tokens" + (f" of {models}" if models else "") + " unpriced"
    known = u.get("cost_known_usd")
    if not known:
        return f"cost unknown (no price for {models})" if models else f"cost unknown ({what})"
    return f"{cost(known)} + ? ({what})"
