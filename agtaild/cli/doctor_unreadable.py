"""The part of `agtail doctor` about agents found on this machine whose sessions agtail cannot
read: it says that they are there and why their sessions are not indexed, instead of saying
nothing (docs/adapters.md, "Agents that are not read").

Each entry names the agent, the folders whose presence shows it is installed (under the home
folder, Linux and macOS), and the reason. Only the existence of those folders is checked:
nothing in them is opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Unreadable(NamedTuple):
    name: str
    check: str
    #: Folders relative to the home folder; any one present means the agent is installed.
    marks: tuple[str, ...]
    why: str


UNREADABLE = (
    Unreadable(
        name="Trae (IDE)",
        check="agent trae",
        marks=(
            ".config/Trae/User",
            ".config/Trae CN/User",
            "Library/Application Support/Trae/User",
            "Library/Application Support/Trae CN/User",
        ),
        why=(
            "its chats are not on disk in a readable form: the IDE keeps them in its VS Code-style "
            "state.vscdb, encrypted in current builds, with no published schema, so they are not read "
            "(TRAE CLI's sessions in ~/.trae/cli are read as agent trae-cli)"
        ),
    ),
)


def unreadable_checks(home: Path) -> list[dict[str, str]]:
    """One `info` check per unreadable agent whose folders are present."""
    checks = []
    for agent in UNREADABLE:
        found = [str(home / mark) for mark in agent.marks if os.path.isdir(home / mark)]
        if found:
            checks.append({"name": agent.check, "status": "info",
                           "message": f"{agent.name} found in {', '.join(found)}; {agent.why}"})  # fmt: skip
    return checks
