"""Git for blame: a file as of a commit (``--rev``) and the lines a commit added (``--commit``).

Git is asked through its command line, read-only (``git show``, ``git log``, ``rev-parse``),
in the work tree that holds the file. A revision is passed after ``--end-of-options`` so a
value such as ``--output=x`` is never an option. What git refuses becomes a UsageError with
git's own words.
"""

from __future__ import annotations

import os
import re
import subprocess

from agtaild.errors import UsageError

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
TIMEOUT = 60.0


def _git(folder: str, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", folder, *args], capture_output=True, timeout=TIMEOUT, check=False,
            env={**os.environ, "GIT_PAGER": "cat", "LC_ALL": "C"},
        )  # fmt: skip
    except FileNotFoundError:
        raise UsageError("git is not installed (needed for --rev and --commit)") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"git {args[0]} took over {TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]}: {said[-1] if said else 'failed'}")
    return done.stdout


def work_tree(path: str) -> str:
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    while not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    return _git(folder, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape").strip()


def commit_time(root: str, rev: str) -> float:
    out = _git(root, "log", "-1", "--format=%ct", "--end-of-options", rev, "--")
    return float(out.strip() or 0)


def file_at(root: str, rev: str, path: str) -> bytes:
    """The bytes of ``path`` (absolute, inside ``root``) as of ``rev``."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    commit = _git(root, "rev-parse", "--verify", "--end-of-options", rev + "^{commit}").decode().strip()
    return _git(root, "show", f"{commit}:{rel}")


def commit_hunks(root: str, rev: str) -> dict[str, list[tuple[int, int]]]:
    """The lines each file of commit ``rev`` added, as (first, last) 1-based line ranges of
    the file as of the commit; files by their absolute path."""
    out = _git(root, "show", "--format=", "-U0", "--no-color", "--no-ext-diff", "--end-of-options", rev, "--")
    hunks: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for raw in out.decode("utf-8", "surrogateescape").splitlines():
        if raw.startswith("+++ "):
            name = raw[4:]
            current = None if name == "/dev/null" else os.path.join(root, name[2:] if name.startswith("b/") else name)
            continue
        m = _HUNK.match(raw)
        if m and current is not None:
            first, n = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            if n:
                hunks.setdefault(current, []).append((first, first + n - 1))
    return hunks
