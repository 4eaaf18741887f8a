"""What the Codex parser remembers between incremental reads (msgpack-encoded by the helper).

Everything here is needed to continue a rollout from a byte offset and end with the same rows
as one read from the start: tool calls still waiting for their output (the emitted Event, so
the merged version can be re-emitted under the same seq), the keys of text already emitted
once (Codex writes visible text twice), the last cumulative token totals, the fork/copy
bookkeeping and the turn state.
"""

from __future__ import annotations

import msgspec

from agtaild.adapters.kit.jsonl import ParserState
from agtaild.model import Event

#: Calls whose output arrived are kept a little longer for late companions
#: (`exec_command_end`, `item_completed`) written after the output.
DONE_CALLS_KEPT = 8
#: Calls still waiting for an output, at most (an aborted turn leaves its calls open forever).
PENDING_CALLS_KEPT = 64
#: Dedupe keys kept at most (they are also cleared at every turn start).
RECENT_TEXT_KEPT = 64


class CodexState(ParserState):
    thread_id: str | None = None
    #: Envelope timestamp of the file's own (first) session_meta: copied lines may be older.
    meta_ts: str | None = None
    model: str | None = None
    last_ts: str | None = None
    calls: dict[str, Event] = msgspec.field(default_factory=dict)
    done_calls: dict[str, Event] = msgspec.field(default_factory=dict)
    recent_text: dict[str, int] = msgspec.field(default_factory=dict)
    # -- usage ------------------------------------------------------------------------
    #: The thread's cumulative token totals after the last usage row (any source).
    prev_total: list[int] | None = None
    # -- forks and sub-agents -----------------------------------------------------------
    #: True when this file starts with a copy of another thread's items (fork or spawn).
    forked: bool = False
    #: Parent's cumulative total_tokens at fork time, when the parent rollout was found.
    fork_baseline: int | None = None
    baseline_passed: bool = False
    #: The copied batch: epoch seconds of its first line; None once the batch is over.
    copy_batch_start: float | None = None
    copy_open: bool = False
    spawn_parent: str | None = None
    spawn_tries: int = 0
    # -- turns, compaction, titles ------------------------------------------------------
    turn_open: bool = False
    last_turn: str | None = None
    in_compaction: bool = False
    compaction_event: Event | None = None
    thread_name: str | None = None
    first_prompt_copied: str | None = None
    legacy: bool = False
