"""Every registered adapter, against its own samples and against garbage.

Walks ``all_adapters()``, so an adapter added to the registry later is covered without
touching this file. For each adapter:

* it declares itself (id, name, root help; sample roots that exist; default roots that stay
  inside the given home when no env var moves them);
* every unit discovered under its sample roots reads without an exception, with balanced
  accounting and valid events, and at least one session has events;
* with hypothesis, copies of its sample files are damaged the way real files get damaged —
  a record's field replaced by some other JSON, a line of random bytes, a torn end, a whole
  file of noise, a database cell holding nonsense — and discovery plus every read must still
  not raise anything but a clean ``AgtailError`` (for a unit that cannot be read at all).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agtaild.adapters import all_adapters
from agtaild.adapters.base import Adapter, ReadResult, Unit
from agtaild.adapters.kit.sqlite_db import is_sqlite_file, quote_ident
from agtaild.errors import AgtailError
from agtaild.model import EVENT_KINDS

ADAPTERS = {a.id: a for a in all_adapters()}
LATER = 4_000_000_000.0
EXAMPLES = int(os.environ.get("AGTAIL_FUZZ_EXAMPLES", "20"))
#: The same examples on every run (CI stays reproducible); AGTAIL_FUZZ_RANDOM=1 explores.
DERANDOMIZE = os.environ.get("AGTAIL_FUZZ_RANDOM") != "1"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def check_result(adapter: Adapter, unit: Unit, result: ReadResult) -> None:
    s = result.session
    assert s.agent == adapter.id, unit.path
    assert s.accounting.balanced(), (unit.path, s.accounting)
    seqs = [e.seq for e in result.events]
    assert len(seqs) == len(set(seqs)) and all(isinstance(q, int) and q >= 0 for q in seqs), unit.path
    assert all(e.kind in EVENT_KINDS for e in result.events), unit.path
    msgspec.json.encode(result.session)  # the summary must be storable as it is
    for ev in result.events:
        msgspec.json.encode(ev)


def read_clean(adapter: Adapter, unit: Unit, state: bytes | None = None) -> ReadResult | None:
    """A read that may refuse the unit with an AgtailError — and nothing else."""
    try:
        result = adapter.read(unit, state, now=LATER)
    except AgtailError:
        return None
    check_result(adapter, unit, result)
    return result


@pytest.fixture(params=sorted(ADAPTERS))
def adapter(request: pytest.FixtureRequest) -> Adapter:
    return ADAPTERS[request.param]


def test_registry_ids_are_unique_and_listed() -> None:
    ids = [a.id for a in all_adapters()]
    assert len(ids) == len(set(ids)) and all(ids)


def test_every_agent_package_is_registered_once_and_exposes_its_adapter() -> None:
    """One package per agent under agtaild/adapters/ (kit is the shared helpers): each listed in
    BUILTIN as package:Class, its __init__ exposing the class its adapter.py defines."""
    import importlib

    from agtaild.adapters import BUILTIN

    folder = Path(importlib.import_module("agtaild.adapters").__file__).parent
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()} - {"kit"}
    listed = {spec.partition(":")[0].rsplit(".", 1)[1] for spec in BUILTIN}
    assert listed == packages
    for spec in BUILTIN:
        module, _, cls = spec.partition(":")
        assert getattr(importlib.import_module(module), cls) is getattr(importlib.import_module(module + ".adapter"), cls), spec


def test_adapter_declares_itself(adapter: Adapter, corpus: Path, tmp_path: Path) -> None:
    assert adapter.id and adapter.name and adapter.root_help, adapter.id
    assert adapter.formats_tested and adapter.sample_roots, f"{adapter.id}: declare the formats tested and sample roots"
    assert isinstance(type(adapter).__dict__.get("env_vars", type(adapter).env_vars), tuple), adapter.id
    for rel in adapter.sample_roots:
        assert (corpus / rel).exists(), f"{adapter.id}: sample root {rel} is missing"
    roots = adapter.default_roots({}, tmp_path)
    assert all(isinstance(r, Path) for r in roots)
    assert all(r.is_relative_to(tmp_path) for r in roots), (adapter.id, roots)
    assert list(adapter.discover(tmp_path / "does-not-exist")) == []
    (tmp_path / "empty").mkdir()
    assert list(adapter.discover(tmp_path / "empty")) == []


def test_samples_read_cleanly(adapter: Adapter, corpus: Path) -> None:
    if not adapter.sample_roots:
        pytest.skip(f"{adapter.id} declares no sample roots")
    with_events = 0
    for rel in adapter.sample_roots:
        units = list(adapter.discover(corpus / rel))
        assert units, f"{adapter.id}: nothing discovered under {rel}"
        for unit in units:
            assert unit.agent == adapter.id
            first = adapter.read(unit, None, now=LATER)
            check_result(adapter, unit, first)
            again = adapter.read(unit, first.state, now=LATER)  # continuing from the state
            check_result(adapter, unit, again)
            with_events += bool(first.events)
    assert with_events, f"{adapter.id}: no sample session has any event"


# -- garbage ----------------------------------------------------------------------------------


def _damage_json_text(data: bytes, draw: Callable[[Any], Any]) -> bytes:
    """Replace one field somewhere inside a JSON value with other JSON (or drop it)."""
    try:
        obj = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return data
    if not isinstance(obj, dict | list) or not obj:
        return msgspec.json.encode(draw(json_values))
    node: Any = obj
    for _ in range(draw(st.integers(0, 4))):
        children = list(node.values()) if isinstance(node, dict) else node
        children = [c for c in children if isinstance(c, dict | list) and c]
        if not children:
            break
        node = children[draw(st.integers(0, len(children) - 1))]
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    key = keys[draw(st.integers(0, len(keys) - 1))]
    if isinstance(node, dict) and draw(st.booleans()):
        del node[key]
    else:
        node[key] = draw(json_values)
    return msgspec.json.encode(obj)


def damage_lines(data: bytes, draw: Callable[[Any], Any]) -> bytes:
    lines = data.split(b"\n")
    how = draw(st.sampled_from(["field", "field", "noise-line", "torn", "noise"]))
    if how == "noise":
        return draw(st.binary(max_size=300))
    if how == "torn":
        return data[: draw(st.integers(0, len(data)))]
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    if how == "noise-line":
        lines[i] = draw(st.binary(min_size=1, max_size=80)).replace(b"\n", b" ")
    else:
        for _ in range(draw(st.integers(1, 3))):
            j = draw(st.integers(0, max(len(lines) - 1, 0)))
            if lines[j].strip():
                lines[j] = _damage_json_text(lines[j], draw)
        lines[i] = lines[i] if lines[i].strip() else msgspec.json.encode(draw(json_values))
    return b"\n".join(lines)


def damage_document(data: bytes, draw: Callable[[Any], Any]) -> bytes:
    how = draw(st.sampled_from(["field", "field", "value", "torn", "noise"]))
    if how == "noise":
        return draw(st.binary(max_size=300))
    if how == "torn":
        return data[: draw(st.integers(0, len(data)))]
    if how == "value":
        return msgspec.json.encode(draw(json_values))
    for _ in range(draw(st.integers(1, 4))):
        data = _damage_json_text(data, draw)
    return data


def damage_database(path: Path, draw: Callable[[Any], Any]) -> None:
    """Set random cells of random rows to nonsense: other JSON, damaged JSON, numbers,
    blobs, NULL. Keys may collide (then that change is skipped)."""
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        tables = [
            t
            for t in tables
            if not t.startswith("sqlite_")
            and _has_rowid(conn, t)
            and conn.execute(f"SELECT count(*) FROM {quote_ident(t)}").fetchone()[0]
        ]
        for _ in range(draw(st.integers(1, 6))):
            if not tables:
                break
            table = draw(st.sampled_from(tables))
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({quote_ident(table)})")]
            column = draw(st.sampled_from(columns))
            rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM {quote_ident(table)}")]
            rowid = draw(st.sampled_from(rowids))
            (old,) = conn.execute(
                f"SELECT {quote_ident(column)} FROM {quote_ident(table)} WHERE rowid=?", (rowid,)
            ).fetchone()
            if isinstance(old, str) and draw(st.booleans()):
                new: Any = _damage_json_text(old.encode(), draw).decode(errors="replace")
            else:
                new = draw(
                    st.one_of(
                        json_values.map(lambda v: msgspec.json.encode(v).decode()),
                        st.integers(),
                        st.binary(max_size=20),
                        st.none(),
                        st.text(max_size=20),
                    )
                )
            try:
                conn.execute(
                    f"UPDATE {quote_ident(table)} SET {quote_ident(column)}=? WHERE rowid=?", (new, rowid)
                )
            except (sqlite3.Error, OverflowError):  # OverflowError: an int past SQLite's 64 bits
                continue
        conn.commit()
    finally:
        conn.close()


def _has_rowid(conn: sqlite3.Connection, table: str) -> bool:
    """False for WITHOUT ROWID tables (FTS5 keeps its config in one): cells are picked by rowid."""
    try:
        conn.execute(f"SELECT rowid FROM {quote_ident(table)} LIMIT 1").fetchall()
    except sqlite3.Error:
        return False
    return True


def damage(path: Path, draw: Callable[[Any], Any]) -> None:
    data = path.read_bytes()
    if is_sqlite_file(path):
        if draw(st.integers(0, 4)):
            damage_database(path, draw)
        else:
            path.write_bytes(data[: draw(st.integers(0, len(data)))])
    elif path.suffix in (".jsonl", ".ndjson"):
        path.write_bytes(damage_lines(data, draw))
    elif path.suffix == ".json":
        path.write_bytes(damage_document(data, draw))
    else:
        path.write_bytes(draw(st.sampled_from([b"", data[: len(data) // 2]])) + draw(st.binary(max_size=100)))


def copy_samples(adapter: Adapter, corpus: Path, dst: Path) -> list[Path]:
    roots = []
    for i, rel in enumerate(adapter.sample_roots):
        src = corpus / rel
        target = dst / str(i) / Path(rel).name
        target.parent.mkdir(parents=True)
        if src.is_dir():
            shutil.copytree(src, target, symlinks=True)  # recorded folders hold dangling links (gptme's workspace)
        else:
            shutil.copy(src, target)
        for f in [target, *target.rglob("*")] if target.is_dir() else [target]:
            if not f.is_symlink():
                f.chmod(0o700 if f.is_dir() else 0o600)
        roots.append(target)
    return roots


def test_garbage_never_escapes_but_as_agtail_error(adapter: Adapter, corpus: Path, tmp_path: Path) -> None:
    if not adapter.sample_roots:
        pytest.skip(f"{adapter.id} declares no sample roots to lay garbage out like")
    roots = copy_samples(adapter, corpus, tmp_path / "copy")
    files = sorted(
        {Path(f) for root in roots for u in adapter.discover(root) for f in u.files if os.path.isfile(f)}
    )
    assert files, adapter.id
    pristine = {f: f.read_bytes() for f in files}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=DERANDOMIZE,
        # Shrinking re-reads the samples for every step; the draws printed are enough.
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def damaged_samples_read_cleanly(data: st.DataObject) -> None:
        picks = data.draw(st.lists(st.integers(0, len(files) - 1), min_size=1, max_size=3, unique=True))
        chosen = [files[i] for i in picks]
        try:
            for path in chosen:
                damage(path, data.draw)
            for root in roots:
                for unit in adapter.discover(root):
                    if not {Path(f) for f in unit.files} & set(chosen):
                        continue
                    result = read_clean(adapter, unit)
                    if result is not None and result.state is not None:
                        read_clean(adapter, unit, result.state)
                    read_clean(adapter, unit, data.draw(st.binary(max_size=40)))
        finally:
            for path in chosen:
                path.write_bytes(pristine[path])
                for suffix in ("-wal", "-shm", "-journal"):
                    Path(str(path) + suffix).unlink(missing_ok=True)

    damaged_samples_read_cleanly()
