"""The files a shell command names as written: recorded as "touched by a command", no content.

A command's effect on a file is not in the transcript (``sed -i`` prints nothing), so blame
cannot replay it; it can only say that a command touched the file between two recorded edits
(the lines it changed then show as not from a recorded session). Recognised, from the words of
each simple command (split at ``;``, ``&&``, ``||``, ``|``): redirections (``> f``, ``>> f``,
``tee f``), in-place editors (``sed -i``, ``perl -i``), formatters given files (``black``,
``ruff format``, ``prettier --write``, ``gofmt -w``, ``rustfmt``), ``touch``, ``rm``, and the
moves ``mv A B`` / ``git mv A B`` (a rename: blame follows the file to its new name).
Anything cleverer (variables, subshells, globs) is not guessed at.
"""

from __future__ import annotations

import re
import shlex

#: Longest command looked at.
MAX_COMMAND = 20_000
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_REDIRECT = re.compile(r"(?:^|[\s\d])>>?\s*([^\s;&|<>()]+)")
_FORMATTERS = {"black", "gofmt", "rustfmt", "autopep8", "yapf", "isort", "clang-format", "shfmt"}
_GLOB = set("*?[]{}$`")
#: A command naming none of these tools is not split into words (shlex is slow on the long
#: commands agents run; this check runs for every shell call indexed).
_TOOLS = re.compile(
    r"(?:^|[\s;&|(/])(?:sed|perl|tee|touch|rm|mv|ruff|prettier|black|gofmt|rustfmt|autopep8|yapf|isort"
    r"|clang-format|shfmt)(?=\s)"
)


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part, comments=False, posix=True)
    except ValueError:
        return part.split()


def _plain(word: str) -> bool:
    return bool(word) and not word.startswith("-") and not (_GLOB & set(word)) and word not in ("/dev/null", "-")


Touch = tuple[str, str | None, str]


def touched(command: object) -> list[Touch]:
    """``(path, from_path, kind)`` for each file the command writes: kind ``command``,
    ``delete`` (``rm``) or ``rename`` (``mv``, with ``from_path``)."""
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if command[:2] in (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"], ["zsh", "-lc"]) and len(command) == 3:
            command = command[2]
        else:
            command = shlex.join(command)
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        return []
    found: list[Touch] = []
    for m in _REDIRECT.finditer(command.replace("<<", "  ")):
        target = m.group(1).strip("'\"")
        if _plain(target) and not target.startswith("&"):
            found.append((target, None, "command"))
    if not _TOOLS.search(command):
        return found
    for part in _SPLIT.split(command):
        if not _TOOLS.search(part):
            continue
        words = _words(part)
        while words and (words[0] in ("sudo", "env") or ("=" in words[0] and not words[0].startswith("-"))):
            words = words[1:]
        if not words:
            continue
        found += _of_words(words)
    unique: list[Touch] = []
    for one in found:
        if one not in unique:
            unique.append(one)
    return unique


def _of_words(words: list[str]) -> list[Touch]:
    tool, args = words[0].rsplit("/", 1)[-1], words[1:]
    if tool == "git" and args[:1] == ["mv"]:
        tool, args = "mv", args[1:]
    plain = [a for a in args if _plain(a)]
    if tool == "mv":
        return [(plain[-1], plain[0], "rename")] if len(plain) == 2 else []
    if tool == "rm":
        return [(p, None, "delete") for p in plain]
    if tool in ("sed", "perl") and any(a.startswith(("-i", "--in-place")) for a in args):
        plain = plain[1:]  # the script
    elif tool == "ruff" and args[:1] == ["format"]:
        plain = plain[1:]
    elif tool == "prettier":
        if "--write" not in args and "-w" not in args:
            return []
    elif tool not in ("tee", "touch") and tool not in _FORMATTERS:
        return []
    return [(p, None, "command") for p in plain]
