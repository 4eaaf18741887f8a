"""What tokens cost: a dated price table shipped with the package, overridable per model.

The shipped table (``agtaild/data/pricing.json``) names its date and its sources. A user file —
``$AGTAIL_PRICING``, else ``<data dir>/pricing.json`` — has the same shape; each model it lists
replaces the shipped entry (and may add new models and aliases).

A model name is matched exactly, then by these documented rules only (never a fuzzy guess):
lower case; a provider prefix is dropped (``openai/gpt-5.5``, ``us.anthropic.claude-…``); a
bracketed variant (``claude-sonnet-4-5[1m]``), a Bedrock version (``-v1:0``) and a dated
snapshot (``-20250514``, ``@20250514``, ``-2024-08-06``) are dropped; then the table's
aliases apply. A model that still has no price costs ``None``: unknown, never zero.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from agtaild.errors import UsageError

_FIELDS = ("input", "output", "cache_write", "cache_read")
#: The table shipped with the package (package data, see pyproject.toml).
SHIPPED = Path(__file__).resolve().parent / "data" / "pricing.json"


class Rates(msgspec.Struct, frozen=True):
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


class Price(msgspec.Struct, frozen=True):
    base: Rates
    long_context: Rates | None = None
    source: str | None = None


class PriceTable:
    def __init__(
        self, models: dict[str, Price], aliases: dict[str, str], date: str | None, sources: Any
    ) -> None:
        self.models = models
        self.aliases = aliases
        self.date = date
        self.sources = sources
        self._memo: dict[str | None, Price | None] = {}

    def lookup(self, model: str | None) -> Price | None:
        if model in self._memo:
            return self._memo[model]
        found = None
        if model:
            for name in candidate_names(model):
                name = self.aliases.get(name, name)
                if name in self.models:
                    found = self.models[name]
                    break
        self._memo[model] = found
        return found

    def cost(
        self,
        model: str | None,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int,
        cache_write_tokens: int,
        long_context: bool = False,
    ) -> float | None:
        """The cost of these tokens, or None when the model has no price (and any tokens)."""
        if not (input_tokens or output_tokens or cache_read_tokens or cache_write_tokens):
            return 0.0
        price = self.lookup(model)
        if price is None:
            return None
        rates = price.long_context if long_context and price.long_context is not None else price.base
        return (
            input_tokens * rates.input
            + output_tokens * rates.output
            + cache_read_tokens * rates.cache_read
            + cache_write_tokens * rates.cache_write
        ) / 1_000_000


_PROVIDER = re.compile(r"^(?:[a-z0-9-]+\.)*anthropic\.")
_BRACKET = re.compile(r"\[[^\]]*\]$")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_DATED = re.compile(r"(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$")


def candidate_names(model: str) -> Iterator[str]:
    """The names a model is looked up under, most specific first (see the module docstring)."""
    name = model.strip().lower()
    yield name
    if "/" in name:
        name = name.rsplit("/", 1)[1]
        yield name
    stripped = _PROVIDER.sub("", name)
    stripped = _BRACKET.sub("", stripped)
    stripped = _BEDROCK_VERSION.sub("", stripped)
    if stripped != name:
        name = stripped
        yield name
    undated = _DATED.sub("", name)
    if undated != name:
        yield undated


def _rates(entry: Mapping[str, Any], where: str) -> Rates:
    values = {}
    for field in _FIELDS:
        value = entry.get(field)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise UsageError(f"{where}: {field!r} must be a non-negative number (USD per million tokens)")
        values[field] = float(value)
    return Rates(**values)


def parse_table(doc: Any, where: str) -> tuple[dict[str, Price], dict[str, str]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("models", {}), dict):
        raise UsageError(f'{where}: expected an object with a "models" object')
    models: dict[str, Price] = {}
    for name, entry in doc.get("models", {}).items():
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: model {name!r} must be an object")
        long_ctx = entry.get("long_context")
        models[name.lower()] = Price(
            base=_rates(entry, f"{where}: model {name!r}"),
            long_context=_rates(long_ctx, f"{where}: model {name!r} long_context") if long_ctx else None,
            source=entry.get("source"),
        )
    aliases = doc.get("aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        raise UsageError(f'{where}: "aliases" must map names to names')
    return models, {k.lower(): v.lower() for k, v in aliases.items()}


def user_pricing_path(data_dir: str | None, env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    if env.get("AGTAIL_PRICING"):
        return Path(env["AGTAIL_PRICING"]).expanduser()
    if data_dir:
        candidate = Path(data_dir) / "pricing.json"
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=8)
def _load(user_path: str | None, user_mtime: float | None) -> PriceTable:
    shipped = json.loads(SHIPPED.read_text("utf-8"))
    models, aliases = parse_table(shipped, "agtaild/data/pricing.json")
    if user_path is not None:
        try:
            doc = json.loads(Path(user_path).read_text("utf-8"))
        except FileNotFoundError as exc:
            raise UsageError(f"pricing file {user_path} does not exist (set by AGTAIL_PRICING?)") from exc
        except (OSError, ValueError) as exc:
            raise UsageError(f"pricing file {user_path} is not readable JSON: {exc}") from exc
        extra_models, extra_aliases = parse_table(doc, f"pricing file {user_path}")
        models.update(extra_models)
        aliases.update(extra_aliases)
    return PriceTable(models, aliases, shipped.get("date"), shipped.get("sources"))


def load_pricing(data_dir: str | None = None, env: Mapping[str, str] | None = None) -> PriceTable:
    """The shipped table with the user's file applied (re-read when that file changes)."""
    path = user_pricing_path(data_dir, env)
    mtime = None
    if path is not None:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = None
    return _load(str(path) if path is not None else None, mtime)
