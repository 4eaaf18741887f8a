"""The Example Agent adapter: ``$EXAMPLE_HOME/sessions/<id>.jsonl`` (default ``~/.example``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsonl import JsonlAdapter, LineParser
from agtaild.model import Session
from tests.example_agent.parser import ExampleParser


class ExampleAdapter(JsonlAdapter):
    id: ClassVar[str] = "example"
    name: ClassVar[str] = "Example Agent"
    env_vars: ClassVar[tuple[str, ...]] = ("EXAMPLE_HOME",)
    root_help: ClassVar[str] = "the sessions folder (~/.example/sessions)"
    formats_tested: ClassVar[tuple[str, ...]] = ("example 1.0",)
    sample_roots: ClassVar[tuple[str, ...]] = ("example/sessions",)
    Parser: ClassVar[type[LineParser[Any]]] = ExampleParser

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [(env_path(env, "EXAMPLE_HOME") or home / ".example") / "sessions"]

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for entry in scan.entries(root):  # an unreadable folder is reported, not raised
            if entry.name.endswith(".jsonl") and scan.is_file(entry):
                yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    def resume(self, session: Session) -> ResumeCommand | None:
        return ResumeCommand(argv=["example", f"--resume={session.id}"], cwd=session.cwd)
