"""The secret rules are data: TOML files, loaded and checked here.

Shipped (``agtaild/secrets/data/``): ``agtail.toml`` — agtail's own rules, the overrides it
applies to the rules it includes, and the files it includes — and ``gitleaks.toml``, gitleaks'
default configuration as published (MIT, ``gitleaks.LICENSE``; tag, commit and sha256 in
``agtail.toml``'s ``[[sources]]``). Both use gitleaks' field names, so one loader reads both:

    [[rules]]
    id = "…"                 # unique
    description = "…"
    regex = '''…'''          # RE2
    secretGroup = 1          # optional: which group is the secret (else the first non-empty one)
    keywords = ["…"]         # optional: the rule runs only on texts holding one (ASCII, any case)
    entropy = 3.0            # optional: the secret must have more bits per character
    requireDigit = true      # optional (agtail): the secret must hold a digit
    confidence = "high"      # agtail: "high" or "low"
    enabled = true           # agtail
    priority = 50            # agtail: which rule names a secret two rules find (higher wins)
    source = "…"             # agtail: where the pattern comes from
    [[rules.allowlists]]     # optional, any number: a match is dropped when one of them holds
    regexes = ['''…''']      # against regexTarget: "secret" (default), "match" or "line"
    stopwords = ["…"]        # the secret contains one (any case)
    condition = "OR"         # "AND": every criterion given must hold

``[allowlist]`` / ``[[allowlists]]`` at the top level apply to every rule. ``[[overrides]]``
(``id`` plus any of confidence, enabled, priority, requireDigit, note, allowlists — added to the
rule's own) change rules loaded before them.

A rule that cannot be used (a pattern RE2 refuses, a missing id, a field of the wrong type)
is refused with its id and the reason, in :attr:`RuleSet.problems`; every other rule runs.
File paths (gitleaks' ``path`` and allowlist ``paths``) cannot apply to a text: a rule that
needs one is left out (:attr:`RuleSet.skipped` says so), and a path criterion never holds.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agtaild.secrets import patterns

DATA = Path(__file__).resolve().parent / "data"
SHIPPED = DATA / "agtail.toml"

CONFIDENCES = ("high", "low")
TARGETS = ("secret", "match", "line")
_OVERRIDABLE = ("confidence", "enabled", "priority", "requireDigit", "note")
_RULE_KEYS = frozenset(
    {
        *("id", "description", "regex", "secretGroup", "keywords", "entropy", "allowlists", "path", "tags"),
        *("requireDigit", "confidence", "enabled", "priority", "source", "note"),
    }
)


@dataclass(frozen=True, slots=True)
class Allowlist:
    """Matches a rule must not report: by regex (on the secret, the whole match or its line)
    or by stopword (contained in the secret)."""

    regexes: tuple[Any, ...] = ()
    either: Any = None  # the regexes as one RE2 alternation: one call checks them all
    target: str = "secret"
    stopwords: tuple[str, ...] = ()
    condition: str = "OR"
    has_paths: bool = False  # a path criterion: never holds for a text
    description: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    description: str
    pattern: str
    regex: Any  # compiled RE2: the exact rule
    superset: Any  # compiled RE2: patterns.superset_pattern(pattern), or the same as regex
    lead: int = 0  # a match may start this many bytes before the superset's (patterns.superset)
    secret_group: int = 0
    keywords: tuple[bytes, ...] = ()  # lower-case ASCII
    entropy: float = 0.0
    require_digit: bool = False
    allowlists: tuple[Allowlist, ...] = ()
    confidence: str = "high"
    enabled: bool = True
    priority: int = 50
    source: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class RuleProblem:
    """Why a rule (or a whole file, ``rule=None``) is not used, or a note about it."""

    file: str
    rule: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}: rule {self.rule!r}" if self.rule else self.file
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class RuleSet:
    rules: tuple[Rule, ...]
    allowlists: tuple[Allowlist, ...] = ()  # global: checked for every rule
    problems: tuple[RuleProblem, ...] = ()
    skipped: tuple[RuleProblem, ...] = ()  # valid rules that cannot apply to a text
    sources: tuple[dict[str, Any], ...] = ()

    def rule(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)


class RuleFileError(ValueError):
    """Strict loading found problems (every one is listed)."""

    def __init__(self, problems: Sequence[RuleProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in problems))


class _Refused(ValueError):
    pass


class _Skipped(ValueError):
    """A rule that is valid but cannot apply to a text (it needs a file path)."""


@dataclass
class _Loader:
    rules: dict[str, Rule] = field(default_factory=dict)
    allowlists: list[Allowlist] = field(default_factory=list)
    problems: list[RuleProblem] = field(default_factory=list)
    skipped: list[RuleProblem] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)

    def load_file(self, path: Path, default_source: str | None = None) -> None:
        label = path.name
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            self.problems.append(RuleProblem(label, None, f"cannot read the rule file: {exc}"))
            return
        for source in _tables(data.get("sources"), label, "sources", self.problems):
            self._include(path.parent, source, label)
        for key in ("allowlist", "allowlists"):
            for index, table in enumerate(_tables(data.get(key), label, key, self.problems)):
                try:
                    self.allowlists.append(_allowlist(table))
                except _Refused as exc:
                    self.problems.append(RuleProblem(label, None, f"global {key} {index + 1}: {exc}"))
        for table in _tables(data.get("rules"), label, "rules", self.problems):
            rule_id = table.get("id")
            if not isinstance(rule_id, str) or not rule_id:
                self.problems.append(RuleProblem(label, None, "a rule without an id is refused"))
                continue
            if rule_id in self.rules:
                self.problems.append(RuleProblem(label, rule_id, "refused: another rule has this id"))
                continue
            try:
                self.rules[rule_id] = _rule(table, default_source or f"{label}")
            except _Refused as exc:
                self.problems.append(RuleProblem(label, rule_id, f"refused: {exc}"))
            except _Skipped as exc:
                self.skipped.append(RuleProblem(label, rule_id, str(exc)))
        for table in _tables(data.get("overrides"), label, "overrides", self.problems):
            self._override(table, label)

    def _include(self, folder: Path, source: dict[str, Any], label: str) -> None:
        name = source.get("file")
        if not isinstance(name, str) or "/" in name or "\\" in name:
            self.problems.append(RuleProblem(label, None, f"a source without a plain file name: {name!r}"))
            return
        path = folder / name
        described = " ".join(str(source[k]) for k in ("name", "version") if source.get(k)) or name
        expected = source.get("sha256")
        if isinstance(expected, str):
            try:
                actual = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                actual = ""
            if actual and actual != expected:
                self.problems.append(
                    RuleProblem(label, None, f"{name} is not the recorded upstream file (sha256 {actual})")
                )
        self.sources.append(dict(source))
        self.load_file(path, default_source=f"{described} ({name})")

    def _override(self, table: dict[str, Any], label: str) -> None:
        rule_id = table.get("id")
        rule = self.rules.get(rule_id) if isinstance(rule_id, str) else None
        if rule is None:
            self.problems.append(RuleProblem(label, str(rule_id), "an override for a rule that is not loaded"))
            return
        try:
            changes: dict[str, Any] = {}
            if "confidence" in table:
                changes["confidence"] = _confidence(table["confidence"])
            if "enabled" in table:
                changes["enabled"] = _bool(table["enabled"], "enabled")
            if "priority" in table:
                changes["priority"] = _int(table["priority"], "priority")
            if "requireDigit" in table:
                changes["require_digit"] = _bool(table["requireDigit"], "requireDigit")
            if "note" in table:
                changes["note"] = _text(table["note"], "note")
            extra = tuple(_allowlist(t) for t in _list(table.get("allowlists", []), "allowlists"))
            if extra:
                changes["allowlists"] = rule.allowlists + extra
            unknown = set(table) - {"id", "allowlists", *_OVERRIDABLE}
            if unknown:
                raise _Refused(f"unknown fields {sorted(unknown)}")
        except _Refused as exc:
            self.problems.append(RuleProblem(label, rule.id, f"override refused: {exc}"))
            return
        self.rules[rule.id] = replace(rule, **changes)


def _tables(value: Any, label: str, key: str, problems: list[RuleProblem]) -> list[dict[str, Any]]:
    if value is None:
        return []
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list) or not all(isinstance(t, dict) for t in items):
        problems.append(RuleProblem(label, None, f"'{key}' must be a table or an array of tables"))
        return []
    return items


def _rule(table: dict[str, Any], default_source: str) -> Rule:
    unknown = set(table) - _RULE_KEYS
    if unknown:
        raise _Refused(f"unknown fields {sorted(unknown)}")
    if "path" in table:
        raise _Skipped("not used: the rule needs a file path ('path'); agtail scans texts, which have none")
    pattern = table.get("regex")
    if not isinstance(pattern, str) or not pattern:
        raise _Refused("no 'regex'")
    try:
        regex = patterns.compile_pattern(pattern)
    except ValueError as exc:
        raise _Refused(f"RE2 refuses the pattern: {exc}") from None
    if patterns.matches_empty(regex):
        raise _Refused("the pattern matches the empty string")
    superset, lead = regex, 0
    wider, wider_lead = patterns.superset(pattern)
    if wider != pattern:
        try:
            candidate = patterns.compile_pattern(wider)
        except ValueError:
            candidate = None
        if candidate is not None and not patterns.matches_empty(candidate):
            superset, lead = candidate, wider_lead
    groups = regex.groups
    secret_group = _int(table.get("secretGroup", 0), "secretGroup")
    if not 0 <= secret_group <= groups:
        raise _Refused(f"secretGroup {secret_group} but the pattern has {groups} groups")
    keywords = tuple(k.lower().encode() for k in _strings(table.get("keywords", []), "keywords"))
    if any(not k for k in keywords):
        raise _Refused("an empty keyword")
    entropy = table.get("entropy", 0)
    if isinstance(entropy, bool) or not isinstance(entropy, int | float) or entropy < 0:
        raise _Refused("'entropy' must be a number ≥ 0")
    return Rule(
        id=table["id"],
        description=_text(table.get("description", ""), "description"),
        pattern=pattern,
        regex=regex,
        superset=superset,
        lead=lead,
        secret_group=secret_group,
        keywords=keywords,
        entropy=float(entropy),
        require_digit=_bool(table.get("requireDigit", False), "requireDigit"),
        allowlists=tuple(_allowlist(t) for t in _list(table.get("allowlists", []), "allowlists")),
        confidence=_confidence(table.get("confidence", "high")),
        enabled=_bool(table.get("enabled", True), "enabled"),
        priority=_int(table.get("priority", 50), "priority"),
        source=_text(table.get("source", default_source), "source"),
        note=_text(table.get("note", ""), "note"),
    )


def _allowlist(table: Any) -> Allowlist:
    if not isinstance(table, dict):
        raise _Refused("an allowlist must be a table")
    unknown = set(table) - {"description", "regexes", "regexTarget", "stopwords", "paths", "condition", "commits"}
    if unknown:
        raise _Refused(f"allowlist: unknown fields {sorted(unknown)}")
    compiled = []
    for index, pattern in enumerate(_strings(table.get("regexes", []), "allowlist regexes")):
        try:
            compiled.append(patterns.compile_pattern(pattern))
        except ValueError as exc:
            raise _Refused(f"allowlist regex {index + 1} ({pattern!r}): {exc}") from None
    target = table.get("regexTarget", "secret")
    if target not in TARGETS:
        raise _Refused(f"allowlist regexTarget must be one of {TARGETS}")
    condition = str(table.get("condition", "OR")).upper()
    if condition not in ("OR", "AND"):
        raise _Refused("allowlist condition must be OR or AND")
    either = None
    if compiled:
        try:
            either = patterns.compile_pattern("|".join(f"(?:{rx.pattern})" for rx in compiled))
        except ValueError:  # too big together: checked one by one
            either = None
    return Allowlist(
        regexes=tuple(compiled),
        either=either,
        target=target,
        stopwords=tuple(s.lower() for s in _strings(table.get("stopwords", []), "stopwords")),
        condition=condition,
        has_paths=bool(table.get("paths")) or bool(table.get("commits")),
        description=_text(table.get("description", ""), "description"),
    )


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Refused(f"'{name}' must be a list")
    return value


def _strings(value: Any, name: str) -> list[str]:
    items = _list(value, name)
    if not all(isinstance(v, str) for v in items):
        raise _Refused(f"'{name}' must be a list of strings")
    return items


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise _Refused(f"'{name}' must be a string")
    return value


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise _Refused(f"'{name}' must be true or false")
    return value


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Refused(f"'{name}' must be an integer")
    return value


def _confidence(value: Any) -> str:
    if value not in CONFIDENCES:
        raise _Refused(f"'confidence' must be one of {CONFIDENCES}")
    return str(value)


def load_rules(files: Iterable[str | Path] | None = None, *, shipped: bool = True, strict: bool = False) -> RuleSet:
    """The shipped rules (unless ``shipped=False``), then those of ``files`` in order (a later
    file may add rules and override earlier ones). Problems are collected in the result;
    ``strict=True`` raises :class:`RuleFileError` listing them instead."""
    loader = _Loader()
    if shipped:
        loader.load_file(SHIPPED)
    for path in files or ():
        loader.load_file(Path(path))
    if strict and loader.problems:
        raise RuleFileError(loader.problems)
    return RuleSet(
        rules=tuple(loader.rules.values()),
        allowlists=tuple(loader.allowlists),
        problems=tuple(loader.problems),
        skipped=tuple(loader.skipped),
        sources=tuple(loader.sources),
    )
