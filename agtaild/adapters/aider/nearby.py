"""Where Aider histories are on this machine without being told: a bounded search.

Aider keeps no store of its own: each run appends to ``.aider.chat.history.md`` in the
repository it ran in. Other agents' sessions name working directories (``roots_for_cwds``);
when no other agent ran in a repository, these two places find it:

* the shell's history: ``aider`` invocations (bash, zsh, fish, and atuin, which records each
  command's working directory). Bash, zsh and fish record no working directory, so only what a
  line says counts: ``cd DIR && aider …``, ``aider --chat-history-file FILE``, ``aider /abs/file``.
  At most the last :data:`HISTORY_BYTES` of each history file are read;
* the usual project folders (:data:`PROJECT_FOLDERS` under HOME), :data:`SEARCH_DEPTH` levels
  deep, at most :data:`MAX_FOLDERS` folders in all (hidden folders and build output skipped).

Never a crawl of the disk. The answer is kept for :data:`KEEP_SECONDS` (the daemon's rescans
ask again; a new history file appears at the next one after that). `agtail doctor` states the
limits (:func:`limits`) and how to add other repositories.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from agtaild.adapters.kit.files import is_regular, open_regular
from agtaild.adapters.kit.sqlite_open import connect_ro
from agtaild.errors import AgtailError

#: Folders under HOME that hold repositories, by the usual names.
PROJECT_FOLDERS = (
    "src", "code", "Code", "projects", "Projects", "dev", "Developer", "work", "git", "repos",
    "workspace", "Workspace", "Documents/GitHub", "Documents/Projects", "go/src",
)  # fmt: skip
#: How deep below a project folder a history file is looked for.
SEARCH_DEPTH = 3
#: How many folders the project-folder search opens at most, all project folders together.
MAX_FOLDERS = 2000
#: How much of the end of each shell history file is read.
HISTORY_BYTES = 4 * 1024 * 1024
#: How many working directories atuin's history gives at most.
MAX_ATUIN_DIRS = 5000
#: How long an answer is kept before the machine is searched again.
KEEP_SECONDS = 300.0
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv", "target", "dist", "build", "vendor"})

_ZSH_EXTENDED = re.compile(r"^: \d+:\d+;")
_SEGMENT = re.compile(r"&&|\|\||[;|&\n]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Words before a command that leave it the command (shell keywords, fish's ``and``, wrappers).
_PREFIXES = frozenset({"and", "or", "not", "then", "do", "else", "exec", "command", "time", "nohup", "env", "builtin"})


def limits() -> str:
    """The search's bounds, in words (for `agtail doctor` and the docs)."""
    folders = ", ".join(f"~/{f}" for f in PROJECT_FOLDERS[:6])
    return (f"aider commands in the shell history (the last {HISTORY_BYTES // (1024 * 1024)} MB of each; "
            f"atuin's working directories), and {folders} … {SEARCH_DEPTH} levels deep, "
            f"at most {MAX_FOLDERS} folders")


def history_files(env: Mapping[str, str], home: Path) -> list[Path]:
    data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME", "").startswith("/") else home / ".local" / "share"
    files = [home / ".bash_history", home / ".zsh_history", home / ".zhistory", data / "fish" / "fish_history"]
    histfile = env.get("HISTFILE")
    if histfile and os.path.isabs(os.path.expanduser(histfile)):
        files.insert(0, Path(os.path.expanduser(histfile)))
    return list(dict.fromkeys(files))


def atuin_db(env: Mapping[str, str], home: Path) -> Path:
    data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME", "").startswith("/") else home / ".local" / "share"
    return data / "atuin" / "history.db"


