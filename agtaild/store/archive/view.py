"""What the adapters read of the archive: plain files, written back only for deleted sessions.

The adapters read the archive roots (``<data dir>/archive/<agent>``) like any session root,
by path — JSONL readers seek to saved offsets, SQLite adapters open databases — and know
nothing of compression. So the archive keeps its bytes in the compressed store and writes a
plain copy (the *view*) only where it is needed: for the files whose native copy the agent
deleted (and the other files of their unit). :func:`prepare_view` runs before each index
update's discovery: it writes back what was deleted, and drops view copies that are again
redundant (the native file came back with the same bytes). Reading an archived session is
then reading a plain file, at native speed; writing it back costs one decompression.

Archives written before the store existed held every file plain in the view's place; they are
converted on the next update (or when the file is next archived): each file is compressed,
verified, recorded, and only then removed from the view — never if its native copy is gone.
An interrupted conversion leaves every file either plain or stored (or both).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from agtaild.fsnames import from_text, to_text
from agtaild.store.archive.blobs import STORE_DIR, ZStore
from agtaild.store.archive.catalog import Row
from agtaild.store.archive.framing import ArchiveDamaged
from agtaild.sync.safety import CONFLICT_MARK, PARTIAL_SUFFIX

log = logging.getLogger(__name__)
#: Written once every legacy plain file of an archive has been converted.
CONVERTED_MARK = "converted-v1"
_GONE = {2, 20}  # ENOENT, ENOTDIR


def _gone(path: str | None, present: Collection[str] = ()) -> bool:
    """Is the native file known to be deleted? (a read error is not a deletion) ``present``:
    files (OS paths) the update's discovery found moments ago, so there without a look."""
    if path is None:
        return True
    if present and from_text(path) in present:
        return False
    try:
        os.lstat(from_text(path))
    except OSError as exc:
        return exc.errno in _GONE
    return False


def _chunks(path: Path) -> Any:
    with open(path, "rb") as fh:
        while block := fh.read(1024 * 1024):
            yield block


def _store_plain(archiver: Any, path: str, source: str | None, unit: str | None) -> Row | None:
    """Store one plain archived file (``path`` below the archive root) in the store."""
    plain = archiver.root / path
    try:
        st = os.lstat(plain)
    except OSError:
        return None
    return archiver.store.put_whole(
        path,
        _chunks(plain),
        source=None if source is None else to_text(source),
        unit=unit,
        mtime_ns=st.st_mtime_ns,
    )


def _drop_plain(archiver: Any, path: str, source: str | None) -> bool:
    """Remove the plain copy of ``path`` if the store holds exactly its bytes and the adapters
    do not need it (its native copy exists, or it is a kept conflict copy)."""
    plain = archiver.root / path
    needed = source is None or _gone(to_text(source))
    if needed and CONFLICT_MARK not in path.rpartition("/")[2]:
        return False
    if not archiver.store.matches(path, str(plain)):
        return False
    plain.unlink()
    return True


def convert_legacy_file(archiver: Any, path: str, source: str | None, unit: str | None) -> Row | None:
    """Move one plain archived file into the store (when it is next archived): stored,
    verified, made durable, and only then its plain copy removed (unless still needed)."""
    row = _store_plain(archiver, path, source, unit)
    if row is not None:
        archiver.store.sync()
        _drop_plain(archiver, path, source)
    return row


def _native_for(config: Any, path: str) -> str | None:
    """The native file an archived ``agent/rel`` path mirrors, if one of the agent's roots has it."""
    agent, _, rel = path.partition("/")
    for root in config.roots:
        if root.kind == "native" and root.agent == agent:
            candidate = os.path.join(root.path, rel)
            if os.path.lexists(candidate):
                return candidate
    return None


def convert_legacy(archiver: Any, errors: list[dict[str, str]]) -> int:
    """Convert every plain file of an archive written before the store; the files converted."""
    root: Path = archiver.root
    mark = archiver.store.root / CONVERTED_MARK
    if mark.exists() or not root.is_dir():
        return 0
    known = {r.path for r in archiver.store.rows()}
    done = 0
    stored: list[tuple[str, str | None]] = []
    for dirpath, dirs, names in os.walk(root, followlinks=False):
        if Path(dirpath) == root:
            dirs[:] = [d for d in dirs if d != STORE_DIR]
        for name in names:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if "/" not in rel or name.endswith((".partial", PARTIAL_SUFFIX, ".agtail-restore")):
                continue
            if not os.path.isfile(full) or os.path.islink(full):
                continue
            try:
                source = _native_for(archiver.config, rel)
                if to_text(rel) not in known:
                    _store_plain(archiver, rel, source, to_text(rel))
                    done += 1
                stored.append((rel, source))
            except (OSError, ArchiveDamaged) as exc:
                errors.append(
                    {
                        "path": to_text(full),
                        "agent": rel.partition("/")[0],
                        "error": f"archive conversion: {exc}",
                    }
                )
    if stored:
        archiver.store.sync()  # every row durable before any plain copy goes
    for rel, source in stored:
        try:
            _drop_plain(archiver, rel, source)
        except OSError as exc:
            errors.append(
                {"path": to_text(rel), "agent": rel.partition("/")[0], "error": f"archive conversion: {exc}"}
            )
    archiver.store.root.mkdir(parents=True, exist_ok=True)
    if not any(e.get("error", "").startswith("archive conversion") for e in errors):
        mark.write_text("every plain archived file is in the store\n")
    return done


