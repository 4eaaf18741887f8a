"""Warp's rows → events.

* ``ai_queries`` (``app/src/persistence/block_list.rs``): ``input`` is the JSON of
  ``Vec<PersistedAIInputType>`` — ``[{"Query": {"text", "context": [...],
  "referenced_attachments": {...}}}]`` — ``output_status`` the JSON of ``"Pending"`` |
  ``"Cancelled"`` | ``"Failed"`` | ``"Completed"``, ``start_ts`` a naive UTC time, plus
  ``working_directory`` and ``model_id``. Each query → a ``text`` user event.
* ``blocks`` whose ``ai_metadata`` (``SerializedAIMetadata``: ``requested_command_action_id``,
  ``conversation_id``, ``subagent_task_id``, …) names the conversation: a command the agent
  ran → ``tool_use`` ``run_command`` (``input.command`` = the block's command, ``result`` = its
  output, both with their terminal escape sequences removed; ``is_error`` when ``exit_code``
  ≠ 0; ``tool_use_id`` = the action id).
* ``agent_tasks``: each task body is a protobuf ``Task`` of Warp's ``warp_multi_agent_api``,
  whose ``.proto`` is not in the client's repository (it comes from ``warp-proto-apis``); each task is one ``system`` event
  (``subtype: agent_task``) naming its id and size (the body stays in the database, never
  decoded or copied into the index).
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from typing import Any

from agtaild.adapters.kit.jsondoc import RecordBook
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import BadJson, json_value
from agtaild.model import Event

#: CSI (``ESC [ … final``), OSC (``ESC ] … BEL`` or ``ESC \\``), two-byte escapes, and the
#: 8-bit CSI: what a terminal obeys rather than shows.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)


_NAIVE = re.compile(r"(\d{4}-\d\d-\d\d)[ T]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?")


@lru_cache(maxsize=4096)
def _real_day(day: str) -> bool:
    try:
        date.fromisoformat(day)
    except ValueError:
        return False
    return True


def naive_utc(value: Any) -> str | None:
    """A diesel ``NaiveDateTime`` cell (``2026-11-30 09:10:00.250000``, UTC) in the index's form;
    the same as :func:`norm_iso` (milliseconds cut, not rounded), without building a datetime
    per row. Anything else goes through :func:`norm_iso`."""
    if isinstance(value, str):
        m = _NAIVE.fullmatch(value)
        if m is not None and _real_day(m[1]):
            return f"{m[1]}T{m[2]}:{m[3]}:{m[4]}.{((m[5] or '') + '000')[:3]}Z"
    return norm_iso(value)


def plain(data: Any) -> str:
    """A block's stylized bytes as plain text (escape sequences and carriage returns gone)."""
    if isinstance(data, bytes | bytearray | memoryview):
        text = bytes(data).decode("utf-8", errors="replace")
    elif isinstance(data, str):
        text = data
    else:
        return ""
    return _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "")


def decode(value: Any) -> Any:
    if not isinstance(value, str | bytes) or not value.strip():
        return None
    try:
        return json_value(value)
    except BadJson as exc:
        return exc


class RowReader:
    """One conversation's query, block and task rows, in time order, into ``book``."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.last_status: str | None = None
        self.models: list[str] = []

    def query(self, row: dict[str, Any], ts: str | None) -> None:
        book, s = self.book, self.book.session
        inputs = decode(row.get("input"))
        source = {"table": "ai_queries", "row": row.get("id")}
        if isinstance(inputs, BadJson) or not isinstance(inputs, list):
            book.bad(row["id"] if isinstance(row.get("id"), int) else 0)
            return
        status = decode(row.get("output_status"))
        self.last_status = status if isinstance(status, str) else None
        model = row.get("model_id") if isinstance(row.get("model_id"), str) and row.get("model_id") else None
        if model and model not in self.models:
            self.models.append(model)
        cwd = row.get("working_directory")
        if isinstance(cwd, str) and cwd and not s.cwd:
            s.cwd = cwd
        extra: dict[str, Any] = {"exchange_id": row.get("exchange_id"), "output_status": self.last_status}
        if isinstance(cwd, str) and cwd:
            extra["working_directory"] = cwd
        for item in inputs:
            body = item.get("Query") if isinstance(item, dict) and len(item) == 1 else None
            if not isinstance(body, dict) or not isinstance(body.get("text"), str):
                book.emit(Event(seq=-1, kind="unknown", role="user", ts=ts, raw=item, source=source))
                continue
            context = body.get("context")
            if isinstance(context, list) and context:
                extra["context_kinds"] = [
                    next(iter(c)) if isinstance(c, dict) and c else type(c).__name__ for c in context
                ]
            book.emit(Event(seq=-1, kind="text", role="user", ts=ts, text=body["text"], model=model, source=source,
                            extra=dict(extra)))  # fmt: skip
            s.messages += 1
            if s.first_prompt is None and body["text"]:
                s.first_prompt = body["text"]
        book.count("events")

    def block(self, row: dict[str, Any], meta: dict[str, Any], ts: str | None, done: str | None) -> None:
        command = plain(row.get("stylized_command")).strip()
        output = plain(row.get("stylized_output")).rstrip("\n")
        code = row.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        extra: dict[str, Any] = {"block_id": row.get("block_id")}
        if code is not None:
            extra["exit_code"] = code
        for key in ("pwd", "git_branch_name", "shell"):
            if isinstance(row.get(key), str) and row[key]:
                extra[key] = row[key]
        if isinstance(meta.get("subagent_task_id"), str):
            extra["subagent_task_id"] = meta["subagent_task_id"]
        if row.get("did_execute") == 0:
            extra["did_execute"] = False
        action = meta.get("requested_command_action_id")
        if done:
            extra["result_ts"] = done
        self.book.emit(Event(seq=-1, kind="tool_use", role="assistant", ts=ts, tool="run_command",
                             input={"command": command, **({"pwd": row["pwd"]} if isinstance(row.get("pwd"), str) else {})},
                             result=output, is_error=code is not None and code != 0,
                             tool_use_id=action if isinstance(action, str) else None,
                             source={"table": "blocks", "row": row.get("id")}, extra=extra))  # fmt: skip
        self.book.count("events")

    def task(self, row: dict[str, Any]) -> None:
        """A task row: known, but its protobuf body is not decoded (``system`` ``agent_task``
        naming the task and its size; the body stays in the database)."""
        body = row.get("task")
        size = len(body) if isinstance(body, bytes | bytearray | memoryview | str) else 0
        task_id = row.get("task_id") if isinstance(row.get("task_id"), str) else None
        info = {
            "task_id": task_id,
            "bytes": size,
            "encoding": "protobuf warp_multi_agent_api.Task (not decoded)",
        }
        self.book.emit(Event(seq=-1, kind="system", role="assistant", subtype="agent_task", ts=naive_utc(row.get("last_modified_at")),
                             text=None, source={"table": "agent_tasks", "row": row.get("id")}, extra=info))  # fmt: skip
        self.book.count("events")
