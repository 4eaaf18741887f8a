"""Qoder CLI's records on top of Claude Code's reader (1.1.52's transcript writer).

Besides Claude Code 2.1's records, Qoder writes ``runtime-config`` (model, reasoning effort,
context window), ``workspace-directories``, ``token-stats`` (``promptTokenCount``) and
``active-leaf`` (which branch is current): metadata here. With Qoder's own models the stored
``usage`` has its token counts zeroed and carries ``credits`` / ``original_credits`` /
``billable`` instead; the credits of each response (``message.id``) are summed into
``session.extra["credits"]`` (token counts stay what the file says: zero). A custom provider's
model keeps its token counts, read as Claude's.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from agtaild.adapters.claude.parser import ClaudeParser
from agtaild.adapters.claude.state import ClaudeState
from agtaild.adapters.kit.jsonl import Category
from agtaild.model import Session

#: Qoder's own session records: no conversation in them.
QODER_METADATA = frozenset({"runtime-config", "workspace-directories", "token-stats", "active-leaf"})
#: Responses whose credits the state remembers (the oldest are forgotten).
MAX_CREDITED = 4096


class QoderState(ClaudeState):
    credits: float = 0.0
    credited: list[str] = msgspec.field(default_factory=list)
    model_setting: str | None = None


class QoderParser(ClaudeParser):
    State = QoderState

    def new_state(self) -> ClaudeState:
        st = super().new_state()
        return QoderState(**{name: getattr(st, name) for name in st.__struct_fields__})

    def record(self, obj: Any, line: int, offset: int) -> Category:
        if type(obj) is dict:
            kind = obj.get("type")
            if type(kind) is str and kind in QODER_METADATA:
                self.envelope(obj)
                if kind == "runtime-config" and isinstance(obj.get("model"), str):
                    self.qoder.model_setting = obj["model"]
                return "metadata"
            if kind == "assistant":
                self._credit(obj)
        return super().record(obj, line, offset)

    @property
    def qoder(self) -> QoderState:
        return cast(QoderState, self.st)

    def _credit(self, obj: dict[str, Any]) -> None:
        st = self.qoder
        message = obj.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        credits = usage.get("credits") if isinstance(usage, dict) else None
        key = message.get("id") if isinstance(message, dict) else None
        if not isinstance(credits, (int, float)) or isinstance(credits, bool) or not isinstance(key, str):
            return
        if key in st.credited:
            return  # one response written over several lines
        st.credited = [*st.credited, key][-MAX_CREDITED:]
        st.credits += float(credits)

    def finish(self, *, settled: bool) -> Session:
        s = super().finish(settled=settled)
        st = self.qoder
        if st.credited:
            s.extra["credits"] = round(st.credits, 6)
        if st.model_setting:
            s.extra["model_setting"] = st.model_setting
        return s
