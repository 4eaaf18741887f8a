"""What every shared document masks: secrets always, and on request the home directory and the
user's name.

Secrets are masked with the scanner's rules on the text being written (agtaild.secrets), so a
session whose scan has not run yet is masked all the same; where that package is not installed
the text passes as it is and :data:`SECRETS_MASKED` is False (the document says so).
``--redact-paths`` replaces the home directory with ``~`` and the user name with ``<user>``.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Callable
from typing import Any


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


class Redactor:
    """Applied to every string a document writes (``text``), to every JSON value (``value``) and
    to every JSON document written whole (``document``)."""

    def __init__(self, *, paths: bool = False, home: str | None = None, user: str | None = None) -> None:
        self._mask = _secret_masker()
        self._mask_json = _json_masker()
        self.secrets_masked = self._mask is not None
        self._subs: list[tuple[re.Pattern[str], str]] = []
        if paths:
            home = (home or os.path.expanduser("~")).rstrip("/")
            user = user or _user_name()
            if home and home != "/":
                self._subs.append((re.compile(re.escape(home) + r"(?=/|\b|$)"), "~"))
            if user and len(user) >= 3:
                self._subs.append((re.compile(r"(?<![\w.-])" + re.escape(user) + r"(?![\w-])"), "<user>"))

    def text(self, value: str) -> str:
        if self._mask is not None:
            value = self._mask(value)
        for pattern, repl in self._subs:
            value = pattern.sub(repl, value)
        return value

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


def _user_name() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError):
        return os.environ.get("USER")
