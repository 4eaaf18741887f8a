"""`--redact` for `sync push` and native `export`: native files with every secret masked.

Native bytes are the point of sync and native export (byte-exact round trips), so by default
they are sent as they are. With ``--redact`` each file is rewritten first, into a private
temporary directory, with every secret masked by the same rules and the same mask as every
other exit (``«secret:github-pat …WXYZ»``, agtaild.secrets), and the copy is what is sent:

* **JSONL** (Claude Code, Codex, …): each line that is a JSON value is decoded, its strings
  masked (dict keys too, and JSON documents inside strings: agtaild.secrets.jsonwalk), and
  encoded again, so the line stays valid JSON; a line with no secret keeps its bytes; a line
  that is not JSON is masked as text.
* **JSON** (a whole file is one value: OpenCode's storage, Gemini's checkpoints, …): decoded,
  masked and encoded again (indented as it was when it was indented).
* **SQLite** (OpenCode, Crush, Cursor, …): a consistent copy made with the backup API, then
  every text value of every table masked through SQL (a value holding a JSON document stays a
  JSON document; a BLOB holding UTF-8 text is masked as text and stays a BLOB), then VACUUMed,
  so no page of the copy keeps an old value.
* anything else: its text masked (bytes that are not UTF-8 kept as they are).

A file that cannot be rewritten so (a table that cannot be updated) is not sent: the
transfer reports it as an error, and nothing of it leaves. The copies live as long as the
transfer and are removed with the source.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from typing import Any

from agtaild.adapters.kit.sqlite_open import reading
from agtaild.errors import AgtailError
from agtaild.sync.manifest import FileEntry, hash_stream
from agtaild.sync.native import LocalFile, LocalFilesSource, is_sqlite
from agtaild.sync.transfer import TransferError

#: Lines (or SQLite values) scanned in one batch.
BATCH = 2000
#: A file over this size as one JSON document is not decoded whole: it is masked line by line
#: (a JSONL) or as text.
MAX_JSON_DOCUMENT = 256 << 20


def _scanner() -> Any:
    from agtaild.secrets import default_scanner

    return default_scanner()


def _dirty(results: list[Any]) -> bool:
    return any(r.spans or r.scanned is not None for r in results)


def _encode(value: Any, indent: bool) -> str:
    if indent:
        return json.dumps(value, ensure_ascii=False, indent=2)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def mask_texts(texts: list[str], *, json_values: bool = True) -> tuple[list[str], int]:
    """Each text masked: one that is a JSON object or array is masked as a JSON value and
    encoded again (still valid JSON), any other as text. Returns (texts, how many changed).
    Texts are scanned in batches; only a text holding a secret is rebuilt."""
    from agtaild.secrets import jsonwalk, masking

    scanner = _scanner()
    out = list(texts)
    changed = 0
    for lo in range(0, len(texts), BATCH):
        part = texts[lo : lo + BATCH]
        gathered: list[str] = []
        spans: list[tuple[int, int, Any]] = []
        for text in part:
            value: Any = None
            start = len(gathered)
            head = text.lstrip()[:1]
            if json_values and head in ("{", "["):
                try:
                    value = json.loads(text)
                except (ValueError, RecursionError):
                    value = None
            if isinstance(value, dict | list):
                try:
                    jsonwalk.texts_of(value, gathered)
                except ValueError:  # nested too deep to walk: masked as text
                    del gathered[start:]
                    value = None
            if not isinstance(value, dict | list):
                value = None
                gathered.append(text)
            spans.append((start, len(gathered), value))
        results = scanner.results(gathered)
        for i, (a, b, value) in enumerate(spans):
            if not _dirty(results[a:b]):
                continue
            text = part[i]
            if value is None:
                new = masking.apply(text, results[a])
            else:
                indented = "\n" in text.strip()
                new = _encode(jsonwalk.mask_value(scanner, value), indented)
                if text.endswith("\n") and not new.endswith("\n"):
                    new += "\n"
            if new != text:
                out[lo + i] = new
                changed += 1
    return out, changed


def redact_text_file(src: str, dst: str) -> int:
    """Write ``src`` masked to ``dst``: a whole JSON document, else line by line. Returns how
    many values (lines, or the document) changed."""
    with open(src, "rb") as fh:
        data = fh.read()
    text = data.decode("utf-8", "surrogateescape")
    body = text.strip()
    if body[:1] in ("{", "[") and len(data) <= MAX_JSON_DOCUMENT and "\n" in body:
        try:
            json.loads(body)
            whole = True
        except (ValueError, RecursionError):
            whole = False
        if whole:
            (masked,), changed = mask_texts([text])
            _write(dst, masked if changed else text)
            return changed
    lines = text.splitlines(keepends=True)
    # A line's ending is kept apart, so that a re-encoded value ends exactly as it did.
    bodies = [ln.rstrip("\r\n") for ln in lines]
    ends = [ln[len(b) :] for ln, b in zip(lines, bodies, strict=True)]
    masked_lines, changed = mask_texts(bodies)
    _write(dst, "".join(m + e for m, e in zip(masked_lines, ends, strict=True)))
    return changed


def _write(dst: str, text: str) -> None:
    with open(dst, "wb") as fh:
        fh.write(text.encode("utf-8", "surrogateescape"))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tables(db: sqlite3.Connection) -> list[tuple[str, bool]]:
    """(name, is virtual) of every table whose values are the store's own: virtual tables
    (FTS) are updated through themselves, so their shadow tables are left to them."""
    rows = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    virtual = [n for n, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    out = []
    for name, _sql in rows:
        if any(name != v and name.startswith(v + "_") for v in virtual):
            continue  # a shadow table of a virtual table
        out.append((name, name in virtual))
    return out


def _keys(db: sqlite3.Connection, table: str) -> list[str]:
    """How to address a row: its rowid, or (a WITHOUT ROWID table) its primary key columns."""
    try:
        db.execute(f"SELECT rowid FROM {_quote(table)} LIMIT 1").fetchall()
        return ["rowid"]
    except sqlite3.OperationalError:
        cols = sorted((r[5], r[1]) for r in db.execute(f"PRAGMA table_info({_quote(table)})") if r[5])
        return [c for _, c in cols]


def _mask_table(db: sqlite3.Connection, table: str) -> int:
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({_quote(table)})")]
    keys = _keys(db, table)
    if not cols or not keys:
        raise TransferError(f"table {table!r} has no key to rewrite its rows by; the store is not sent")
    qt = _quote(table)
    changed = 0
    key_sql = ", ".join(_quote(k) if k != "rowid" else "rowid" for k in keys)
    where = " AND ".join(f"{_quote(k) if k != 'rowid' else 'rowid'} IS ?" for k in keys)
    for col in cols:
        qc = _quote(col)
        rows = db.execute(
            f"SELECT {key_sql}, {qc} FROM {qt} WHERE typeof({qc}) IN ('text', 'blob')"
        ).fetchall()
        for lo in range(0, len(rows), BATCH):
            part = rows[lo : lo + BATCH]
            texts: list[str] = []
            blobs: list[bool] = []
            for row in part:
                value = row[-1]
                if isinstance(value, bytes):
                    texts.append(value.decode("utf-8", "surrogateescape"))
                    blobs.append(True)
                else:
                    texts.append(value)
                    blobs.append(False)
            masked, n = mask_texts(texts)
            if not n:
                continue
            updates = []
            for row, old, new, blob in zip(part, texts, masked, blobs, strict=True):
                if new != old:
                    stored: Any = new.encode("utf-8", "surrogateescape") if blob else new
                    updates.append((stored, *row[:-1]))
            db.executemany(f"UPDATE {qt} SET {qc} = ? WHERE {where}", updates)
            changed += len(updates)
    return changed


def redact_sqlite(src: str, dst: str) -> int:
    """A consistent copy of the SQLite store ``src`` at ``dst`` with every text value masked
    and the file VACUUMed (no free page keeps an old value). Returns the values changed."""
    try:
        with reading(src, busy_timeout=30) as source:
            out = sqlite3.connect(dst)
            try:
                source.backup(out)
            finally:
                out.close()
    except AgtailError as exc:
        raise OSError(exc.message) from exc
    db = sqlite3.connect(dst, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("PRAGMA secure_delete=ON")
        db.execute("BEGIN")
        changed = 0
        for table, _virtual in _tables(db):
            try:
                changed += _mask_table(db, table)
            except sqlite3.Error as exc:
                db.execute("ROLLBACK")
                raise TransferError(
                    f"its table {table!r} could not be rewritten masked ({exc}); the store is not sent"
                ) from None
        db.execute("COMMIT")
        db.execute("VACUUM")
    finally:
        db.close()
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(dst + suffix):
            os.unlink(dst + suffix)
    return changed


class RedactedFilesSource(LocalFilesSource):
    """:class:`LocalFilesSource` whose files are sent as their masked copies (see above).
    The manifest gives the copies' sizes and digests, so a push that finds the destination's
    copy a prefix of the new one (a JSONL that grew) still sends only the tail."""

    def __init__(self, files: list[LocalFile], *args: Any, **kwargs: Any) -> None:
        super().__init__(files, *args, **kwargs)
        self._redacted: dict[str, str] = {}
        self._redact_dir: str | None = None
        #: values rewritten masked, per collection path (the report's ``redacted``)
        self.changed: dict[str, int] = {}
        #: files that could not be rewritten masked: left out of the manifest, never sent
        self.failed: dict[str, str] = {}

    def redacted(self, path: str) -> str:
        """The masked copy of the file at collection ``path`` (made once per transfer)."""
        if path in self._redacted:
            return self._redacted[path]
        local = self.files[path]
        if self._redact_dir is None:
            self._redact_dir = tempfile.mkdtemp(prefix="agtail-redact-")
        dst = os.path.join(self._redact_dir, str(len(self._redacted)))
        try:
            if is_sqlite(local.source):
                n = redact_sqlite(local.source, dst)
            else:
                n = redact_text_file(local.source, dst)
        except BaseException:
            if os.path.exists(dst):
                os.unlink(dst)
            raise
        self._redacted[path] = dst
        if n:
            self.changed[path] = n
        return dst

    def readable(self, path: str) -> str:
        return self.redacted(path)

    def _entry(self, local: LocalFile) -> FileEntry | None:
        try:
            st = os.stat(local.source)
            copy = self.redacted(local.path)
        except FileNotFoundError:
            return None
        except (OSError, AgtailError) as exc:
            message = exc.message if isinstance(exc, AgtailError) else str(exc)
            self.failed[local.path] = message
            return None
        with open(copy, "rb") as fh:
            digest, size = hash_stream(fh)
        return self._file_entry(local, st.st_mtime, size, digest)

    def close(self) -> None:
        super().close()
        if self._redact_dir is not None:
            shutil.rmtree(self._redact_dir, ignore_errors=True)
            self._redact_dir = None
            self._redacted.clear()


def redacting_source(source: LocalFilesSource) -> RedactedFilesSource:
    """The same files, origin and collection as ``source``, sent masked."""
    return RedactedFilesSource(
        list(source.files.values()),
        source.cache,
        origin=source.origin,
        origin_name=source.origin_name,
        collection=source.collection,
        where=source.where + ", redacted",
    )


def add_to_report(report: dict[str, Any], source: RedactedFilesSource) -> dict[str, Any]:
    """``redacted``: files and values masked; files that could not be masked are errors."""
    report["redacted"] = {"files": len(source.changed), "values": sum(source.changed.values())}
    for path, message in sorted(source.failed.items()):
        report.setdefault("errors", []).append({"path": path, "message": f"not sent: {message}"})
    return report
