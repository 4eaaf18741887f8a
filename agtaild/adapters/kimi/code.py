"""Kimi Code (``~/.kimi-code``, the newer Kimi agent): one ``wire.jsonl`` per agent.

Layout (peer fixtures, wire protocol 1.4): ``sessions/wd_<slug>_<hash>/session_<uuid>/`` with
``state.json`` (``title``, ``workDir``, ``agents{<agentId>: {type, parentAgentId}}``) and
``agents/<agentId>/wire.jsonl``. ``agents/main`` is the session; every other agent is a
subagent, read as a child session ``<uuid>-<agentId>``.

Wire records are flat ``{type, time (ms), agentId?, …}``: ``turn.prompt``/``turn.steer`` (user
input), ``context.append_loop_event`` (``content.part`` think/text, ``tool.call``,
``tool.result``, ``step.begin``/``step.end``), ``usage.record`` (per step; ``inputOther`` is
input without cache), ``turn.cancel``/``turn.ended``, ``context.apply_compaction`` and
configuration records. ``context.append_message`` repeats the user's input for the model
context and is skipped when it is a user message.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.kimi.wire import kimi_usage, nonempty_str, user_input_text
from agtaild.adapters.kit.files import read_regular
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import Category, JsonlAdapter, LineParser, ParserState
from agtaild.adapters.kit.stamps import from_epoch, from_epoch_ms, widen
from agtaild.model import Event, ParentRef, Session, Usage, UsageRecord, project_of

MAX_PENDING = 500
#: Records that configure the run and carry nothing for the transcript.
_CONFIG = frozenset(
    {
        "tools.set_active_tools",
        "llm.tools_snapshot",
        "token_counting.measured",
        "token_counting.turn_recorded",
        "runtime.set_binding",
        "plugin.session_start",
        "profile.bind",
        "full_compaction.begin",
        "full_compaction.complete",
    }
)
_decoder = msgspec.json.Decoder()


class KimiCodeState(ParserState):
    pending: dict[str, Event] = msgspec.field(default_factory=dict)
    outcome: str | None = None
    turn_open: bool = False


#: Kimi Code's token fields (kimi_wire.kimi_usage's order).
CODE_USAGE_KEYS = ("inputOther", "output", "inputCacheRead", "inputCacheCreation")


def code_usage(raw: Any) -> Usage | None:
    return kimi_usage(raw, CODE_USAGE_KEYS)


class KimiCodeParser(LineParser[KimiCodeState]):
    State = KimiCodeState

    def new_state(self) -> KimiCodeState:
        return KimiCodeState(session=Session(agent=self.adapter.id, id=self.unit.hints.get("id", ""), path=self.unit.path))

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            self._event(line, None, "unknown", raw=obj)
            return "events"
        kind: str = obj["type"]
        t = obj.get("time")
        # Whole milliseconds in integer arithmetic (exact); anything else as from_epoch reads it.
        ts = from_epoch_ms(t) if type(t) is int and t >= 0 else from_epoch(t, unit="ms")
        s = self.st.session
        if kind == "metadata":
            s.extra["protocol_version"] = obj.get("protocol_version")
            return "metadata"
        s.started, s.ended = widen(s.started, s.ended, ts)
        if kind in _CONFIG:
            return "skipped"
        if kind in ("config.update", "llm.request"):
            self._config(obj)
            return "metadata"
        if kind in ("turn.prompt", "turn.steer"):
            return self._prompt(obj, kind, line, ts)
        if kind == "context.append_message":
            return self._context_message(obj, line, ts)
        if kind == "context.append_loop_event" and isinstance(obj.get("event"), dict):
            return self._loop(obj["event"], line, ts)
        if kind == "usage.record":
            return self._usage_record(obj, line, ts)
        if kind == "turn.cancel":
            self.st.outcome, self.st.turn_open = "interrupted", False
            self._event(line, ts, "system", subtype=kind, text="turn cancelled")
            return "events"
        if kind == "turn.ended":
            reason = nonempty_str(obj.get("reason"))
            self.st.turn_open = False
            if reason in (None, "completed"):
                self.st.outcome = None
                return "metadata"
            self.st.outcome = "interrupted" if "cancel" in reason else "error"
            self._event(line, ts, "system", subtype=kind, text=reason, extra=_rest(obj))
            return "events"
        if kind == "context.apply_compaction":
            s.compactions += 1
            self._event(line, ts, "summary", subtype=kind, text=nonempty_str(obj.get("summary")), extra=_rest(obj, "summary"))
            return "events"
        if kind.startswith(("permission.", "plan_mode.")):
            self._event(line, ts, "system", subtype=kind, extra=_rest(obj))
            return "events"
        self._event(line, ts, "unknown", subtype=kind, raw=obj)
        return "events"

    def _event(self, line: int, ts: str | None, kind: str, **fields: Any) -> Event:
        return self.emit(Event(seq=-1, kind=kind, ts=ts, source={"line": line}, **fields))

    def _config(self, obj: dict[str, Any]) -> None:
        s = self.st.session
        cwd = nonempty_str(obj.get("cwd"))
        if cwd and not s.cwd:
            s.cwd, s.project = cwd, project_of(cwd)
        if nonempty_str(obj.get("modelAlias")):
            s.extra["model_alias"] = obj["modelAlias"]  # models come from usage.record

    def _prompt(self, obj: dict[str, Any], kind: str, line: int, ts: str | None) -> Category:
        st = self.st
        origin = obj.get("origin") if isinstance(obj.get("origin"), dict) else {}
        by_user = not isinstance(origin, dict) or origin.get("kind") in (None, "user")
        text = user_input_text(obj.get("input"))
        subtype = "steer" if kind == "turn.steer" else (None if by_user else "system_trigger")
        self._event(line, ts, "text", role="user", text=text, subtype=subtype, extra={"origin": origin} if origin else {})
        st.session.messages += 1
        if kind == "turn.prompt":
            st.outcome, st.turn_open = None, True
        if by_user and text and st.session.first_prompt is None:
            st.session.first_prompt = text
        return "events"

    def _context_message(self, obj: dict[str, Any], line: int, ts: str | None) -> Category:
        msg = obj.get("message") if isinstance(obj.get("message"), dict) else None
        if not isinstance(msg, dict):
            self._event(line, ts, "unknown", raw=obj)
            return "events"
        if msg.get("role") == "user":
            return "skipped"  # the turn.prompt / turn.steer already recorded it
        self._event(line, ts, "text", role=nonempty_str(msg.get("role")), text=user_input_text(msg.get("content")), subtype="context")
        return "events"

    def _loop(self, ev: dict[str, Any], line: int, ts: str | None) -> Category:
        etype = ev.get("type")
        if etype == "step.begin":
            return "skipped"
        if etype == "step.end":
            if nonempty_str(ev.get("finishReason")) == "max_tokens":
                self.st.outcome = "limit"
            return "metadata"
        if etype == "content.part" and isinstance(ev.get("part"), dict):
            part = ev["part"]
            if part.get("type") == "think":
                self._event(line, ts, "thinking", role="assistant", text=nonempty_str(part.get("think")), uuid=nonempty_str(ev.get("uuid")))
                return "events"
            if part.get("type") == "text":
                self._event(line, ts, "text", role="assistant", text=nonempty_str(part.get("text")), uuid=nonempty_str(ev.get("uuid")))
                self.st.session.messages += 1
                return "events"
        if etype == "tool.call":
            call_id = nonempty_str(ev.get("toolCallId"))
            tool_ev = self._event(
                line, ts, "tool_use", role="assistant", tool=nonempty_str(ev.get("name")), input=ev.get("args"),
                tool_use_id=call_id, uuid=nonempty_str(ev.get("uuid")),
                extra={"description": ev["description"]} if nonempty_str(ev.get("description")) else {},
            )
            if call_id:
                self.st.pending[call_id] = tool_ev
                if len(self.st.pending) > MAX_PENDING:
                    del self.st.pending[next(iter(self.st.pending))]
            return "events"
        if etype == "tool.result":
            call_id = nonempty_str(ev.get("toolCallId"))
            raw = ev.get("result")
            result = raw.get("output") if isinstance(raw, dict) else raw
            is_error = bool(raw.get("isError") or raw.get("is_error")) if isinstance(raw, dict) else False
            call = self.st.pending.pop(call_id, None) if call_id else None
            if call is not None:
                call.result, call.is_error = result, is_error
                call.extra["result_ts"] = ts
                self.emit(call)
                return "merged"
            self._event(line, ts, "tool_result", role="tool", result=result, is_error=is_error, tool_use_id=call_id)
            return "events"
        self._event(line, ts, "unknown", subtype=f"loop:{etype}", raw=ev)
        return "events"

    def _usage_record(self, obj: dict[str, Any], line: int, ts: str | None) -> Category:
        usage = code_usage(obj.get("usage"))
        if usage is None:
            return "metadata"
        model = nonempty_str(obj.get("model"))
        self.add_usage(UsageRecord(key=f"line:{line}", ts=ts, model=model, usage=usage))
        self.st.session.usage.add(usage)
        if model and model not in self.st.session.models:
            self.st.session.models.append(model)
        return "metadata"

    def finish(self, *, settled: bool) -> Session:
        st = self.st
        s = st.session
        s.ending = st.outcome
        if s.ending is None and settled and st.pending:
            s.ending = "interrupted"
        return s


def _rest(obj: dict[str, Any], *drop: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("type", "time", *drop)}


class KimiCodeLog(JsonlAdapter):
    """The incremental JSONL reader for one Kimi Code agent wire (used by the kimi adapter)."""

    id: ClassVar[str] = "kimi"
    Parser = KimiCodeParser


class KimiCodeReader:
    """Discovery and reading of Kimi Code session folders, for :class:`KimiAdapter`."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.log = KimiCodeLog()

    def units(self, folder: Path, root: Path) -> Iterator[Unit]:
        sid = folder.name.removeprefix("session_")
        try:
            agents = sorted(p for p in (folder / "agents").iterdir() if (p / "wire.jsonl").is_file())
        except OSError:
            return
        state_file = folder / "state.json"
        for agent_dir in sorted(agents, key=lambda p: p.name != "main"):
            main = agent_dir.name == "main"
            files = [str(agent_dir / "wire.jsonl")]
            if state_file.is_file():
                files.append(str(state_file))
            hints = {"kimi_code": True, "id": sid if main else f"{sid}-{agent_dir.name}", "session": sid, "agent_id": agent_dir.name}
            yield Unit(agent=self.agent, path=files[0], files=files, root=str(root), hints=hints)

    @paused_read
    def read(self, unit: Unit, state: bytes | None, *, now: float | None) -> ReadResult:
        result = self.log.read(unit, state, now=now)
        s = result.session
        s.extra["kimi_code"] = True
        folder = Path(unit.path).parent.parent.parent
        doc = _read_state(folder / "state.json")
        agent_id = str(unit.hints.get("agent_id", "main"))
        if isinstance(doc, dict):
            work_dir = nonempty_str(doc.get("workDir"))
            if work_dir:
                s.cwd, s.project = work_dir, project_of(work_dir)
            if agent_id == "main" and nonempty_str(doc.get("title")):
                s.title = doc["title"]
            agents = doc.get("agents") if isinstance(doc.get("agents"), dict) else {}
            info = agents.get(agent_id) if isinstance(agents, dict) else None
            if isinstance(info, dict) and nonempty_str(info.get("type")):
                s.extra["agent_type"] = info["type"]
        if not s.title and agent_id != "main":
            s.title = f"subagent {agent_id}"
        if not s.title:
            s.title = next((ln.strip()[:200] for ln in (s.first_prompt or "").splitlines() if ln.strip()), None)
        if agent_id != "main":
            s.parent = ParentRef(agent=self.agent, id=str(unit.hints.get("session")))
            s.resumable = False
        return result

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in unit.files if Path(f).exists()]


def _read_state(path: Path) -> Any:
    try:
        return _decoder.decode(read_regular(path))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None
