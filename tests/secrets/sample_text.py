"""The decoded text of the sample corpus (tests/corpus/**): every string an index would store.

The scanner reads decoded text, not the bytes of a file: a JSONL line is parsed and each of
its strings is a text (a string that is itself JSON is parsed too, as the scanner's
``scan_json`` does); a SQLite store gives every text column and every UTF-8 blob (parsed when
JSON); any other UTF-8 file is one text. Files are opened read-only (SQLite ``immutable``:
nothing is written beside them).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if v.lstrip()[:1] in ("{", "["):
                try:
                    stack.append(json.loads(v))
                    continue
                except ValueError:
                    pass
            yield v
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))


def _sqlite(path: Path) -> Iterator[str]:
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            for row in con.execute(f"SELECT * FROM {quoted}"):
                for value in row:
                    if isinstance(value, bytes):
                        try:
                            value = value.decode()
                        except UnicodeDecodeError:
                            continue
                    if isinstance(value, str):
                        yield from _strings(value)
    finally:
        con.close()


def corpus_texts(root: Path = CORPUS) -> Iterator[tuple[Path, str]]:
    """(file, text) for every text of every file under ``root``, in a stable order."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        if raw.startswith(b"SQLite format 3\x00"):
            for text in _sqlite(path):
                yield path, text
            continue
        try:
            body = raw.decode()
        except UnicodeDecodeError:
            continue
        if path.suffix == ".jsonl":
            for line in body.splitlines():
                try:
                    value = json.loads(line)
                except ValueError:
                    yield path, line
                    continue
                for text in _strings(value):
                    yield path, text
        elif path.suffix == ".json":
            try:
                value = json.loads(body)
            except ValueError:
                yield path, body
                continue
            for text in _strings(value):
                yield path, text
        else:
            yield path, body


def corpus_records(root: Path = CORPUS) -> Iterator[tuple[Path, Any]]:
    """(file, value) for every JSONL line and JSON file under ``root`` that parses."""
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")):
        body = path.read_bytes().decode("utf-8", "replace")
        for chunk in body.splitlines() if path.suffix == ".jsonl" else [body]:
            try:
                yield path, json.loads(chunk)
            except ValueError:
                continue
