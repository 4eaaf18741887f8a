"""Cline's ``ui_messages.json``: what the chat panel showed (``ClineMessage[]``).

Most of it repeats the API history in display form (text, reasoning, commands, tool
previews) and is counted "skipped". What only the UI has is kept: per-request token counts
(``say:"api_req_started"``, whose ``text`` is a JSON string with ``tokensIn``, ``tokensOut``,
``cacheReads``, ``cacheWrites``, ``cost`` and, when a request was cut, ``cancelReason``),
errors and retries (``error``, ``api_req_failed``, ``error_retry`` …), and resumptions.
A ``say``/``ask`` type not known here is kept raw as an ``unknown`` event.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.cline.common import usage_from
from agtaild.adapters.cline.history import Timed
from agtaild.adapters.kit.stamps import from_epoch_ms
from agtaild.adapters.kit.values import num, sub
from agtaild.model import Event, UsageRecord

#: UI records that repeat the API history or only steer the panel.
_DISPLAY = frozenset(
    {
        "task", "text", "reasoning", "command", "command_output", "tool", "completion_result",
        "user_feedback", "user_feedback_diff", "checkpoint_created", "api_req_finished", "followup",
        "plan_mode_respond", "act_mode_respond", "browser_action", "browser_action_launch",
        "browser_action_result", "use_mcp_server", "mcp_server_response", "mcp_server_request_started",
        "mcp_notification", "task_progress", "shell_integration_warning", "shell_integration_warning_with_suggestion",
        "info", "load_mcp_documentation", "new_task", "condense", "summarize_task", "report_bug",
        "new_rule", "hook", "hook_output", "hook_status", "subagent", "use_subagents", "subagent_status",
        "generate_explain_changes", "deleted_api_reqs", "command_approval", "auto_approval_max_req_reached",
        "codebase_search_result", "subtask_result", "condense_context", "condense_context_error",
        "sliding_window_truncation", "user_edit_todos", "update_todo_list", "image", "reasoning_summary",
        "api_req_deleted", "browser_session_status", "too_many_tools_warning", "rooignore_error",
        "clineignore_error", "checkpoint_saved", "checkpoint_restored", "task_start", "task_end",
        "diff_error_tool_retry", "focus_chain", "tool_use",
    }
)
#: UI records that say something went wrong.
_ERRORS = frozenset(
    {"error", "api_req_failed", "api_req_retried", "error_retry", "diff_error", "mistake_limit_reached",
     "api_req_retry_delayed", "mcp_server_error", "shell_integration_error", "payment_required_prompt"}
)
_RESUME = frozenset({"resume_task", "resume_completed_task"})

_decoder = msgspec.json.Decoder()


class UiWalk:
    def __init__(self) -> None:
        self.out: list[Timed] = []
        self.usage: list[UsageRecord] = []
        self.task_text: str | None = None
        self.ending: str | None = None
        self.resumed = 0
        self.last_ms = 0.0
        self.last_kind: str | None = None
        self.recorded_cost = 0.0
        self.models: list[str] = []
        #: The provider when a record does not name one (taken from the API history).
        self.default_provider: str | None = None

    def message(self, index: int, msg: Any, order_base: int) -> str:
        if not isinstance(msg, dict):
            return "bad"
        ts_raw = msg.get("ts")
        ms = float(ts_raw) if isinstance(ts_raw, int | float) and not isinstance(ts_raw, bool) else self.last_ms
        self.last_ms = max(self.last_ms, ms)
        ts = from_epoch_ms(ts_raw) if ms else None
        kind = msg.get("say") if msg.get("type") == "say" else msg.get("ask")
        kind = kind if isinstance(kind, str) else None
        text = msg.get("text") if isinstance(msg.get("text"), str) else None
        info = sub(msg, "modelInfo")
        model = info.get("modelId") if isinstance(info.get("modelId"), str) else None
        if model and model not in self.models:
            self.models.append(model)
        if kind and kind not in _RESUME and not msg.get("partial"):
            self.last_kind = kind
        if kind == "task":
            self.task_text = self.task_text or text
        if kind == "api_req_started":
            self._request(index, text, ts, model, info.get("providerId"))
            return "metadata"
        if kind in _RESUME:
            self.resumed += 1
            return "metadata"
        if kind in _ERRORS:
            if kind in ("api_req_failed", "mistake_limit_reached"):
                self.ending = "error"
            ev = Event(seq=-1, kind="system", ts=ts, role="system", text=text or kind, is_error=True,
                       subtype=kind, source={"ui_row": index})
            self.out.append(Timed(ev, ms, order_base + index))
            return "events"
        if kind in _DISPLAY:
            return "skipped"
        ev = Event(seq=-1, kind="unknown", ts=ts, raw=msg, subtype=kind, source={"ui_row": index})
        self.out.append(Timed(ev, ms, order_base + index))
        return "events"

    def _request(self, index: int, text: str | None, ts: str | None, model: str | None, provider: Any) -> None:
        try:
            info = _decoder.decode(text) if text else None
        except msgspec.DecodeError:
            info = None
        if not isinstance(info, dict):
            return
        reason = info.get("cancelReason")
        if reason == "user_cancelled":
            self.ending = "interrupted"
        elif isinstance(reason, str) and reason:
            self.ending = "error"
        if not any(k in info for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites")):
            return
        cost = info.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.recorded_cost += float(cost)
        usage = usage_from(
            num(info, "tokensIn"), num(info, "tokensOut"), num(info, "cacheReads"), num(info, "cacheWrites"),
            provider if isinstance(provider, str) else self.default_provider,
        )
        self.usage.append(UsageRecord(key=f"ui:{index}", ts=ts, model=model, usage=usage))
