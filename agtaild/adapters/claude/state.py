"""What the Claude Code parser remembers between incremental reads, and the session summary
derived from it.

The state is msgpack-encoded after every read, so it holds only what a later line can still
need: tool uses waiting for their result (the emitted Event itself, so the result can re-emit
it merged), recent tool names (hooks name their tool by ``toolUseID``), the usage already
counted per response, title candidates, and the subagent link. Bounded maps drop their
oldest entries; because every read applies the same lines in the same order, the state is
the same whether a file was read in one step or in many.

A long session's state is loaded and saved again for every append, so its bulky parts are
kept in a form that costs little to carry over: the usage memory and the tool names as
frames of bytes that a read decodes only when it looks up an old entry
(agtaild.adapters.claude.frames), the message uuid hashes as packed 32-bit integers, the
conversation tree as frames too (agtaild.adapters.claude.tree). On a 48 MB session this took
the state from 800 KB (1.9 ms to decode at best, 5.9 ms on average with the collector's
passes) to 412 KB (0.03 ms).
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from agtaild.adapters.claude.branches import BranchState
from agtaild.adapters.claude.frames import Frames
from agtaild.adapters.claude.text import first_line
from agtaild.adapters.claude.usage import UsageMemory
from agtaild.adapters.kit.jsonl import ParserState
from agtaild.model import Event, ParentRef, Session

AGENT_ID = "claude-code"
#: Bump when the saved state changes meaning: a saved state of another layout (0: before the
#: usage memory was framed) is not continued, the file is read again from the start.
LAYOUT = 1
#: Tool uses waiting for a result, and tool names remembered for hooks.
MAX_PENDING = 512
MAX_TOOL_NAMES = 512
#: ... kept as MAX_TOOL_NAMES // TOOL_NAME_SPILL frames of TOOL_NAME_SPILL (agtaild.adapters.claude.frames).
TOOL_NAME_SPILL = 64
MAX_SEEN_UUIDS = 10_000
#: The first prompt is kept whole up to this many characters.
FIRST_PROMPT_MAX = 10_000


class ClaudeState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    #: tool use id → tool name (read through a FramedMap).
    tool_names: Frames = msgspec.field(default_factory=Frames)
    #: The state's layout (:data:`LAYOUT`); a state of another layout is not continued.
    layout: int = 0
    usage: UsageMemory = msgspec.field(default_factory=UsageMemory)
    custom_title: str | None = None
    ai_title: str | None = None
    summary_title: str | None = None
    #: The first slash command, the title of last resort (a session that is only ``/init``).
    first_command: str | None = None
    #: ``summary`` lines whose ``leafUuid`` is not (yet) a message of this file.
    unmatched_summaries: dict[str, str] = msgspec.field(default_factory=dict)
    #: CRC32 of the uuids of this file's first MAX_SEEN_UUIDS messages, as ``array("I")``
    #: bytes in file order (a ``summary`` titles its own leaf only; such summaries are rare
    #: and follow short sessions, so the set is built only when one comes).
    uuid_hashes: bytes = b""
    boundaries: int = 0
    compact_summaries: int = 0
    last_assistant_id: str | None = None
    limit_message_id: str | None = None
    interrupted: bool = False
    ended_in_error: bool = False
    # Subagents.
    subagent: bool = False
    agent_id: str | None = None
    parent_id: str | None = None
    parent_path: str | None = None
    parent_tool_use_id: str | None = None
    parent_scan_offset: int = 0
    meta_loaded: bool = False
    #: The uuid tree and the branch marks given out (agtaild.adapters.claude.branches).
    branches: BranchState = msgspec.field(default_factory=BranchState)


def uuid_hash(uuid: str) -> int:
    return zlib.crc32(uuid.encode())


def remember(table: dict[str, Any], key: str, value: Any, limit: int) -> None:
    """Insert into a bounded map, dropping the oldest entries beyond ``limit``."""
    table[key] = value
    while len(table) > limit:
        del table[next(iter(table))]


def storable(ev: Event) -> Event:
    """``ev`` itself when the state can hold it, else a copy whose input it can hold.

    JSON allows integers of any size; msgpack (the state's encoding) stops at 64 bits. A tool
    input with such a number would make the whole read fail, so the waiting copy gets them as
    strings (the event emitted now keeps the original).
    """
    try:
        msgspec.msgpack.encode(ev.input)
    except OverflowError:
        return msgspec.structs.replace(ev, input=_big_ints_as_text(ev.input))
    return ev


def _big_ints_as_text(value: Any) -> Any:
    if type(value) is int and not -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, dict):
        return {k: _big_ints_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_big_ints_as_text(v) for v in value]
    return value


def summarize(st: ClaudeState, usage_total: Any, plugin_for_prompt: Any) -> Session:
    """Fill the derived summary fields of ``st.session`` (title, ending, parent, …)."""
    s = st.session
    title = st.custom_title or st.ai_title or st.summary_title
    if not title and s.first_prompt:
        title = first_line(s.first_prompt) or None
    title = title or st.first_command
    s.title = title
    s.compactions = max(st.boundaries, st.compact_summaries)
    s.usage = usage_total
    if st.limit_message_id is not None and st.limit_message_id == st.last_assistant_id:
        s.ending = "limit"
    elif st.interrupted:
        s.ending = "interrupted"
    elif st.ended_in_error:
        s.ending = "error"
    else:
        s.ending = None
    if st.subagent:
        s.resumable = False
        if st.parent_id:
            s.parent = ParentRef(agent=s.agent, id=st.parent_id, tool_use_id=st.parent_tool_use_id)
    s.plugin = plugin_for_prompt(s.first_prompt) if (s.programmatic and plugin_for_prompt) else None
    return s
