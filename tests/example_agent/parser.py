"""Example Agent's lines → events and usage.

Line shapes: ``{"type": "start", "id", "cwd"}``, ``{"type": "prompt" | "answer", "text", "at"}``,
``{"type": "call", "id", "tool", "args", "at"}``, ``{"type": "output", "id", "text", "failed"}``,
``{"type": "tokens", "id", "model", "in", "out", "at"}``; anything else is kept as unknown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from agtaild.adapters.kit.jsonl import Category, LineParser, ParserState
from agtaild.adapters.kit.stamps import norm_iso, widen
from agtaild.adapters.kit.values import num, title_from_prompt
from agtaild.model import Event, Session, Usage, UsageRecord


class ExampleState(ParserState):
    calls: dict[str, Event] = msgspec.field(default_factory=dict)


class ExampleParser(LineParser[ExampleState]):
    State = ExampleState

    def new_state(self) -> ExampleState:
        return ExampleState(
            session=Session(agent="example", id=Path(self.unit.path).stem, path=self.unit.path)
        )

    def record(self, obj: Any, line: int, offset: int) -> Category:
        s = self.st.session
        if not isinstance(obj, dict):
            self.emit(Event(seq=-1, kind="unknown", raw=obj, source={"line": line}))
            return "events"
        kind, ts = obj.get("type"), norm_iso(obj.get("at")) if isinstance(obj.get("at"), str) else None
        s.started, s.ended = widen(s.started, s.ended, ts)
        if kind == "start":
            s.id = obj["id"] if isinstance(obj.get("id"), str) and obj["id"] else s.id
            s.cwd = obj["cwd"] if isinstance(obj.get("cwd"), str) else s.cwd
            return "metadata"
        if kind in ("prompt", "answer") and isinstance(obj.get("text"), str):
            role = "user" if kind == "prompt" else "assistant"
            s.messages += 1
            if role == "user" and s.first_prompt is None:
                s.first_prompt = obj["text"]
                s.title = title_from_prompt(obj["text"])
            self.emit(Event(seq=-1, kind="text", ts=ts, role=role, text=obj["text"], source={"line": line}))
            return "events"
        if kind == "call" and isinstance(obj.get("id"), str):
            ev = self.emit(
                Event(
                    seq=-1,
                    kind="tool_use",
                    ts=ts,
                    role="assistant",
                    tool=obj.get("tool"),
                    input=obj.get("args"),
                    tool_use_id=obj["id"],
                    source={"line": line},
                )
            )
            self.st.calls[obj["id"]] = ev
            return "events"
        if kind == "output" and isinstance(obj.get("id"), str) and obj["id"] in self.st.calls:
            ev = self.st.calls.pop(obj["id"])
            ev.result = obj.get("text")
            ev.is_error = obj.get("failed") is True
            self.emit(ev)
            return "merged"
        if kind == "tokens":
            usage = Usage(input_tokens=num(obj, "in"), output_tokens=num(obj, "out")).fix_total()
            model = obj.get("model") if isinstance(obj.get("model"), str) else None
            self.add_usage(UsageRecord(key=str(obj.get("id")), ts=ts, model=model, usage=usage))
            s.usage.add(usage)
            if model and model not in s.models:
                s.models.append(model)
            return "metadata"
        self.emit(Event(seq=-1, kind="unknown", ts=ts, raw=obj, source={"line": line}))
        return "events"
