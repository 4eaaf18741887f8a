"""The Codex rollout parser: one decoded line in, events and usage out.

Three eras of lines share this parser, told apart line by line:

* envelope ``{timestamp, type, payload}`` (2025-09 on; 0.17x adds ``ordinal``);
* pre-envelope rollouts (before 2025-09): a bare ``{id, timestamp, instructions, git}``
  header, then bare ResponseItems and ``{"record_type": "state"}`` lines;
* the old TypeScript CLI's single JSON document, fed here item by item (see codex.py).

The first session_meta is the session; later ones are copies (forks, spawned sub-agents).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.adapters.codex.emit import CodexParserBase, Line
from agtaild.adapters.codex.events import handle_event_msg
from agtaild.adapters.codex.items import RESPONSE_ITEM_TYPES, compaction, handle_response_item
from agtaild.adapters.codex.links import RolloutLinks, spawn_call_in, total_at
from agtaild.adapters.codex.text import as_dict, as_str, msgpack_safe, title_of
from agtaild.adapters.codex.usage import usage_record_rows
from agtaild.adapters.kit.jsonl import Category
from agtaild.model import ParentRef, Session, project_of

_METADATA_TYPES = frozenset(
    {"world_state", "retained_context", "inter_agent_communication_metadata", "security_risk_score"}
)
_WRITER_TAGGED = frozenset({"item_completed", "thread_settings_applied", "thread_name_updated"})
#: originator → origin; anything else is kept as written ("sdk" when it names an SDK).
_ORIGINS = {"codex_cli_rs": "cli", "codex_tui": "cli", "codex_exec": "exec", "codex_vscode": "vscode"}
_PROGRAMMATIC = frozenset({"exec", "sdk", "mcp"})
#: How often a sub-agent read retries finding its spawn call in the parent's rollout.
SPAWN_LOOKUPS = 3


def origin_of(originator: str | None, source: Any) -> str | None:
    if originator:
        low = originator.lower()
        if low in _ORIGINS:
            return _ORIGINS[low]
        if "sdk" in low:
            return "sdk"
        return originator
    if isinstance(source, str):
        return source
    if isinstance(source, dict) and "subagent" in source:
        return "subagent"
    return None


class CodexParser(CodexParserBase):
    def record(self, obj: Any, line: int, offset: int) -> Category:
        if not isinstance(obj, dict):
            return self.emit_unknown(Line(line, None), obj)
        try:
            return self._record(obj, line)
        except (
            KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, msgspec.ValidationError
        ) as exc:
            # A record shaped in a way this reader did not foresee: keep it, say why.
            event = self.new_event(Line(line, as_str(obj.get("timestamp"))), "unknown", raw=obj)
            event.extra["error"] = f"{type(exc).__name__}: {exc}"
            self.emit(event)
            return "events"

    def _record(self, obj: dict[str, Any], no: int) -> Category:
        st = self.st
        ts = as_str(obj.get("timestamp"))
        if ts and ts[:4].isdigit() and (st.last_ts is None or ts > st.last_ts):
            st.last_ts = ts
        kind = obj.get("type")
        if "payload" not in obj:
            return self._bare(obj, no, ts)
        payload = obj.get("payload")
        if not isinstance(payload, dict) or not isinstance(kind, str):
            return self.emit_unknown(Line(no, ts), obj)
        line = self._line(no, kind, payload, ts)
        if kind == "response_item":
            return handle_response_item(self, line, payload)
        if kind == "event_msg":
            return handle_event_msg(self, line, payload)
        if kind == "session_meta":
            return self._session_meta(line, payload)
        if kind == "turn_context":
            return self._turn_context(line, payload)
        if kind == "token_usage_record":
            total, last, model = usage_record_rows(payload)
            return self.count_usage(line, total, last, model)
        if kind == "compacted":
            history = payload.get("replacement_history")
            extra = {k: payload[k] for k in ("window_number", "window_id") if k in payload}
            if isinstance(history, list):
                extra["replacement_history_items"] = len(history)
            return compaction(self, line, as_str(payload.get("message")) or None, extra)
        if kind in _METADATA_TYPES:
            return "metadata"
        return self.emit_unknown(line, obj)

    def _line(self, no: int, kind: str, payload: dict[str, Any], ts: str | None) -> Line:
        st = self.st
        writer = None
        if kind == "token_usage_record" or (kind == "event_msg" and str(payload.get("type")) in _WRITER_TAGGED):
            writer = as_str(payload.get("thread_id"))
        if not (st.forked or st.spawn_parent):
            copied = bool(writer and st.thread_id and writer != st.thread_id)
            return Line(no, ts, copied)
        if kind == "session_meta" and st.thread_id is None:
            return Line(no, ts)
        return self.copied_line(no, ts, writer)

    def _bare(self, obj: dict[str, Any], no: int, ts: str | None) -> Category:
        """A pre-envelope line: header, state marker, or a bare ResponseItem."""
        line = Line(no, ts)
        if "record_type" in obj:
            return "metadata"
        kind = obj.get("type")
        if isinstance(kind, str) and kind in RESPONSE_ITEM_TYPES:
            return handle_response_item(self, line, obj)
        if kind is None and isinstance(obj.get("id"), str) and self.st.thread_id is None:
            self.st.legacy = True
            return self._session_meta(line, obj)
        return self.emit_unknown(line, obj)

    # -- session_meta / turn_context ------------------------------------------------------
    def _session_meta(self, line: Line, meta: dict[str, Any]) -> Category:
        st = self.st
        if st.thread_id is not None:
            return "metadata"  # a copy from a fork or spawn; the first one is the session
        s = st.session
        st.thread_id = as_str(meta.get("id")) or s.id
        s.id = st.thread_id
        st.meta_ts = line.ts
        s.started = as_str(meta.get("timestamp")) or line.ts
        s.cwd = as_str(meta.get("cwd")) or s.cwd
        s.project = project_of(s.cwd)
        s.git_branch = as_str(as_dict(meta.get("git")).get("branch"))
        s.version = as_str(meta.get("cli_version"))
        source = meta.get("source")
        s.origin = origin_of(as_str(meta.get("originator")), source)
        s.programmatic = s.origin in _PROGRAMMATIC or (isinstance(source, str) and source in _PROGRAMMATIC)
        for key in ("originator", "source", "model_provider", "agent_nickname", "agent_role", "thread_source"):
            if meta.get(key) is not None:
                s.extra[key] = msgpack_safe(meta[key])
        spawn = as_dict(as_dict(as_dict(source).get("subagent")).get("thread_spawn"))
        parent = as_str(spawn.get("parent_thread_id"))
        if parent is None and isinstance(source, dict) and "subagent" in source:
            parent = as_str(meta.get("parent_thread_id"))
        if parent:
            s.parent = ParentRef("codex", parent, as_str(spawn.get("spawn_call_id")))
            st.spawn_parent = parent
            self._find_spawn_call()
        forked_from = as_str(meta.get("forked_from_id"))
        if forked_from:
            s.forked_from = ParentRef("codex", forked_from)
            st.forked = True
            st.copy_open = True
            self._find_fork_baseline(forked_from, line.ts)
        return "metadata"

    def _turn_context(self, line: Line, ctx: dict[str, Any]) -> Category:
        st = self.st
        model = as_str(ctx.get("model"))
        if model:
            st.model = model
            if not line.copied and model not in st.session.models:
                st.session.models.append(model)
        if st.session.cwd is None and as_str(ctx.get("cwd")):
            st.session.cwd = ctx["cwd"]
            st.session.project = project_of(st.session.cwd)
        return "metadata"

    # -- parents ----------------------------------------------------------------------------
    @property
    def links(self) -> RolloutLinks:
        links = getattr(self.adapter, "links", None)
        return links if isinstance(links, RolloutLinks) else RolloutLinks()

    def _find_spawn_call(self) -> None:
        st = self.st
        parent = st.session.parent
        if parent is None or parent.tool_use_id or st.spawn_tries >= SPAWN_LOOKUPS or not st.thread_id:
            return
        st.spawn_tries += 1
        path = self.links.rollout_of(self.unit.root, parent.id)
        if path is not None:
            parent.tool_use_id = spawn_call_in(self.links.content(path), st.thread_id)

    def _find_fork_baseline(self, parent_id: str, fork_ts: str | None) -> None:
        path = self.links.rollout_of(self.unit.root, parent_id)
        if path is not None:
            self.st.fork_baseline = total_at(self.links.content(path), fork_ts)

    # -- summary ----------------------------------------------------------------------------
    def finish(self, *, settled: bool) -> Session:
        st = self.st
        if st.spawn_parent and settled:
            self._find_spawn_call()
        s = st.session
        prompt = s.first_prompt or st.first_prompt_copied
        name = self.links.thread_names(self.unit.root).get(s.id) or st.thread_name
        title = name or (title_of(prompt) if prompt else None)
        ending = None
        if st.last_turn == "aborted" or (st.turn_open and settled):
            ending = "interrupted"
        elif st.last_turn == "limit":
            ending = "limit"
        return msgspec.structs.replace(
            s,
            title=title,
            first_prompt=prompt,
            ended=st.last_ts or s.started,
            ending=ending,
            resumable=not st.legacy and not self.unit.path.endswith(".json"),
            parent=msgspec.structs.replace(s.parent) if s.parent else None,
        )
