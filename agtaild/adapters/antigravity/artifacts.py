"""An Antigravity brain folder's Markdown artifacts → one session (the IDE's, whose conversation
body is encrypted; or a CLI conversation whose step log is not written yet: ``extra.mode`` says
which app's folder it is in).

Each ``*.md`` (``task.md``, ``implementation_plan.md``, ``walkthrough.md`` first, then the rest
by name) is one ``text`` event (assistant, ``subtype: artifact``, ``extra.artifact`` = its file
name, ``ts`` = its mtime); the title is the first heading of the first artifact. The encrypted
``conversations/<id>.pb`` beside it is named in ``extra.encrypted_conversation`` (path and
size) and is not read: no key is on disk to read it with.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agtaild.adapters.base import ReadResult, Unit
from agtaild.adapters.kit.files import read_regular, regular_stat
from agtaild.adapters.kit.stamps import from_epoch_ms, widen
from agtaild.model import Event, Session

#: The artifacts the IDE writes, in the order a reader wants them.
FIRST = ("task.md", "implementation_plan.md", "walkthrough.md")
#: The most of one artifact read.
MAX_ARTIFACT = 4 * 1024 * 1024


def ordered(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (FIRST.index(n) if n in FIRST else len(FIRST), n))


def _mtime(st: os.stat_result) -> str | None:
    return from_epoch_ms(st.st_mtime_ns // 1_000_000)


def _heading(text: str) -> str | None:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            return stripped.lstrip("#").strip() or None
    return None


def read_artifacts(unit: Unit) -> ReadResult:
    s = Session(agent="antigravity", id=Path(unit.path).name, path=unit.path, resumable=False)
    s.extra["mode"] = unit.hints.get("app") or "ide"
    events: list[Event] = []
    artifacts = [f for f in unit.files if f.endswith(".md")]
    by_name = {os.path.basename(f): f for f in artifacts}
    newest = 0.0
    for name in ordered(list(by_name)):
        path = by_name[name]
        st = regular_stat(path)
        text = read_regular(path, MAX_ARTIFACT).decode("utf-8", errors="replace")
        ts = _mtime(st)
        newest = max(newest, st.st_mtime)
        s.started, s.ended = widen(s.started, s.ended, ts)
        events.append(Event(seq=len(events), kind="text", ts=ts, role="assistant", text=text, subtype="artifact",
                            source={"file": name}, extra={"artifact": name}))  # fmt: skip
        if s.title is None:
            s.title = _heading(text)
    s.messages = len(events)
    s.accounting.lines = s.accounting.events = len(events)
    body = unit.hints.get("encrypted")
    if isinstance(body, str):
        try:
            info: dict[str, Any] = {"path": body, "bytes": os.stat(body).st_size}
        except OSError:
            info = {"path": body}
        s.extra["encrypted_conversation"] = info
    s.mtime = newest or None
    return ReadResult(session=s, events=events, usage=[], state=None, reset=True)
