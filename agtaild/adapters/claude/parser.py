"""Claude Code JSONL lines → agtail events (FORMATS.md Part 1 §1 and Part 3).

Conversation records (``user``, ``assistant``) are handled in :mod:`agtaild.adapters.claude.messages`; this
module routes every line by its ``type``, keeps the session envelope (cwd, branch, version,
entrypoint, time span), and maps the structural records: ``system`` subtypes, ``attachment``
and ``progress`` lines (hooks among them), ``summary`` and the metadata records that carry
titles. Anything it does not know becomes an ``unknown`` event with the raw JSON.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable
from typing import Any

from agtaild.adapters.base import Adapter, Unit
from agtaild.adapters.claude import hooks
from agtaild.adapters.claude.branches import BranchTracker
from agtaild.adapters.claude.edits import EDIT_TOOLS, edit_of
from agtaild.adapters.claude.messages import MessageParser
from agtaild.adapters.claude.state import (
    AGENT_ID,
    LAYOUT,
    MAX_SEEN_UUIDS,
    ClaudeState,
    summarize,
    uuid_hash,
)
from agtaild.adapters.claude.subagents import find_spawning_tool_use, read_meta
from agtaild.adapters.claude.text import command_text, injected_subtype, norm_ts, strip_ansi
from agtaild.adapters.kit.jsonl import Category, ParserState
from agtaild.model import Event, HookInfo, Session, project_of

#: Records that only describe the session (no uuid, not part of the conversation).
METADATA_TYPES = frozenset(
    {
        "queue-operation", "last-prompt", "permission-mode", "mode", "file-history-snapshot",
        "file-history-delta", "tag", "agent-color", "agent-setting", "worktree-state",
        "dev-mods", "content-replacement", "attribution-snapshot", "speculation-accept",
        "marble-origami-commit", "marble-origami-snapshot", "frame-link", "relocated",
        "bridge-session", "atis-latch", "task-summary",
    }
)  # fmt: skip
#: Attachments that are context the CLI injects for the model, not conversation: the kinds of
#: FORMATS.md §1.2 and other context kinds of Claude Code (IDE selection, diagnostics, …).
METADATA_ATTACHMENTS = frozenset(
    {
        "deferred_tools_delta", "mcp_instructions_delta", "agent_listing_delta", "skill_listing",
        "todo_reminder", "task_reminder", "plan_mode", "plan_mode_exit", "plan_mode_reentry",
        "nested_memory", "file", "edited_text_file", "edited_image_file", "compact_file_reference",
        "date_change", "directory", "new_directory", "selected_lines_in_ide", "opened_file_in_ide",
        "invoked_skills", "critical_system_reminder", "diagnostics", "output_style",
        "plan_file_reference", "already_read_file", "todo", "command_permissions",
    }
)  # fmt: skip
#: ``system`` subtypes described in FORMATS.md §1.2 (others keep their whole line in ``raw``).
KNOWN_SYSTEM_SUBTYPES = frozenset(
    {"compact_boundary", "local_command", "turn_duration", "api_error", "away_summary", "session_start",
     "api_refusal", "error", "model_refusal_fallback"}
)  # fmt: skip
#: Progress lines that only stream what a later line records in full.
TRANSIENT_PROGRESS = frozenset(
    {"bash_progress", "powershell_progress", "agent_progress", "waiting_for_task", "mcp_progress",
     "query_update", "search_results_received", "task_progress"}
)  # fmt: skip
#: Envelope keys not worth repeating in a system event's ``extra``.
_ENVELOPE = frozenset(
    {"parentUuid", "logicalParentUuid", "isSidechain", "userType", "cwd", "sessionId", "version",
     "gitBranch", "type", "subtype", "content", "uuid", "timestamp", "entrypoint", "slug", "level",
     "isMeta", "agentId", "promptId"}
)  # fmt: skip


class ClaudeParser(MessageParser):
    """One instance per read; all memory between reads lives in ``self.st``."""

    State = ClaudeState

    def __init__(self, adapter: Adapter, unit: Unit, state: ClaudeState | None) -> None:
        super().__init__(adapter, unit, state)
        plugins_for = getattr(adapter, "plugins_for", None)
        self.plugins = plugins_for(unit.root) if plugins_for is not None else None
        self._routes: dict[Any, Callable[[dict[str, Any], int, int], Category]] = {
            "assistant": self.assistant,
            "user": self.user,
            "system": self.system,
            "attachment": self.attachment,
            "progress": self.progress,
            "summary": self.summary,
            "custom-title": self.title_record,
            "ai-title": self.title_record,
            "agent-name": self.title_record,
            "pr-link": self.title_record,
        }
        self.branches = BranchTracker(self.st.branches, from_start=state is None)
        #: The uuid hashes of this read's messages, not yet in ``st.uuid_hashes`` (see settle).
        self.new_uuids = array("I")
        self.uuids_seen = len(self.st.uuid_hashes) // 4
        #: All of them as a set, once a ``summary`` line asked (then kept up to date).
        self._uuid_set: set[int] | None = None
        if self.st.subagent:
            self.link_parent()

    def new_state(self) -> ClaudeState:
        hints = self.unit.hints
        session_id = hints.get("session_id") or os.path.splitext(os.path.basename(self.unit.path))[0]
        st = ClaudeState(session=Session(agent=self.adapter.id or AGENT_ID, id=session_id), layout=LAYOUT)
        if hints.get("subagent"):
            st.subagent = True
            st.agent_id = hints.get("agent_id")
            st.parent_id = hints.get("parent_id")
            st.parent_path = hints.get("parent_path")
            st.session.resumable = False
            st.session.extra["agent_id"] = st.agent_id
            if hints.get("workflow"):
                st.session.extra["workflow"] = hints["workflow"]
        return st

    # -- routing ------------------------------------------------------------------------
    def record(self, obj: Any, line: int, offset: int) -> Category:
        if type(obj) is not dict:
            self.line_ts = None
            self.branches.current = None
            return self.unknown(obj, line, offset)
        self.envelope(obj)
        self.branches.see(obj)
        kind = obj.get("type")
        if type(kind) is not str:  # a list or dict here would not even be hashable
            kind = None
        route = self._routes.get(kind)
        if route is not None:
            return route(obj, line, offset)
        if kind in METADATA_TYPES:
            return "metadata"
        if kind is None and isinstance(obj.get("message"), dict):
            role = obj["message"].get("role")
            if role == "assistant":
                return self.assistant(obj, line, offset)
            if role == "user":
                return self.user(obj, line, offset)
        return self.unknown(obj, line, offset)

    def envelope(self, obj: dict[str, Any]) -> None:
        """Session fields every conversation line repeats (cheap: this runs for every line)."""
        st = self.st
        s = st.session
        ts = obj.get("timestamp")
        if ts is not None:
            ts = norm_ts(ts)
            if ts is not None:
                if s.started is None or ts < s.started:
                    s.started = ts
                if s.ended is None or ts > s.ended:
                    s.ended = ts
        self.line_ts = ts
        cwd = obj.get("cwd")
        if cwd is not None and cwd != s.cwd and cwd and type(cwd) is str:
            if s.cwd is None:
                s.cwd = cwd
                s.project = project_of(cwd)
            else:
                others = s.extra.setdefault("cwds", [])
                if cwd not in others and len(others) < 20:
                    others.append(cwd)
        branch = obj.get("gitBranch")
        if branch is not None and branch != s.git_branch and branch and type(branch) is str:
            s.git_branch = branch
        version = obj.get("version")
        if version is not None and version != s.version and version and type(version) is str:
            s.version = version
        if s.origin is None:
            entrypoint = obj.get("entrypoint")
            if entrypoint and type(entrypoint) is str:
                s.origin = entrypoint
                s.programmatic = entrypoint.startswith("sdk")
        if "slug" in obj and "slug" not in s.extra and obj["slug"] and type(obj["slug"]) is str:
            s.extra["slug"] = obj["slug"]
        if st.subagent and st.parent_id is None:
            parent = obj.get("sessionId")
            if parent and type(parent) is str:
                st.parent_id = parent
                self.link_parent()
        uuid = obj.get("uuid")
        if uuid is not None and type(uuid) is str and (obj.get("type") == "user" or obj.get("type") == "assistant"):
            if self.uuids_seen < MAX_SEEN_UUIDS:
                value = uuid_hash(uuid)
                self.new_uuids.append(value)
                self.uuids_seen += 1
                if self._uuid_set is not None:
                    self._uuid_set.add(value)
            if st.unmatched_summaries:
                summary = st.unmatched_summaries.pop(uuid, None)
                if summary is not None:
                    st.summary_title = summary

    def finish(self, *, settled: bool) -> Session:
        plugin_for_prompt = self.plugins.plugin_for_prompt if self.plugins is not None else None
        s = summarize(self.st, self.usage.total(), plugin_for_prompt)
        if self.st.branches.forked:
            s.extra["forks"] = self.branches.forks
        return s

    # -- branches (agtaild.adapters.claude.branches) -----------------------------------------
    def emit(self, event: Event) -> Event:
        if event.kind == "tool_use" and event.tool in EDIT_TOOLS:
            edit = edit_of(event)
            if edit is not None:
                event.extra["edit"] = edit
        ev = super().emit(event)
        self.branches.note(ev)
        return ev

    def settle(self) -> None:
        self.branches.settle(self._out)
        if self.new_uuids:
            self.st.uuid_hashes += self.new_uuids.tobytes()
            del self.new_uuids[:]

    def seen_uuids(self) -> set[int]:
        """The uuid hashes of the messages so far (built when a ``summary`` line asks)."""
        if self._uuid_set is None:
            saved = array("I")
            raw = self.st.uuid_hashes
            saved.frombytes(raw[: len(raw) - len(raw) % 4])  # whole values only (a damaged state)
            self._uuid_set = {*saved, *self.new_uuids}
        return self._uuid_set

    @classmethod
    def resumable(cls, state: ParserState) -> bool:
        return isinstance(state, ClaudeState) and state.layout == LAYOUT

    def take_marks(self) -> dict[int, dict[str, Any]]:
        return self.branches.patches

    def wants_full_read(self) -> bool:
        # A damaged part of the saved state (a frame that does not decode) is read again too.
        return self.branches.need_full_read or self.usage.responses.damaged or self.tool_names.damaged

    # -- subagents ------------------------------------------------------------------------
    def link_parent(self) -> None:
        """Find the tool use that spawned this subagent (meta file, else the parent's lines)."""
        st = self.st
        meta_path = self.unit.hints.get("meta")
        if not st.meta_loaded and meta_path:
            meta = read_meta(meta_path)
            if meta is not None:
                st.meta_loaded = True
                for src, dst in (("agentType", "agent_type"), ("description", "description"),
                                 ("worktreePath", "worktree_path")):  # fmt: skip
                    if isinstance(meta.get(src), str):
                        st.session.extra[dst] = meta[src]
                if isinstance(meta.get("toolUseId"), str):
                    st.parent_tool_use_id = meta["toolUseId"]
        if st.parent_tool_use_id is not None or not st.parent_id or not st.agent_id:
            return
        parent_path = st.parent_path or os.path.join(os.path.dirname(self.unit.path), f"{st.parent_id}.jsonl")
        found, st.parent_scan_offset = find_spawning_tool_use(parent_path, st.agent_id, st.parent_scan_offset)
        if found:
            st.parent_tool_use_id = found

    # -- structural records -----------------------------------------------------------------
    def system(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        subtype = obj.get("subtype")
        content = obj.get("content")
        text = content if isinstance(content, str) and content else None
        if not subtype:
            hook = hooks.from_legacy_system(text) if text else None
            if hook is not None:
                return self.hook(hook, obj.get("toolUseID"), obj, line, offset)
            self.new("system", obj, line, offset, text=strip_ansi(text) if text else None)
            return "events"
        if subtype == "stop_hook_summary":
            for info in hooks.from_stop_summary(obj):
                self.hook(info, obj.get("toolUseID"), obj, line, offset)
            return "events"
        known = type(subtype) is str and subtype in KNOWN_SYSTEM_SUBTYPES
        extra = {k: v for k, v in obj.items() if k not in _ENVELOPE} if known else {}
        if subtype == "compact_boundary":
            self.st.boundaries += 1
            if obj.get("logicalParentUuid"):
                extra["logical_parent_uuid"] = obj["logicalParentUuid"]
        elif subtype == "local_command" and text and injected_subtype(text) == "command":
            text = command_text(text)
            if self.st.first_command is None:
                self.st.first_command = text[:200]
        elif not text and isinstance(obj.get("error"), dict):
            error = obj["error"]
            text = str(error.get("message") or error.get("type") or "") or None
        # A subtype this adapter does not know keeps its whole line in ``raw``.
        self.new("system", obj, line, offset, text=text, subtype=str(subtype), extra=extra,
                 raw=None if known else obj)  # fmt: skip
        return "events"

    def attachment(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        att = obj.get("attachment")
        if not isinstance(att, dict):
            return self.unknown(obj, line, offset)
        kind = att.get("type") if type(att.get("type")) is str else None
        if isinstance(kind, str) and kind.startswith("hook_"):
            info = hooks.from_attachment(att)
            return self.hook(info, att.get("toolUseID"), obj, line, offset, subtype=kind)
        if kind == "queued_command":
            return self.queued_command(att, obj, line, offset)
        if kind in METADATA_ATTACHMENTS:
            return "metadata"
        return self.unknown(obj, line, offset)

    def progress(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        data = obj.get("data")
        kind = data.get("type") if isinstance(data, dict) and type(data.get("type")) is str else None
        if kind == "hook_progress":
            assert isinstance(data, dict)
            return self.hook(hooks.from_progress(data), obj.get("parentToolUseID"), obj, line, offset,
                             subtype="hook_progress")  # fmt: skip
        if kind == "agent_progress":
            assert isinstance(data, dict)
            return self.note_subagent(data.get("agentId"), obj.get("parentToolUseID"))
        if kind in TRANSIENT_PROGRESS:
            return "skipped"
        return self.unknown(obj, line, offset)

    def hook(
        self, info: HookInfo, tool_use_id: Any, obj: dict[str, Any], line: int, offset: int,
        subtype: str | None = None,
    ) -> Category:  # fmt: skip
        if type(tool_use_id) is str:
            info.tool = self.tool_names.get(tool_use_id) or info.tool
        if self.plugins is not None and info.command:
            info.plugin = self.plugins.plugin_for_command(info.command)
        self.new("hook", obj, line, offset, text=info.text, hook=info, subtype=subtype,
                 tool_use_id=tool_use_id if type(tool_use_id) is str else None)  # fmt: skip
        return "events"

    def summary(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        text = obj.get("summary")
        leaf = obj.get("leafUuid")
        if not isinstance(text, str):
            return self.unknown(obj, line, offset)
        st = self.st
        if isinstance(leaf, str):
            if uuid_hash(leaf) in self.seen_uuids():
                st.summary_title = text
            else:
                st.unmatched_summaries[leaf] = text
        self.new("summary", obj, line, offset, text=text, extra={"leaf_uuid": leaf} if leaf else {})
        return "events"

    def title_record(self, obj: dict[str, Any], line: int, offset: int) -> Category:
        st = self.st
        kind = obj.get("type")
        if kind == "custom-title" and isinstance(obj.get("customTitle"), str):
            st.custom_title = obj["customTitle"] or st.custom_title
        elif kind == "ai-title" and isinstance(obj.get("aiTitle"), str):
            st.ai_title = obj["aiTitle"] or st.ai_title
        elif kind == "agent-name" and isinstance(obj.get("agentName"), str):
            st.session.extra["agent_name"] = obj["agentName"]
        elif kind == "pr-link" and isinstance(obj.get("prUrl"), str):
            st.session.extra["pr_url"] = obj["prUrl"]
        return "metadata"
