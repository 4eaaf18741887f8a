"""The normalized model every adapter produces and every other layer consumes.

These Structs are the JSON of ../shared/CONTRACT.md: field names here are the outside surface.
Every field has a default so that older stored data keeps decoding when a field is added.
No layer above the adapters knows any agent's private format; they only know these types.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

EventKind = Literal["text", "thinking", "tool_use", "tool_result", "hook", "summary", "system", "unknown"]
EVENT_KINDS: tuple[str, ...] = (
    "text",
    "thinking",
    "tool_use",
    "tool_result",
    "hook",
    "summary",
    "system",
    "unknown",
)


class Usage(msgspec.Struct, omit_defaults=False):
    """Token counts in the Anthropic convention.

    `input_tokens` excludes cache reads and writes; reasoning is part of output;
    `total_tokens` = input + output + cache read + cache write (as ccusage counts).
    `cost_usd` is None when any counted model has no known price.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.total_tokens += other.total_tokens
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd

    def fix_total(self) -> Usage:
        self.total_tokens = (
            self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
        )
        return self

    def is_zero(self) -> bool:
        return self.total_tokens == 0 and self.reasoning_tokens == 0


class UsageRecord(msgspec.Struct):
    """One API response's usage, counted exactly once. The index sums these for stats.

    `key` identifies the response inside its session (Claude: message.id + requestId;
    Codex: the token_count line) so that a re-read never counts it twice.
    Cost is filled in later from the pricing table, never by adapters.
    """

    key: str
    ts: str | None
    model: str | None
    usage: Usage


class Accounting(msgspec.Struct):
    """Where every non-empty physical line (or row) of the source went.

    events + merged + metadata + skipped + bad == lines, always.
    """

    lines: int = 0
    events: int = 0
    merged: int = 0
    metadata: int = 0
    skipped: int = 0
    bad: int = 0

    def balanced(self) -> bool:
        return self.events + self.merged + self.metadata + self.skipped + self.bad == self.lines

    def count(self, category: str) -> None:
        """Book one line (or row) under ``category``: events, merged, metadata or skipped."""
        self.lines += 1
        if category == "events":
            self.events += 1
        elif category == "merged":
            self.merged += 1
        elif category == "metadata":
            self.metadata += 1
        else:
            self.skipped += 1


class ParentRef(msgspec.Struct):
    agent: str
    id: str
    tool_use_id: str | None = None


class HookInfo(msgspec.Struct, omit_defaults=True):
    event: str | None = None
    tool: str | None = None
    command: str | None = None
    text: str | None = None
    plugin: str | None = None


class Session(msgspec.Struct):
    agent: str
    id: str
    path: str = ""
    title: str | None = None
    cwd: str | None = None
    project: str | None = None
    git_branch: str | None = None
    models: list[str] = msgspec.field(default_factory=list)
    started: str | None = None
    ended: str | None = None
    mtime: float | None = None
    messages: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    origin: str | None = None
    programmatic: bool = False
    parent: ParentRef | None = None
    imported: bool = False
    collection: str | None = None
    archived: bool = False
    bad_lines: int = 0
    truncated: bool = False
    ending: str | None = None
    compactions: int = 0
    resumable: bool = True
    accounting: Accounting = msgspec.field(default_factory=Accounting)
    # Extensions beyond the contract (allowed: "extend it freely").
    first_prompt: str | None = None
    version: str | None = None
    plugin: str | None = None
    forked_from: ParentRef | None = None
    bad_line_numbers: list[int] = msgspec.field(default_factory=list)
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


class Event(msgspec.Struct, omit_defaults=False):
    seq: int
    kind: str
    ts: str | None = None
    role: str | None = None
    text: str | None = None
    tool: str | None = None
    input: Any = None
    result: Any = None
    is_error: bool | None = None
    hook: HookInfo | None = None
    model: str | None = None
    usage: Usage | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    source: dict[str, Any] = msgspec.field(default_factory=dict)
    raw: Any = None
    # Extensions beyond the contract.
    tool_use_id: str | None = None
    sidechain: bool = False
    subtype: str | None = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


def project_of(cwd: str | None) -> str | None:
    """The project name shown to people: the last component of the working directory."""
    if not cwd:
        return None
    trimmed = cwd.rstrip("/\\")
    if not trimmed:
        return cwd
    for sep in ("/", "\\"):
        if sep in trimmed:
            trimmed = trimmed.rsplit(sep, 1)[-1]
    return trimmed or cwd


_encoder = msgspec.json.Encoder()


def to_builtins(obj: Any) -> Any:
    return msgspec.to_builtins(obj)


def dumps(obj: Any) -> bytes:
    return _encoder.encode(obj)
