"""Which sync remotes are this user's own machines: the ones a push may carry secrets to.

A remote is the user's own only when the user said so: ``agtail sync push REMOTE --own``
marks it, and the mark is kept in ``<data dir>/sync/own-remotes.json`` (REMOTE as written;
a directory remote as its absolute path), so that later pushes to it do not warn.
agtail cannot tell by itself: a directory may be a mounted share or a folder a cloud service
copies elsewhere, an ssh host or another agtaild may belong to anyone with the token.

A push (not ``--redact``) to any other remote warns how many secrets it carries (the
distinct secrets the index found in this machine's own sessions that the user did not
allowlist): `agtail secrets` lists them, ``--redact`` masks them in what is sent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agtaild.sync.manifest import sync_state_dir, write_atomic

FILE = "own-remotes.json"


def normalize(remote: str) -> str:
    """REMOTE as it is kept: a directory (or file://) remote as its absolute path."""
    if remote.startswith(("http://", "https://", "ssh://")):
        return remote.rstrip("/")
    path = remote[len("file://") :] if remote.startswith("file://") else remote
    return os.path.abspath(os.path.expanduser(path))


def _path(data_dir: str | Path) -> Path:
    return sync_state_dir(data_dir) / FILE


def own_remotes(data_dir: str | Path) -> list[str]:
    try:
        doc = json.loads(_path(data_dir).read_text())
    except (FileNotFoundError, ValueError):
        return []
    remotes = doc.get("remotes") if isinstance(doc, dict) else None
    return [r for r in remotes or [] if isinstance(r, str)]


def is_own(data_dir: str | Path, remote: str) -> bool:
    return normalize(remote) in own_remotes(data_dir)


def mark_own(data_dir: str | Path, remote: str) -> bool:
    """Keep REMOTE as one of the user's own machines; False when it already was."""
    have = own_remotes(data_dir)
    key = normalize(remote)
    if key in have:
        return False
    doc: dict[str, Any] = {"remotes": sorted({*have, key})}
    write_atomic(_path(data_dir), json.dumps(doc, indent=1).encode() + b"\n")
    return True


def carried_secrets(call: Any, agents: list[str] | None) -> tuple[int, bool]:
    """Distinct secrets (not allowlisted) the index found in this machine's own sessions of
    ``agents`` (all when None): what a push of them carries; and whether the index's scan is
    still under way (then there may be more). ``call``: a backend's call."""
    seen: set[str] = set()
    pending = False
    wanted: list[str | None] = list(agents) if agents else [None]
    for agent in wanted:
        params: dict[str, Any] = {"imported": False, "places": 0, "limit": 10_000}
        if agent is not None:
            params["agent"] = agent
        doc = call("secrets.list", params)
        seen.update(s["fingerprint"] for s in doc.get("secrets", []))
        pending = pending or bool(doc.get("pending"))
    return len(seen), pending
