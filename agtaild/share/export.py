"""``agtail export AGENT:ID --format md|html|json``: one session written for people or tools.

The writers stream: events come a page at a time from the query layer and go out as they come,
so memory stays flat whatever the session's size.
"""

from __future__ import annotations

from typing import Any, TextIO

import msgspec

from agtaild.share import html, markdown
from agtaild.share.gather import Call, SharedSession, open_session
from agtaild.share.redact import Redactor

_encode = msgspec.json.Encoder().encode

FORMATS = ("md", "html", "json")
MEDIA_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
}


def write_json(shared: SharedSession, out: TextIO, *, redact: Redactor) -> None:
    """``{"session": Session, "secrets_masked": bool, "events": [Event…]}``, as the API gives
    them: one event a line, each encoded once (msgspec) and a page written at a time."""
    session = _encode(redact.document(shared.session)).decode()
    out.write(
        f'{{"session": {session}, "secrets_masked": {"true" if redact.secrets_masked else "false"}, "events": ['
    )
    sep = "\n"
    known_clean = getattr(shared.call, "known_clean", None)  # agtaild.share.gather.reading
    for page in shared.pages():
        out.write(sep + b",\n".join(redact.documents(page, known_clean)).decode())
        sep = ",\n"
    out.write("\n]}\n")


class Export:
    """One session opened for a document (:func:`open_export`): its ``report`` (agent, id,
    title, format, whether secrets are masked) is known before a byte is written, so a caller
    can name the file, or answer "no such session", first; :meth:`write` streams the rest."""

    def __init__(self, shared: SharedSession, fmt: str, redact: Redactor, depth: int) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}")
        self.shared, self.fmt, self.redact, self.depth = shared, fmt, redact, depth
        s = shared.session
        self.report: dict[str, Any] = {
            "agent": s["agent"],
            "id": s["id"],
            "title": s.get("title"),
            "format": fmt,
            "secrets_masked": redact.secrets_masked,
        }

    def write(self, out: TextIO) -> None:
        if self.fmt == "md":
            markdown.write(self.shared, out, redact=self.redact, depth=self.depth)
        elif self.fmt == "html":
            html.write(self.shared, out, redact=self.redact, depth=self.depth)
        else:
            write_json(self.shared, out, redact=self.redact)


def open_export(
    call: Call,
    agent: str,
    ident: str,
    fmt: str,
    *,
    branches: bool = False,
    depth: int = 1,
    redact_paths: bool = False,
    collection: str | None = None,
) -> Export:
    """The session ``agent:ident`` (an id prefix; ``NotFound``/``UsageError`` as ``sessions.get``
    raises them) ready to be written in ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    shared = open_session(call, agent, ident, branches=branches, collection=collection)
    return Export(shared, fmt, Redactor(paths=redact_paths), depth)


def export(
    call: Call,
    agent: str,
    ident: str,
    fmt: str,
    out: TextIO,
    *,
    branches: bool = False,
    depth: int = 1,
    redact_paths: bool = False,
    collection: str | None = None,
) -> dict[str, Any]:
    """Write the session in ``fmt`` to ``out``; returns the session's summary (agent, id, title)."""
    doc = open_export(call, agent, ident, fmt, branches=branches, depth=depth, redact_paths=redact_paths,
                      collection=collection)  # fmt: skip
    doc.write(out)
    return doc.report