def prepare_view(
    archiver: Any,
    errors: list[dict[str, str]],
    *,
    convert: bool = True,
    agents: set[str] | None = None,
    present: Collection[str] | None = None,
    unreadable: Collection[str] = (),
) -> dict[str, int]:
    """Write back the archived files whose native copy is gone — or is a session store the
    update's discovery could not read (``unreadable``, OS paths: an agent's database locked or
    damaged), which the index then reads from its archived copy where it keeps nothing of the
    native one; drop redundant view copies (and first, with ``convert``, move the plain files
    of an older archive into the store). ``agents``: only their files (an update scoped to
    some agents' roots). ``present``: native files the update's discovery has just found (OS
    paths): known to be there."""
    out = {"converted": 0, "restored": 0, "dropped": 0, "damaged": 0}
    with archiver._lock:
        if convert:
            out["converted"] = convert_legacy(archiver, errors)
        if not archiver.store.exists():
            return out
        heads = archiver.store.heads()
        if agents is not None:
            heads = [h for h in heads if h[0].partition("/")[0] in agents]
        plain = _plain_files(archiver.root)
        gone = {
            path
            for path, source, unit, _size, _mtime in heads
            if unit and ((source is not None and from_text(source) in unreadable) or _gone(source, present or ()))
        }
        for path, _source, unit, size, mtime_ns in heads:
            if not unit:
                continue  # a kept conflict copy: history, not read by adapters
            if path in gone or unit in gone:
                fs = from_text(path)  # the store takes file-system names, as the index gives them
                view = archiver.root / fs
                if path in plain and _written_back(archiver, fs, view, size, mtime_ns):
                    continue
                try:
                    archiver.store.materialise(fs, view)
                    out["restored"] += 1
                except ArchiveDamaged as exc:
                    out["damaged"] += 1
                    errors.append(
                        {
                            "path": to_text(str(view)),
                            "agent": path.partition("/")[0],
                            "error": f"archive: {exc.message}; the session is not served from it",
                        }
                    )
                except OSError as exc:
                    errors.append(
                        {
                            "path": to_text(str(view)),
                            "agent": path.partition("/")[0],
                            "error": f"archive: {exc}",
                        }
                    )
            elif path in plain:  # a view copy while the native file is there: redundant?
                fs = from_text(path)
                view = archiver.root / fs
                if archiver.store.matches(fs, str(view)):
                    os.unlink(view)
                    out["dropped"] += 1
    return out


def _written_back(archiver: Any, fs: str, view: Path, size: int, mtime_ns: int) -> bool:
    """Is ``view`` the copy written back for this row? Its size and the mtime the write-back
    gave it say so without hashing (this runs before every update); a copy of the right size
    with another mtime is hashed once and given the row's mtime."""
    try:
        st = os.lstat(view)
    except OSError:
        return False
    if st.st_size != size:
        return False
    if st.st_mtime_ns == mtime_ns:
        return True
    if not archiver.store.matches(fs, str(view)):
        return False
    os.utime(view, ns=(mtime_ns, mtime_ns), follow_symlinks=False)
    return True


def _plain_files(root: Path) -> set[str]:
    """Text paths (``agent/rel``) of the plain files in the view (few: deleted sessions only)."""
    found: set[str] = set()
    for dirpath, dirs, names in os.walk(root, followlinks=False):
        if dirpath == str(root):
            dirs[:] = [d for d in dirs if d != STORE_DIR]
        base = os.path.relpath(dirpath, root)
        found.update(to_text(os.path.join(base, n).replace(os.sep, "/")) for n in names)
    return found


def verify_store(config: Any) -> dict[str, Any]:
    """Decompress every archived file and check every frame (``agtail doctor --verify-archive``)."""
    store = ZStore(Path(config.archive_dir))
    out: dict[str, Any] = {"dir": str(store.root), "files": 0, "bytes": 0, "stored_bytes": 0, "damaged": []}
    if not store.exists():
        return out
    try:
        for row in store.rows():
            out["files"] += 1
            out["bytes"] += row.size
            out["stored_bytes"] += row.zsize
            problem = store.verify(from_text(row.path))
            if problem is not None:
                out["damaged"].append({"path": row.path, "problem": problem})
    finally:
        store.close()
    return out
