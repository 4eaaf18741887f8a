"""The id/parentId tree parser shared by Pi (pi-mono) and Oh My Pi.

A Pi session file is an append-only tree: every entry carries ``id`` and ``parentId`` and is
appended as a child of the current *leaf*; ``/tree`` moves the leaf back, so abandoned
branches stay in the file. Every entry becomes at least one event (uuid = entry id,
parent_uuid = parentId), on every branch. The active branch is the path from the last entry
back to the root; its events carry ``extra["branch"] == "active"``, the others ``"inactive"``.

Marks are set when an event is emitted (a new entry is always the leaf, so it is active then)
and corrected at the end of a read for the entries seen in that read. A later read that moves
the leaf somewhere other than the previous last entry would flip marks of events stored by
earlier reads, which an upsert-only reader cannot reach — so the parser reports it
(:data:`REREAD`) and the adapter reads the file again from the start. That happens only after
``/tree`` navigation; plain appends extend the active path and never invalidate a mark.

v1 files (no ids, written before pi 0.x migrated them) are linear: their events have no
uuid and are all on the active branch.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import from_epoch, norm_iso, widen
from agtaild.adapters.kit.tool_edits import pi_edit
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.adapters.pi.content import (
    SYSTEM_ENTRY_TEXT,
    EntryContext,
    content_text,
    int_or_zero,
    is_slash_command,
    new_session,
    session_id_from_ref,
    str_or_none,
)
from agtaild.model import Event, ParentRef, Usage, UsageRecord, project_of

#: Tool calls still waiting for a result that the state keeps (the oldest are dropped).
MAX_PENDING = 500
#: Key the parser sets in ``session.extra`` when the read must be redone from the start.
REREAD = "_pi_reread"

#: stopReason → Session.ending
_ENDINGS = {"aborted": "interrupted", "length": "limit", "error": "error"}
#: Entry keys that are envelope, not payload (left out of ``extra`` for system entries).
_ENVELOPE = frozenset({"type", "id", "parentId", "timestamp"})


class PiState(ParserState):
    version: int | None = None
    leaf: str | None = None
    #: toolCall id → its tool_use event, until the toolResult arrives (maybe in a later read).
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    #: The latest explicit name (session_info, omp title/title_change), in file order.
    named_title: str | None = None
    title_prompt: str | None = None
    last_stop: str | None = None
    exit_kind: str | None = None
    recorded_cost: float = 0.0


class PiTreeParser(LineParser[PiState]):
    State = PiState

    def __init__(self, adapter: Any, unit: Any, state: PiState | None) -> None:
        super().__init__(adapter, unit, state)
        self.continuing = state is not None
        self.parents: dict[str, str | None] = {}
        self.branch_moved = False

    def new_state(self) -> PiState:
        return PiState(session=new_session(self.adapter.id, self.unit.path))

    # -- entry dispatch -----------------------------------------------------------------
    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            self.emit(Event(seq=-1, kind="unknown", source={"line": line}, raw=obj))
            return "events"
        kind = obj.get("type") if isinstance(obj.get("type"), str) else None
        if kind == "session" and "parentId" not in obj:
            self._header(obj)
            return "metadata"
        if kind == "title" and "id" not in obj:
            self._title_slot(obj)
            return "metadata"
        eid = obj.get("id") if isinstance(obj.get("id"), str) else None
        pid = obj.get("parentId") if isinstance(obj.get("parentId"), str) else None
        if eid is not None:
            self._place(eid, pid)
        ts = norm_iso(obj.get("timestamp"))
        s = self.st.session
        s.started, s.ended = widen(s.started, s.ended, ts)
        ctx = EntryContext(line=line, ts=ts, uuid=eid, parent=pid)
        if kind == "message":
            msg = obj.get("message")
            if isinstance(msg, dict):
                if ts is None:
                    ctx.ts = from_epoch(msg.get("timestamp"), unit="ms")
                    s.started, s.ended = widen(s.started, s.ended, ctx.ts)
                return self._message(msg, obj, ctx)
        elif kind in SYSTEM_ENTRY_TEXT:
            return self._system_entry(kind, obj, ctx)
        self._event(ctx, "unknown", raw=obj)
        return "events"

    def _place(self, eid: str, pid: str | None) -> None:
        """Track the tree: a new entry whose parent is not the previous leaf moves the branch."""
        st = self.st
        if pid != st.leaf and not (st.leaf is None and pid is None):
            self.branch_moved = True
        self.parents[eid] = pid
        st.leaf = eid

    def _event(self, ctx: EntryContext, kind: str, **fields: Any) -> Event:
        extra = fields.pop("extra", {})
        extra.setdefault("branch", "active")
        ev = Event(
            seq=-1,
            kind=kind,
            ts=ctx.ts,
            uuid=ctx.uuid,
            parent_uuid=ctx.parent,
            source={"line": ctx.line},
            extra=extra,
            **fields,
        )
        return self.emit(ev)

    # -- header and title lines -----------------------------------------------------------
    def _header(self, obj: dict[str, Any]) -> None:
        st = self.st
        s = st.session
        version = obj.get("version")
        st.version = version if isinstance(version, int) else 1
        if isinstance(obj.get("id"), str):
            s.id = obj["id"]
        if isinstance(obj.get("cwd"), str) and obj["cwd"]:
            s.cwd = obj["cwd"]
            s.project = project_of(s.cwd)
        ts = norm_iso(obj.get("timestamp"))
        s.started, s.ended = widen(s.started, s.ended, ts)
        s.version = str(st.version)
        parent = obj.get("parentSession") or obj.get("branchedFrom")
        if isinstance(parent, str) and parent:
            s.forked_from = ParentRef(agent=self.adapter.id, id=session_id_from_ref(parent))
            s.extra["parent_session"] = parent
        if isinstance(obj.get("title"), str) and obj["title"]:
            st.named_title = obj["title"]
        for key in ("titleSource", "additionalDirectories", "leafId"):
            if key in obj:
                s.extra[key] = obj[key]

    def _title_slot(self, obj: dict[str, Any]) -> None:
        title = obj.get("title")
        if isinstance(title, str) and title.strip():
            self.st.named_title = title.strip()

    # -- message entries -------------------------------------------------------------------
    def _message(self, msg: dict[str, Any], entry: dict[str, Any], ctx: EntryContext) -> Category:
        role = msg.get("role")
        if role == "user":
            return self._user(msg, ctx)
        if role == "assistant":
            return self._assistant(msg, ctx)
        if role == "toolResult":
            return self._tool_result(msg, ctx)
        if role in ("bashExecution", "pythonExecution"):
            self._execution(role, msg, ctx)
        elif role in ("custom", "hookMessage"):
            text, _ = content_text(msg.get("content"))
            self._event(
                ctx,
                "system",
                role=role,
                text=text,
                subtype="custom_message",
                extra={"customType": msg.get("customType"), "display": msg.get("display")},
            )
        elif role in ("branchSummary", "compactionSummary"):
            self._event(ctx, "summary", role=role, text=str_or_none(msg.get("summary")), subtype=role)
        elif role == "developer":
            text, _ = content_text(msg.get("content"))
            self._event(ctx, "system", role="developer", text=text, subtype="developer")
        elif role == "fileMention":
            raw_files = msg.get("files")
            files: list[Any] = raw_files if isinstance(raw_files, list) else []
            paths = [str(f["path"]) for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]
            self._event(
                ctx,
                "system",
                role="user",
                text="\n".join(paths),
                subtype="file_mention",
                extra={"files": len(files)},
            )
        else:
            self._event(ctx, "unknown", role=role if isinstance(role, str) else None, raw=entry)
        return "events"

    def _user(self, msg: dict[str, Any], ctx: EntryContext) -> Category:
        st = self.st
        text, images = content_text(msg.get("content"))
        extra: dict[str, Any] = {"images": images} if images else {}
        self._event(ctx, "text", role="user", text=text, extra=extra)
        st.session.messages += 1
        if text:
            if st.session.first_prompt is None:
                st.session.first_prompt = text
            if st.title_prompt is None and not is_slash_command(text):
                st.title_prompt = text
        return "events"

    def _assistant(self, msg: dict[str, Any], ctx: EntryContext) -> Category:
        st = self.st
        s = st.session
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        s.messages += 1
        if model and model not in s.models:
            s.models.append(model)
        first: Event | None = None
        content = msg.get("content")
        blocks = content if isinstance(content, list) else []
        if isinstance(content, str) and content:
            first = self._event(ctx, "text", role="assistant", text=content, model=model)
        for block in blocks:
            ev = self._assistant_block(block, ctx, model)
            first = first or ev
        stop = msg.get("stopReason") if isinstance(msg.get("stopReason"), str) else None
        error = msg.get("errorMessage")
        if (isinstance(error, str) and error) or first is None:
            ev = self._event(
                ctx,
                "system",
                role="assistant",
                model=model,
                subtype="error" if error else "empty_response",
                text=error if isinstance(error, str) and error else stop,
                extra={"stopReason": stop},
            )
            first = first or ev
        st.last_stop = stop
        self._record_usage(msg, ctx, model, first)
        return "events"

    def _assistant_block(self, block: Any, ctx: EntryContext, model: str | None) -> Event | None:
        if not isinstance(block, dict):
            return self._event(ctx, "unknown", role="assistant", raw=block)
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                return self._event(ctx, "text", role="assistant", text=text, model=model)
            return None
        if btype == "thinking":
            text = block.get("thinking")
            if isinstance(text, str) and text:
                return self._event(ctx, "thinking", role="assistant", text=text, model=model)
            return None
        if btype == "redactedThinking":
            return self._event(ctx, "thinking", role="assistant", model=model, extra={"redacted": True})
        if btype == "toolCall":
            call_id = block.get("id") if isinstance(block.get("id"), str) else None
            ev = self._event(
                ctx,
                "tool_use",
                role="assistant",
                model=model,
                tool=str_or_none(block.get("name")),
                input=block.get("arguments"),
                tool_use_id=call_id,
            )
            edit = pi_edit(block.get("name"), block.get("arguments"))
            if edit is not None:
                ev.extra["edit"] = edit
            if call_id:
                pending = self.st.pending
                pending[call_id] = ev
                if len(pending) > MAX_PENDING:  # calls that never got a result (aborted turns)
                    del pending[next(iter(pending))]
            return ev
        return self._event(ctx, "unknown", role="assistant", raw=block)

    def _record_usage(
        self, msg: dict[str, Any], ctx: EntryContext, model: str | None, first: Event | None
    ) -> None:
        raw = msg.get("usage")
        if not isinstance(raw, dict):
            return
        usage = Usage(
            input_tokens=int_or_zero(raw.get("input")),
            output_tokens=int_or_zero(raw.get("output")),
            cache_read_tokens=int_or_zero(raw.get("cacheRead")),
            cache_write_tokens=int_or_zero(raw.get("cacheWrite")),
        ).fix_total()
        cost = raw.get("cost")
        total_cost = cost.get("total") if isinstance(cost, dict) else None
        if isinstance(total_cost, int | float) and not isinstance(total_cost, bool):
            self.st.recorded_cost += float(total_cost)
            if first is not None:
                first.extra["recorded_cost_usd"] = float(total_cost)
        if usage.is_zero():
            return
        if first is not None:
            first.usage = usage
        self.st.session.usage.add(usage)
        key = ctx.uuid or f"line:{ctx.line}"
        self.add_usage(UsageRecord(key=key, ts=ctx.ts, model=model, usage=usage))

    def _tool_result(self, msg: dict[str, Any], ctx: EntryContext) -> Category:
        text, images = content_text(msg.get("content"))
        call_id = msg.get("toolCallId") if isinstance(msg.get("toolCallId"), str) else None
        is_error = bool(msg.get("isError"))
        call = self.st.pending.pop(call_id, None) if call_id else None
        if call is not None:
            call.result = text
            call.is_error = is_error
            call.extra["result_uuid"] = ctx.uuid
            if ctx.ts:
                call.extra["result_ts"] = ctx.ts
            if msg.get("details") not in (None, {}):
                call.extra["details"] = msg.get("details")
            if images:
                call.extra["result_images"] = images
            self.emit(call)
            return "merged"
        self._event(
            ctx,
            "tool_result",
            role="tool",
            tool=str_or_none(msg.get("toolName")),
            result=text,
            is_error=is_error,
            tool_use_id=call_id,
            extra={"details": msg["details"]} if msg.get("details") not in (None, {}) else {},
        )
        return "events"

    def _execution(self, role: str, msg: dict[str, Any], ctx: EntryContext) -> None:
        """A user's own ``!cmd`` (bashExecution) or omp python run: a tool use with its result."""
        exit_code = msg.get("exitCode")
        bash = role == "bashExecution"
        self._event(
            ctx,
            "tool_use",
            role="user",
            tool="bash" if bash else "python",
            input={"command": msg.get("command")} if bash else {"code": msg.get("code")},
            result=str_or_none(msg.get("output")),
            is_error=bool(msg.get("cancelled")) or (isinstance(exit_code, int) and exit_code != 0),
            subtype="bash_execution" if bash else "python_execution",
            extra={k: msg[k] for k in ("exitCode", "cancelled", "truncated") if k in msg},
        )

    # -- non-message entries ----------------------------------------------------------------
    def _system_entry(self, kind: str, obj: dict[str, Any], ctx: EntryContext) -> Category:
        st = self.st
        payload = {k: v for k, v in obj.items() if k not in _ENVELOPE}
        text = SYSTEM_ENTRY_TEXT[kind](obj)
        if kind in ("compaction", "branch_summary"):
            if kind == "compaction":
                st.session.compactions += 1
            payload.pop("summary", None)
            self._event(ctx, "summary", text=text, subtype=kind, extra=payload)
            return "events"
        if kind == "custom_message":
            payload.pop("content", None)
        if kind in ("session_info", "title_change") and text:
            st.named_title = text
        if kind == "custom" and obj.get("customType") == "session_exit":
            data = obj.get("data")
            exit_kind = data.get("kind") if isinstance(data, dict) else None
            st.exit_kind = exit_kind if isinstance(exit_kind, str) else None
        model = self.model_of_change(obj) if kind == "model_change" else None
        self._event(ctx, "system", text=text, subtype=kind, model=model, extra=payload)
        return "events"

    def model_of_change(self, obj: dict[str, Any]) -> str | None:
        """The model id of a ``model_change`` entry (pi: provider + modelId; omp: "provider/id")."""
        if isinstance(obj.get("modelId"), str):
            return str(obj["modelId"])
        model = obj.get("model")
        if isinstance(model, str):
            return model.split("/", 1)[-1]
        return None

    # -- summary ----------------------------------------------------------------------------
    def finish(self, *, settled: bool) -> Any:
        st = self.st
        s = st.session
        s.title = st.named_title or title_from_prompt(st.title_prompt or s.first_prompt)
        s.ending = _ENDINGS.get(st.last_stop or "")
        if st.exit_kind in ("signal", "fatal", "process_exit"):
            s.ending = "interrupted"
        s.extra["leaf"] = st.leaf
        s.extra["recorded_cost_usd"] = round(st.recorded_cost, 10)
        parent_id = self.unit.hints.get("parent_id")
        if isinstance(parent_id, str):
            s.parent = ParentRef(agent=self.adapter.id, id=parent_id)
            s.forked_from = None
            if self.unit.hints.get("subagent"):
                s.extra["subagent"] = self.unit.hints["subagent"]
        if self.branch_moved and self.continuing:
            s.extra[REREAD] = True
        return s

    def take_output(self) -> tuple[list[Event], list[UsageRecord]]:
        """Correct the branch marks of the entries seen in this read (see the module doc)."""
        active: set[str] = set()
        cur = self.st.leaf
        while cur is not None and cur in self.parents and cur not in active:
            active.add(cur)
            cur = self.parents[cur]
        for ev in self._out.values():
            if ev.uuid is not None and ev.uuid in self.parents:
                ev.extra["branch"] = "active" if ev.uuid in active else "inactive"
        return super().take_output()
