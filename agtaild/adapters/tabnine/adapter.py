"""The Tabnine CLI adapter: ``~/.tabnine/agent/tmp/<project id>/chats/session-*.jsonl``.

Tabnine CLI 0.25.1 (as a peer read its installer bundle: ``Storage`` and
``ChatRecordingService``) keeps its project temp folders in ``~/.tabnine/agent/tmp/<project
id>`` (a slug registered in ``~/.tabnine/agent/projects.json``, with ``.project_root`` naming the
folder), appends each chat to ``chats/session-<time>-<id8>.jsonl`` (a header line ``sessionId``,
``projectHash``, ``startTime``, ``lastUpdated``, ``kind``, then message records ``id``,
``timestamp``, ``type: user|tabnine``, ``content``) and a subagent's to
``chats/<parent session id>/<id>.jsonl`` (``kind: subagent``). That is Gemini CLI's layout and
record shape, so the Gemini CLI reader does the work. ``/chat save`` checkpoints
(``checkpoint-<tag>.json``) are resumable state, not transcripts, and are not read.

Not resumable from agtail: no Tabnine CLI ``--help`` could be read here (its installer comes
from Tabnine's console), so no resume flag is claimed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import ResumeCommand
from agtaild.adapters.gemini.adapter import GeminiAdapter
from agtaild.model import Session


class TabnineAdapter(GeminiAdapter):
    id: ClassVar[str] = "tabnine"
    name: ClassVar[str] = "Tabnine CLI"
    env_vars: ClassVar[tuple[str, ...]] = ()
    root_help: ClassVar[str] = "the tmp folder of Tabnine's agent dir (~/.tabnine/agent/tmp)"
    formats_tested: ClassVar[tuple[str, ...]] = ("tabnine-cli 0.25.1 chat recording (derived sample)",)
    sample_roots: ClassVar[tuple[str, ...]] = ("tabnine/derived/.tabnine/agent/tmp",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [home / ".tabnine" / "agent" / "tmp"]

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        return None
