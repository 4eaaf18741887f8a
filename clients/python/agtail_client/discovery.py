"""Where the daemon is: the data dir, its agtaild.json and its token, found as the CLI finds them.

The data dir is ``data_dir`` when given, else ``$AGTAIL_DATA_DIR``, else the platform's user
data dir for "agtail" (written out here for Linux, macOS and Windows, as platformdirs gives it,
so that the client needs nothing beyond the standard library). A running daemon writes
``<data dir>/agtaild.json`` (its socket, URL, pid) and ``<data dir>/token`` (for TCP).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from typing import Any

APP = "agtail"
STATE_FILE = "agtaild.json"
TOKEN_FILE = "token"


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$AGTAIL_DATA_DIR``, else the platform user data dir of agtail.

    Linux and the BSDs: ``$XDG_DATA_HOME/agtail`` (an absolute XDG_DATA_HOME), else
    ``~/.local/share/agtail``; macOS: ``~/Library/Application Support/agtail``; Windows:
    ``%LOCALAPPDATA%\\agtail``. (The daemon asks platformdirs, which agrees in these cases;
    for anything unusual, pass the data dir.)
    """
    env = os.environ if env is None else env
    if env.get("AGTAIL_DATA_DIR"):
        return Path(env["AGTAIL_DATA_DIR"]).expanduser()
    if sys.platform == "darwin":
        return Path("~/Library/Application Support").expanduser() / APP
    if sys.platform == "win32":
        base = env.get("LOCALAPPDATA") or str(Path("~/AppData/Local").expanduser())
        return Path(base) / APP
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg.startswith("/"):
        return Path(xdg) / APP
    return Path("~/.local/share").expanduser() / APP


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    return Path(data_dir).expanduser() if data_dir is not None else default_data_dir()


def read_state(data_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A daemon's agtaild.json (None when there is none, or it is unreadable)."""
    try:
        doc = json.loads((Path(data_dir).expanduser() / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_token(data_dir: str | os.PathLike[str]) -> str | None:
    """The daemon's token (None when the file is missing or unreadable)."""
    try:
        return (Path(data_dir).expanduser() / TOKEN_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
