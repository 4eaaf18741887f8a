"""The gptme adapter: ``<logs dir>/<conversation id>/conversation.jsonl``, read incrementally.

gptme 0.35.1's ``gptme/dirs.py`` finds the logs dir as ``$GPTME_LOGS_HOME``, else
``$XDG_DATA_HOME/gptme/logs`` (a set, non-blank ``XDG_DATA_HOME``), else
``~/.local/share/gptme/logs`` (when that folder exists, on any OS), else the platform's data
dir (macOS ``~/Library/Application Support/gptme/logs``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.gptme.parser import GptmeParser, read_meta
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import Session

#: The files of a conversation folder that describe it besides the log itself.
SIDECARS = ("config.toml", "subagent-meta.json")


class GptmeAdapter(JsonlAdapter):
    id: ClassVar[str] = "gptme"
    name: ClassVar[str] = "gptme"
    env_vars: ClassVar[tuple[str, ...]] = ("GPTME_LOGS_HOME", "XDG_DATA_HOME")
    root_help: ClassVar[str] = "the logs folder (~/.local/share/gptme/logs), one folder per conversation"
    formats_tested: ClassVar[tuple[str, ...]] = ("gptme 0.35.1 (tool and markdown formats)",)
    sample_roots: ClassVar[tuple[str, ...]] = ("real/gptme-0.35.1/logs",)
    Parser: ClassVar[type[LineParser[Any]]] = GptmeParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        logs = env_path(env, "GPTME_LOGS_HOME")
        if logs is not None:
            return [logs]
        xdg = (env.get("XDG_DATA_HOME") or "").strip()
        if xdg:
            return [Path(xdg).expanduser() / "gptme" / "logs"]
        roots = [home / ".local" / "share" / "gptme" / "logs"]
        mac = home / "Library" / "Application Support" / "gptme" / "logs"
        if mac.is_dir():
            roots.append(mac)
        return roots

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for entry in scan.entries(root):
            if not scan.is_dir(entry):
                continue
            log = os.path.join(entry.path, "conversation.jsonl")
            try:
                if os.path.getsize(log) == 0:
                    continue
            except OSError:
                continue
            files = [log] + [p for p in (os.path.join(entry.path, n) for n in SIDECARS) if os.path.isfile(p)]
            hints: dict[str, Any] = {}
            if files[-1].endswith("subagent-meta.json"):
                parent = _parent_log(Path(entry.path))
                if parent is not None:
                    files.append(parent)  # its result names the call that ran this child
                    hints["parent_log"] = parent
            yield Unit(agent=self.id, path=log, files=files, root=str(root), hints=hints)

    def native_files(self, unit: Unit) -> list[str]:
        """The conversation's own files (a subagent's unit also watches its parent's log)."""
        return [f for f in unit.files if f != unit.hints.get("parent_log")]

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        result.session.id = Path(unit.path).parent.name
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        """``gptme --resume --name=<id>`` (gptme 0.35.1 ``--help``: "-r, --resume  Load the most
        recent conversation in this workspace. Use --name ID to select one.")."""
        return ResumeCommand(argv=["gptme", "--resume", f"--name={session.id}"], cwd=session.cwd)


def _parent_log(folder: Path) -> str | None:
    """The parent conversation's log beside a subagent's folder, when it is there."""
    parent = read_meta(folder).get("parent_logdir")
    if not isinstance(parent, str) or not parent.strip("/"):
        return None
    log = folder.parent / os.path.basename(parent.rstrip("/")) / "conversation.jsonl"
    return str(log) if log.is_file() else None
