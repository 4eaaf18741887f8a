"""push / pull / status / verify against a REMOTE, whatever the transport.

REMOTE is a directory path (local or mounted; ``file://`` allowed), ``ssh://[user@]host
[:port]/path`` (the system rsync) or ``http(s)://host:port`` (another agtaild).

* directory / ssh remote: holds collections in the import-store layout, ``REMOTE/<name>/…``.
  push writes this machine's native sessions there as collection NAME; pull copies
  ``REMOTE/NAME`` into the local import store as collection NAME.
* http remote: push writes into the other daemon's import store as NAME; pull brings the
  other daemon's native sessions into ours as NAME.

Each machine writes only its own series: push sends native files only, and pull only ever
writes below ``<data dir>/imported/NAME``.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError, UsageError
from agtaild.fsnames import from_text as native_name
from agtaild.sync import statepack
from agtaild.sync.directory import DirectoryDestination, DirectorySource, scan_tree
from agtaild.sync.manifest import (
    HashCache,
    load_manifest,
    machine_identity,
    open_hash_cache,
    sha256_file,
    sync_state_dir,
    write_atomic,
)
from agtaild.sync.native import LocalFilesSource, is_sqlite
from agtaild.sync.safety import DEFAULT_MAX_FILE_SIZE, check_collection_name, check_not_native
from agtaild.sync.transfer import Limits, Progress, transfer


def remote_kind(remote: str) -> str:
    if remote.startswith(("http://", "https://")):
        return "http"
    if remote.startswith("ssh://"):
        return "ssh"
    if "://" in remote and not remote.startswith("file://"):
        raise UsageError(f"{remote!r}: a remote is a directory, ssh://host/path or http(s)://host:port")
    return "directory"


def _dir(remote: str) -> Path:
    path = remote[len("file://"):] if remote.startswith("file://") else remote
    return Path(path).expanduser()


def _known_agents() -> list[str]:
    from agtaild.adapters import all_adapters

    return [a.id for a in all_adapters()]


def _native_roots(config: Any) -> list[str]:
    return [r.path for r in config.roots if r.kind == "native"]


def _client(remote: str, token: str | None) -> Any:
    from agtaild.sync.http import HttpClient

    return HttpClient(remote, token or os.environ.get("AGTAIL_REMOTE_TOKEN"))


def _limits(max_file_size: int | None) -> Limits:
    return Limits(max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE, known_agents=_known_agents())


def _native_source(config: Any, cache: HashCache, collection: str, agents: list[str] | None) -> LocalFilesSource:
    origin, name = machine_identity(config.data_dir)
    return LocalFilesSource(_sendable(config, agents), cache, origin=origin, origin_name=name,
                            collection=collection, where=f"this machine ({name})")


def push(
    config: Any,
    remote: str,
    collection: str,
    *,
    agents: list[str] | None = None,
    max_file_size: int | None = None,
    token: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    redact: bool = False,
) -> dict[str, Any]:
    """Send this machine's native sessions to REMOTE as collection ``collection``;
    ``redact``: each file rewritten with every secret masked first (agtaild.sync.redact)."""
    check_collection_name(collection)
    kind = remote_kind(remote)
    limits = _limits(max_file_size)
    cache = open_hash_cache(config.data_dir)
    source = _native_source(config, cache, collection, agents)
    if redact:
        from agtaild.sync.redact import redacting_source

        source = redacting_source(source)
    pack_target: Any = None
    try:
        if kind == "ssh":
            from agtaild.sync.rsync import parse_ssh_remote

            pack_target = parse_ssh_remote(remote)
            report = pack_target.push(source, collection, limits, dry_run=dry_run)
        elif kind == "http":
            from agtaild.sync.http import HttpDestination

            pack_target = _client(remote, token)
            report = transfer(source, HttpDestination(pack_target, collection), limits,
                              dry_run=dry_run, progress=progress)
        else:
            root = _dir(remote)
            if not root.is_dir():
                raise UsageError(f"{root} is not a directory; create it (or mount the share) first")
            dest_root = root / collection
            check_not_native(dest_root, _native_roots(config))
            dest = DirectoryDestination(dest_root, cache, set(limits.known_agents or []))
            report = transfer(source, dest, limits, dry_run=dry_run, progress=progress)
            pack_target = dest_root
        if redact:
            from agtaild.sync.redact import add_to_report

            add_to_report(report, source)  # type: ignore[arg-type]
        if not dry_run:
            _carry_state(report, lambda: statepack.pushed(config, kind, pack_target, collection, agents))
    finally:
        source.close()
        cache.close()
    return _finish(config, "push", remote, collection, report, dry_run)


def _carry_state(report: dict[str, Any], step: Any) -> None:
    """The state pack's part of a push or a pull (agtaild.sync.statepack): its outcome is the
    report's ``state``; a refused or failed pack is one of its errors, the files stay moved."""
    try:
        report["state"] = step()
    except AgtailError as exc:
        report["state"] = {"error": exc.message}
        report["errors"].append({"path": statepack.NAME, "message": exc.message})


