"""One table of every API method's parameters, read three ways.

REST parses query strings with it, JSON-RPC checks JSON values with it, and the OpenAPI
document is generated from it. Keeping a single table is what stops the three surfaces from
drifting apart: a parameter added here is accepted, validated and documented everywhere at once.
Validation happens before the service is called, so bad input becomes a 400 / -32602 that
names the parameter instead of a stack trace from deep inside SQLite.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agtaild.errors import UsageError, bad_param, unknown_agent
from agtaild.model import EVENT_KINDS

MAX_LIMIT = 1000
#: Longest accepted string parameter. With every parameter at its longest, percent-encoded
#: 4-byte characters, a request line stays under app.MAX_REQUEST_LINE.
MAX_STRING = 1000
#: since/until as the service reads them (agtaild.index.params.parse_bound): an ISO 8601 date
#: or date-time (naive = local time), a compact date, or an age such as 30m, 12h, 7d, 2w.
WHEN_PATTERN = (
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"([T ][0-9]{2}(:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"
    r"|[0-9]{8}|[0-9]{1,6}(\.[0-9]{1,3})? ?[smhdwSMHDW])$"
)
AGENT_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ParamError(UsageError):
    """A parameter failed validation; ``param`` is its name (the JSON-RPC validation path).
    Its ``data`` is :func:`agtaild.errors.bad_param`'s, so every front end words it its way."""

    def __init__(self, param: str, message: str, *, standalone: bool = False) -> None:
        shaped = bad_param(param, message, standalone=standalone)
        super().__init__(shaped.message, data=shaped.data)
        self.param = param


