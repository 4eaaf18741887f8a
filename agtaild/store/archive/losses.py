"""What the finisher could not archive as the index read it, kept for ``agtail doctor``.

A pinned file that was rewritten in place before the finisher got to it has lost the bytes
the index read; a pin replaced by a symlink or another file is not archived as the session it
claims to be (agtaild.store.archive.pinned). The finisher logs each (``pins/finisher.log``)
and appends one JSON line to ``pins/problems.jsonl`` — time, archive path, what happened —
which doctor reports until the file is removed. The file is started anew past LIMIT bytes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError
from agtaild.fsnames import to_text
from agtaild.store.archive.durable import NOFOLLOW
from agtaild.store.archive.pins import open_pins_dir
from agtaild.sync.safety import open_regular

log = logging.getLogger(__name__)

NAME = "problems.jsonl"
LIMIT = 1 << 20


def record(store_root: Path | str, path: str, problem: str) -> None:
    """Note that ``path`` (archive path) could not be archived as read, and why."""
    log.warning("archive: %s: %s", to_text(path), problem)
    line = json.dumps({"time": round(time.time(), 3), "path": to_text(path), "problem": problem}) + "\n"
    try:
        folder = open_pins_dir(store_root, create=True)
        try:
            with contextlib.suppress(FileNotFoundError):
                if os.lstat(NAME, dir_fd=folder).st_size > LIMIT:
                    os.unlink(NAME, dir_fd=folder)
            fd = os.open(NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND | NOFOLLOW, 0o600, dir_fd=folder)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(line)
        finally:
            os.close(folder)
    except (OSError, AgtailError) as exc:  # the log line above is all there is
        log.warning("archive: cannot record it in %s: %s", NAME, getattr(exc, "message", exc))


def recent(store_root: Path | str, limit: int = 20) -> tuple[int, list[dict[str, Any]]]:
    """How many problems are recorded, and the last ``limit`` of them."""
    try:
        folder = open_pins_dir(store_root, create=False)
    except (OSError, AgtailError):
        return 0, []
    try:
        with os.fdopen(open_regular(folder, NAME), "rb") as fh:
            lines = fh.read().splitlines()
    except (OSError, AgtailError):
        return 0, []
    finally:
        os.close(folder)
    out: list[dict[str, Any]] = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("path"), str) and isinstance(item.get("problem"), str):
            out.append(item)
    return len(out), out[-limit:]
