"""Where VS Code-family editors keep extension data, for the agents that live in them.

Cline, Roo Code, Kilo Code and Copilot Chat are editor extensions. The same extension keeps its
data under whichever editor hosts it — VS Code, VS Code Insiders, VSCodium, Cursor, Windsurf —
each with its own user folder, on Linux (``$XDG_CONFIG_HOME/<Host>/User``) and on macOS
(``~/Library/Application Support/<Host>/User``). Adapters ask here instead of spelling the
hosts out themselves, so a host added here reaches every extension agent at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

import msgspec

from agtaild.adapters.base import env_path
from agtaild.adapters.kit.files import read_regular

#: The editors' folder names, most common first.
HOSTS: tuple[str, ...] = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def user_dirs(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every editor host's ``User`` folder on this machine's platforms (existing or not).

    ``VSCODE_PORTABLE`` (a portable install's data folder) comes first when set: there the
    user folder is ``<portable>/user-data/User``.
    """
    bases = [
        env_path(env, "XDG_CONFIG_HOME") or home / ".config",
        home / "Library" / "Application Support",
    ]
    found: list[Path] = []
    portable = env_path(env, "VSCODE_PORTABLE")
    if portable:
        found.append(portable / "user-data" / "User")
    for base in bases:
        found += [base / host / "User" for host in HOSTS]
    return list(dict.fromkeys(found))


def global_storage(env: Mapping[str, str], home: Path, extension_id: str) -> list[Path]:
    """An extension's ``globalStorage/<publisher.name>`` folder under every host.

    Extension ids are matched as VS Code writes them: lower case.
    """
    return [user / "globalStorage" / extension_id.lower() for user in user_dirs(env, home)]


def workspace_storage(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every host's ``workspaceStorage`` folder (one ``<hash>/`` per opened workspace)."""
    return [user / "workspaceStorage" for user in user_dirs(env, home)]


def workspace_folder(path: Path) -> str | None:
    """The folder a ``workspaceStorage/<hash>/workspace.json`` names (``{"folder": "file:///…"}``,
    or ``workspace`` for a .code-workspace); a remote (``vscode-remote://…``) URI is kept as written."""
    try:
        doc = msgspec.json.decode(read_regular(path))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict):
        return None
    uri = doc.get("folder") or doc.get("workspace")
    if not isinstance(uri, str):
        return None
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path) or None
    return uri
