"""The Open Interpreter adapter: ``conversations/*.json``, each a JSON array of messages.

Open Interpreter 0.4.3 (``terminal_interface/utils/local_storage_path.py``) keeps them in
``platformdirs.user_config_dir("open-interpreter")/conversations``: ``$XDG_CONFIG_HOME/
open-interpreter`` (``~/.config/open-interpreter``), macOS ``~/Library/Application Support/
open-interpreter``. A message is ``{role: user|assistant|computer, type: message|code|console|
image|…, format?, content}``:

* ``message`` → ``text`` of its role;
* an assistant's ``code`` block (``format`` = the language) is what it ran → ``tool_use``
  (``tool`` = the language, ``input`` = ``{"language", "code"}``);
* the ``computer``'s ``console`` output after it is that block's result (``merged``);
* anything else → ``unknown`` with the raw JSON.

There are no ids, timestamps, models or token counts in the file: the session's id is the
file's name without ``.json``, its start (and end) the date in that name (local time, read as
UTC); the file's modification time is the session's ``mtime``. Not resumable: ``interpreter --conversations`` only offers
an interactive picker, no flag takes a conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.kit import scan
from agtaild.adapters.kit.jsondoc import JsonDocAdapter, RecordBook
from agtaild.adapters.kit.values import title_from_prompt
from agtaild.model import Event, Session

_STAMP = re.compile(r"__([A-Z][a-z]+_\d{2}_\d{4}_\d{2}-\d{2}-\d{2})$")


def started_from_name(stem: str) -> str | None:
    """The time in ``…__December_01_2026_20-36-54`` as ISO (naive local time, read as UTC)."""
    m = _STAMP.search(stem)
    if not m:
        return None
    try:
        dt = datetime.strptime(m.group(1), "%B_%d_%Y_%H-%M-%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class OpenInterpreterAdapter(JsonDocAdapter):
    id: ClassVar[str] = "open-interpreter"
    name: ClassVar[str] = "Open Interpreter"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_CONFIG_HOME",)
    root_help: ClassVar[str] = "the conversations folder (~/.config/open-interpreter/conversations)"
    formats_tested: ClassVar[tuple[str, ...]] = ("open-interpreter 0.4.3",)
    sample_roots: ClassVar[tuple[str, ...]] = ("real/open-interpreter-0.4.3/conversations",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        config = env_path(env, "XDG_CONFIG_HOME") or home / ".config"
        roots = [config / "open-interpreter" / "conversations"]
        mac = home / "Library" / "Application Support" / "open-interpreter" / "conversations"
        if mac.is_dir():
            roots.append(mac)
        return roots

    def discover(self, root: Path) -> Iterator[Unit]:
        if not root.is_dir():
            return
        for entry in scan.entries(root):
            if entry.name.endswith(".json") and scan.is_file(entry) and scan.size(entry) > 0:
                yield Unit(agent=self.id, path=entry.path, files=[entry.path], root=str(root))

    def new_session(self, unit: Unit) -> Session:
        stem = Path(unit.path).stem
        return Session(agent=self.id, id=stem, path=unit.path, started=started_from_name(stem), resumable=False)

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        if not isinstance(doc, list):
            book.emit(Event(seq=-1, kind="unknown", raw=doc, source={"row": 1}))
            book.count("events")
            return
        s = book.session
        pending: Event | None = None
        for number, msg in enumerate(doc, 1):
            source = {"row": number}
            if not isinstance(msg, dict):
                book.emit(Event(seq=-1, kind="unknown", raw=msg, source=source))
                book.count("events")
                continue
            role, kind, content = msg.get("role"), msg.get("type"), msg.get("content")
            fmt = msg.get("format") if isinstance(msg.get("format"), str) else None
            if kind == "message" and role in ("user", "assistant") and isinstance(content, str):
                book.emit(Event(seq=-1, kind="text", role=role, text=content, source=source))
                s.messages += 1
                if role == "user" and s.first_prompt is None and content.strip():
                    s.first_prompt = content
                pending = None
            elif kind == "code" and role == "assistant" and isinstance(content, str):
                pending = book.emit(
                    Event(seq=-1, kind="tool_use", role="assistant", tool=fmt or "code",
                          input={"language": fmt, "code": content}, source=source)
                )  # fmt: skip
            elif kind == "console" and role == "computer" and pending is not None and isinstance(content, str):
                pending.result = content if pending.result is None else f"{pending.result}{content}"
                pending.is_error = False
                book.count("merged")
                continue
            else:
                book.emit(Event(seq=-1, kind="unknown", role=role if isinstance(role, str) else None,
                                raw=msg, source=source))  # fmt: skip
            book.count("events")

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        s.title = title_from_prompt(s.first_prompt)
        s.ended = s.started  # the only time the file records (its mtime is the session's mtime)
        return s

    def resume(self, session: Session) -> ResumeCommand | None:
        return None
