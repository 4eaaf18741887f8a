"""Secrets in JSON-like values (dicts, lists, strings): a tool's input, a tool's result, a
stored record. Every string is scanned — in one batch — and every string is masked.

* A value is scanned with its key before it, as ``"key": "value`` would read in a file, so
  that name-driven rules see ``{"password": "…"}``; dict keys are scanned as strings too.
* A string that is itself a JSON document (Codex keeps a call's arguments and output so:
  ``"{\\"command\\": …}"``) is decoded and walked as well, because JSON's ``\\"`` escaping
  hides keys from patterns that expect a quote after them. When the decoded document holds a
  secret, the masked string is that document masked and encoded again.

A finding's ``field`` says where: a JSON Pointer from the value (``/input/command``), after
the ``field`` given; ``#key`` for a dict key; ``#json`` before the pointer inside an
embedded JSON document (``/payload/arguments#json/command/2``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from agtaild.secrets import masking
from agtaild.secrets.scanner import CLEAN, Finding, Scanner, Span, TextScan

MAX_DEPTH = 256
#: Embedded JSON inside embedded JSON is decoded this many levels deep.
MAX_LEVELS = 3
#: Strings longer than this are scanned as text only (not decoded as JSON).
MAX_EMBEDDED_CHARS = 8 << 20
#: A key longer than this is not written before its value.
MAX_CONTEXT_KEY = 64
_OPENERS = ("{", "[")


@dataclass
class _Str:
    text: str
    path: str
    index: int
    prefix: int
    inner: Any = None  # the plan of an embedded JSON document
    inner_value: Any = None


@dataclass
class _Dict:
    items: list[tuple[Any, Any]] = field(default_factory=list)  # (key node or key, value node)


@dataclass
class _List:
    items: list[Any] = field(default_factory=list)
    is_tuple: bool = False


class _Other:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _plan(value: Any, path: str | None, texts: list[str], depth: int, levels: int, key: str | None = None) -> Any:
    """The value as nodes, its strings appended to ``texts``. ``path`` None: no JSON Pointers
    are built (masking needs none, and building them is most of a walk's cost)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"the value is nested more than {MAX_DEPTH} levels deep: not scanned")
    if isinstance(value, str):
        prefix = f'"{key}": "' if key is not None and len(key) <= MAX_CONTEXT_KEY else ""
        node = _Str(value, path or "", len(texts), len(prefix))
        texts.append(prefix + value if prefix else value)
        first = value[:1]
        if first.isspace():
            first = value.lstrip()[:1]
        if levels < MAX_LEVELS and first in _OPENERS and len(value) <= MAX_EMBEDDED_CHARS:
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                inner = None
            if isinstance(inner, dict | list):
                node.inner = _plan(inner, None if path is None else path + "#json", texts, depth + 1, levels + 1)
                node.inner_value = inner
        return node
    if isinstance(value, dict):
        plan = _Dict()
        for k, v in value.items():
            if path is None:
                knode, child = (_plan(k, None, texts, depth + 1, levels) if isinstance(k, str) else k), None
            else:
                knode = _plan(k, f"{path}/{_pointer(k)}#key", texts, depth + 1, levels) if isinstance(k, str) else k
                child = f"{path}/{_pointer(k) if isinstance(k, str) else k}"
            plan.items.append((knode, _plan(v, child, texts, depth + 1, levels, k if isinstance(k, str) else None)))
        return plan
    if isinstance(value, list | tuple):
        return _List(
            [_plan(v, None if path is None else f"{path}/{i}", texts, depth + 1, levels) for i, v in enumerate(value)],
            isinstance(value, tuple),
        )
    return _Other(value)


def _shift(scan: TextScan, prefix: int) -> TextScan:
    """The scan of ``prefix + value`` as the scan of ``value`` (spans in the key are dropped,
    a span reaching into the value from the key is cut at its start)."""
    if not prefix or scan is CLEAN:
        return scan
    spans = tuple(
        Span(max(0, s.start - prefix), s.end - prefix, s.rule, s.tail) for s in scan.spans if s.end > prefix
    )
    findings = tuple(
        msgspec.structs.replace(f, start=max(0, f.start - prefix), end=f.end - prefix)
        for f in scan.findings
        if f.end > prefix
    )
    return TextScan(findings, spans, None if scan.scanned is None else max(0, scan.scanned - prefix))


def _findings(plan: Any, results: list[TextScan], base: str) -> list[Finding]:
    if isinstance(plan, _Str):
        own = [
            msgspec.structs.replace(f, field=base + plan.path) for f in _shift(results[plan.index], plan.prefix).findings
        ]
        if plan.inner is None:
            return own
        inner = _findings(plan.inner, results, base)
        seen = {f.fingerprint for f in inner}
        return inner + [f for f in own if f.fingerprint not in seen]
    if isinstance(plan, _Dict):
        out: list[Finding] = []
        for knode, vnode in plan.items:
            if isinstance(knode, _Str):
                out.extend(_findings(knode, results, base))
            out.extend(_findings(vnode, results, base))
        return out
    if isinstance(plan, _List):
        return [f for item in plan.items for f in _findings(item, results, base)]
    return []


def _separators(text: str) -> tuple[str, str]:
    return (", ", ": ") if '": ' in text or ", " in text else (",", ":")


def _masked(plan: Any, results: list[TextScan], scanner: Scanner) -> Any:
    if isinstance(plan, _Str):
        if plan.inner is not None and dirty(plan.inner, results):
            redone = json.dumps(
                _masked(plan.inner, results, scanner),
                ensure_ascii=plan.text.isascii() and "\\u" in plan.text,
                separators=_separators(plan.text),
            )
            return masking.apply(redone, scanner.results([redone])[0])
        return masking.apply(plan.text, _shift(results[plan.index], plan.prefix))
    if isinstance(plan, _Dict):
        out: dict[Any, Any] = {}
        for knode, vnode in plan.items:
            key = _masked(knode, results, scanner) if isinstance(knode, _Str) else knode
            if key in out:  # two keys masked alike: keep both
                n = 2
                while f"{key} #{n}" in out:
                    n += 1
                key = f"{key} #{n}"
            out[key] = _masked(vnode, results, scanner)
        return out
    if isinstance(plan, _List):
        items = [_masked(item, results, scanner) for item in plan.items]
        return tuple(items) if plan.is_tuple else items
    return plan.value


def dirty(plan: Any, results: list[TextScan]) -> bool:
    """Whether masking changes anything in the planned value: a secret in one of its strings
    (its key context aside), or a string whose scan stopped early."""
    if isinstance(plan, _Str):
        scan = _shift(results[plan.index], plan.prefix)
        return bool(scan.spans) or scan.scanned is not None or (plan.inner is not None and dirty(plan.inner, results))
    if isinstance(plan, _Dict):
        return any((isinstance(k, _Str) and dirty(k, results)) or dirty(v, results) for k, v in plan.items)
    if isinstance(plan, _List):
        return any(dirty(item, results) for item in plan.items)
    return False


def plan_value(value: Any, texts: list[str], key: str | None = None) -> Any:
    """The plan of ``value`` for :func:`masked_value`, its strings appended to ``texts`` (so
    that many values are scanned in one batch); ``key``: the name it is written under."""
    return _plan(value, None, texts, 0, 0, key)


def texts_of(value: Any, texts: list[str], key: str | None = None, depth: int = 0, levels: int = 0) -> None:
    """Append to ``texts`` exactly the strings :func:`plan_value` would, in the same order,
    without building its nodes: the cheap first pass of masking (most values are clean, and
    only a value with a secret needs its plan). Kept in step with ``_plan``; a test compares
    the two on every shape."""
    if depth > MAX_DEPTH:
        raise ValueError(f"the value is nested more than {MAX_DEPTH} levels deep: not scanned")
    cls = value.__class__
    if cls is str or isinstance(value, str):
        texts.append(f'"{key}": "{value}' if key is not None and len(key) <= MAX_CONTEXT_KEY else value)
        first = value[:1]
        if first.isspace():
            first = value.lstrip()[:1]
        if levels < MAX_LEVELS and first in _OPENERS and len(value) <= MAX_EMBEDDED_CHARS:
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                return
            if isinstance(inner, dict | list):
                texts_of(inner, texts, None, depth + 1, levels + 1)
    elif cls is dict or isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                texts_of(k, texts, None, depth + 1, levels)
                texts_of(v, texts, k, depth + 1, levels)
            else:
                texts_of(v, texts, None, depth + 1, levels)
    elif cls is list or cls is tuple or isinstance(value, list | tuple):
        for v in value:
            texts_of(v, texts, None, depth + 1, levels)


def masked_value(plan: Any, results: list[TextScan], scanner: Scanner) -> Any:
    """The planned value masked, given the scans of ``texts``."""
    return _masked(plan, results, scanner)


def scan_value(scanner: Scanner, value: Any, field: str = "", key: str | None = None) -> list[Finding]:
    """Every secret in the strings of ``value``, each with its ``field`` (see above);
    ``key``: the name the value is written under (read before it, as masking reads it)."""
    texts: list[str] = []
    plan = _plan(value, "", texts, 0, 0, key)
    return _findings(plan, scanner.results(texts), field)


def mask_value(scanner: Scanner, value: Any) -> Any:
    """A copy of ``value`` with every string masked (dict keys too); numbers, booleans and
    None unchanged. The copy is as valid JSON as ``value`` was."""
    texts: list[str] = []
    plan = _plan(value, None, texts, 0, 0)
    return _masked(plan, scanner.results(texts), scanner)
