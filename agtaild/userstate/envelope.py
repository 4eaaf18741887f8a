"""The checked envelope of a user-state document: a state pack (agtaild.sync.statepack) and a
backup (agtaild.userstate.backup) are both one JSON object with a ``format``, a ``version``,
lists of rows and the sha256 of those lists, and both are refused whole when any of that is
off. Each caller words the refusal for its own reader; the checks are these."""

from __future__ import annotations

import hashlib
import json
from typing import Any


class EnvelopeError(ValueError):
    """Why a document was refused: ``kind`` is one of size, json, format, version, list, digest;
    ``detail`` what was found (the size limit in MB, the parser's error, the version, the list)."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


def digest(doc: dict[str, Any], lists: tuple[str, ...]) -> str:
    """The sha256 of ``doc``'s ``lists`` (sorted keys, compact, UTF-8)."""
    text = json.dumps({k: doc[k] for k in lists}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def check(data: bytes, *, fmt: str, version: int, lists: tuple[str, ...], max_bytes: int) -> dict[str, Any]:
    """The document in ``data`` if it is whole and ours; EnvelopeError otherwise."""
    if len(data) > max_bytes:
        raise EnvelopeError("size", str(max_bytes >> 20))
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise EnvelopeError("json", str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise EnvelopeError("format")
    if doc.get("version") != version:
        raise EnvelopeError("version", repr(doc.get("version")))
    for name in lists:
        if not isinstance(doc.get(name), list):
            raise EnvelopeError("list", name)
    if doc.get("sha256") != digest(doc, lists):
        raise EnvelopeError("digest")
    return doc
