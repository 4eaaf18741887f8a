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

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathlib (with urllib.parse under it) is imported where a Path is made: `agtail` starts faster
    from collections.abc import Mapping
    from pathlib import Path

APP = "agtail"

#: The umask bits every agtail process adds at start-up: what it creates is the user's alone,
#: files 0600 and directories 0700 (transcripts, the index of them, the archive, the token;
#: SQLite makes its -wal and -shm files with the mode of their database).
PRIVATE_UMASK = 0o077


def private_umask() -> int:
    """From now on, create every file 0600 and every directory 0700 at most (a stricter umask
    already set is kept); returns the umask before. Called once at the start of the daemon,
    of the CLI, and of the archive's finisher and mirror processes."""
    old = os.umask(PRIVATE_UMASK)
    os.umask(old | PRIVATE_UMASK)
    return old


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$AGTAIL_DATA_DIR``, else the platform user data dir (``$XDG_DATA_HOME/agtail``, else
    ``~/.local/share/agtail`` on Linux)."""
    from pathlib import Path

    env = os.environ if env is None else env
    if env.get("AGTAIL_DATA_DIR"):
        return Path(env["AGTAIL_DATA_DIR"]).expanduser()
    fast = _linux_user_data_dir()
    if fast is not None:
        return Path(fast)
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def default_data_dir_name(env: Mapping[str, str] | None = None) -> str:
    """:func:`default_data_dir` as a string, made without pathlib where it can be (the CLI
    asks this before every command; pathlib and urllib.parse under it cost ~15 % of one)."""
    env = os.environ if env is None else env
    if env.get("AGTAIL_DATA_DIR"):
        return os.path.expanduser(env["AGTAIL_DATA_DIR"])
    fast = _linux_user_data_dir()
    return fast if fast is not None else str(default_data_dir(env))


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """agtail's cache dir: ``$XDG_CACHE_HOME/agtail``, else ``~/.cache/agtail`` on Linux
    (platformdirs' user cache dir elsewhere). It holds what can be rebuilt at any time: the
    indexes of commands run with roots other than their data dir's (agtaild/index/owner.py)."""
    from pathlib import Path

    env = os.environ if env is None else env
    if sys.platform == "linux" and not hasattr(sys, "getandroidapilevel"):
        xdg = env.get("XDG_CACHE_HOME", "")
        if xdg.startswith("/"):
            return Path(xdg) / APP
        home = env.get("HOME", "")
        if home.startswith("/"):
            return Path(home) / ".cache" / APP
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


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
    """Where the daemon's unix socket lives (a 0700 directory).

    ``$AGTAIL_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/agtail``. Without a usable
    XDG_RUNTIME_DIR (ssh sessions, containers, cron) Linux falls back quietly — platformdirs
    would print a RuntimeDirWarning on every start — to ``/run/user/<uid>/agtail`` when that
    is a private directory of ours, else ``<tmp>/agtail-<uid>`` (created 0700 by the daemon,
    refused if someone else owns it). `agtail doctor` says which one and why.
    """
    return runtime_dir_choice(env)[0]


def runtime_dir_choice(env: Mapping[str, str] | None = None) -> tuple[Path, str | None]:
    """(the runtime dir, why a fallback was used — None when none was)."""
    from pathlib import Path

    env = os.environ if env is None else env
    if env.get("AGTAIL_RUNTIME_DIR"):
        return Path(env["AGTAIL_RUNTIME_DIR"]).expanduser(), None
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
        if xdg:
            return Path(xdg) / APP, None
        import platformdirs

        return Path(platformdirs.user_runtime_dir(APP, appauthor=False)), None
    problem = _private_dir_problem(xdg) if xdg.startswith("/") else "is not set"
    if problem is None:
        return Path(xdg) / APP, None
    why = f"XDG_RUNTIME_DIR {problem}"
    uid = os.getuid()
    system = f"/run/user/{uid}"
    if _private_dir_problem(system) is None:
        return Path(system) / APP, why
    import tempfile

    fallback = Path(tempfile.gettempdir()) / f"{APP}-{uid}"
    taken = _private_dir_problem(str(fallback))
    if taken is not None and "does not exist" not in taken and "open to" not in taken:
        # Someone else made it (or a link in its place): never use it. The daemon records
        # its socket path in agtaild.json, so clients find a per-process name as well.
        fallback = Path(tempfile.gettempdir()) / f"{APP}-{uid}-{os.getpid()}"
        why = f"{why}; {taken.replace('(', '', 1).replace(')', '', 1)}"
    return fallback, why


def _private_dir_problem(path: str) -> str | None:
    """Why ``path`` is not a directory of ours that nobody else can use (None: it is)."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return f"({path}) does not exist"
    if not stat.S_ISDIR(st.st_mode):
        return f"({path}) is not a directory"
    if st.st_uid != os.getuid():
        return f"({path}) belongs to another user"
    if st.st_mode & 0o077:
        return f"({path}) is open to other users"
    return None
