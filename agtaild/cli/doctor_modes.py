"""`agtail doctor`'s look at the data dir's permissions: what other users could read.

Every agtail process creates its files 0600 and its directories 0700 (agtaild.dirs.private_umask),
but a data dir written by 0.2 or earlier, copied with a loose umask, or restored from a backup
may hold files others can read — the index and the archive hold every secret the transcripts
do. The doctor walks the data dir without following a symlink and lists what is open to group
or others, with the command that closes it.

Pins (``archive/.zstore/pins/*/``) are hard links to the agents' own files: their mode is the
agent's, not agtail's, and changing it would change the agent's file. They are skipped (the
0700 folders above them keep other users out) and the command leaves them alone.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

#: How many loose entries the message names (the count is always whole).
SHOWN = 5


def loose_entries(data_dir: Path, pins_dir: Path | None = None) -> list[tuple[str, int, bool]]:
    """``(path, mode, is_dir)`` of every file and directory under ``data_dir`` (itself
    included) that group or others may read, write or enter. Symlinks are neither followed
    nor judged; files below ``pins_dir`` with other links (pins) are skipped."""
    found: list[tuple[str, int, bool]] = []
    pins = os.fsencode(pins_dir) if pins_dir is not None else None
    stack = [os.fsencode(data_dir)]
    try:
        top = os.lstat(stack[0])
    except OSError:
        return found
    if not stat.S_ISDIR(top.st_mode):
        return found
    if stat.S_IMODE(top.st_mode) & 0o077:
        found.append((os.fsdecode(stack[0]), stat.S_IMODE(top.st_mode), True))
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable to us: nothing to judge (doctor's other checks say so)
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
                if mode & 0o077:
                    found.append((os.fsdecode(entry.path), mode, True))
            elif stat.S_ISREG(st.st_mode) and mode & 0o077:
                pinned = pins is not None and entry.path.startswith(pins + b"/") and st.st_nlink > 1
                if not pinned:
                    found.append((os.fsdecode(entry.path), mode, False))
    found.sort()
    return found


def fix_command(data_dir: Path, pins_dir: Path | None) -> str:
    """The shell command that removes group and other permissions from everything agtail made
    in ``data_dir`` (symlinks untouched, pins left alone)."""
    where = shlex.quote(str(data_dir))
    if pins_dir is None:
        return f"find {where} ! -type l -exec chmod go-rwx {{}} +"
    return f"find {where} -path {shlex.quote(str(pins_dir))} -prune -o ! -type l -exec chmod go-rwx {{}} +"


def permissions_check(data_dir: Path, pins_dir: Path | None = None) -> dict[str, str]:
    """The doctor's check: ok, or a warning naming what others can read and the fix."""
    loose = loose_entries(data_dir, pins_dir)
    if not loose:
        return {"name": "permissions", "status": "ok",
                "message": f"nothing in {data_dir} is open to other users (files 0600, folders 0700)"}
    files = sum(1 for _p, _m, is_dir in loose if not is_dir)
    dirs = len(loose) - files
    counted = " and ".join(part for part in (
        f"{files} file{'s' if files != 1 else ''}" if files else "",
        f"{dirs} folder{'s' if dirs != 1 else ''}" if dirs else "",
    ) if part)  # fmt: skip
    shown = "; ".join(f"{path} ({mode:o})" for path, mode, _d in loose[:SHOWN])
    more = f" (and {len(loose) - SHOWN} more)" if len(loose) > SHOWN else ""
    return {"name": "permissions", "status": "warn",
            "message": f"{counted} in {data_dir} can be read or entered by other users (agtail makes files "
                       f"0600 and folders 0700; these were made looser): {shown}{more}. To fix: "
                       f"{fix_command(data_dir, pins_dir)}"}
