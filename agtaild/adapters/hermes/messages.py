"""Hermes's ``messages`` rows → events; its usage counters → usage records.

A row is ``{role: user|assistant|tool|system, content, tool_call_id, tool_calls (JSON text of
OpenAI tool calls; a list in the older session files), tool_name, timestamp (epoch seconds), reasoning, reasoning_content,
finish_reason, active, compacted}``:

* ``user`` → ``text``; ``system`` → ``system``;
* ``assistant`` → ``thinking`` (``reasoning_content``, else ``reasoning``), ``text``, and a
  ``tool_use`` per tool call (``input`` = the decoded arguments);
* ``tool`` → the result of its call (``merged``). Hermes writes results as JSON text:
  ``terminal`` ``{"output", "exit_code", "error"}`` (the result is the output, ``is_error`` when
  the exit code is not 0 or there is an error), ``patch`` ``{"success", "diff"}`` (the diff is
  the call's ``extra.edit``), ``write_file`` ``{"bytes_written", …}``; the decoded document is
  kept as ``extra.details``;
* rows with ``active = 0`` or ``compacted = 1`` were compacted away: kept, marked
  ``extra.compacted``.

Usage is not kept per response: ``session_model_usage`` has one row per session and model
(Hermes's own counters), which become one usage record each; without it the ``sessions``
row's totals are one record.
"""

from __future__ import annotations

import json
from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.stamps import from_epoch
from agtaild.adapters.kit.values import num
from agtaild.model import Event, Usage, UsageRecord

#: Tool calls waiting for their result (the oldest are dropped).
MAX_PENDING = 500


def _json(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class MessageReader:
    """Turns one session's message rows into events, in row order."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.pending: dict[str, Event] = {}
        self.last_role: str | None = None

    def row(self, row: dict[str, Any], number: int) -> None:
        book, s = self.book, self.book.session
        role = row.get("role")
        ts = from_epoch(row.get("timestamp"), unit="s")
        s.started = s.started or ts
        if ts and (s.ended is None or ts > s.ended):
            s.ended = ts
        extra: dict[str, Any] = {"compacted": True} if row.get("active") == 0 or row.get("compacted") == 1 else {}
        source = {"row": row.get("id") if isinstance(row.get("id"), int) else number}
        content = _str(row.get("content"))
        if role == "tool":
            call_id = row.get("tool_call_id")
            call = self.pending.pop(call_id, None) if isinstance(call_id, str) else None
            if call is not None:
                self._result(call, row, content, ts)
                book.count("merged")
                return
            ev = Event(seq=-1, kind="tool_result", ts=ts, role="tool", tool=_str(row.get("tool_name")),
                       result=content, tool_use_id=_str(call_id), source=source, extra=extra)  # fmt: skip
            self._result(ev, row, content, ts)
            book.emit(ev)
            book.count("events")
            return
        if role == "user":
            book.emit(Event(seq=-1, kind="text", ts=ts, role="user", text=content, source=source, extra=extra))
            s.messages += 1
            if s.first_prompt is None and content:
                s.first_prompt = content
        elif role == "assistant":
            self._assistant(row, content, ts, source, extra)
        elif role == "system":
            book.emit(Event(seq=-1, kind="system", ts=ts, role="system", text=content, source=source, extra=extra))
        else:
            book.emit(Event(seq=-1, kind="unknown", ts=ts, role=_str(role), raw=row, source=source))
        if role in ("user", "assistant"):
            self.last_role = role
        book.count("events")

    def _assistant(
        self, row: dict[str, Any], content: str | None, ts: str | None, source: dict[str, Any], extra: dict[str, Any]
    ) -> None:
        book, s = self.book, self.book.session
        model = s.models[0] if s.models else None
        thinking = _str(row.get("reasoning_content")) or _str(row.get("reasoning"))
        if thinking:
            book.emit(Event(seq=-1, kind="thinking", ts=ts, role="assistant", text=thinking, model=model,
                            source=source, extra=dict(extra)))  # fmt: skip
        if content:
            book.emit(Event(seq=-1, kind="text", ts=ts, role="assistant", text=content, model=model,
                            source=source, extra=dict(extra)))  # fmt: skip
            s.messages += 1
        raw_calls = row.get("tool_calls")
        calls = raw_calls if isinstance(raw_calls, list) else _json(raw_calls)
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                book.emit(Event(seq=-1, kind="unknown", ts=ts, role="assistant", raw=call, source=source))
                continue
            raw_fn = call.get("function")
            fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
            args = fn.get("arguments")
            decoded = _json(args)
            call_id = _str(call.get("id")) or _str(call.get("call_id"))
            ev = book.emit(Event(seq=-1, kind="tool_use", ts=ts, role="assistant", model=model,
                                 tool=_str(fn.get("name")), input=decoded if decoded is not None else args,
                                 tool_use_id=call_id, source=source, extra=dict(extra)))  # fmt: skip
            if ev.tool == "write_file" and isinstance(decoded, dict) and isinstance(decoded.get("content"), str):
                change = edits.from_texts(decoded.get("path"), "", decoded["content"], op="create")
                edit = edits.edit_doc([change])
                if edit is not None:
                    ev.extra["edit"] = edit
            if call_id:
                self.pending[call_id] = ev
                if len(self.pending) > MAX_PENDING:
                    del self.pending[next(iter(self.pending))]
        finish = _str(row.get("finish_reason"))
        if finish:
            s.extra["last_finish_reason"] = finish

    def _result(self, call: Event, row: dict[str, Any], content: str | None, ts: str | None) -> None:
        doc = _json(content)
        call.result = content
        call.is_error = False
        if ts:
            call.extra["result_ts"] = ts
        if not isinstance(doc, dict):
            return
        call.extra["details"] = {k: v for k, v in doc.items() if k not in ("output", "diff")}
        if isinstance(doc.get("output"), str):
            call.result = doc["output"]
        code = doc.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            call.extra["exit_code"] = code
        call.is_error = (
            (isinstance(code, int) and not isinstance(code, bool) and code != 0)
            or bool(doc.get("error"))
            or doc.get("success") is False
        )
        if isinstance(doc.get("diff"), str) and not call.is_error:
            files = edits.from_unified(doc["diff"])
            edit = edits.edit_doc(list(files)) if files else None
            if edit is not None:
                call.extra["edit"] = edit


def usage_records(session_row: dict[str, Any], model_rows: list[dict[str, Any]]) -> list[UsageRecord]:
    """Hermes's own counters: one record per ``session_model_usage`` row, else the session's."""
    records: list[UsageRecord] = []
    for row in model_rows:
        usage = _usage(row)
        if usage.is_zero():
            continue
        model = _str(row.get("model"))
        key = f"model:{model}:{row.get('billing_provider')}:{row.get('task')}"
        records.append(UsageRecord(key=key, ts=from_epoch(row.get("last_seen"), unit="s"), model=model, usage=usage))
    if not records and not model_rows:
        usage = _usage(session_row)
        if not usage.is_zero():
            ts = from_epoch(session_row.get("ended_at") or session_row.get("started_at"), unit="s")
            records.append(UsageRecord(key="session", ts=ts, model=_str(session_row.get("model")), usage=usage))
    return records


def _usage(row: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=num(row, "input_tokens"),
        output_tokens=num(row, "output_tokens"),
        cache_read_tokens=num(row, "cache_read_tokens"),
        cache_write_tokens=num(row, "cache_write_tokens"),
        reasoning_tokens=num(row, "reasoning_tokens"),
    ).fix_total()