@dataclass(frozen=True)
class Param:
    """One parameter: its JSON type and limits, and how it appears in the OpenAPI document."""

    name: str
    type: str  # string | integer | boolean | date | enum
    description: str
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    in_path: bool = False
    allow_empty: bool = False

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this parameter's value (OpenAPI 3.1 = JSON Schema 2020-12)."""
        if self.type == "integer":
            s: dict[str, Any] = {"type": "integer"}
            if self.minimum is not None:
                s["minimum"] = self.minimum
            if self.maximum is not None:
                s["maximum"] = self.maximum
            return s
        if self.type == "boolean":
            return {"type": "boolean"}
        if self.type == "enum":
            return {"type": "string", "enum": list(self.choices)}
        if self.type == "date":
            return {"type": "string", "pattern": WHEN_PATTERN}
        s = {"type": "string", "minLength": 0 if self.allow_empty else 1, "maxLength": MAX_STRING}
        if self.pattern:
            s["pattern"] = self.pattern
        return s

    # -- values from a query string ------------------------------------------------------
    def from_text(self, text: str) -> Any:
        if self.type == "integer":
            try:
                value: Any = int(text.strip())
            except ValueError:
                raise ParamError(self.name, f"expected an integer, got {text[:40]!r}") from None
            return self._check(value)
        if self.type == "boolean":
            low = text.strip().lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ParamError(self.name, f"expected true or false, got {text[:40]!r}")
        return self._check(text)

    # -- values from JSON ----------------------------------------------------------------
    def from_json(self, value: Any) -> Any:
        """JSON values; like the service, numbers and flags may also come as strings."""
        if isinstance(value, str) and self.type in ("integer", "boolean"):
            return self.from_text(value)
        if self.type == "boolean" and type(value) is int and value in (0, 1):
            return bool(value)
        if self.type == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParamError(self.name, f"expected an integer, got {_json_type(value)}")
        elif self.type == "boolean":
            if not isinstance(value, bool):
                raise ParamError(self.name, f"expected true or false, got {_json_type(value)}")
        elif not isinstance(value, str):
            raise ParamError(self.name, f"expected a string, got {_json_type(value)}")
        return self._check(value)

    def _check(self, value: Any) -> Any:
        if self.type == "integer":
            if self.minimum is not None and value < self.minimum:
                raise ParamError(self.name, f"must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise ParamError(self.name, f"must be at most {self.maximum}")
            return value
        if self.type == "boolean":
            return value
        if not value:
            if self.allow_empty:
                return value
            raise ParamError(self.name, "must not be empty")
        if len(value) > MAX_STRING:
            raise ParamError(self.name, f"is longer than {MAX_STRING} characters")
        if "\x00" in value:
            raise ParamError(self.name, "must not contain NUL characters")
        if self.type == "enum" and value not in self.choices:
            raise ParamError(self.name, f"{value[:40]!r} is not one of {', '.join(self.choices)}")
        if self.type == "date":
            return parse_when(self.name, value)
        if self.pattern and not re.match(self.pattern, value):
            if self.name == "agent":
                raise unknown_agent(value, _agent_ids())
            raise ParamError(self.name, f"{value[:40]!r} does not match {self.pattern}")
        return value


def parse_when(name: str, value: str) -> str:
    """Check a since/until value the way the service will read it, and return it unchanged.
    Values the service would choke on (year 9999 at the end of the day) stop here as a 400."""
    import math

    from agtaild.index.params import not_a_date, parse_bound

    try:
        bounds = (parse_bound(value), parse_bound(value, end=True))
    except (ValueError, OverflowError, OSError):
        raise ParamError(name, not_a_date(value)) from None
    if not all(math.isfinite(b.epoch) and abs(b.epoch) < 1e13 for b in bounds):
        raise ParamError(name, f"{value[:40]!r} is too far away in time")
    return value


def _agent_ids() -> list[str]:
    """The agents this installation knows (built-in and plugins), for an unknown agent's message."""
    from agtaild.adapters import all_adapters

    return [a.id for a in all_adapters()]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


@dataclass(frozen=True)
class Method:
    """A service method as the API exposes it."""

    name: str
    summary: str
    params: tuple[Param, ...] = field(default_factory=tuple)

    def by_name(self) -> dict[str, Param]:
        return {p.name: p for p in self.params}

    def parse_query(self, query: Mapping[str, str] | Any, path: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Query string (a MultiDict) + path parameters → validated service params."""
        known = self.by_name()
        out: dict[str, Any] = {}
        for name, text in (path or {}).items():
            out[name] = known[name].from_text(text)
        for name in set(query.keys()):
            if name.startswith("_"):
                continue  # cache busters (?_=1712345678), as the service allows
            param = known.get(name)
            if param is None or param.in_path:
                accepted = ", ".join(p.name for p in self.params if not p.in_path) or "none"
                raise ParamError(name, f"is not a parameter of this endpoint (accepted: {accepted})")
            values = query.getall(name) if hasattr(query, "getall") else [query[name]]
            if len(values) > 1:
                raise ParamError(name, "was given more than once")
            out[name] = param.from_text(values[0])
        self._require(out)
        return out

    def parse_json(self, params: Any) -> dict[str, Any]:
        """JSON-RPC params (must be an object: every method takes named parameters)."""
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ParamError("params", f"must be an object of named parameters, got {_json_type(params)}")
        known = self.by_name()
        out: dict[str, Any] = {}
        for name, value in params.items():
            if isinstance(name, str) and name.startswith("_"):
                continue
            param = known.get(name)
            if param is None:
                accepted = ", ".join(known) or "none"
                raise ParamError(name, f"is not a parameter of {self.name} (accepted: {accepted})")
            if value is None and not param.required:
                continue  # null = not given, as JSON clients tend to send
            out[name] = param.from_json(value)
        self._require(out)
        return out

    def _require(self, out: dict[str, Any]) -> None:
        for p in self.params:
            if p.required and p.name not in out:
                raise ParamError(p.name, "is required")


def _s(name: str, description: str, **kw: Any) -> Param:
    return Param(name, "string", description, **kw)


def _search_modes() -> tuple[str, ...]:
    from agtaild.index.text import MODES
    from agtaild.query.semantic import MODES as MEANING

    return (*MODES, *MEANING)


def _stats_groupings() -> tuple[str, ...]:
    from agtaild.index.stats import BY

    return (*BY, "machine")  # machine: on a team server (agtaild --backend)


_AGENT = Param("agent", "string", "agent id, e.g. claude-code or codex", pattern=AGENT_PATTERN)
#: Over JSON-RPC the agent may instead be given inside id as AGENT:ID, or left out (an id
#: prefix unique across agents).
_PATH_AGENT = Param("agent", "string", "agent id", pattern=AGENT_PATTERN, in_path=True)
_PATH_ID = _s("id", "session id (a unique prefix is enough)", required=True, in_path=True)
_LIMIT = Param("limit", "integer", "page size", minimum=1, maximum=MAX_LIMIT)
_CURSOR = _s("cursor", "the opaque `next` of the previous page")
_SINCE = Param("since", "date", "from this date, time or age on (2026-01-31, 2026-01-31T12:00Z, 7d)")
_UNTIL = Param("until", "date", "before this date, time or age (a date includes that whole day)")
_CWD = _s("cwd", "working directory of the session")
_PROJECT = _s("project", "project name (last component of the cwd)")
_IMPORTED = Param("imported", "boolean", "only imported (true) or only native (false) sessions")
_COLLECTION = _s("collection", "import collection name")
#: On a team server (agtaild --backend postgresql://…), every session belongs to the machine
#: that pushed it; a local daemon answers only for its own index and refuses the parameter.
_MACHINE = _s("machine", "team server: only sessions pushed by this machine")
#: The user's own state as session filters (agtaild.userstate; docs/organize.md).
_STATE = (
    _s("label", "only sessions with this label: KEY, or KEY=VALUE"),
    Param("starred", "boolean", "only starred sessions"),
    Param("hidden", "enum", "hidden sessions: left out (exclude, the default), only them, or included", choices=("exclude", "only", "include")),
)
_REVEAL = Param(
    "reveal",
    "boolean",
    "true: the texts unmasked. Honoured only over the daemon's unix socket for the user who runs the daemon, "
    "and logged (docs/secrets.md); over TCP refused with 403 whatever the token",
)
_HAS_SECRET = Param(
    "has_secret", "boolean", "only sessions holding a secret the index found, not allowlisted (true), or none (false)"
)
_FINGERPRINT = _s("fingerprint", "a secret's fingerprint (sha256 hex, as secrets.list shows)", required=True)
_WHICH = (
    _s("collection", "the import collection, when the id exists in several"),
    _s("path", "the session's source path, to tell copies apart"),
    _MACHINE,
)

METHOD_TABLE: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "sessions.list",
            "Sessions, newest first",
            (
                _AGENT,
                _CWD,
                _PROJECT,
                _SINCE,
                _UNTIL,
                _IMPORTED,
                _COLLECTION,
                Param("programmatic", "boolean", "only SDK-driven (true) or only interactive (false)"),
                Param("archived", "boolean", "only sessions whose native file is gone (true) or not"),
                _s("q", "only sessions with an event matching this text"),
                _s("where", "only sessions this filter holds for: FIELD OP VALUE terms, e.g. messages<2 cwd:~/work/** (docs/organize.md)"),
                _MACHINE,
                Param("total", "boolean", "also count every matching session, on all pages (the answer's total)"),
                _HAS_SECRET,
                *_STATE,
                _LIMIT,
                _CURSOR,
            ),
        ),
        Method("sessions.get", "One session", (_PATH_AGENT, _PATH_ID, *_WHICH, _REVEAL)),
        Method(
            "events.list",
            "A session's events in order, cursor-paginated",
            (
                _PATH_AGENT,
                _PATH_ID,
                *_WHICH,
                Param("after_seq", "integer", "only events with a larger seq", minimum=-1),
                Param(
                    "before_seq",
                    "integer",
                    "the events just before this seq (a page ending there; see prev_seq)",
                    minimum=0,
                ),
                _CURSOR,
                Param("limit", "integer", "page size", minimum=1, maximum=10_000),
                _REVEAL,
            ),
        ),
        Method(
            "sessions.overview",
            "One session at a glance: its state, usage, ending, compactions, tool calls by tool, files changed, children",
            (_PATH_AGENT, _PATH_ID, *_WHICH),
        ),
        Method(
            "sessions.children",
            "The sessions a session started (subagents), oldest first, paginated",
            (_PATH_AGENT, _PATH_ID, *_WHICH, Param("limit", "integer", "page size", minimum=1, maximum=500), _CURSOR),
        ),
        Method(
            "tools.calls",
            "A session's tool calls in order: name, status, duration where recorded, input cut to 300 characters",
            (
                _PATH_AGENT,
                _PATH_ID,
                *_WHICH,
                _s("tool", "only calls of this tool (its name as the agent records it, e.g. Bash)"),
                Param("after_seq", "integer", "only calls with a larger seq", minimum=-1),
                Param("limit", "integer", "page size", minimum=1, maximum=500),
                _CURSOR,
            ),
        ),
        Method(
            "edits.recent",
            "File changes of one session or under one directory, newest first, with their diffs cut",
            (
                _AGENT,
                _s("id", "the session (a unique prefix is enough); or give cwd"),
                _s("collection", "the import collection, when the id exists in several"),
                _s("path", "the session's source path, to tell copies apart"),
                _s("cwd", "changes of files under this absolute directory (with id: of that session only)"),
                Param("diff_lines", "integer", "diff lines per change (default 30)", minimum=0, maximum=2000),
                Param("limit", "integer", "page size (default 20)", minimum=1, maximum=200),
                _CURSOR,
            ),
        ),
        Method(
            "search",
            "Full-text search over every event, best first",
            (
                _s("q", "the text to find (user input is never query syntax)", required=True, allow_empty=True),
                _AGENT,
                Param("kind", "enum", "event kind", choices=EVENT_KINDS),
                _s("session", "only in this session, AGENT:ID"),
                _CWD,
                _PROJECT,
                _SINCE,
                _UNTIL,
                Param(
                    "mode",
                    "enum",
                    "how q matches: full-text modes, or semantic / hybrid (by meaning; docs/semantic.md). "
                    "Default phrase, or hybrid once the vectors cover the whole index",
                    choices=_search_modes(),
                ),
                _IMPORTED,
                _COLLECTION,
                _HAS_SECRET,
                *_STATE,
                _MACHINE,
                _LIMIT,
                _CURSOR,
            ),
        ),
        Method(
            "stats",
            "Token usage and cost, grouped",
            (
                Param("by", "enum", "grouping (default day)", choices=_stats_groupings()),
                _AGENT,
                _PROJECT,
                _SINCE,
                _UNTIL,
                _IMPORTED,
                _COLLECTION,
                _MACHINE,
                *_STATE,
                Param(
                    "limit",
                    "integer",
                    "only the first rows (most tokens first; by day the earliest days); totals count all",
                    minimum=1,
                ),
            ),
        ),
        Method(
            "usage.live",
            "Live usage: active sessions with their burn rates, and the limit windows of each agent",
            (
                _AGENT,
                Param("active", "integer", "a session is active when it did something in the last N minutes (default 30)", minimum=1, maximum=1440),
                _s("session", "also this session's totals (AGENT:ID or ID; active or not)"),
                Param("sessions", "boolean", "list the active sessions (default true; false: windows and totals only)"),
            ),
        ),
        Method(
            "report",
            "A stand-up report: per project, the sessions of a range, their prompts, files edited, commands that failed then passed, tokens and cost",
            (
                Param("since", "date", "from this date, time or age on (default: today)"),
                _UNTIL,
                _AGENT,
                _PROJECT,
            ),
        ),
        Method(
            "projects.list",
            "Projects (git root, else working directory) with their sessions, agents and usage",
            (_AGENT, _SINCE, _IMPORTED, _MACHINE, *_STATE),
        ),
        Method("agents.list", "Known agents, their roots and session counts"),
        Method(
            "resume.command",
            "How to resume a session with its agent",
            (
                _PATH_AGENT,
                _PATH_ID,
                _s("from_machine", "team server: the machine the caller runs on (only its sessions resume)"),
            ),
        ),
        Method(
            "state.change",
            "Label, star, hide or title one session (the user's own state; docs/organize.md)",
            (
                _PATH_AGENT,
                _PATH_ID,
                *_WHICH[:2],
                Param("who", "enum", "who asks: the user (default) or an agent (a user's change wins)", choices=("user", "agent")),
                _s("label", "set this label: KEY or KEY=VALUE"),
                _s("unlabel", "remove the label with this key"),
                Param("star", "boolean", "star (true) or unstar (false)"),
                Param("hide", "boolean", "hide (true) or unhide (false); nothing native is touched"),
                _s("title", "a title of the user's (the agent's own stays as agent_title)"),
                Param("clear_title", "boolean", "remove the title set before"),
            ),
        ),
        Method(
            "secrets.list",
            "Secrets the index found, one per distinct secret, newest first (masked: what to rotate)",
            (
                _AGENT,
                _s("session", "only in this session, AGENT:ID"),
                Param("allowlisted", "boolean", "include the secrets the user allowlisted"),
                Param("imported", "boolean", "only in imported sessions (true) or only in this machine's own (false)"),
                Param("places", "integer", "places listed per secret (default 20)", minimum=0, maximum=1000),
                Param("limit", "integer", "secrets listed (default 200)", minimum=1, maximum=10_000),
            ),
        ),
        Method(
            "secrets.allow",
            "Allowlist a secret (a false positive, or a key already revoked): left out of the lists, still masked",
            (_FINGERPRINT, _s("reason", "why, for the record")),
        ),
        Method("secrets.unallow", "Take a secret off the allowlist", (_FINGERPRINT,)),
        Method(
            "files.history",
            "Every recorded change of a file (or of the files under a folder), newest first",
            (
                _s("path", "the file or folder: an absolute path (symlinks and case variants are matched)", required=True),
                Param("limit", "integer", "changes returned (default 200)", minimum=1, maximum=20_000),
                Param("replay", "boolean", "every change, each with its replay operations (what blame needs)"),
            ),
        ),
        Method("machines.list", "Team server: the machines that push into it"),
        Method("index.update", "Bring the index up to date now", (Param("full", "boolean", "re-read everything"),)),
        Method("embeddings.status", "Search by meaning: backend, model, coverage, speed and health"),
        Method(
            "embeddings.build",
            "Embed what is not embedded yet (a daemon wakes its embedder; wait: build in this request)",
            (Param("wait", "boolean", "build now, in this request, and answer when done"),),
        ),
    )
}


def method_spec(name: str) -> Method | None:
    return METHOD_TABLE.get(name)
