"""The data dir and the runtime dir, found without importing anything heavy.

Every CLI command needs the data dir (it holds agtaild.json, which says whether a daemon
serves it), so this module imports only the standard library: `agtail list` against a
daemon should not pay for msgspec or platformdirs. On Linux the common cases are the XDG
rule written out; platformdirs (imported only then) decides everything else, so the answer
is always the one platformdirs gives.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

APP = "agtail"


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$AGTAIL_DATA_DIR``, else the platform user data dir (``$XDG_DATA_HOME/agtail``, else
    ``~/.local/share/agtail`` on Linux)."""
    env = os.environ if env is None else env
    if env.get("AGTAIL_DATA_DIR"):
        return Path(env["AGTAIL_DATA_DIR"]).expanduser()
    fast = _linux_user_data_dir()
    if fast is not None:
        return Path(fast)
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def _linux_user_data_dir() -> str | None:
    """platformdirs' user data dir on Linux, for the cases where every platformdirs >= 4.0
    agrees (XDG_DATA_HOME absolute, or unset/blank with an absolute HOME); None otherwise
    (other systems, Android, a relative XDG_DATA_HOME or HOME: ask platformdirs).

    Like platformdirs, this reads the process environment, not a given ``env``.
    """
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
        return None
    environ = os.environ
    if environ.get("ANDROID_DATA") == "/data" and environ.get("ANDROID_ROOT") == "/system":
        return None  # maybe an Android app: platformdirs looks further
    xdg = environ.get("XDG_DATA_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, APP)
    if not xdg.strip() and environ.get("HOME", "").startswith("/"):
        return os.path.join(os.path.expanduser("~/.local/share"), APP)
    return None


def runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where the daemon's unix socket lives (a 0700 directory)."""
    env = os.environ if env is None else env
    if env.get("AGTAIL_RUNTIME_DIR"):
        return Path(env["AGTAIL_RUNTIME_DIR"]).expanduser()
    if env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"]) / APP
    import platformdirs

    return Path(platformdirs.user_runtime_dir(APP, appauthor=False))
