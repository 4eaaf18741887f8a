"""What every shared document masks: secrets always, and on request the home directory and the
user's name.

Secrets are masked with the scanner's rules on the text being written (agtaild.secrets), so a
session whose scan has not run yet is masked all the same; where that package is not installed
the text passes as it is and :data:`SECRETS_MASKED` is False (the document says so).
``--redact-paths`` replaces the home directory with ``~`` and the user name with ``<user>``.

Events written whole (JSON) are masked a page at a time as every exit masks an event
(agtaild.query.masking: one cheap gathering pass of the strings, one batched scan, only an
event holding a secret rebuilt; the index's record of events it scanned clean spares the
scan), not walked value by value: on a 50 MB session that walk took 65 s (bench/RESULTS.md).
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Callable
from typing import Any

import msgspec


def _secret_masker() -> Callable[[str], str] | None:
    try:
        from agtaild.secrets import mask
    except ImportError:
        return None
    return mask


def _json_masker() -> Callable[[Any], Any] | None:
    try:
        from agtaild.secrets import mask_json
    except ImportError:
        return None
    return mask_json


def _items_masker() -> Any:
    """A masker of answers' items of its own (its verdicts die with the document: a 50 MB
    session would fill the shared one with verdicts no exit asks for again)."""
    try:
        from agtaild.query.masking import AnswerMasker
        from agtaild.secrets import default_scanner
    except ImportError:
        return None
    return AnswerMasker(default_scanner(), max_verdicts=0)


class Redactor:
    """Applied to every string a document writes (``text``), to every JSON value (``value``) and
    to every JSON document written whole (``document``)."""

    def __init__(self, *, paths: bool = False, home: str | None = None, user: str | None = None) -> None:
        self._mask = _secret_masker()
        self._mask_json = _json_masker()
        self._items = _items_masker() if self._mask is not None else None
        self.secrets_masked = self._mask is not None
        self._subs: list[tuple[re.Pattern[str], str]] = []
        self._needles: list[bytes] = []  # what a path substitution looks for, as JSON holds it
        if paths:
            home = (home or os.path.expanduser("~")).rstrip("/")
            user = user or _user_name()
            if home and home != "/":
                self._subs.append((re.compile(re.escape(home) + r"(?=/|\b|$)"), "~"))
                self._needles.append(home.encode())
            if user and len(user) >= 3:
                self._subs.append((re.compile(r"(?<![\w.-])" + re.escape(user) + r"(?![\w-])"), "<user>"))
                self._needles.append(user.encode())

    def text(self, value: str) -> str:
        if self._mask is not None:
            value = self._mask(value)
        for pattern, repl in self._subs:
            value = pattern.sub(repl, value)
        return value

    def documents(
        self,
        values: list[dict[str, Any]],
        known_clean: Callable[[Any, list[bytes]], set[bytes]] | None = None,
    ) -> list[bytes]:
        """A page of events, each masked as every exit masks an event (agtaild.query.masking;
        ``known_clean(scanner, digests)``: the index's record of events it scanned clean), then
        the path substitutions: each one's JSON (msgspec), encoded once when clean."""
        if self._items is not None:
            scanner = self._items.scanner
            lookup = None if known_clean is None else (lambda keys: known_clean(scanner, keys))
            masked = self._items.mask({"events": values}, lookup)["events"]
        else:
            masked = values
        out: list[bytes] = []
        for value in masked:
            data = _encode(value)
            if self._needles and any(n in data for n in self._needles):
                data = _encode(self._paths(value))
            out.append(data)
        return out

    def document(self, value: Any) -> Any:
        """A JSON document (a session, an event) masked as the service masks its answers (the
        scanner walks the whole document, so a key named in one field and given in another is
        found too), then the path substitutions."""
        if self._mask_json is not None:
            value = self._mask_json(value)
        return self._paths(value) if self._subs else value

    def _paths(self, value: Any) -> Any:
        if isinstance(value, str):
            for pattern, repl in self._subs:
                value = pattern.sub(repl, value)
            return value
        if isinstance(value, list):
            return [self._paths(v) for v in value]
        if isinstance(value, dict):
            return {self._paths(k) if isinstance(k, str) else k: self._paths(v) for k, v in value.items()}
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        return value


_encode = msgspec.json.Encoder().encode


def _user_name() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError):
        return os.environ.get("USER")
