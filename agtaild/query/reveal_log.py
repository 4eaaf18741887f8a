"""The log of reveals: who asked for which session's text unmasked, and when (never any text).

Written by the daemon for a reveal over its unix socket (agtaild.api.reveal) and by the CLI for
one in-process (agtaild.query.backend): a line on the daemon's log (logger ``agtaild.reveal``)
and one JSON line in ``<data dir>/reveal.log`` (mode 0600).
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

log = logging.getLogger("agtaild.reveal")

LOG_NAME = "reveal.log"


def record(data_dir: str | None, who: str, method: str, params: dict[str, Any]) -> None:
    """Log one reveal (daemon log and ``<data dir>/reveal.log``); never any text revealed."""
    session = ":".join(str(params[k]) for k in ("agent", "id") if params.get(k) is not None) or None
    entry: dict[str, Any] = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "who": who,
        "method": method,
        "session": session,
    }
    for key in ("collection", "path", "after_seq", "before_seq"):
        if params.get(key) is not None:
            entry[key] = params[key]
    log.warning("reveal: %s asked %s of %s unmasked", who, method, session or "?")
    if not data_dir:
        return
    path = os.path.join(data_dir, LOG_NAME)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(entry, ensure_ascii=False) + "\n").encode())
        finally:
            os.close(fd)
    except OSError as exc:
        log.error("reveal: could not write %s: %s", path, exc)


def entries(data_dir: str) -> list[dict[str, Any]]:
    """The reveal log, oldest first (lines that do not parse are skipped)."""
    out = []
    try:
        with open(os.path.join(data_dir, LOG_NAME), encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    except FileNotFoundError:
        return []
    return out