def pull(
    config: Any,
    remote: str,
    collection: str,
    *,
    agents: list[str] | None = None,
    max_file_size: int | None = None,
    token: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Copy collection ``collection`` from REMOTE into the local import store."""
    check_collection_name(collection)
    kind = remote_kind(remote)
    limits = _limits(max_file_size)
    known = set(limits.known_agents or [])
    dest_root = Path(config.import_dir) / collection
    check_not_native(dest_root, _native_roots(config))
    cache = open_hash_cache(config.data_dir)
    dest = DirectoryDestination(dest_root, cache, known)
    wire: dict[str, int] = {}
    pack_source: Any = None
    try:
        source: Any
        if kind == "http":
            from agtaild.sync.http import HttpSource

            pack_source = _client(remote, token)
            source = HttpSource(pack_source, agents)
        elif kind == "ssh":
            from agtaild.sync.rsync import parse_ssh_remote

            mirror, wire = parse_ssh_remote(remote).mirror(collection, sync_state_dir(config.data_dir) / "rsync", limits)
            source = DirectorySource(mirror, cache, known)
            pack_source = mirror
        else:
            src_root = _dir(remote) / collection
            if not src_root.is_dir():
                raise UsageError(f"{src_root} does not exist; check the remote and the collection name "
                                 f"(`agtail sync status {remote}` lists the collections there)")
            source = DirectorySource(src_root, cache, known)
            pack_source = src_root
        try:
            report = transfer(source, dest, limits, dry_run=dry_run, progress=progress)
        finally:
            source.close()
        if not dry_run:
            _carry_state(report, lambda: statepack.pulled(config, kind, pack_source, collection, agents))
    finally:
        cache.close()
    if wire:
        report["wire_bytes"] = wire.get("received", 0)
    return _finish(config, "pull", remote, collection, report, dry_run)


def _finish(config: Any, direction: str, remote: str, collection: str, report: dict[str, Any],
            dry_run: bool) -> dict[str, Any]:
    report = {"direction": direction, "remote": remote, "collection": collection, **report}
    if not dry_run:
        _record_history(config, report)
    return report


def _history_path(config: Any) -> Path:
    return sync_state_dir(config.data_dir) / "history.json"


def _record_history(config: Any, report: dict[str, Any]) -> None:
    import json

    path = _history_path(config)
    try:
        history = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        history = {}
    key = f"{report['direction']} {report['remote']} {report['collection']}"
    history[key] = {
        "direction": report["direction"], "remote": report["remote"], "collection": report["collection"],
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": report["files"], "bytes": report["bytes"], "errors": len(report["errors"]),
        "conflicts": len(report["conflicts"]),
    }
    write_atomic(path, json.dumps(history, indent=1, sort_keys=True).encode())


def history(config: Any) -> list[dict[str, Any]]:
    import json

    try:
        return list(json.loads(_history_path(config).read_text()).values())
    except (FileNotFoundError, ValueError):
        return []


def remote_collections(config: Any, remote: str, token: str | None = None) -> list[str]:
    kind = remote_kind(remote)
    if kind == "directory":
        root = _dir(remote)
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))
    if kind == "http":
        doc = _client(remote, token).json("GET", "/import")
        return [c["name"] for c in doc.get("collections", [])]
    return []


def status(config: Any, remote: str, collection: str | None, **kwargs: Any) -> dict[str, Any]:
    """What a push and a pull would move now (nothing is written)."""
    doc: dict[str, Any] = {"remote": remote, "kind": remote_kind(remote)}
    try:
        doc["collections"] = remote_collections(config, remote, kwargs.get("token"))
    except AgtailError as exc:
        doc["collections"] = None
        doc["collections_error"] = exc.message
    if collection is not None:
        doc["collection"] = collection
        for direction, fn in (("push", push), ("pull", pull)):
            try:
                doc[direction] = fn(config, remote, collection, dry_run=True, **kwargs)
            except AgtailError as exc:
                doc[direction] = {"error": exc.message}
    doc["history"] = [h for h in history(config) if h["remote"] == remote]
    return doc


def verify_tree(root: Path) -> dict[str, Any]:
    """Re-read every file of a collection directory and compare it with its record."""
    record = load_manifest(root)
    rec = record.by_path() if record is not None else {}
    tree, problems = scan_tree(root, None)
    out: dict[str, Any] = {"path": str(root), "files": 0, "ok": 0, "differs": [], "missing": [],
                           "unrecorded": [], "partials": [], "conflicts": [], "problems": problems}
    seen = set()
    for item in tree:
        if item.kind == "partial":
            out["partials"].append(item.path)
            continue
        if item.kind == "conflict":
            out["conflicts"].append(item.path)
            continue
        out["files"] += 1
        seen.add(item.path)
        entry = rec.get(item.path)
        if entry is None:
            out["unrecorded"].append(item.path)
            continue
        digest = sha256_file(root / item.path)
        if entry.size == item.st.st_size and entry.sha256 == digest:
            out["ok"] += 1
        else:
            out["differs"].append({"path": item.path, "recorded": entry.sha256, "actual": digest})
    out["missing"] = sorted(set(rec) - seen)
    return out


def verify(config: Any, remote: str | None = None, collection: str | None = None,
           token: str | None = None) -> dict[str, Any]:
    """Check stored copies against their records; ``clean`` is False when anything differs."""
    trees: list[Path] = []
    if remote is None:
        base = Path(config.import_dir)
        names = [collection] if collection else (
            sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")) if base.is_dir() else []
        )
        trees = [base / check_collection_name(n) for n in names]
    elif remote_kind(remote) == "directory":
        base = _dir(remote)
        names = [collection] if collection else remote_collections(config, remote)
        trees = [base / check_collection_name(n) for n in names]
    else:
        raise UsageError("verify reads every byte, so run `agtail sync verify` on the machine that holds "
                         "the copy; here, `agtail sync status REMOTE --collection NAME` compares manifests")
    results = [verify_tree(t) for t in trees]
    doc: dict[str, Any] = {"collections": results}
    if remote is None and collection is None:
        doc["archive"] = verify_archive(config)
    bad = any(r["differs"] or r["missing"] or r["problems"] for r in results)
    bad = bad or bool(doc.get("archive", {}).get("differs"))
    doc["clean"] = not bad
    return doc


def verify_archive(config: Any) -> dict[str, Any]:
    """Every archived file whose native file still exists must be a prefix of it (or equal);
    the archived bytes are read through the archive's store, each frame checked."""
    from agtaild.store.archive.blobs import ZStore
    from agtaild.store.archive.framing import ArchiveDamaged

    root = Path(config.archive_dir)
    out: dict[str, Any] = {"path": str(root), "checked": 0, "differs": [], "native_gone": 0}
    store = ZStore(root)
    if not store.exists():
        return out
    try:
        for row in store.rows():
            if not row.unit or row.source is None:
                continue
            native = native_name(row.source)
            if is_sqlite(native):
                continue
            out["checked"] += 1
            try:
                native_size = os.path.getsize(native)
            except FileNotFoundError:
                out["native_gone"] += 1
                continue
            try:
                archived = hashlib.sha256()
                for block in store.read(native_name(row.path)):
                    archived.update(block)
            except ArchiveDamaged:
                out["differs"].append(row.path)
                continue
            if row.size > native_size or sha256_file(native, row.size) != archived.hexdigest():
                out["differs"].append(row.path)
    finally:
        store.close()
    return out


def _sendable(config: Any, agents: list[str] | None) -> list[Any]:
    """Native files plus sessions kept only by the archive (agtaild.store.archive.archiver)."""
    from agtaild.store.archive.hook import sendable_files

    return sendable_files(config, agents)
