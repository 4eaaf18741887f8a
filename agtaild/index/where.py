"""A session filter written as text, for bulk changes (``agtail hide --where 'messages<2'``),
rules (``agtail label --rule 'cwd:~/work/acme/**' client=acme``) and ``list --where``.

A filter is terms separated by spaces, all of which must hold (quote a value with spaces)::

    FIELD OP VALUE      OP: =  !=  <  <=  >  >=  or  :  (a glob)

Fields: ``agent``, ``cwd``, ``project``, ``title``, ``model`` (any of the session's models),
``collection`` (text: ``=``, ``!=``, ``:``), ``messages``, ``tokens`` (numbers: every op but
``:``), ``imported`` (``=true``/``=false``). In a cwd glob ``*`` matches within one path part,
``**`` across parts, ``?`` one character, and a leading ``~`` is the home directory; in the
other fields ``*`` matches anything. ``has-secret`` (or ``has-secret=true``, ``has-secret=false``)
holds for a session in which the index's secret pass found a secret the user has not
allowlisted (agtaild.index.findings). A bad filter
is refused whole, saying which term and why: nothing is ever applied by half a filter.

Every session row is read once and tested here (a glob has no index to use); a rule or a bulk
change reads the sessions table once, which is milliseconds for thousands of sessions.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import sqlite3
from dataclasses import dataclass
from typing import Any

from agtaild.errors import UsageError

TEXT_FIELDS = ("agent", "cwd", "project", "title", "model", "collection")
NUMBER_FIELDS = ("messages", "tokens")
FLAG_FIELDS = ("imported", "has-secret")
OPS = ("<=", ">=", "!=", "=", "<", ">", ":")
_TERM = re.compile(r"([a-z]+(?:-[a-z]+)?)\s*(<=|>=|!=|=|<|>|:)(.*)", re.S)
MAX_TERMS = 20
Ref = tuple[str, str, str]


@dataclass(frozen=True)
class Term:
    field: str
    op: str
    value: str

    def holds(self, row: dict[str, Any]) -> bool:
        if self.field in NUMBER_FIELDS:
            have = row[self.field]
            if have is None:
                return False
            want = float(self.value)
            return {"<": have < want, "<=": have <= want, ">": have > want, ">=": have >= want,
                    "=": have == want, "!=": have != want}[self.op]  # fmt: skip
        if self.field in FLAG_FIELDS:
            return bool(row[self.field]) == (self.value == "true")
        values = row["models"] if self.field == "model" else [row[self.field]]
        if self.op == ":":
            pattern = _glob(_home(self.value), True) if self.field == "cwd" else _glob(self.value, False)
            return any(v is not None and pattern.fullmatch(v) is not None for v in values)
        text = _home(self.value) if self.field == "cwd" else self.value
        equal = any(v == text for v in values)
        return equal if self.op == "=" else not equal


@dataclass(frozen=True)
class Where:
    """A parsed filter; ``text`` as given (what a rule stores)."""

    text: str
    terms: tuple[Term, ...]

    def holds(self, row: dict[str, Any]) -> bool:
        return all(t.holds(row) for t in self.terms)

    def refs(self, db: sqlite3.Connection, allowed: list[str] | tuple[str, ...] = ()) -> list[Ref]:
        """Every indexed session the filter holds for, as (collection or "", agent, id);
        ``allowed``: the fingerprints of allowlisted secrets (they do not count for has-secret)."""
        secret_ids = _sessions_with_secrets(db, allowed) if any(t.field == "has-secret" for t in self.terms) else set()
        sql = (
            "SELECT coalesce(s.collection, ''), s.agent, s.sid, s.cwd, s.project, s.title, s.kind,"
            " CAST(s.data AS TEXT), s.id FROM sessions s"
        )
        args: list[Any] = []
        agent = next((t.value for t in self.terms if t.field == "agent" and t.op == "="), None)
        if agent is not None:
            sql += " WHERE s.agent = ?"  # the one term an index answers
            args.append(agent)
        out: list[Ref] = []
        for collection, ag, sid, cwd, project, title, kind, data, rowid in db.execute(sql, args):
            doc = _doc(data)
            usage: dict[str, Any] = doc["usage"] if isinstance(doc.get("usage"), dict) else {}
            models: list[Any] = doc["models"] if isinstance(doc.get("models"), list) else []
            row = {"agent": ag, "cwd": cwd, "project": project, "title": title, "collection": collection or None,
                   "models": [m for m in models if isinstance(m, str)], "messages": _number(doc.get("messages")),
                   "tokens": _number(usage.get("total_tokens")), "imported": kind == "imported",
                   "has-secret": rowid in secret_ids}  # fmt: skip
            if self.holds(row):
                out.append((collection, ag, sid))
        return out


def parse(text: str, *, what: str = "--where") -> Where:
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"{what}: a filter needs at least one term, e.g. 'messages<2' or 'cwd:~/work/**'")
    if len(text) > 2000 or any(ord(c) < 32 for c in text):
        raise UsageError(f"{what}: a filter is one line of up to 2000 characters")
    try:
        parts = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc} in {text[:80]!r}") from None
    if len(parts) > MAX_TERMS:
        raise UsageError(f"{what}: at most {MAX_TERMS} terms")
    return Where(text.strip(), tuple(_term(p, what) for p in parts))


def _sessions_with_secrets(db: sqlite3.Connection, allowed: list[str] | tuple[str, ...]) -> set[int]:
    sql = "SELECT DISTINCT session_id FROM secret_findings"
    if allowed:
        sql += f" WHERE fingerprint NOT IN ({', '.join('?' * len(allowed))})"
    try:
        return {r[0] for r in db.execute(sql, list(allowed))}
    except sqlite3.OperationalError:  # an index made before the findings table
        return set()


def _term(part: str, what: str) -> Term:
    if part == "has-secret":
        return Term("has-secret", "=", "true")
    m = _TERM.fullmatch(part)
    fields = (*TEXT_FIELDS, *NUMBER_FIELDS, *FLAG_FIELDS)
    if m is None or m.group(1) not in fields:
        raise UsageError(f"{what}: {part[:60]!r} is not FIELD OP VALUE; fields: {', '.join(fields)}; ops: {' '.join(OPS)}")
    field, op, value = m.groups()
    if field in NUMBER_FIELDS:
        if op == ":":
            raise UsageError(f"{what}: {field} is a number: use = != < <= > >=, not ':'")
        try:
            float(value)
        except ValueError:
            raise UsageError(f"{what}: {field} takes a number, not {value[:40]!r}") from None
    elif field in FLAG_FIELDS:
        if op != "=" or value not in ("true", "false"):
            raise UsageError(f"{what}: write {field}=true or {field}=false")
    elif op not in ("=", "!=", ":"):
        raise UsageError(f"{what}: {field} is text: use =, != or ':' (a glob), not {op!r}")
    elif not value:
        raise UsageError(f"{what}: {part[:60]!r} has no value")
    return Term(field, op, value)


def _home(value: str) -> str:
    return os.path.expanduser(value) if value.startswith("~") else value


@functools.lru_cache(maxsize=256)
def _glob(pattern: str, paths: bool) -> re.Pattern[str]:
    """A glob as a regex; for ``paths`` (cwd) ``*`` and ``?`` stay within one path part."""
    one, anything = ("[^/]", "[^/]*") if paths else (".", ".*")
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append(anything)
            i += 1
        elif pattern[i] == "?":
            out.append(one)
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    # "dir/**" holds for dir itself too
    regex = "".join(out)
    if regex.endswith("/.*"):
        regex = regex[:-3] + "(?:/.*)?"
    return re.compile(regex, re.S)


def _doc(data: str | None) -> dict[str, Any]:
    try:
        doc = json.loads(data or "{}")
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
