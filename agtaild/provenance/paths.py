"""Recorded file paths, made absolute and comparable without touching the file system.

An agent records the path it was given: absolute, relative to its working directory, with
``..`` in it, through a symlink. The index keeps each path as recorded but normalized
(:func:`normalize`: the session's cwd joined, ``.`` and ``..`` resolved lexically, symlinks
*not* followed, since the file may be gone and a link may have changed since), and its last
component (``name``) so every spelling of one file is found from its name. Which of those
candidates are the file asked for is decided at query time (:func:`match_kind`): the same
path, the same file through a symlink, or the same path with another case (ambiguous on a
case-sensitive file system).
"""

from __future__ import annotations

import ntpath
import os
import posixpath

#: A recorded path longer than this is not a path (a model's garbled argument).
MAX_PATH = 4096


def is_windows(path: str) -> bool:
    return (len(path) >= 3 and path[1] == ":" and path[2] in "\\/") or path.startswith("\\\\")


def normalize(path: object, cwd: str | None) -> str | None:
    """The absolute, lexically normalized form of ``path`` (None when it is not a usable path)."""
    if not isinstance(path, str):
        return None
    path = path.strip()
    if not path or len(path) > MAX_PATH or "\x00" in path or "\n" in path:
        return None
    if path.startswith("file://"):
        path = path[len("file://") :]
    if is_windows(path) or (cwd and is_windows(cwd) and not path.startswith("/")):
        joined = path if is_windows(path) else ntpath.join(cwd or "", path)
        return ntpath.normpath(joined)
    if path.startswith("~"):
        return None  # whose home: not knowable from the record
    if not path.startswith("/"):
        if not cwd or not cwd.startswith("/"):
            return None
        path = posixpath.join(cwd, path)
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/")  # normpath keeps a leading '//'


def name_of(path: str) -> str:
    """The last component (what the index looks every spelling of a file up by)."""
    return ntpath.basename(path) if is_windows(path) else posixpath.basename(path)


def spellings(asked: str) -> tuple[str, str]:
    """The path asked for, absolute (lexically) and with its symlinks resolved."""
    absolute = os.path.abspath(os.path.expanduser(asked))
    return absolute, os.path.realpath(absolute)


def match_kind(recorded: str, asked: str, real: str) -> str | None:
    """How a recorded path names the file asked for: ``same``, ``symlink`` (the same file
    reached another way), ``case`` (equal but for case: the same file only on a file system
    that ignores case), or None."""
    if recorded in (asked, real):
        return "same"
    try:
        if os.path.realpath(recorded) == real:
            return "symlink"
    except (OSError, ValueError):
        pass
    if recorded.casefold() == asked.casefold() or recorded.casefold() == real.casefold():
        try:
            if os.path.exists(recorded):  # a file of that spelling exists: the same one, or another
                return "same" if os.path.samefile(recorded, real) else None
        except OSError:
            pass
        return "case"
    return None


def under(recorded: str, folder: str) -> bool:
    """Is ``recorded`` inside ``folder`` (a directory's history)?"""
    folder = folder.rstrip("/") + "/"
    return recorded.startswith(folder)
