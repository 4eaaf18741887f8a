"""Auggie's ``chatHistory`` items → agtail events (one item = one accounting record).

An item is ``{exchange, completed, sequenceId, finishedAt, isHistorySummary, changedFiles, …}``;
the exchange ``{request_message, request_id, model_id, request_nodes[], response_nodes[],
response_text}`` (bundle ``augment.mjs`` 0.36.0). Node types, as the bundle tests them:

* request: ``0`` text (``text_node.content``), ``1`` tool result (``tool_result_node{tool_use_id,
  content, is_error, content_nodes?}``), ``2`` image, ``4`` IDE state (``ide_state_node
  {workspace_folders[{repository_root, folder_root}], current_terminal
  {current_working_directory}}``), ``10`` history summary (``history_summary_node
  {summary_text, …}``: the conversation was compacted);
* response: ``0`` text (``content``; streamed, so consecutive nodes are one text), ``5`` tool use
  (``tool_use{tool_use_id, tool_name, input_json}``), ``8`` thinking (``thinking{content |
  summary}``), ``9`` billing (credits), ``10`` token usage (``token_usage{input_tokens,
  output_tokens, cache_read_input_tokens, cache_creation_input_tokens, …}``).

A tool's result comes in a *later* exchange's request nodes (the one that sends it back to the
model) and is merged into its call. Usage: the ``token_usage`` nodes of one exchange, summed as
Auggie's own ``session stats`` sums them, are one usage record keyed by the exchange's
``request_id``. ``input_tokens`` excludes the cached part (Auggie adds the three for the context).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.adapters.kit.values import num, sub
from agtaild.model import Event, Usage, UsageRecord

REQ_TEXT, REQ_TOOL_RESULT, REQ_IMAGE, REQ_IDE_STATE, REQ_SUMMARY = 0, 1, 2, 4, 10
RESP_TEXT, RESP_TOOL_USE, RESP_THINKING, RESP_BILLING, RESP_USAGE = 0, 5, 8, 9, 10
#: launch-process's result: "Here are the results from executing the command.\n<return-code>\nN\n…".
_RETURN_CODE = re.compile(r"<return-code>\s*(-?\d+)\s*</return-code>")
_decoder = msgspec.json.Decoder()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _nodes(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _input(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return _decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return raw


def edit_of(tool: str | None, args: Any) -> dict[str, Any] | None:
    """``str-replace-editor`` (``str_replace_entries[]``, numbered ``old_str_N``/``new_str_N``, or
    plain ``old_str``/``new_str``) and ``save-file`` (``path``, ``file_content``)."""
    if not isinstance(args, dict):
        return None
    path = args.get("path")
    if tool == "save-file":
        return edits.edit_doc([edits.from_texts(path, "", args.get("file_content"), op="create")])
    if tool != "str-replace-editor" or args.get("command") != "str_replace":
        return None
    pairs: list[tuple[Any, Any, Any]] = []
    entries = args.get("str_replace_entries")
    if isinstance(entries, list):
        for one in entries:
            if isinstance(one, dict):
                pairs.append((one.get("old_str"), one.get("new_str"), one.get("old_str_start_line_number")))
    n = 1
    while f"old_str_{n}" in args:
        pairs.append(
            (args.get(f"old_str_{n}"), args.get(f"new_str_{n}"), args.get(f"old_str_start_line_number_{n}"))
        )
        n += 1
    if not pairs and "old_str" in args:
        pairs.append((args.get("old_str"), args.get("new_str"), args.get("old_str_start_line_number")))
    hunks: list[dict[str, Any]] = []
    numbered = bool(pairs)
    for old, new, start in pairs:
        line = start if isinstance(start, int) and not isinstance(start, bool) and start > 0 else None
        numbered = numbered and line is not None
        change = edits.from_texts(path, old, new, start=line)
        hunks += change["hunks"] if change else []
    return edits.edit_doc([edits.file_change(path, hunks, numbered=numbered)]) if hunks else None


def usage_of(nodes: list[Any]) -> Usage | None:
    total = Usage()
    for node in nodes:
        if (
            isinstance(node, dict)
            and node.get("type") == RESP_USAGE
            and isinstance(node.get("token_usage"), dict)
        ):
            tu = node["token_usage"]
            total.add(Usage(
                input_tokens=num(tu, "input_tokens"), output_tokens=num(tu, "output_tokens"),
                cache_read_tokens=num(tu, "cache_read_input_tokens"),
                cache_write_tokens=num(tu, "cache_creation_input_tokens"),
            ))  # fmt: skip
    total.fix_total()
    return None if total.is_zero() else total


def workspace_of(nodes: list[Any]) -> str | None:
    """The first workspace folder an IDE-state node names, else its terminal's directory."""
    for node in nodes:
        state = (
            node.get("ide_state_node")
            if isinstance(node, dict) and node.get("type") == REQ_IDE_STATE
            else None
        )
        if not isinstance(state, dict):
            continue
        for folder in _nodes(state.get("workspace_folders")):
            if isinstance(folder, dict):
                found = _str(folder.get("folder_root")) or _str(folder.get("repository_root"))
                if found:
                    return found
        terminal = state.get("current_terminal")
        if isinstance(terminal, dict) and _str(terminal.get("current_working_directory")):
            return str(terminal["current_working_directory"])
    return None


