"""The TRAE CLI adapter: ``~/.trae/cli/sessions`` (and ``archived_sessions/`` beside it).

Three peer readers (session viewers and usage meters that read TRAE CLI) describe the same
thing: ``~/.trae/cli/sessions/YYYY/MM/DD/rollout-*.jsonl`` in Codex CLI's rollout format, with
``~/.trae/cli/archived_sessions/`` for archived ones and ``~/.trae/sessions`` in older builds;
their fixtures are Codex lines. The Codex reader does the work; this adapter names the sessions
(and their parents and forks) after itself. The variables peers honour for a moved home
(``TRAE_HOME``, ``TRAECLI_HOME``) are not documented as to which folder they name, so none is
read. Not resumable from agtail: no TRAE CLI ``--help`` could be read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from agtaild.adapters.base import ReadResult, ResumeCommand, Unit
from agtaild.adapters.codex.adapter import CodexAdapter
from agtaild.model import Session

_CODEX = "codex"


class TraeCliAdapter(CodexAdapter):
    id: ClassVar[str] = "trae-cli"
    name: ClassVar[str] = "TRAE CLI"
    env_vars: ClassVar[tuple[str, ...]] = ()
    root_help: ClassVar[str] = (
        "the sessions folder of TRAE CLI (~/.trae/cli/sessions); archived_sessions/ beside it is read too"
    )
    formats_tested: ClassVar[tuple[str, ...]] = (
        "Codex rollout JSONL as TRAE CLI writes it (derived sample)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = ("trae-cli/derived/.trae/cli/sessions",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        roots = [home / ".trae" / "cli" / "sessions"]
        legacy = home / ".trae" / "sessions"
        if legacy.is_dir():
            roots.append(legacy)
        return roots

    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        result = super().read(unit, state, now=now)
        s = result.session
        s.agent = self.id
        s.resumable = False
        for ref in (s.parent, s.forked_from):
            if ref is not None and ref.agent == _CODEX:
                ref.agent = self.id
        return result

    def start_command(self, prompt: str, cwd: str | None) -> ResumeCommand | None:
        return None

    def resume(self, session: Session) -> ResumeCommand | None:
        return None
