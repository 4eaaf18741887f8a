"""OpenClaw's ``transcript_events`` rows → Pi tree entries → events.

A row holds one entry as JSON text (``event_json``) or, for large entries, as a zstd frame
(``event_zstd``, ``event_utf8_bytes`` long once decompressed, at most 4 MiB). The entries are
Pi's v4 session entries, read by :class:`agtaild.adapters.pi.tree.PiTreeParser`; OpenClaw adds:

* ``custom`` entries of its own bookkeeping (``model-snapshot``, ``openclaw.cache-ttl``): kept
  as metadata, not events (every turn writes one);
* an ``exec`` result whose ``details.exitCode`` is not 0 is an error (OpenClaw's own
  ``isError`` stays false for a command that ran and failed);
* a ``write``/``edit`` result's ``details.patch`` (the unified diff OpenClaw applied) is the
  call's ``extra.edit``, so a whole-file write gets a diff too;
* ``custom`` *messages* ``openclaw.nested-tool.v1``: a tool call made through the
  ``tool_search``/``tool_call`` catalog, with its input and result in ``details`` → a
  ``tool_use`` event of the nested tool (``extra.parent_tool_use_id`` = the ``tool_call`` it
  ran under).
"""

from __future__ import annotations

from typing import Any

import msgspec
import zstandard

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsonl import Category
from agtaild.adapters.pi.content import EntryContext, content_text, str_or_none
from agtaild.adapters.pi.tree import PiTreeParser

#: The largest entry OpenClaw stores (its CHECK constraint): a bigger claim is not decompressed.
MAX_ENTRY_BYTES = 4 * 1024 * 1024
#: ``custom`` entries that only record OpenClaw's own bookkeeping.
BOOKKEEPING = frozenset({"model-snapshot", "openclaw.cache-ttl"})
NESTED_TOOL = "openclaw.nested-tool.v1"

_decoder = msgspec.json.Decoder()


def decode_row(event_json: Any, event_zstd: Any, utf8_bytes: Any) -> Any:
    """The entry a row holds. Raises ValueError for a row that holds no readable entry."""
    if isinstance(event_json, str):
        data = event_json.encode("utf-8", "surrogatepass")
    elif isinstance(event_zstd, bytes) and event_zstd:
        size = utf8_bytes if isinstance(utf8_bytes, int) and 0 < utf8_bytes <= MAX_ENTRY_BYTES else MAX_ENTRY_BYTES
        try:
            data = zstandard.ZstdDecompressor().decompress(event_zstd, max_output_size=size)
        except zstandard.ZstdError as exc:
            raise ValueError(f"not a zstd frame: {exc}") from None
    else:
        raise ValueError("the row holds no entry")
    try:
        return _decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"not JSON: {exc}") from None


class OpenClawParser(PiTreeParser):
    """Pi's tree parser with OpenClaw's own entries (see the module docstring)."""

    def _system_entry(self, kind: str, obj: dict[str, Any], ctx: EntryContext) -> Category:
        if kind == "custom" and obj.get("customType") in BOOKKEEPING:
            return "metadata"
        return super()._system_entry(kind, obj, ctx)

    def _message(self, msg: dict[str, Any], entry: dict[str, Any], ctx: EntryContext) -> Category:
        if msg.get("role") == "custom" and msg.get("customType") == NESTED_TOOL:
            details = msg.get("details")
            if isinstance(details, dict):
                self._nested_tool(details, ctx)
                return "events"
        return super()._message(msg, entry, ctx)

    def _tool_result(self, msg: dict[str, Any], ctx: EntryContext) -> Category:
        call_id = msg.get("toolCallId")
        call = self.st.pending.get(call_id) if isinstance(call_id, str) else None
        category = super()._tool_result(msg, ctx)
        details = msg.get("details")
        patch = details.get("patch") if isinstance(details, dict) else None
        code = details.get("exitCode") if isinstance(details, dict) else None
        if call is not None and isinstance(code, int) and not isinstance(code, bool):
            call.extra["exit_code"] = code
            call.is_error = call.is_error or code != 0
        if call is not None and isinstance(patch, str) and not msg.get("isError"):
            path = call.input.get("path") if isinstance(call.input, dict) else None
            files = edits.from_unified(patch, path=path if isinstance(path, str) else None)
            edit = edits.edit_doc(list(files)) if files else None
            if edit is not None:
                call.extra["edit"] = edit
        return category

    def _nested_tool(self, details: dict[str, Any], ctx: EntryContext) -> None:
        result = details.get("result")
        text, _ = content_text(result.get("content") if isinstance(result, dict) else result)
        extra: dict[str, Any] = {}
        parent = str_or_none(details.get("parentToolCallId"))
        if parent:
            extra["parent_tool_use_id"] = parent
        inner = result.get("details") if isinstance(result, dict) else None
        if isinstance(inner, dict):
            extra["details"] = inner
            child = inner.get("childSessionKey")
            if isinstance(child, str):
                extra["child_session_key"] = child
        self._event(
            ctx,
            "tool_use",
            role="assistant",
            tool=str_or_none(details.get("toolName")),
            input=details.get("input"),
            result=text,
            is_error=details.get("isError") is True,
            tool_use_id=str_or_none(details.get("toolCallId")),
            subtype="nested_tool",
            extra=extra,
        )