class ExchangeMapper:
    """Walks one conversation's chatHistory items in order; summary fields fill as it goes."""

    def __init__(self, book: RecordBook, default_model: str | None) -> None:
        self.book = book
        self.default_model = default_model
        self.models: list[str] = []
        self.messages = 0
        self.first_prompt: str | None = None
        self.compactions = 0
        self.cwd: str | None = None
        self.earliest: str | None = None
        self.latest: str | None = None
        self.last_completed: bool | None = None
        #: tool_use_id → its call, for the results later exchanges send back.
        self.calls: dict[str, Event] = {}
        #: request_id → the tool calls that exchange made (a subagent's spawning call).
        self.calls_by_request: dict[str, list[Event]] = {}

    def _emit(self, ev: Event, row: int) -> Event:
        ev.source = {"row": row}
        return self.book.emit(ev)

    def item(self, item: Any, row: int) -> Category:
        exchange = item.get("exchange") if isinstance(item, dict) else None
        if not isinstance(exchange, dict):
            self._emit(Event(seq=-1, kind="unknown", raw=item), row)
            return "events"
        ts = norm_iso(item.get("finishedAt"))
        if ts and (self.latest is None or ts > self.latest):
            self.latest = ts
        if ts and (self.earliest is None or ts < self.earliest):
            self.earliest = ts
        self.last_completed = item.get("completed") is not False
        model = _str(exchange.get("model_id")) or self.default_model
        request_id = _str(exchange.get("request_id"))
        before = self.book.next_seq
        merged = self._request(exchange, item, row, ts)
        self._response(exchange, row, ts, model, request_id)
        if self.book.next_seq > before:
            return "events"
        return "merged" if merged else "skipped"

    # -- the request: the user's prompt, tool results, IDE state, a compaction --------------
    def _request(self, exchange: dict[str, Any], item: dict[str, Any], row: int, ts: str | None) -> bool:
        nodes = _nodes(exchange.get("request_nodes"))
        if self.cwd is None:
            self.cwd = workspace_of(nodes)
        merged = False
        texts: list[str] = []
        for node in nodes:
            if not isinstance(node, dict):
                continue
            kind = node.get("type")
            if kind == REQ_TOOL_RESULT and isinstance(node.get("tool_result_node"), dict):
                merged = self._result(node["tool_result_node"], row, ts) or merged
            elif kind == REQ_SUMMARY and isinstance(node.get("history_summary_node"), dict):
                summary = node["history_summary_node"]
                self.compactions += 1
                self._emit(Event(seq=-1, kind="summary", ts=ts, role="system", subtype="history_summary",
                                 text=_str(summary.get("summary_text")),
                                 extra={"dropped": summary.get("history_beginning_dropped_num_exchanges")}), row)  # fmt: skip
            elif kind == REQ_TEXT and isinstance(node.get("text_node"), dict):
                content = node["text_node"].get("content")
                if isinstance(content, str) and content.strip():
                    texts.append(content)
        prompt = _str(exchange.get("request_message")) or ("".join(texts) or None)
        if prompt is None:
            return merged
        if item.get("isHistorySummary") is True:
            self.compactions += 1
            self._emit(
                Event(seq=-1, kind="summary", ts=ts, role="system", subtype="history_summary", text=prompt),
                row,
            )
            return merged
        self._emit(
            Event(
                seq=-1, kind="text", ts=ts, role="user", text=prompt, uuid=_str(exchange.get("request_id"))
            ),
            row,
        )
        self.messages += 1
        if self.first_prompt is None:
            self.first_prompt = prompt
        return merged

    def _result(self, node: dict[str, Any], row: int, ts: str | None) -> bool:
        call_id = _str(node.get("tool_use_id"))
        content = node.get("content")
        extra: dict[str, Any] = {}
        if isinstance(content, str) and "<return-code>" in content:
            found = _RETURN_CODE.search(content)
            if found:
                extra["exit_code"] = int(found.group(1))
        images = [
            n for n in _nodes(node.get("content_nodes")) if isinstance(n, dict) and n.get("type") == REQ_IMAGE
        ]
        if images:
            extra["images"] = len(images)
        call = self.calls.get(call_id) if call_id else None
        if call is None:
            self._emit(Event(seq=-1, kind="tool_result", ts=ts, role="tool", result=content,
                             is_error=node.get("is_error") is True, tool_use_id=call_id, extra=extra), row)  # fmt: skip
            return False
        call.result = content
        call.is_error = node.get("is_error") is True or extra.get("exit_code", 0) != 0
        call.extra.update(extra)
        if ts:
            call.extra["result_ts"] = ts
        self.book.emit(call)
        return True

    # -- the response: thinking, text, tool calls, usage ---------------------------------------
    def _response(
        self, exchange: dict[str, Any], row: int, ts: str | None, model: str | None, request_id: str | None
    ) -> None:
        nodes = _nodes(exchange.get("response_nodes"))
        usage = usage_of(nodes)
        out: list[Event] = []
        run: list[str] = []  # consecutive streamed text nodes
        run_kind: int | None = None

        def flush() -> None:
            nonlocal run_kind
            if run and "".join(run).strip():
                kind = "thinking" if run_kind == RESP_THINKING else "text"
                out.append(Event(seq=-1, kind=kind, ts=ts, role="assistant", text="".join(run), model=model))
            run.clear()
            run_kind = None

        for node in nodes:
            if not isinstance(node, dict):
                flush()
                out.append(Event(seq=-1, kind="unknown", ts=ts, raw=node))
                continue
            kind = node.get("type", RESP_TEXT)
            if kind == RESP_TEXT:
                if run_kind == RESP_THINKING:
                    flush()
                run_kind = RESP_TEXT
                content = node.get("content")
                run.append(content if isinstance(content, str) else "")
            elif kind == RESP_THINKING:
                thinking = sub(node, "thinking")
                text = (
                    _str(thinking.get("content"))
                    or _str(thinking.get("summary"))
                    or _str(node.get("content"))
                    or ""
                )
                if run_kind == RESP_TEXT:
                    flush()
                run_kind = RESP_THINKING
                run.append(text)
            elif kind == RESP_TOOL_USE and isinstance(node.get("tool_use"), dict):
                flush()
                out.append(self._call(node["tool_use"], ts, model, request_id))
            elif kind in (RESP_BILLING, RESP_USAGE):
                continue
            else:
                flush()
                out.append(Event(seq=-1, kind="unknown", ts=ts, raw=node))
        flush()
        if not out and not nodes and _str(exchange.get("response_text")):
            out.append(
                Event(
                    seq=-1, kind="text", ts=ts, role="assistant", text=exchange["response_text"], model=model
                )
            )
        if usage is not None:
            if not out:
                out.append(Event(seq=-1, kind="text", ts=ts, role="assistant", text="", model=model))
            primary = next((e for e in out if e.kind == "text"), out[0])
            primary.usage = usage
            key = request_id or f"exchange:{row}"
            self.book.add_usage(UsageRecord(key=key, ts=ts, model=model, usage=usage))
        if any(e.kind in ("text", "thinking", "tool_use") for e in out):
            self.messages += 1
            if model and model not in self.models:
                self.models.append(model)
        for ev in out:
            self._emit(ev, row)

    def _call(
        self, tool_use: dict[str, Any], ts: str | None, model: str | None, request_id: str | None
    ) -> Event:
        name = _str(tool_use.get("tool_name"))
        args = _input(tool_use.get("input_json"))
        call_id = _str(tool_use.get("tool_use_id"))
        ev = Event(
            seq=-1,
            kind="tool_use",
            ts=ts,
            role="assistant",
            tool=name,
            input=args,
            model=model,
            tool_use_id=call_id,
        )
        if _str(tool_use.get("mcp_server_name")):
            ev.extra["mcp_server"] = tool_use["mcp_server_name"]
        edit = edit_of(name, args)
        if edit is not None:
            ev.extra["edit"] = edit
        if call_id:
            self.calls[call_id] = ev
        if request_id:
            self.calls_by_request.setdefault(request_id, []).append(ev)
        return ev

    @property
    def open_calls(self) -> bool:
        return any(ev.result is None for ev in self.calls.values())
