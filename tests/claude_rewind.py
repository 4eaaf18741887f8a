"""Claude Code sessions with rewinds, built from a real 2.1.197 sample the way Claude Code
writes them: rewinding (or editing) a prompt appends a new ``user`` line whose ``parentUuid``
is the record before the replaced prompt, so the old continuation stays in the file."""

from __future__ import annotations

import json
import uuid as uuidlib
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS

SAMPLE = (
    CORPUS / "real" / "claude-2.1.197" / "projects" / "-tmp-rt-claude-home-src-demo-app"
    / "cd61be5e-6fcd-4c16-b5d5-281dd40378d1.jsonl"
)  # fmt: skip
SESSION_ID = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
#: The sample's last assistant record: the follow-up prompts below branch off it.
LAST = "bcec6c82"


def sample_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def last_uuid() -> str:
    return next(o["uuid"] for o in sample_lines() if str(o.get("uuid", "")).startswith(LAST))


def prompt(text: str, parent: str | None, uid: str | None = None) -> dict[str, Any]:
    """A typed prompt, shaped as the sample's first user line."""
    line = dict(next(o for o in sample_lines() if o.get("type") == "user"))
    line.update(
        parentUuid=parent, uuid=uid or str(uuidlib.uuid4()), promptId=str(uuidlib.uuid4()),
        message={"role": "user", "content": text}, timestamp="2026-11-30T00:30:00.000Z",
    )  # fmt: skip
    return line


def answer(text: str, parent: str, uid: str | None = None) -> dict[str, Any]:
    """An assistant reply, shaped as the sample's last assistant line (fresh message/request ids)."""
    line = json.loads(json.dumps(next(o for o in sample_lines() if str(o.get("uuid", "")).startswith(LAST))))
    line.update(parentUuid=parent, uuid=uid or str(uuidlib.uuid4()), requestId=f"req_{uuidlib.uuid4().hex}",
                timestamp="2026-11-30T00:30:05.000Z")  # fmt: skip
    line["message"]["id"] = f"msg_{uuidlib.uuid4().hex}"
    line["message"]["content"] = [{"type": "text", "text": text}]
    return line


def write_lines(path: Path, lines: list[dict[str, Any]], *, append: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a" if append else "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def rewound_session(path: Path) -> dict[str, str]:
    """The sample, then a follow-up P2 → A2, then a rewind of P2: P2' → A2'. Returns the uuids."""
    last = last_uuid()
    ids = {k: str(uuidlib.uuid4()) for k in ("p2", "a2", "p2b", "a2b")}
    write_lines(path, sample_lines())
    write_lines(
        path,
        [
            prompt("Now add a farewell() function", last, ids["p2"]),
            answer("Added farewell() to hello.py (first try)", ids["p2"], ids["a2"]),
            prompt("Now add a farewell() function in French", last, ids["p2b"]),
            answer("Ajouté farewell() en français", ids["p2b"], ids["a2b"]),
        ],
        append=True,
    )
    return ids
