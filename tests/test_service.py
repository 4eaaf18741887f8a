"""The service interface: parameters, identity and prefixes, roots' kinds, pagination, threads."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import RootSpec
from agtaild.errors import NotFound, UsageError
from agtaild.index import schema
from agtaild.query.methods import METHODS
from agtaild.query.service import Service
from tests.index_toy import (
    ToyAdapter,
    append,
    sample_lines,
    toy_config,
    toy_line,
    toy_registry,
    write_session,
)

__all__ = ["toy_registry"]


@pytest.fixture
def layout(tmp_path: Path, toy_registry: ToyAdapter) -> dict[str, Path]:
    native = tmp_path / "native"
    imported = tmp_path / "data" / "imported" / "laptop" / "toy"
    write_session(native / "p" / "abc111.jsonl", sample_lines("abc111", 2), mtime=1_700_000_100)
    write_session(native / "p" / "abc222.jsonl", sample_lines("abc222", 2), mtime=1_700_000_200)
    write_session(native / "q" / "xyz999.jsonl", sample_lines("xyz999", 1, word="omega"), mtime=1_700_000_300)
    # The same session, also imported from another machine.
    write_session(imported / "p" / "abc111.jsonl", sample_lines("abc111", 2), mtime=1_700_000_100)
    return {"native": native, "imported": imported, "tmp": tmp_path}


@pytest.fixture
def svc(layout: dict[str, Path]) -> Iterator[Service]:
    extra = [RootSpec("toy", str(layout["imported"]), kind="imported", collection="laptop")]
    service = Service(toy_config(layout["tmp"], layout["native"], extra=extra))
    service.update_index()
    yield service
    service.close()


def test_method_table_and_unknown_method(svc: Service) -> None:
    for name in (
        "sessions.list",
        "sessions.get",
        "events.list",
        "search",
        "stats",
        "agents.list",
        "index.update",
    ):
        assert name in METHODS
    with pytest.raises(NotFound, match="no method"):
        svc.call("sessions.nope", {})


@pytest.mark.parametrize(
    ("method", "params", "names"),
    [
        ("sessions.list", {"limt": 5}, "limt"),
        ("sessions.list", {"limit": "five"}, "'limit'"),
        ("sessions.list", {"limit": 0}, "'limit'"),
        ("sessions.list", {"limit": True}, "'limit'"),
        ("sessions.list", {"imported": "maybe"}, "'imported'"),
        ("sessions.list", {"since": "yesterday-ish"}, "'since'"),
        ("sessions.list", {"agent": "nobody"}, "unknown agent 'nobody'"),
        ("sessions.list", {"cwd": 5}, "'cwd'"),
        ("sessions.list", {"cursor": "garbage!"}, "'cursor'"),
        ("sessions.get", {"agent": "toy"}, "'id'"),
        ("sessions.get", {"id": "toy:"}, "'id'"),  # (an id without an agent is any agent's)
        ("events.list", {"agent": "toy", "id": "abc111", "after_seq": "x"}, "'after_seq'"),
        ("search", {}, "'q'"),
        ("search", {"q": "x", "mode": "fuzzy"}, "'mode'"),
        ("stats", {"by": 3}, "'by'"),
        ("index.update", {"full": "perhaps"}, "'full'"),
        ("agents.list", {"x": 1}, "'x'"),
    ],
)
def test_bad_params_name_the_parameter(svc: Service, method: str, params: dict[str, Any], names: str) -> None:
    with pytest.raises(UsageError, match=names):
        svc.call(method, params)


def test_an_id_alone_names_a_session_of_any_agent(svc: Service) -> None:
    from agtaild.errors import NotFound

    assert svc.call("sessions.get", {"id": "abc111"})["session"]["agent"] == "toy"
    with pytest.raises(NotFound, match="no-such-id"):
        svc.call("sessions.get", {"id": "no-such-id"})


def test_rest_style_string_params_are_accepted(svc: Service) -> None:
    doc = svc.call("sessions.list", {"limit": "1", "imported": "false", "_": "cachebuster"})
    assert len(doc["sessions"]) == 1 and doc["next"]


def test_list_is_newest_first_with_keyset_pages(svc: Service) -> None:
    everything = svc.call("sessions.list", {})["sessions"]
    ended = [s["ended"] for s in everything]
    assert ended == sorted(ended, reverse=True) and everything[-1]["id"] == "xyz999"
    assert len(everything) == 4
    seen, cursor = [], None
    while True:
        doc = svc.call("sessions.list", {"limit": 1, **({"cursor": cursor} if cursor else {})})
        seen += [s["path"] for s in doc["sessions"]]
        cursor = doc["next"]
        if cursor is None:
            break
    assert seen == [s["path"] for s in everything]


def test_list_filters(svc: Service, layout: dict[str, Path]) -> None:
    def ids(**params: Any) -> list[str]:
        return sorted(
            s["id"] + ("@" + s["collection"] if s["collection"] else "")
            for s in svc.call("sessions.list", params)["sessions"]
        )

    assert ids(imported=True) == ["abc111@laptop"]
    assert ids(imported=False) == ["abc111", "abc222", "xyz999"]
    assert ids(collection="laptop") == ["abc111@laptop"]
    assert ids(cwd="/work/xyz999") == ["xyz999"]
    assert ids(cwd="/work") == ["abc111", "abc111@laptop", "abc222", "xyz999"]
    assert ids(cwd="/wor") == []
    assert ids(project="abc222") == ["abc222"]
    assert ids(q="omega") == ["xyz999"]
    assert ids(since="2026-01-02") == ["abc111", "abc111@laptop", "abc222"]
    assert ids(until="2025-12-31") == []
    assert ids(programmatic=True) == []
    assert ids(archived=False) == ids()


def test_list_total_counts_every_page_of_the_filter(svc: Service) -> None:
    """``total`` (asked for) is the count over all pages, with the same filters; without it
    the answer has none."""
    assert "total" not in svc.call("sessions.list", {"limit": 1})
    first = svc.call("sessions.list", {"limit": 1, "total": True})
    assert len(first["sessions"]) == 1 and first["next"] and first["total"] == 4
    assert svc.call("sessions.list", {"limit": 1, "total": "true", "cursor": first["next"]})["total"] == 4
    for params, want in (
        ({"imported": False}, 3),
        ({"imported": True}, 1),
        ({"q": "omega"}, 1),
        ({"q": "nowhere-at-all"}, 0),
        ({"cwd": "/work/xyz999"}, 1),
        ({"since": "2026-01-02"}, 3),
    ):
        doc = svc.call("sessions.list", {**params, "limit": 1, "total": True})
        assert doc["total"] == want == len(svc.call("sessions.list", params)["sessions"]), params
    with pytest.raises(UsageError, match="'total'"):
        svc.call("sessions.list", {"total": "maybe"})


def test_imported_sessions_are_tagged_and_not_resumable(svc: Service) -> None:
    copy = svc.call("sessions.get", {"agent": "toy", "id": "abc111", "collection": "laptop"})["session"]
    assert copy["imported"] is True and copy["collection"] == "laptop" and copy["resumable"] is False
    native = svc.call("sessions.get", {"agent": "toy", "id": "abc111"})["session"]
    assert native["imported"] is False and native["resumable"] is True  # the native copy wins


def test_ids_prefixes_and_not_found(svc: Service) -> None:
    assert svc.call("sessions.get", {"agent": "toy", "id": "xyz"})["session"]["id"] == "xyz999"
    assert svc.call("sessions.get", {"id": "toy:abc2"})["session"]["id"] == "abc222"
    with pytest.raises(UsageError, match="ambiguous") as info:
        svc.call("sessions.get", {"agent": "toy", "id": "abc"})
    assert "abc111" in info.value.message and "abc222" in info.value.message
    with pytest.raises(NotFound):
        svc.call("sessions.get", {"agent": "toy", "id": "nope"})
    with pytest.raises(NotFound):
        svc.call("events.list", {"agent": "toy", "id": "abc111", "collection": "elsewhere"})


def test_events_page_by_keyset_without_rereading(svc: Service, layout: dict[str, Path]) -> None:
    big = layout["native"] / "big" / "big.jsonl"
    write_session(big, [toy_line(t="msg", role="user", text=f"line {i}") for i in range(3000)])
    svc.update_index()
    ref = {"agent": "toy", "id": "big"}
    db = svc._reader()
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    def cost(params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        steps[0] = 0
        db.set_progress_handler(count, 10)
        try:
            return svc.call("events.list", {**ref, **params}), steps[0]
        finally:
            db.set_progress_handler(None, 0)

    first, first_cost = cost({"limit": 100})
    assert [e["seq"] for e in first["events"]] == list(range(100))
    seqs, cursor, last_cost = [], first["next"], 0
    seqs += [e["seq"] for e in first["events"]]
    while cursor:
        page, last_cost = cost({"limit": 100, "cursor": cursor})
        seqs += [e["seq"] for e in page["events"]]
        cursor = page["next"]
    assert seqs == list(range(3000))
    # The last page costs what the first did: the cursor seeks, it does not skip rows.
    assert last_cost <= first_cost * 1.5
    after, _ = cost({"after_seq": 2997})
    assert [e["seq"] for e in after["events"]] == [2998, 2999] and after["next"] is None


def test_archive_copies_stay_hidden_while_the_native_file_exists(
    svc: Service, layout: dict[str, Path]
) -> None:
    native = layout["native"] / "q" / "xyz999.jsonl"
    archive = Path(svc.config.archive_dir) / "toy" / "q" / "xyz999.jsonl"
    archive.parent.mkdir(parents=True)
    shutil.copy2(native, archive)
    svc.update_index()
    copies = [s for s in svc.call("sessions.list", {})["sessions"] if s["id"] == "xyz999"]
    assert [(s["archived"], s["path"]) for s in copies] == [(False, str(native))]
    native.unlink()  # the agent pruned its transcript: the archive keeps it listed
    report = svc.update_index()
    # One change: the session moved to its archived copy (not removed, then added).
    assert [(c["action"], c["path"], c.get("from")) for c in report["changed"]] == [
        ("updated", str(archive), str(native))
    ]
    (s,) = [s for s in svc.call("sessions.list", {})["sessions"] if s["id"] == "xyz999"]
    assert s["archived"] is True and s["resumable"] is False
    assert svc.call("search", {"q": "omega"})["hits"]
    assert [x["id"] for x in svc.call("sessions.list", {"archived": True})["sessions"]] == ["xyz999"]


def test_only_paths_rechecks_the_agents_of_those_paths(svc: Service, layout: dict[str, Path]) -> None:
    target = layout["native"] / "p" / "abc222.jsonl"
    append(target, [toy_line(t="msg", role="user", text="fresh words", ts="2026-01-09T00:00:00Z")])
    report = svc.update_index(only_paths=[str(target)])
    assert [c["path"] for c in report["changed"]] == [str(target)]
    assert svc.call("search", {"q": "fresh words"})["hits"]
    assert svc.update_index(only_paths=["/somewhere/else"])["read"] == 0


def test_agents_list(svc: Service) -> None:
    (toy,) = [a for a in svc.call("agents.list", {})["agents"] if a["id"] == "toy"]
    assert toy["name"] == "Toy Agent" and toy["sessions"] == 4
    kinds = {r["kind"]: r["exists"] for r in toy["roots"]}
    assert kinds == {"native": True, "archive": False, "imported": True}


def test_readers_on_many_threads_while_the_writer_runs(svc: Service, layout: dict[str, Path]) -> None:
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                svc.call("sessions.list", {"limit": 5})
                svc.call("search", {"q": "alpha"})
                svc.call("stats", {"by": "model"})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(15):
            write_session(layout["native"] / "w" / f"w{i}.jsonl", sample_lines(f"w{i}", 3))
            svc.update_index()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert len(svc.call("sessions.list", {"limit": 100})["sessions"]) == 19


def test_an_index_version_change_rebuilds(layout: dict[str, Path], toy_registry: ToyAdapter) -> None:
    config = toy_config(layout["tmp"], layout["native"])
    svc = Service(config)
    svc.update_index()
    svc.close()
    db = sqlite3.connect(config.index_path)
    db.execute("UPDATE meta SET value = '0' WHERE key = 'index_version'")
    db.commit()
    db.close()
    svc = Service(config)
    try:
        assert svc.call("sessions.list", {})["sessions"] == []  # dropped: a derivative
        # 3 native sessions, and the laptop collection's copy: the import store's collections
        # are adopted as roots by every update, whether or not the config named them.
        assert svc.update_index()["sessions"] == 4
        db = sqlite3.connect(config.index_path)
        assert schema.stored_version(db) == schema.INDEX_VERSION
        names = [r[0] for r in db.execute("SELECT name FROM _migrations")]
        assert names == [m.__name__ for m in schema.MIGRATIONS]
        db.close()
    finally:
        svc.close()


def test_the_index_is_private(svc: Service) -> None:
    assert svc.config.index_path.stat().st_mode & 0o077 == 0
