"""The ssh transport, through the system ``rsync`` (``ssh://[user@]host[:port]/path``).

rsync does the moving; agtail decides what to move and checks what arrives.

* push: the remote collection's ``manifest.json`` (the record of the last push) is fetched
  and compared with this machine's manifest. Files whose remote copy is a verified prefix go
  in one ``--append-verify`` run (only the tail crosses, then the whole file is checksummed; an
  interrupted append simply continues next time, as rsync allows no --partial-dir with it);
  files the record says this machine wrote go in a plain run (delta transfer, temp file +
  rename); everything else — new files and files another machine wrote — goes in a run with
  ``--backup --suffix=.agtail-conflict-…``, so a copy rsync replaces is kept, not lost.
  Every run uses ``--partial-dir`` (an interrupted transfer resumes) and never ``--delete``.
  The files are offered through a private staging tree of symlinks followed with
  ``--copy-links`` (SQLite stores through their consistent snapshots).
* pull: rsync mirrors the remote collection into a private cache below the data dir
  (without ``--links``/``--devices``, so symlinks and device files never arrive, and with
  ``--max-size``), and the ordinary directory transfer moves the difference from that cache
  into the import store, with all its checks, hashes and conflict handling.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from agtaild.errors import AgtailError, UsageError
from agtaild.sync.manifest import Manifest, decode_manifest, encode_manifest, merge_record
from agtaild.sync.native import LocalFilesSource
from agtaild.sync.safety import CONFLICT_MARK, check_entries
from agtaild.sync.transfer import Limits

PARTIAL_DIR = ".agtail-rsync-partial"
BASE_FLAGS = ["--recursive", "--times", f"--partial-dir={PARTIAL_DIR}", "--stats", "--chmod=Du=rwx,go=,Fu=rw,go="]


def rsync_binary() -> str | None:
    return shutil.which("rsync")


class RsyncRemote:
    """``target`` is what rsync understands: ``host:/path``, ``user@host:/path`` or a local path."""

    def __init__(self, target: str, *, port: int | None = None) -> None:
        binary = rsync_binary()
        if binary is None:
            raise AgtailError("rsync is not installed; install it (e.g. `apt-get install rsync`) or use an http remote")
        self.binary = binary
        self.target = target.rstrip("/")
        self.port = port
        self.where = target

    def _base(self) -> list[str]:
        cmd = [self.binary]
        if self.port is not None:
            cmd += ["-e", f"ssh -p {int(self.port)}"]
        return cmd

    def _run(self, args: list[str], *, allow_missing: bool = False) -> dict[str, int]:
        proc = subprocess.run([*self._base(), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0 and not (allow_missing and proc.returncode == 23):
            raise AgtailError(
                f"rsync failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}; check the ssh "
                "access and the remote path, then run again (partial files are kept and resumed)"
            )
        stats = {}
        for key, name in (("Total bytes sent", "sent"), ("Total bytes received", "received"),
                          ("Literal data", "literal")):
            m = re.search(rf"{key}: ([\d,.]+)", proc.stdout)
            if m:
                stats[name] = int(re.sub(r"[,.]", "", m.group(1)))
        return stats

    def fetch_record(self, collection: str) -> Manifest | None:
        with tempfile.TemporaryDirectory(prefix="agtail-rsync-") as tmp:
            self._run([f"{self.target}/{collection}/manifest.json", tmp + "/"], allow_missing=True)
            path = Path(tmp) / "manifest.json"
            if not path.is_file():
                return None
            return decode_manifest(path.read_bytes(), f"{self.where}/{collection}/manifest.json")

    def push(self, source: LocalFilesSource, collection: str, limits: Limits, *, dry_run: bool = False) -> dict[str, Any]:
        started = time.monotonic()
        manifest = source.manifest()
        check_entries(manifest.files, max_file_size=limits.max_file_size, case_insensitive=False,
                      known_agents=limits.known_agents, where="this machine")
        record = self.fetch_record(collection)
        rec = record.by_path() if record is not None else {}
        groups: dict[str, list[str]] = {"append": [], "plain": [], "backup": []}
        report: dict[str, Any] = {"source": source.where, "destination": f"{self.where}/{collection}",
                                  "files": 0, "bytes": 0, "skipped": 0, "new": 0, "appended": 0,
                                  "replaced": 0, "resumed": 0, "conflicts": [], "errors": [], "dry_run": dry_run}
        for entry in manifest.files:
            old = rec.get(entry.path)
            if old is not None and old.size == entry.size and old.sha256 == entry.sha256:
                report["skipped"] += 1
                continue
            report["files"] += 1
            if old is not None and old.size < entry.size and source.prefix_sha256(entry.path, old.size) == old.sha256:
                groups["append"].append(entry.path)
                report["appended"] += 1
                report["bytes"] += entry.size - old.size
            elif old is not None and old.origin == entry.origin:
                groups["plain"].append(entry.path)
                report["replaced"] += 1
                report["bytes"] += entry.size
            else:
                groups["backup"].append(entry.path)
                report["new" if old is None else "replaced"] += 1
                report["bytes"] += entry.size
                if old is not None:
                    report["conflicts"].append({"path": entry.path, "kept_as": None})
        if dry_run:
            report["seconds"] = round(time.monotonic() - started, 3)
            return report
        wire = 0
        stage = Path(tempfile.mkdtemp(prefix="agtail-stage-"))
        try:
            for entry in manifest.files:
                link = stage / entry.path
                link.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.path.abspath(source.readable(entry.path)), link)
            suffix = f"{CONFLICT_MARK}{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
            extra = {"append": ["--append-verify"], "plain": [], "backup": ["--backup", f"--suffix={suffix}"]}
            for name, paths in groups.items():
                if not paths:
                    continue
                listing = stage / f".files-{name}"
                listing.write_text("".join(p + "\n" for p in paths))
                flags = [f for f in BASE_FLAGS if name != "append" or not f.startswith("--partial-dir")]
                # These files are known to differ (the manifests say so): rsync's own quick check
                # (same size, same mtime second) must not skip one rewritten within a second.
                stats = self._run([*flags, "--ignore-times", "--copy-links", *extra[name], f"--files-from={listing}",
                                   f"{stage}/", f"{self.target}/{collection}/"])
                wire += stats.get("sent", 0)
            new_record = merge_record(record, manifest.files, manifest)
            (stage / "manifest.json").unlink(missing_ok=True)
            (stage / ".record").mkdir()
            (stage / ".record" / "manifest.json").write_bytes(encode_manifest(new_record))
            # --ignore-times: a new record often has the old one's size (same-width numbers) and,
            # within a second, its mtime; rsync would then keep the stale record.
            self._run(["--times", "--ignore-times", f"{stage}/.record/manifest.json", f"{self.target}/{collection}/manifest.json"])
        finally:
            shutil.rmtree(stage, ignore_errors=True)
        report["wire_bytes"] = wire
        report["seconds"] = round(time.monotonic() - started, 3)
        return report

    def mirror(self, collection: str, cache_root: Path, limits: Limits) -> tuple[Path, dict[str, int]]:
        """Bring the remote collection into a private cache (the source of a pull)."""
        key = hashlib.sha256(self.target.encode()).hexdigest()[:16]
        cache = cache_root / key / collection
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        stats = self._run([*BASE_FLAGS, "--no-links", "--no-devices", "--no-specials",
                           f"--max-size={limits.max_file_size}", "--exclude=*.agtail-*",
                           f"{self.target}/{collection}/", f"{cache}/"])
        return cache, stats


def parse_ssh_remote(remote: str) -> RsyncRemote:
    """``ssh://[user@]host[:port]/path`` → an rsync target ``[user@]host:/path``."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(remote)
        port = parts.port
    except ValueError as exc:  # an unclosed IPv6 address, a port that is not a number
        raise UsageError(f"{remote!r} is not a valid URL ({exc}); write ssh://[user@]host[:port]/path") from None
    if not parts.hostname or not parts.path or parts.path == "/":
        raise UsageError(f"{remote!r}: write ssh remotes as ssh://[user@]host[:port]/path")
    user = f"{parts.username}@" if parts.username else ""
    return RsyncRemote(f"{user}{parts.hostname}:{parts.path}", port=port)
