"""Where the daemon is: the data dir, its agtaild.json and its token, found as the CLI finds them.

The data dir is ``data_dir`` when given, else ``$AGTAIL_DATA_DIR``, else the platform's user
data dir for "agtail" (written out here for Linux, macOS and Windows, as platformdirs gives it,
so that the client needs nothing beyond the standard library). A running daemon writes
``<data dir>/agtaild.json`` (its socket, URL, pid) and ``<data dir>/token`` (for TCP).
"""

from __future__ import annotations

import os
import sys

from agtail_client import cjson as json  # json.loads/dumps without the json package (agtail_client.cjson)

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from collections.abc import Mapping
    from pathlib import Path
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
    from pathlib import Path

    return Path(data_dir_name(env))


def data_dir_name(env: Mapping[str, str] | None = None) -> str:
    """:func:`default_data_dir` as a string, made without pathlib (which, with urllib.parse
    under it, costs a CLI command against a daemon ~15 % of its time)."""
    env = os.environ if env is None else env
    if env.get("AGTAIL_DATA_DIR"):
        return os.path.expanduser(env["AGTAIL_DATA_DIR"])
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":
        return os.path.join(env.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local"), APP)
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, APP)
    return os.path.join(os.path.expanduser("~/.local/share"), APP)


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    from pathlib import Path

    return Path(resolve_data_dir_name(data_dir))


def resolve_data_dir_name(data_dir: str | os.PathLike[str] | None) -> str:
    """The data dir given (``~`` expanded), else the default one, as a string."""
    return os.path.expanduser(os.fspath(data_dir)) if data_dir is not None else data_dir_name()


def read_state(data_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A daemon's agtaild.json (None when there is none, or it is unreadable)."""
    try:
        with open(os.path.join(os.path.expanduser(os.fspath(data_dir)), STATE_FILE), encoding="utf-8") as fh:
            doc = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_token(data_dir: str | os.PathLike[str]) -> str | None:
    """The daemon's token (None when the file is missing or unreadable)."""
    try:
        with open(os.path.join(os.path.expanduser(os.fspath(data_dir)), TOKEN_FILE), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None
