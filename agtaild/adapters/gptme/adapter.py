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
from agtaild.adapters.gptme.parser import GptmeParser
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
            yield Unit(agent=self.id, path=log, files=files, root=str(root))

    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        result.session.id = Path(unit.path).parent.name
        return result

    def resume(self, session: Session) -> ResumeCommand | None:
        """``gptme --resume --name=<id>`` (gptme 0.35.1 ``--help``: "-r, --resume  Load the most
        recent conversation in this workspace. Use --name ID to select one.")."""
        return ResumeCommand(argv=["gptme", "--resume", f"--name={session.id}"], cwd=session.cwd)