def _tail(path: Path) -> str:
    try:
        with open_regular(path) as fh:  # a FIFO named .bash_history never blocks the search
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - HISTORY_BYTES))
            data = fh.read(HISTORY_BYTES)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def commands(text: str) -> Iterator[str]:
    """The command lines of a bash, zsh (plain or extended) or fish history."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("- cmd: "):  # fish
            yield line[len("- cmd: "):]
        elif _ZSH_EXTENDED.match(line):
            yield _ZSH_EXTENDED.sub("", line, count=1)
        elif not line.startswith(("when: ", "paths:", "- ")):
            yield line


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=False)
    except ValueError:  # an unbalanced quote: the plain words will do
        return segment.split()


def places_in(command: str, home: Path) -> list[Path]:
    """The folders and files an ``aider`` command line names: the folder a ``cd`` before it
    went to, ``--chat-history-file``, and absolute file arguments."""
    if "aider" not in command:
        return []
    cwd: Path | None = None
    out: list[Path] = []
    for segment in _SEGMENT.split(command):
        words = _words(segment)
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIXES):
            words = words[1:]
        if not words:
            continue
        if words[0] == "cd" and len(words) > 1:
            target = _absolute(words[1], home, cwd)
            cwd = target if target is not None else cwd
            continue
        if os.path.basename(words[0]) not in ("aider", "aider-chat"):
            continue
        if cwd is not None:
            out.append(cwd)
        args = iter(words[1:])
        for arg in args:
            if arg == "--chat-history-file":
                arg = next(args, "")
            elif arg.startswith("--chat-history-file="):
                arg = arg.partition("=")[2]
            elif arg.startswith("-"):
                continue
            path = _absolute(arg, home, cwd)
            if path is not None:
                out.append(path if arg.endswith(".md") else path.parent if "." in path.name else path)
    return out


def _absolute(word: str, home: Path, cwd: Path | None) -> Path | None:
    if word.startswith("~/") or word == "~":
        return home / word[2:]
    if os.path.isabs(word):
        return Path(word)
    if cwd is not None and word not in ("-", ""):
        return cwd / word
    return None


_AIDER_WORD = re.compile(r"(?:^|[\s;&|/(])aider(?:-chat)?(?:\s|$)")
#: The history lines that mention aider, found by the regex engine (a history has ~1e5 lines).
_AIDER_LINE = re.compile(r"^[^\n]*aider[^\n]*$", re.M)


def from_shell_history(env: Mapping[str, str], home: Path) -> list[Path]:
    """Folders and history files ``aider`` ran with, by the shell histories. A history repeats
    its lines: each distinct line that runs aider is read once."""
    found: dict[str, Path] = {}
    lines: dict[str, None] = {}
    for path in history_files(env, home):
        text = _tail(path)
        if "aider" not in text:
            continue
        for line in dict.fromkeys(m.group() for m in _AIDER_LINE.finditer(text)):
            for command in commands(line):
                if _AIDER_WORD.search(command):
                    lines.setdefault(command, None)
    for command in lines:
        for place in places_in(command, home):
            found.setdefault(str(place), place)
    for place in _atuin(atuin_db(env, home)):
        found.setdefault(str(place), place)
    return list(found.values())


def _atuin(db_path: Path) -> list[Path]:
    if not is_regular(db_path):
        return []
    try:  # strictly read-only: no -wal/-shm left in atuin's folder
        db = connect_ro(db_path, busy_timeout=1.0)
    except (sqlite3.Error, AgtailError, OSError):
        return []
    try:
        rows = db.execute(
            "SELECT DISTINCT cwd FROM history WHERE command = 'aider' OR command LIKE 'aider %'"
            " OR command LIKE '% aider %' OR command LIKE '% aider' LIMIT ?",
            (MAX_ATUIN_DIRS,),
        ).fetchall()
    except sqlite3.Error:
        return []
    finally:
        db.close()
    return [Path(cwd) for (cwd,) in rows if isinstance(cwd, str) and os.path.isabs(cwd)]


def in_project_folders(home: Path, history: str, budget: int | None = None) -> list[Path]:
    """History files below the usual project folders: breadth first, ``budget`` folders at most
    (default :data:`MAX_FOLDERS`). One directory listing per folder, nothing more: the listing
    says whether the history file is there and which entries are folders."""
    budget = MAX_FOLDERS if budget is None else budget
    found: list[Path] = []
    queue: deque[tuple[str, int]] = deque()
    seen: set[tuple[int, int]] = set()
    for name in PROJECT_FOLDERS:
        try:
            st = os.stat(home / name)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) not in seen:  # ~/Code and ~/code on a case-blind disk, a link
            seen.add((st.st_dev, st.st_ino))
            queue.append((str(home / name), 0))
    while queue and budget > 0:
        folder, depth = queue.popleft()
        budget -= 1
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        below = []
        for e in entries:
            try:
                if e.name == history and e.is_file():
                    found.append(Path(e.path))
                elif depth < SEARCH_DEPTH and not e.name.startswith(".") and e.name not in SKIP_DIRS \
                        and e.is_dir(follow_symlinks=False):
                    below.append(e.path)
            except OSError:
                continue
        queue.extend((path, depth + 1) for path in sorted(below))
    return found


class NearbyCache:
    """One search per :data:`KEEP_SECONDS` (per HOME): an in-process command searches once,
    the daemon once per few rescans."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._kept: dict[str, tuple[float, list[Path]]] = {}

    def get(self, key: str, search: Callable[[], Iterable[Path]]) -> list[Path]:
        kept = self._kept.get(key)
        now = self.clock()
        if kept is not None and now - kept[0] < KEEP_SECONDS:
            return kept[1]
        found = list(search())
        self._kept[key] = (now, found)
        return found
