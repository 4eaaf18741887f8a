"""Cline's ``api_conversation_history.json``: the conversation as the model saw it.

An array of Anthropic ``MessageParam``s plus Cline's fields (``ts``, ``modelInfo``,
``metrics``; Roo/Kilo add ``isSummary``, ``condenseParent``, ``type:"reasoning"`` …). Tool
calls come two ways: native ``tool_use``/``tool_result`` blocks, or XML blocks in the
assistant text answered by ``[tool for 'x'] Result:`` user text (:mod:`xml`). Both end
up as one ``tool_use`` event with its result merged in.

Each array element is one accounting record: "events" when it made an event, "merged" when
all it held was results merged into earlier calls, "skipped" when it held only text Cline
injects for the model (environment details, task-progress reminders).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.cline import xml
from agtaild.adapters.cline.common import block_text, is_injected, unwrap, usage_from
from agtaild.adapters.kit.stamps import from_epoch_ms
from agtaild.adapters.kit.values import num
from agtaild.model import Event, UsageRecord

_decoder = msgspec.json.Decoder()
#: Cline: "# Current Working Directory (/path) Files"; Roo and Kilo: "# Current Workspace Directory".
_CWD_LINE = re.compile(r"^# Current (?:Working|Workspace) Directory \((.+?)\) Files", re.M)
INTERRUPTED_MARK = "[Response interrupted by user]"


def result_failed(content: Any) -> bool:
    """The SDK's tool results: ``[{query, result, success, error?}]`` or one such object as a
    JSON string. Failed when any part says ``success: false`` or carries an error."""
    if isinstance(content, str) and content.startswith("{"):
        try:
            content = _decoder.decode(content)
        except msgspec.DecodeError:
            return False
    parts = content if isinstance(content, list) else [content]
    return any(isinstance(p, dict) and (p.get("success") is False or bool(p.get("error"))) for p in parts)


class Timed:
    """An event with the epoch-ms time it sorts by (API and UI records are interleaved)."""

    __slots__ = ("event", "ms", "order")

    def __init__(self, event: Event, ms: float, order: int) -> None:
        self.event, self.ms, self.order = event, ms, order


class HistoryWalk:
    """Turns the API history into events; keeps what the session summary needs."""

    def __init__(self) -> None:
        self.out: list[Timed] = []
        self.pending: dict[str, Event] = {}
        #: XML calls waiting for their ``[tool …] Result:`` text, oldest first.
        self.open_xml: list[Event] = []
        self.models: list[str] = []
        self.providers: list[str] = []
        self.first_prompt: str | None = None
        self.messages = 0
        self.compactions = 0
        self.interrupted = False
        self.error = False
        self.last_ms = 0.0
        self.cwd: str | None = None
        #: Usage from the messages' own ``metrics`` (used when the UI file has none).
        self.metric_usage: list[UsageRecord] = []

    def _add(self, ev: Event, ms: float) -> Event:
        self.out.append(Timed(ev, ms, len(self.out)))
        return ev

    def message(self, index: int, msg: Any) -> str:
        """One array element; returns its accounting category."""
        if not isinstance(msg, dict):
            return "bad"
        ts_raw = msg.get("ts")
        if type(ts_raw) is int or type(ts_raw) is float:
            ms = float(ts_raw)
            ts = from_epoch_ms(ts_raw) if ms else None
            if ms > self.last_ms:
                self.last_ms = ms
        else:
            ms = self.last_ms
            ts = None
        source = {"row": index}
        info = msg.get("modelInfo")
        model = provider = None
        if type(info) is dict:
            model = info.get("modelId") or info.get("id")
            provider = info.get("providerId") or info.get("provider")
            model = model if type(model) is str else None
            provider = provider if type(provider) is str else None
            if model and model not in self.models:
                self.models.append(model)
            if provider and provider not in self.providers:
                self.providers.append(provider)
        if msg.get("role") == "assistant" and "metrics" in msg:
            self._metrics(index, msg["metrics"], ts, model, provider)
        made_before = len(self.out)
        merged = 0
        extra: dict[str, Any] = {}
        if ("condenseParent" in msg or "truncationParent" in msg) and (
            msg.get("condenseParent") or msg.get("truncationParent")
        ):
            extra["hidden_by_condense"] = True
        if msg.get("type") == "reasoning":  # Roo: a stored reasoning item
            summary = msg.get("summary")
            text = block_text(summary) if summary else block_text(msg.get("text") or msg.get("content"))
            self._add(Event(seq=-1, kind="thinking", ts=ts, role="assistant", text=text, source=source), ms)
            return "events"
        role = msg.get("role")
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or role not in ("user", "assistant"):
            self._add(Event(seq=-1, kind="unknown", ts=ts, raw=msg, source=source), ms)
            return "events"
        meta = msg.get("metadata")
        if type(meta) is dict and meta.get("displayRole") == "error":  # Cline SDK: an error shown in the chat
            self.error = True
            self._add(Event(seq=-1, kind="system", ts=ts, role="system", text=block_text(blocks), is_error=True,
                            subtype="error", model=model, source=source), ms)
            return "events"
        if msg.get("isSummary"):
            self.compactions += 1
            self._add(
                Event(seq=-1, kind="summary", ts=ts, role=role, text=block_text(blocks), source=source, extra=extra),
                ms,
            )
            return "events"
        said = False
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                if role == "assistant":
                    said |= self._assistant_text(block["text"], ts, ms, model, source, extra)
                else:
                    got = self._user_text(block["text"], ts, ms, source, extra)
                    merged += got == "merged"
                    said |= got == "events"
            elif kind in ("thinking", "redacted_thinking", "reasoning"):
                text = block.get("thinking") or block.get("text") or block_text(block.get("summary"))
                self._add(
                    Event(seq=-1, kind="thinking", ts=ts, role="assistant", text=str(text or ""), model=model,
                          source=source, extra={"redacted": True} if kind == "redacted_thinking" else {}),
                    ms,
                )
            elif kind == "tool_use":
                call_id = block.get("id") if isinstance(block.get("id"), str) else None
                ev = self._add(
                    Event(seq=-1, kind="tool_use", ts=ts, role="assistant", tool=str(block.get("name") or ""),
                          input=block.get("input"), model=model, tool_use_id=call_id, source=source),
                    ms,
                )
                if call_id:
                    self.pending[call_id] = ev
            elif kind == "tool_result":
                call = self.pending.pop(str(block.get("tool_use_id")), None)
                result = block_text(block.get("content"))
                failed = bool(block.get("is_error")) or result_failed(block.get("content"))
                if call is not None:
                    call.result = result
                    call.is_error = failed
                    merged += 1
                else:
                    self._add(
                        Event(seq=-1, kind="tool_result", ts=ts, role="user", result=result,
                              is_error=failed, tool_use_id=str(block.get("tool_use_id")),
                              source=source),
                        ms,
                    )
            elif kind in ("image", "document", "file"):
                continue  # attachments: not indexed
            else:
                self._add(Event(seq=-1, kind="unknown", ts=ts, role=role, raw=block, source=source), ms)
        if said:
            self.messages += 1
        if len(self.out) > made_before:
            return "events"
        return "merged" if merged else "skipped"

    def _metrics(self, index: int, metrics: Any, ts: str | None, model: str | None, provider: str | None) -> None:
        if not isinstance(metrics, dict):
            return
        tokens = metrics.get("tokens")
        if isinstance(tokens, dict):  # the extension / CLI 2.x: {tokens: {prompt, completion, cached}}
            usage = usage_from(num(tokens, "prompt"), num(tokens, "completion"), num(tokens, "cached"),
                               num(tokens, "cacheWrites"), provider)
        elif any(k in metrics for k in ("inputTokens", "outputTokens")):  # the SDK
            usage = usage_from(num(metrics, "inputTokens"), num(metrics, "outputTokens"),
                               num(metrics, "cacheReadTokens"), num(metrics, "cacheWriteTokens"), provider)
        else:
            return
        self.metric_usage.append(UsageRecord(key=f"api:{index}", ts=ts, model=model, usage=usage))

    def _assistant_text(
        self, text: str, ts: str | None, ms: float, model: str | None, source: dict[str, Any], extra: dict[str, Any]
    ) -> bool:
        if text.rstrip().endswith(INTERRUPTED_MARK):
            self.interrupted = True
        said = False
        for piece, value in xml.split_text(text):
            if piece == "thinking":
                self._add(Event(seq=-1, kind="thinking", ts=ts, role="assistant", text=value, model=model,
                                source=source), ms)
            elif piece == "text":
                self._add(Event(seq=-1, kind="text", ts=ts, role="assistant", text=value, model=model,
                                source=source, extra=dict(extra)), ms)
                said = True
            else:
                name, params = value
                if name == "attempt_completion" or name.endswith("_respond"):
                    answer = params.get("result") or params.get("response") or params.get("text") or ""
                    self._add(Event(seq=-1, kind="text", ts=ts, role="assistant", text=answer.strip(), model=model,
                                    subtype=name, source=source, extra=dict(extra)), ms)
                    said = True
                    continue
                ev = self._add(Event(seq=-1, kind="tool_use", ts=ts, role="assistant", tool=name, input=params,
                                     model=model, source=source), ms)
                self.open_xml.append(ev)
        return said

    def _user_text(self, text: str, ts: str | None, ms: float, source: dict[str, Any], extra: dict[str, Any]) -> str:
        if is_injected(text):
            if self.cwd is None:
                line = _CWD_LINE.search(text)
                self.cwd = line.group(1) if line else None
            return "skipped"
        found = xml.tool_result(text)
        if found is not None:
            name, body, failed = found
            call = next((c for c in self.open_xml if c.tool == name), None)
            if call is None and self.open_xml:
                call = self.open_xml[0]
            if call is not None:
                self.open_xml.remove(call)
                call.result = body
                call.is_error = failed
                return "merged"
            self._add(Event(seq=-1, kind="tool_result", ts=ts, role="user", tool=name, result=body,
                            is_error=failed, source=source), ms)
            return "events"
        # The body of a result given in a block of its own after the header (older Cline).
        last_call = self._last_result_waiting_body()
        if last_call is not None:
            last_call.result = (last_call.result or "") + text
            return "merged"
        words = unwrap(text)
        if not words.strip():
            return "skipped"
        self.first_prompt = self.first_prompt or words
        self._add(Event(seq=-1, kind="text", ts=ts, role="user", text=words, source=source, extra=dict(extra)), ms)
        return "events"

    def _last_result_waiting_body(self) -> Event | None:
        """The call whose result header came with an empty body in the block just before."""
        for timed in reversed(self.out):
            ev = timed.event
            if ev.kind == "tool_use" and ev.tool_use_id is None:
                return ev if ev.result == "" else None
            if ev.kind != "tool_use":
                return None
        return None
