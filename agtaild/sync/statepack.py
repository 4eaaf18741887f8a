"""The user's state of the sessions a push sends, carried beside their files: a state pack.

A push writes ``state-pack.json`` at the top of the collection (``REMOTE/<name>/``, an export
directory; over HTTP the other daemon takes it at once): the labels, stars, titles and hides
of this machine's own sessions (agtaild.userstate), each row with who made it and when. A
pull reads it and merges it into the local store under the collection's name, so a label set
on the laptop shows on the desktop's imported copy. The merge keeps the precedence (a user's
change over an agent's over a rule's; of the same rank the newer) and the same pack merged
twice changes nothing.

A pack is checked whole before anything is merged: its format and version, the sha256 of its
rows (a pack edited or cut short is refused, saying so), each row as a change is checked
(agtaild.userstate.checks) and its size. A refused pack leaves the store as it was; the pull
of the files has happened and says why the state did not come with it. The digest catches a
pack that was changed or damaged, not a forger: whoever can write the remote can write the
sessions too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from agtaild.errors import Refused
from agtaild.sync.manifest import machine_identity, write_atomic
from agtaild.userstate import envelope

NAME = "state-pack.json"
FORMAT = "agtail-state-pack"
VERSION = 1
#: A pack is a few hundred bytes per session; this is far above any real one.
MAX_BYTES = 64 << 20


LISTS = ("labels", "marks")


def _own_rows(store: Any, sessions: set[tuple[str, str]] | None, agents: set[str] | None) -> dict[str, Any]:
    """This machine's own sessions' rows (an imported copy's state stays with its machine);
    ``sessions``: only these (agent, id); ``agents``: only these agents'."""
    doc = store.dump()
    out: dict[str, Any] = {}
    for table in ("labels", "marks"):
        out[table] = [
            row[1:]
            for row in doc[table]
            if row[0] == ""
            and (sessions is None or (row[1], row[2]) in sessions)
            and (agents is None or row[1] in agents)
        ]
    return out


def build(
    config: Any, sessions: set[tuple[str, str]] | None = None, agents: list[str] | None = None
) -> bytes:
    """The pack of this machine's state (of ``sessions``, of ``agents`` only, when given)."""
    from agtaild.userstate.store import UserState

    store = UserState(config.data_dir)
    try:
        rows = _own_rows(store, sessions, set(agents) if agents else None) if store.path.exists() else {
            "labels": [], "marks": []}  # fmt: skip
    finally:
        store.close()
    origin, name = machine_identity(config.data_dir)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "origin": origin,
        "origin_name": name,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sha256": envelope.digest(rows, LISTS),
        **rows,
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def write(directory: Path, pack: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / NAME, pack)


def read(directory: Path) -> bytes | None:
    """The pack in a collection directory; None when it has none (an older agtail pushed it)."""
    path = directory / NAME
    if path.is_symlink():
        raise Refused(f"{path} is a symlink: the state pack was not read")
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_BYTES:
        raise Refused(
            f"{path} is larger than {MAX_BYTES >> 20} MB: not a state pack agtail wrote; it was not read"
        )
    return path.read_bytes()


def decode(data: bytes, where: str) -> dict[str, Any]:
    """The checked rows of a pack (``labels``, ``marks``: lists of [agent, id, name, value,
    who, at]); a pack that is not whole and ours is refused."""

    def refuse(why: str) -> Refused:
        return Refused(f"the state pack {where} was refused, no label, star, title or hide was merged: {why}")

    try:
        doc = envelope.check(data, fmt=FORMAT, version=VERSION, lists=LISTS, max_bytes=MAX_BYTES)
    except envelope.EnvelopeError as exc:
        raise refuse(
            {
                "size": f"larger than {exc.detail} MB",
                "json": f"not JSON ({exc.detail})",
                "format": "not an agtail state pack",
                "version": f"version {exc.detail}; this agtail reads version {VERSION} (upgrade it)",
                "list": f"{exc.detail} is not a list",
                "digest": "its rows do not match its sha256 (it was changed or cut short after it was written)",
            }[exc.kind]
        ) from None
    return {name: doc[name] for name in LISTS}


def merge(
    config: Any, data: bytes, collection: str, where: str, agents: list[str] | None = None
) -> dict[str, Any]:
    """Merge a pack into this machine's store as ``collection``'s: all of it or, refused, none;
    ``agents``: only those agents' rows (a pull of some agents takes their state only)."""
    from agtaild.errors import UsageError
    from agtaild.userstate.store import UserState

    rows = decode(data, where)
    if agents:
        wanted = set(agents)
        rows = {t: [r for r in rows[t] if not isinstance(r, list) or not r or r[0] in wanted] for t in rows}
    dump = {
        "version": 1,
        "labels": [["", *r] if isinstance(r, list) else r for r in rows["labels"]],
        "marks": [["", *r] if isinstance(r, list) else r for r in rows["marks"]],
    }
    store = UserState(config.data_dir)
    try:
        accepted = store.load(dump, collection=collection)
    except UsageError as exc:
        raise Refused(
            f"the state pack {where} was refused, no label, star, title or hide was merged: {exc.message}"
        ) from None
    finally:
        store.close()
    return {"labels": len(rows["labels"]), "marks": len(rows["marks"]), "accepted": accepted}


# -- carried by push and pull, whatever the transport (agtaild.sync.remote calls these) -----
def pushed(config: Any, kind: str, target: Any, collection: str, agents: list[str] | None) -> dict[str, Any]:
    """Send the pack after a push's files: ``target`` is the collection directory, the
    RsyncRemote or the HttpClient."""
    pack = build(config, agents=agents)
    if kind == "directory":
        write(target, pack)
        return {"sent": True, "bytes": len(pack)}
    if kind == "ssh":
        import tempfile

        with tempfile.TemporaryDirectory(prefix="agtail-pack-") as tmp:
            path = Path(tmp) / NAME
            path.write_bytes(pack)
            target._run(["--times", "--ignore-times", str(path), f"{target.target}/{collection}/{NAME}"])
        return {"sent": True, "bytes": len(pack)}
    import urllib.parse

    doc = target.json(
        "PUT",
        f"/import/{urllib.parse.quote(collection, safe='')}/state-pack",
        body=pack,
        headers={"Content-Type": "application/json"},
    )
    return {"sent": True, "bytes": len(pack), "merged": doc.get("state")}


def pulled(
    config: Any, kind: str, source: Any, collection: str, agents: list[str] | None
) -> dict[str, Any] | None:
    """Merge the pack that came with a pull: ``source`` is the collection directory (a mirror
    for ssh) or the HttpClient. None when the other side has no pack."""
    if kind == "http":
        from agtaild.errors import NotFound

        try:
            with source.request(
                "GET", "/export/state-pack", query={"agent": ",".join(agents)} if agents else None
            ) as resp:
                data = resp.read(MAX_BYTES + 1)
        except NotFound:  # an older agtaild, without the endpoint
            return None
        where = f"from {source.base}"
    else:
        data = read(source)
        where = str(source / NAME)
        if data is None:
            return None
    return merge(config, data, collection, where, agents)
