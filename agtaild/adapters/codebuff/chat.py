"""Codebuff's ``chat-messages.json`` (a JSON array of the CLI's ChatMessage) → events and usage.

A ChatMessage is ``{id, variant: user|ai|agent|error, content, blocks?, timestamp, parentId?,
agent?, credits?, metadata?{bashCwd, runState, model?, usage?, codebuff?{usage}}, userError?}``
(``cli/src/types/chat.ts``). Peer readers also meet ``role`` for ``variant`` and ``createdAt``
for ``timestamp``, so both are read.

* ``user`` → ``text`` (its ``content``, else its text blocks);
* ``ai`` / ``agent`` → its ``blocks`` in order, else its ``content`` as one ``text``:

  - ``text`` → ``text``, or ``thinking`` when ``textType`` is ``reasoning``;
  - ``tool`` (``toolCallId``, ``toolName``, ``input``, ``output``) → ``tool_use`` with its
    result merged (``is_error`` for an ``exitCode`` ≠ 0 or an ``errorMessage`` in the output);
    ``write_file`` / ``str_replace`` (and their ``propose_`` forms) → ``extra.edit``;
  - ``agent`` (a subagent: ``agentId``, ``agentType``, ``initialPrompt``, ``status``, its own
    ``blocks``) → a ``tool_use`` ``spawn_agent`` (result = its ``content``, ``is_error`` when it
    failed or was cancelled), then the subagent's blocks as ``sidechain`` events with
    ``extra.subagent`` = its id (Codebuff nests them inside the parent's message, with no file of
    their own, so they are not sessions of their own);
  - ``ask-user`` → ``tool_use`` ``ask_user`` (result = the answers); ``plan`` → ``text`` with
    ``extra.plan``; ``mode-divider`` / ``gate-state`` / ``agent-list`` → ``system``;
    ``image`` and ``html`` (not persisted) are left out;
* ``error`` and a message's ``userError`` → ``system`` ``error``;
* anything else → ``unknown`` with the raw JSON.

Usage: one record per assistant message that carries token counts (``metadata.usage``, else
``metadata.codebuff.usage``, else the last assistant entry of ``metadata.runState``'s message
history's ``providerOptions``), keyed by the message id; ``credits`` are summed into
``extra.credits`` (Codebuff bills in credits, not tokens).
"""

from __future__ import annotations

import json
from typing import Any

from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import Category, RecordBook
from agtaild.adapters.kit.stamps import any_time, widen
from agtaild.model import Event, Usage, UsageRecord

ASSISTANT = frozenset({"ai", "agent", "assistant"})
WRITE_TOOLS = frozenset({"write_file", "propose_write_file", "create_plan"})
REPLACE_TOOLS = frozenset({"str_replace", "propose_str_replace"})
#: Subagent states that mean it did not finish its work.
FAILED = frozenset({"failed", "cancelled"})
#: How deep subagents may nest before the rest of a block tree is kept raw.
MAX_DEPTH = 32

