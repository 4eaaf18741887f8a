"""The Claude Code adapter: ``~/.claude/projects/<encoded cwd>/<sessionId>.jsonl``.

Layouts read (FORMATS.md §1.1): one JSONL file per session; 2.1.x subagents in
``<sessionId>/subagents/agent-<id>.jsonl`` with a ``.meta.json`` sidecar (and workflow agents
under ``subagents/workflows/<run>/``); 2.0.x subagents as flat ``agent-<id>.jsonl`` files next
to the sessions; 1.0.x subagents inline in the session file (``isSidechain``), kept there.
Every subagent file is its own session, linked to its parent session and spawning tool use.
Project folders may sit at any depth below the root (``projects/backup-2025/<project>/``).
The project dir name is a lossy encoding of the cwd and is never decoded: cwd comes from the
lines. Line parsing lives in :mod:`agtaild.adapters.claude.parser` and :mod:`agtaild.adapters.claude.messages`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit
from agtaild.adapters.claude.parser import ClaudeParser
from agtaild.adapters.claude.plugins import PluginIndex, load_plugin_index
from agtaild.adapters.claude.state import AGENT_ID
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import Session

#: Overrides where plugin attribution looks for Claude Code's plugin cache.
PLUGINS_DIR_ENV = "AGTAIL_CLAUDE_PLUGINS_DIR"
#: How many folder levels below the projects root discovery looks for sessions.
MAX_DEPTH = 8
#: Folders inside a session's folder that hold parts of it, never sessions of their own.
_SESSION_PARTS = frozenset({"subagents", "tool-results"})


class ClaudeCodeAdapter(JsonlAdapter):
    id: ClassVar[str] = AGENT_ID
    name: ClassVar[str] = "Claude Code"
    env_vars: ClassVar[tuple[str, ...]] = ("CLAUDE_CONFIG_DIR", PLUGINS_DIR_ENV)
    root_help: ClassVar[str] = (
        "the `projects` folder of a Claude config dir (e.g. ~/.claude/projects), which holds one "
        "folder per project"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "1.0.24-1.0.128 (inline sidechains, typeless hook lines, summary lines)",
        "2.0.0-2.0.55 (flat agent-*.jsonl subagents, queue-operation, file-history-snapshot)",
        "2.1.0-2.1.114 (subagents/ folder + .meta.json, progress, attachments, compaction)",
        "2.1.197 (recorded from the real CLI: print mode, resume, Agent tool, hooks, API error)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "claude-code/agent-history/projects",
        "claude-code/agent-sessions/projects",
        "claude-code/agentsview/projects",
        "claude-code/claude-code-log/projects",
        "claude-code/claude-code-transcripts/projects",
        "claude-code/claude-code-viewer/projects",
        "claude-code/spotter/projects",
        "real/claude-2.1.197/projects",
    )
    Parser: ClassVar[type[LineParser[Any]]] = ClaudeParser
    appends_keep_units: ClassVar[bool] = True

    def __init__(self, plugins_dir: str | Path | None = None) -> None:
        self._plugins_dir = Path(plugins_dir) if plugins_dir else None
        self._plugin_indexes: dict[str, PluginIndex | None] = {}

    # -- roots and discovery ----------------------------------------------------------------
    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        configured = env.get("CLAUDE_CONFIG_DIR")
        if configured:
            roots = []
            for part in configured.split(","):
                path = Path(part.strip()).expanduser()
                if part.strip():
                    roots.append(path if path.name == "projects" else path / "projects")
            return list(dict.fromkeys(roots))
        xdg = env.get("XDG_CONFIG_HOME")
        config_home = Path(xdg).expanduser() if xdg else home / ".config"
        return list(dict.fromkeys([home / ".claude" / "projects", config_home / "claude" / "projects"]))

    def discover(self, root: Path) -> Iterator[Unit]:
        """Sessions in every project folder, at any depth below the root (copies kept in
        ``projects/backup-2025/<project>/`` count too); a session's own folder (subagents,
        spilled tool outputs) belongs to it and is not walked as a project. Directory links
        are followed once each (a link cycle ends there) and the walk stops MAX_DEPTH down.

        Every folder is listed once (its listing says which sidecars exist, so a session
        without a folder costs no failed look-up): this walk runs before every update."""
        root_str = str(root)
        seen: set[tuple[int, int]] = set()
        try:
            st = os.stat(root_str)
            seen.add((st.st_dev, st.st_ino))  # a link back to the root is a cycle too
        except OSError:
            pass
        for project in scan.entries(root_str):
            key = scan.dir_key(project) if scan.is_dir(project) else None
            if key is not None and key not in seen:
                seen.add(key)
                yield from self._project(project.path, scan.entries(project.path), root_str, seen, 1)

    def _project(
        self, folder: str, entries: list[os.DirEntry[str]], root: str, seen: set[tuple[int, int]], depth: int
    ) -> Iterator[Unit]:
        """The units of one listed project folder (``entries``: its listing, sorted by name)."""
        names = {e.name: e for e in entries}
        #: The listings of this folder's sub-folders (a session's own folder is listed when
        #: its name comes up, which sorts before ``<name>.jsonl``).
        inside: dict[str, list[os.DirEntry[str]]] = {}
        for entry in entries:
            name = entry.name
            if name.endswith(".jsonl"):
                if scan.is_file(entry) and scan.size(entry) > 0:  # Claude treats 0 bytes as missing
                    stem = name[:-6]
                    if stem.startswith("agent-"):
                        yield self._subagent_unit(entry.path, root, names, parent_id=None, parent_path=None)
                    else:
                        files = [entry.path]
                        if stem in names:  # the session's own folder: its spilled tool outputs
                            files += _spilled_outputs(os.path.join(folder, stem), inside.get(stem))
                        yield Unit(agent=self.id, path=entry.path, files=files, root=root)
            elif name not in _SESSION_PARTS and scan.is_dir(entry):
                listing = inside[name] = scan.entries(entry.path)
                parent_path = os.path.join(folder, f"{name}.jsonl")
                yield from self._subagents(entry.path, listing, root, name, parent_path)
                if f"{name}.jsonl" in names or depth >= MAX_DEPTH:
                    continue  # a session's own folder, or too deep
                key = scan.dir_key(entry)
                if key is not None and key not in seen:
                    seen.add(key)
                    yield from self._project(entry.path, listing, root, seen, depth + 1)

    def _subagents(
        self, session_dir: str, listing: list[os.DirEntry[str]], root: str, parent_id: str, parent_path: str
    ) -> Iterator[Unit]:
        """The subagents kept in a session's folder (``listing``: the folder's entries)."""
        if not any(e.name == "subagents" for e in listing):
            return
        found = _entries(os.path.join(session_dir, "subagents"))
        names = {e.name: e for e in found}
        for entry in found:
            if _is_agent_file(entry):
                yield self._subagent_unit(
                    entry.path, root, names, parent_id=parent_id, parent_path=parent_path
                )
        if "workflows" not in names:
            return
        for run in _entries(names["workflows"].path):
            if scan.is_dir(run):
                runs = _entries(run.path)
                in_run = {e.name: e for e in runs}
                for entry in runs:
                    if _is_agent_file(entry):
                        yield self._subagent_unit(entry.path, root, in_run, parent_id=parent_id,
                                                  parent_path=parent_path, workflow=run.name)  # fmt: skip

    def _subagent_unit(self, path: str, root: str, names: Mapping[str, os.DirEntry[str]], *, parent_id: str | None,
                       parent_path: str | None, workflow: str | None = None) -> Unit:  # fmt: skip
        """A subagent's unit; ``names``: the entries of its folder (is its ``.meta.json`` there?)."""
        stem = os.path.basename(path)[:-6]
        meta = names.get(stem + ".meta.json")
        hints: dict[str, Any] = {"subagent": True, "agent_id": stem[len("agent-"):]}
        files = [path]
        if meta is not None and scan.is_file_quietly(meta):
            files.append(meta.path)
            hints["meta"] = meta.path
        if parent_id:
            hints["parent_id"] = parent_id
            hints["parent_path"] = parent_path
        if workflow:
            hints["workflow"] = workflow
        return Unit(agent=self.id, path=path, files=files, root=root, hints=hints)

    # -- plugins ----------------------------------------------------------------------------
    def plugins_dir_for(self, root: Path) -> Path | None:
        """Where the plugin cache of the Claude install that wrote ``root`` is, if local.

        Sessions under an imported root came from another machine: its plugins are not ours.
        """
        if root.parent.parent.name == "imported":
            return None
        if self._plugins_dir is not None:
            return self._plugins_dir
        configured = os.environ.get(PLUGINS_DIR_ENV)
        if configured:
            return Path(configured).expanduser()
        return root.parent / "plugins" if root.name == "projects" else None

    def plugins_for(self, root: str) -> PluginIndex | None:
        """The plugin index for a root, loaded once per adapter instance (None: no cache)."""
        if root not in self._plugin_indexes:
            plugins_dir = self.plugins_dir_for(Path(root))
            self._plugin_indexes[root] = load_plugin_index(plugins_dir) if plugins_dir else None
        return self._plugin_indexes[root]

    # -- resume -----------------------------------------------------------------------------
    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        """Claude Code: ``claude [PROMPT]`` starts an interactive session with that first prompt."""
        return ResumeCommand(argv=["claude", prompt], cwd=cwd)

    def resume(self, session: Session) -> ResumeCommand | None:
        """``claude --resume=<id>`` (one argument: the id can never be read as an option) in
        the first recorded cwd; subagents can't be resumed."""
        if session.parent is not None or not session.resumable:
            return None
        return ResumeCommand(argv=["claude", f"--resume={session.id}"], cwd=session.cwd)


_entries = scan.entries


def _is_agent_file(entry: os.DirEntry[str]) -> bool:
    """A subagent transcript (0-byte files are missing to Claude, and to agtail)."""
    name = entry.name
    return name.startswith("agent-") and name.endswith(".jsonl") and scan.is_file(entry) and scan.size(entry) > 0


def _spilled_outputs(session_dir: str, listing: list[os.DirEntry[str]] | None) -> list[str]:
    """Large tool outputs Claude spilled to ``<session>/tool-results/`` (kept with the session).
    ``listing``: the entries of ``<session>/`` when the walk listed them (None: look)."""
    if listing is not None and not any(e.name == "tool-results" for e in listing):
        return []
    return [e.path for e in _entries(os.path.join(session_dir, "tool-results")) if scan.is_file(e)]
