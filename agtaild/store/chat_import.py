"""`agtail import SERVICE FILE.zip`: a chat service's data export as a collection.

The export is read through agtaild.adapters.kit.export_zip (named members only, size and
ratio caps, no member name ever a path); the service's adapter splits it into
conversations (``Adapter.split_export``), and each is written re-encoded as
``imported/<collection>/<agent>/<name>.json``, ``<name>`` the conversation's id where that
is a safe file name (:func:`file_name`). The per-file index, archive and sync machinery
then read the collection as any other.

Nothing is written until the whole export has been read and split: the agent's folder is
built anew beside the old one (``.agtail-import-*``: the files kept hard-linked, the changed
ones written) and swapped in with two renames, so a bad export, a full disk or an
interrupted import leaves the collection as it was. A re-import rewrites only the
conversations whose content changed and keeps the ones the service no longer has, except
where the adapter says a stored one is now part of another (``Adapter.superseded``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from agtaild.errors import UsageError
from agtaild.store.imports import collection_dir

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_encoder = msgspec.json.Encoder()


def services() -> dict[str, Any]:
    """service name → its adapter (every adapter with an ``export_service``)."""
    from agtaild.adapters import all_adapters

    return {a.export_service: a for a in all_adapters() if a.export_service}


def file_name(conversation_id: str) -> str:
    """``<id>.json`` for an id that is a plain file name; otherwise its safe characters and a
    digest of the whole id (two ids never share a file)."""
    if _SAFE.match(conversation_id) and ".agtail-" not in conversation_id:
        return f"{conversation_id}.json"
    digest = hashlib.sha256(conversation_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = _UNSAFE_CHARS.sub("_", conversation_id).strip("._-")[:80]
    return f"{stem}-{digest}.json" if stem else f"{digest}.json"


def import_export(config: Any, service: str, path: str, collection: str | None = None, *,
                  dry_run: bool = False) -> dict[str, Any]:  # fmt: skip
    """Import one export file; the report counts conversations new, updated, unchanged, kept
    (stored, no longer in the export) and removed (superseded)."""
    from agtaild.adapters.kit.export_zip import ExportZip

    table = services()
    adapter = table.get(service)
    if adapter is None:
        raise UsageError(f"unknown service {service!r}; known: {', '.join(sorted(table))}")
    name = collection or service
    target = collection_dir(config, name) / adapter.id
    if not os.path.isfile(path):
        raise UsageError(f"{path} is not a file")
    with ExportZip(path) as export:
        conversations = adapter.split_export(export)
    files: dict[str, bytes] = {}
    for cid, value in conversations:
        fname = file_name(cid)
        if fname in files:
            raise UsageError(f"{path}: conversation {cid!r} appears twice in the export")
        files[fname] = _encoder.encode(value)
    present = _stored(target)
    new = updated = unchanged = 0
    for fname, data in files.items():
        old = present.get(fname)
        if old is None:
            new += 1
        elif _same(old, data):
            unchanged += 1
        else:
            updated += 1
    removed = [f for f in present if f not in files and adapter.superseded(_load(present[f]), conversations)]
    kept = [f for f in present if f not in files and f not in removed]
    report = {"service": service, "agent": adapter.id, "collection": name, "path": str(target),
              "conversations": len(files), "new": new, "updated": updated, "unchanged": unchanged,
              "kept": len(kept), "removed": len(removed), "dry_run": dry_run}  # fmt: skip
    if dry_run or (not new and not updated and not removed):
        return report
    _swap_in(target, files, present, kept)
    return report


def _stored(target: Path) -> dict[str, Path]:
    if target.is_symlink():
        raise UsageError(f"{target} is a symbolic link; the import store holds only real folders")
    if not target.is_dir():
        return {}
    out = {}
    for entry in os.scandir(target):
        if (
            entry.name.endswith(".json")
            and not entry.name.startswith(".")
            and entry.is_file(follow_symlinks=False)
        ):
            out[entry.name] = Path(entry.path)
    return out


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _load(path: Path) -> Any:
    try:
        return msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, RecursionError):
        return None


def _swap_in(target: Path, files: dict[str, bytes], present: dict[str, Path], kept: list[str]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=".agtail-import-", dir=target.parent))
    old = target.parent / f".agtail-import-old-{build.name.rsplit('-', 1)[-1]}"
    try:
        for fname, data in files.items():
            have = present.get(fname)
            if have is not None and _same(have, data):
                _link_or_copy(have, build / fname)  # unchanged: same inode, same mtime
            else:
                with open(build / fname, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
        for fname in kept:
            _link_or_copy(present[fname], build / fname)
        os.chmod(build, 0o700)
        if target.exists():
            os.rename(target, old)
        os.rename(build, target)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        if old.exists() and not target.exists():
            os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)