_INPUT = ("inputTokens", "input_tokens", "promptTokens", "prompt_tokens")
_OUTPUT = ("outputTokens", "output_tokens", "completionTokens", "completion_tokens")
_CACHE_READ = (
    "cacheReadInputTokens",
    "cache_read_input_tokens",
    "cachedTokensCreated",
    "cached_tokens_created",
)
_CACHE_WRITE = (
    "cacheCreationInputTokens",
    "cache_creation_input_tokens",
    "cacheCreationTokens",
    "cache_creation_tokens",
)
_REASONING = ("reasoningTokens", "reasoning_tokens")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pick(doc: dict[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = doc.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return int(value)
    return 0


def usage_of(doc: Any) -> Usage | None:
    """A usage object in any of the casings peer readers meet, in agtail's convention (input
    without the cached part). None when it counts nothing."""
    if not isinstance(doc, dict):
        return None
    inp, out = _pick(doc, _INPUT), _pick(doc, _OUTPUT)
    cache_read, cache_write = _pick(doc, _CACHE_READ), _pick(doc, _CACHE_WRITE)
    details = doc.get("promptTokensDetails") or doc.get("prompt_tokens_details")
    if not cache_read and isinstance(details, dict):
        cached = _pick(details, ("cachedTokens", "cached_tokens"))
        if cached:  # OpenAI's convention: the prompt count includes the cached part
            cache_read, inp = cached, max(inp - cached, 0)
    usage = Usage(input_tokens=inp, output_tokens=out, cache_read_tokens=cache_read,
                  cache_write_tokens=cache_write, reasoning_tokens=_pick(doc, _REASONING)).fix_total()  # fmt: skip
    return None if usage.is_zero() else usage


def _run_state_usage(metadata: dict[str, Any]) -> tuple[Usage | None, str | None]:
    """The last assistant entry of the message's run state that carries usage (or a model)."""
    state = _dict(_dict(_dict(metadata.get("runState")).get("sessionState")).get("mainAgentState"))
    history = state.get("messageHistory")
    if not isinstance(history, list):
        return None, None
    for entry in reversed(history):
        if not isinstance(entry, dict) or entry.get("role") != "assistant":
            continue
        options = _dict(entry.get("providerOptions"))
        codebuff = _dict(options.get("codebuff"))
        usage = usage_of(options.get("usage")) or usage_of(codebuff.get("usage"))
        model = _str(codebuff.get("model"))
        if usage is not None or model:
            return usage, model
    return None, None


def _output_doc(output: Any) -> Any:
    """A tool's output decoded where it is JSON text (a tool result's ``[{type: json, value}]``
    unwrapped to its value)."""
    doc = output
    if isinstance(output, str) and output[:1] in ("{", "["):
        try:
            doc = json.loads(output)
        except (ValueError, RecursionError):
            return None
    if isinstance(doc, list) and len(doc) == 1 and isinstance(doc[0], dict) and doc[0].get("type") == "json":
        doc = doc[0].get("value")
    return doc


def _edit(tool: str | None, args: Any) -> dict[str, Any] | None:
    if not isinstance(args, dict):
        return None
    path = args.get("path") or args.get("file_path")
    if tool in WRITE_TOOLS and isinstance(args.get("content"), str):
        return edits.edit_doc([edits.from_texts(path, "", args["content"], op="create")])
    if tool in REPLACE_TOOLS and isinstance(args.get("replacements"), list):
        changes = [
            edits.from_texts(path, r.get("old"), r.get("new"))
            for r in args["replacements"]
            if isinstance(r, dict)
        ]
        return edits.edit_doc(changes)
    return None


class ChatReader:
    """Walks one chat's messages into a RecordBook (one record per ChatMessage)."""

    def __init__(self, book: RecordBook) -> None:
        self.book = book
        self.credits = 0.0
        self.last_variant: str | None = None
        self.cwd: str | None = None
        self.run_state_cwd: str | None = None

    def read(self, messages: list[Any]) -> None:
        for number, msg in enumerate(messages, 1):
            self.book.count(self._message(msg, {"row": number}))

    def _emit(self, kind: str, source: dict[str, Any], **fields: Any) -> Event:
        return self.book.emit(Event(seq=-1, kind=kind, source=dict(source), **fields))

    def _message(self, msg: Any, source: dict[str, Any]) -> Category:
        if not isinstance(msg, dict):
            self._emit("unknown", source, raw=msg)
            return "events"
        s = self.book.session
        variant = _str(msg.get("variant")) or _str(msg.get("role"))
        ts = any_time(msg.get("timestamp")) or any_time(msg.get("createdAt"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        ids = {"uuid": _str(msg.get("id")), "parent_uuid": _str(msg.get("parentId")), "ts": ts}
        metadata = _dict(msg.get("metadata"))
        if self.cwd is None:
            self.cwd = _str(metadata.get("bashCwd"))
        if self.run_state_cwd is None:
            context = _dict(_dict(_dict(metadata.get("runState")).get("sessionState")).get("fileContext"))
            self.run_state_cwd = _str(context.get("projectRoot")) or _str(context.get("cwd"))
        if variant == "user":
            text = _str(msg.get("content")) or _blocks_text(msg.get("blocks"))
            self._emit("text", source, role="user", text=text, **ids)
            s.messages += 1
            if s.first_prompt is None and text and text.strip():
                s.first_prompt = text
        elif variant in ASSISTANT:
            model = _str(metadata.get("model"))
            usage, hinted = self._usage(msg, metadata, ts, model)
            model = model or hinted
            if model and model not in s.models:
                s.models.append(model)
            blocks = msg.get("blocks")
            if isinstance(blocks, list) and blocks:
                first = self._blocks(blocks, source, ids, model, subagent=None, depth=0)
            else:
                first = self._emit(
                    "text", source, role="assistant", text=_str(msg.get("content")), model=model, **ids
                )
            if first is not None and usage is not None:
                first.usage = usage
            if isinstance(msg.get("agent"), dict):
                source_agent = msg["agent"]
                if first is not None:
                    first.extra["agent"] = {
                        k: source_agent[k] for k in ("agentName", "agentType") if k in source_agent
                    }
            s.messages += 1
        elif variant == "error":
            self._emit("system", source, role="assistant", text=_str(msg.get("content")), subtype="error",
                       is_error=True, **ids)  # fmt: skip
        else:
            self._emit("unknown", source, raw=msg, **ids)
            return "events"
        error = _str(msg.get("userError"))
        if error:
            self._emit("system", source, role="assistant", text=error, subtype="error", is_error=True, ts=ts)
        self.last_variant = "error" if (variant == "error" or error) else variant
        return "events"

    def _usage(self, msg: dict[str, Any], metadata: dict[str, Any], ts: str | None,
               model: str | None) -> tuple[Usage | None, str | None]:  # fmt: skip
        credits = msg.get("credits")
        if isinstance(credits, int | float) and not isinstance(credits, bool) and credits > 0:
            self.credits += float(credits)
        hinted = None
        usage = None
        for doc in (metadata.get("usage"), _dict(metadata.get("codebuff")).get("usage")):
            usage = usage_of(doc)
            if usage is not None:
                hinted = _str(_dict(doc).get("model"))
                break
        if usage is None:
            usage, hinted = _run_state_usage(metadata)
        key = _str(msg.get("id"))
        if usage is not None:
            key = key or f"row-{self.book.next_seq}"
            self.book.add_usage(UsageRecord(key=key, ts=ts, model=model or hinted, usage=usage))
        return usage, hinted

    def _blocks(self, blocks: list[Any], source: dict[str, Any], ids: dict[str, Any], model: str | None,
                *, subagent: str | None, depth: int) -> Event | None:  # fmt: skip
        """Emit a message's (or a subagent's) blocks; the first event emitted."""
        first: Event | None = None
        side: dict[str, Any] = {"sidechain": True, "extra": {"subagent": subagent}} if subagent else {}
        prefix = source.get("block")
        for index, block in enumerate(blocks):
            here = {**source, "block": f"{prefix}.{index}" if prefix is not None else str(index)}
            ev = self._block(block, here, ids, model, side, depth)
            if first is None and ev is not None:
                first = ev
        return first

    def _block(self, block: Any, source: dict[str, Any], ids: dict[str, Any], model: str | None,
               side: dict[str, Any], depth: int) -> Event | None:  # fmt: skip
        sub = {**ids, **{k: v for k, v in side.items() if k != "extra"}}
        extra = dict(side.get("extra") or {})
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = _str(block.get("content"))
            if text is None:
                return None
            thinking = block.get("textType") == "reasoning"
            return self._emit("thinking" if thinking else "text", source, role="assistant", text=text, model=model,
                              extra=extra, **sub)  # fmt: skip
        if kind == "tool":
            assert isinstance(block, dict)
            return self._tool(block, source, sub, extra, model)
        if kind == "agent":
            assert isinstance(block, dict)
            return self._agent(block, source, ids, sub, extra, model, depth)
        if kind == "ask-user":
            assert isinstance(block, dict)
            return self._emit("tool_use", source, role="assistant", tool="ask_user", input=block.get("questions"),
                              result=block.get("answers"), is_error=bool(block.get("skipped")),
                              tool_use_id=_str(block.get("toolCallId")), model=model, extra=extra, **sub)  # fmt: skip
        if kind == "plan":
            assert isinstance(block, dict)
            extra["plan"] = block.get("metadata") if isinstance(block.get("metadata"), dict) else True
            return self._emit("text", source, role="assistant", text=_str(block.get("content")), model=model,
                              extra=extra, **sub)  # fmt: skip
        if kind in ("mode-divider", "gate-state", "agent-list"):
            assert isinstance(block, dict)
            text = _str(block.get("mode")) or _str(block.get("details")) or _str(block.get("gate"))
            extra.update({k: v for k, v in block.items() if k not in ("type", "agents")})
            return self._emit(
                "system", source, role="assistant", text=text, subtype=str(kind), extra=extra, **sub
            )
        if kind in ("image", "html"):
            return None
        return self._emit("unknown", source, raw=block, extra=extra, **sub)

    def _tool(self, block: dict[str, Any], source: dict[str, Any], sub: dict[str, Any], extra: dict[str, Any],
              model: str | None) -> Event:  # fmt: skip
        tool = _str(block.get("toolName"))
        args = block.get("input")
        output = block.get("output")
        result = output if output is not None else block.get("outputRaw")
        ev = self._emit("tool_use", source, role="assistant", tool=tool, input=args, result=result,
                        tool_use_id=_str(block.get("toolCallId")), model=model, extra=extra, **sub)  # fmt: skip
        doc = _output_doc(output) if output is not None else _output_doc(block.get("outputRaw"))
        if isinstance(doc, dict):
            code = doc.get("exitCode")
            if isinstance(code, int) and not isinstance(code, bool):
                ev.extra["exit_code"] = code
            ev.is_error = (isinstance(code, int) and code != 0) or bool(
                doc.get("errorMessage") or doc.get("error")
            )
        elif result is not None:
            ev.is_error = False
        edit = _edit(tool, args)
        if edit is not None:
            ev.extra["edit"] = edit
        return ev

    def _agent(self, block: dict[str, Any], source: dict[str, Any], ids: dict[str, Any], sub: dict[str, Any],
               extra: dict[str, Any], model: str | None, depth: int) -> Event:  # fmt: skip
        agent_id = _str(block.get("agentId"))
        status = _str(block.get("status"))
        extra = {**extra, "subagent": agent_id, "agent": {"name": block.get("agentName"), "type": block.get("agentType"),
                 "status": status}}  # fmt: skip
        spawn = {
            "agent_type": block.get("agentType"),
            "prompt": block.get("initialPrompt"),
            "params": block.get("params"),
        }
        ev = self._emit("tool_use", source, role="assistant", tool="spawn_agent", input=spawn,
                        result=_str(block.get("content")), is_error=status in FAILED,
                        tool_use_id=_str(block.get("spawnToolCallId")) or agent_id, model=model, extra=extra, **sub)  # fmt: skip
        inner = block.get("blocks")
        if isinstance(inner, list) and inner and agent_id:
            if depth >= MAX_DEPTH:
                ev.extra["blocks"] = inner
            else:
                self._blocks(inner, source, ids, None, subagent=agent_id, depth=depth + 1)
        return ev


def _blocks_text(blocks: Any) -> str | None:
    if not isinstance(blocks, list):
        return None
    parts = [
        b["content"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("content"), str)
    ]
    return "\n".join(parts) if parts else None
