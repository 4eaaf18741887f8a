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

import contextlib
import logging
import os
import stat
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from agtaild.adapters.kit.sidecars import SIDE_DIR
from agtaild.errors import AgtailError
from agtaild.fsnames import from_text, to_text
from agtaild.store.archive.blobs import STORE_DIR, ZStore
from agtaild.store.archive.catalog import Row
from agtaild.store.archive.durable import NOFOLLOW
from agtaild.store.archive.framing import ArchiveDamaged
from agtaild.store.archive.pinned import OpenSet, Pinned, PinProblem, pins_present
from agtaild.sync.safety import CONFLICT_MARK, PARTIAL_SUFFIX, open_dir

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
    unlink_view(archiver.root, path)
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
    paths): known to be there.

    A file pinned by an update and not yet archived by the finisher (agtaild.store.archive.pins)
    counts as archived: written back from its pin. The pins are listed before the catalog is
    read, so a file the finisher moves from one to the other meanwhile is seen in either."""
    out = {"converted": 0, "restored": 0, "dropped": 0, "damaged": 0}
    with archiver._lock:
        if convert:
            out["converted"] = convert_legacy(archiver, errors)
        pins = {to_text(p.local.path): (folder, p) for folder, p in pins_present(archiver.store.root)}
        if not archiver.store.exists() and not pins:
            return out
        heads = {h[0]: h for h in archiver.store.heads()} if archiver.store.exists() else {}
        # path -> (native source, unit's main file): the catalog's, or a pin's
        known = {path: (source, unit) for path, source, unit, _size, _mtime in heads.values()}
        known.update((path, (to_text(p.local.source), p.main)) for path, (_folder, p) in pins.items() if path not in heads)
        if agents is not None:
            known = {k: v for k, v in known.items() if k.partition("/")[0] in agents}
        plain = _plain_files(archiver.root)
        gone = {
            path
            for path, (source, unit) in known.items()
            if unit and ((source is not None and from_text(source) in unreadable) or _gone(source, present or ()))
        }
        # A side file (agtaild.adapters.kit.sidecars) describes many sessions of its agent: it is
        # written back while any of them is served from the archive, whichever unit stored it.
        served = {path.partition("/")[0] for path in gone if not is_side_file(path)}
        gone.update(p for p, (_s, unit) in known.items() if unit and is_side_file(p) and p.partition("/")[0] in served)
        for path, (_source, unit) in known.items():
            if not unit:
                continue  # a kept conflict copy: history, not read by adapters
            if not (path in gone or unit in gone or (path in plain and path in heads)):
                continue  # the native file is there and no view copy is: nothing to do (most files)
            fs = from_text(path)  # the store takes file-system names, as the index gives them
            view = archiver.root / fs
            if path in gone or unit in gone:
                try:
                    if path in pins and _write_back_pin(archiver, fs, view, pins[path], heads.get(path), path in plain):
                        out["restored"] += 1
                        continue
                    row = archiver.store.get(fs)
                    if row is None or (path in plain and _written_back(archiver, fs, view, row.size, row.mtime_ns)):
                        continue
                    write_view(archiver.root, fs, archiver.store.read(fs), row.mtime_ns)
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
                except (OSError, AgtailError) as exc:
                    errors.append(
                        {
                            "path": to_text(str(view)),
                            "agent": path.partition("/")[0],
                            "error": f"archive: {getattr(exc, 'message', None) or exc}",
                        }
                    )
            elif path in plain and path in heads and archiver.store.matches(fs, str(view)):
                # a view copy while the native file is there: redundant
                unlink_view(archiver.root, fs)
                out["dropped"] += 1
    return out


def is_side_file(path: str) -> bool:
    """Is ``agent/rel`` one of the side files an adapter's units depend on?"""
    parts = path.split("/", 2)
    return len(parts) == 3 and parts[1] == SIDE_DIR


def _write_back_pin(archiver: Any, fs: str, view: Path, pin: tuple[Path, Pinned], head: Any, in_view: bool) -> bool:
    """Write a pinned file back from its pin, unless the catalog's copy is as new (the
    finisher got to it) or the view already holds it; False when the catalog's copy is to
    be written instead (or the pin went meanwhile: the finisher has archived it)."""
    folder, p = pin
    try:
        with OpenSet(folder) as s, s.open_pin(p) as fh:
            st = os.fstat(fh.fileno())
            if head is not None and head[4] >= st.st_mtime_ns and head[3] >= st.st_size:
                return False
            if in_view:
                try:
                    now = os.lstat(view)
                    if (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
                        return True
                except OSError:
                    pass
            write_view(archiver.root, fs, iter(lambda: fh.read(1 << 20), b""), st.st_mtime_ns)
            return True
    except (FileNotFoundError, PinProblem):
        return False


def write_view(root: Path, fs: str, chunks: Iterable[bytes], mtime_ns: int) -> None:
    """Write ``fs`` (``agent/rel``) of the view below ``root`` from ``chunks`` (temp file,
    renamed), every folder opened without following a symlink (Refused when one is in the
    way: a write-back never lands outside the archive)."""
    parts = fs.split("/")
    folder = open_dir(_real(root), parts[:-1], create=True)
    name, tmp = parts[-1], f".{parts[-1]}.agtail-restore"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                for block in chunks:
                    out.write(block)
            os.utime(tmp, ns=(mtime_ns, mtime_ns), dir_fd=folder, follow_symlinks=False)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=folder)
    finally:
        os.close(folder)


def _real(root: Path) -> Path:
    """The archive's own folder, where it really is (it may be a symlink: the user's choice of
    where the data lives; what is below it is agtail's, and no symlink is followed there)."""
    return Path(os.path.realpath(root))


def unlink_view(root: Path, fs: str) -> None:
    """Remove the view's copy of ``fs``: a regular file, reached without following a symlink."""
    parts = fs.split("/")
    folder = open_dir(_real(root), parts[:-1], create=False)
    try:
        if stat.S_ISREG(os.lstat(parts[-1], dir_fd=folder).st_mode):
            os.unlink(parts[-1], dir_fd=folder)
    finally:
        os.close(folder)


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
