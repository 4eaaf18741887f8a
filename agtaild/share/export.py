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
    out.write(f'{{"session": {session}, "secrets_masked": {"true" if redact.secrets_masked else "false"}, "events": [')
    sep = "\n"
    for page in shared.pages():
        out.write(sep + b",\n".join(redact.documents(page)).decode())
        sep = ",\n"
    out.write("\n]}\n")


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
    shared = open_session(call, agent, ident, branches=branches, collection=collection)
    redact = Redactor(paths=redact_paths)
    if fmt == "md":
        markdown.write(shared, out, redact=redact, depth=depth)
    elif fmt == "html":
        html.write(shared, out, redact=redact, depth=depth)
    elif fmt == "json":
        write_json(shared, out, redact=redact)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    s = shared.session
    return {
        "agent": s["agent"],
        "id": s["id"],
        "title": s.get("title"),
        "format": fmt,
        "secrets_masked": redact.secrets_masked,
    }
