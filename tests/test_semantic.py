"""Search by meaning over a toy index: the vector store, building, the modes, filters, defaults.

The embedder is tests/semantic_fakes.HashEmbedder (deterministic, no model)."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.errors import Refused, UsageError
from agtaild.query.service import Service
from agtaild.semantic.embedders import EmbedError
from agtaild.semantic.engine import Background, Engine
from agtaild.semantic.settings import load_settings, parse_settings
from agtaild.semantic.store import VectorStore
from agtaild.semantic.texts import chunks, source_text
from tests.index_toy import toy_config, toy_line, toy_registry, write_session
from tests.semantic_fakes import HashEmbedder

__all__ = ["toy_registry"]

FLAKY = "the login test is flaky: please repair the authentication fixture"
RACE = "I retried the auth fixture and found a race in conftest"
CHART = "render the chart with a logarithmic axis"


def _session(root: Path, sid: str, cwd: str, texts: list[tuple[str, str]], day: str = "2024-01-01") -> None:
    lines = [toy_line(t="meta", id=sid, cwd=cwd)]
    for i, (role, text) in enumerate(texts):
        lines.append(toy_line(t="msg", role=role, text=text, ts=f"{day}T00:00:{i:02d}Z"))
    write_session(root / f"{sid}.jsonl", lines)


def _service(tmp_path: Path, embedder: Any = None) -> tuple[Service, Any]:
    root = tmp_path / "root"
    _session(root, "login", "/work/webapp", [("user", FLAKY), ("assistant", RACE)])
    _session(root, "chart", "/work/plots", [("user", CHART)], day="2024-02-01")
    cfg = toy_config(tmp_path, root)
    svc = Service(cfg)
    svc.update_index()
    Path(cfg.data_dir, "semantic.json").write_text(json.dumps({"backend": "static"}))
    emb = embedder or HashEmbedder()
    svc._semantic = Engine(cfg.data_dir, cfg.index_path, embedder_factory=lambda s: emb)
    return svc, emb


@pytest.fixture
def svc(tmp_path: Path, toy_registry: Any) -> Any:
    service, _ = _service(tmp_path)
    yield service
    service.close()


def test_without_settings_nothing_is_made_and_search_is_unchanged(tmp_path: Path, toy_registry: Any) -> None:
    root = tmp_path / "root"
    _session(root, "login", "/p", [("user", FLAKY)])
    svc = Service(toy_config(tmp_path, root))
    svc.update_index()
    try:
        assert svc.semantic is None
        doc = svc.call("search", {"q": "flaky"})
        assert len(doc["hits"]) == 1 and "note" not in doc and "found_by" not in doc["hits"][0]
        assert svc.call("embeddings.status", {})["state"] == "off"
        with pytest.raises(Refused, match="off"):
            svc.call("search", {"q": "flaky", "mode": "semantic"})
        with pytest.raises(Refused, match="off"):
            svc.call("embeddings.build", {})
        assert not Path(svc.config.data_dir, "vectors.sqlite3").exists()
    finally:
        svc.close()


def test_build_covers_the_index_and_semantic_finds_what_full_text_does_not(svc: Service) -> None:
    before = svc.call("embeddings.status", {})
    assert before["coverage"] == 0 and not before["ready"]
    # the default stays full-text, with a one-line note, until the vectors cover the index
    doc = svc.call("search", {"q": "authenticating"})
    assert doc["hits"] == [] and "covers 0%" in doc["note"]
    after = svc.call("embeddings.build", {})
    assert after["coverage"] == 1.0 and after["ready"] and after["events_embedded"] == after["events"] == 3
    assert after["chunks"] == 3 and after["dimension"] == 64
    doc = svc.call("search", {"q": "authenticating", "mode": "semantic"})
    assert doc["hits"][0]["session"]["id"] == "login"
    assert doc["hits"][0]["found_by"] == ["semantic"] and doc["mode"] == "semantic"
    assert svc.call("search", {"q": "authenticating", "mode": "phrase"})["hits"] == []


def test_hybrid_fuses_and_says_which_ranking_found_each_hit(svc: Service) -> None:
    svc.call("embeddings.build", {})
    doc = svc.call("search", {"q": "logarithmic charting", "mode": "hybrid"})
    top = doc["hits"][0]
    assert top["session"]["id"] == "chart"
    assert top["found_by"] == ["full-text", "semantic"]  # "logarithmic" is a word of it, and near in meaning
    assert all(set(h["found_by"]) <= {"full-text", "semantic"} for h in doc["hits"])
    # ready: a search without a mode is hybrid now, with no note
    default = svc.call("search", {"q": "logarithmic charting"})
    assert default["mode"] == "hybrid" and "note" not in default
    assert [h["event"]["seq"] for h in default["hits"]] == [h["event"]["seq"] for h in doc["hits"]]


def test_semantic_search_keeps_the_filters(svc: Service) -> None:
    svc.call("embeddings.build", {})
    doc = svc.call("search", {"q": "authenticating fixture", "mode": "semantic", "project": "plots"})
    assert {h["session"]["id"] for h in doc["hits"]} == {"chart"}
    doc = svc.call("search", {"q": "authenticating fixture", "mode": "semantic", "since": "2024-01-15"})
    assert {h["session"]["id"] for h in doc["hits"]} == {"chart"}
    doc = svc.call("search", {"q": "fixture", "mode": "hybrid", "session": "toy:login"})
    assert {h["session"]["id"] for h in doc["hits"]} == {"login"}


def test_pages_continue_without_repeating(svc: Service) -> None:
    svc.call("embeddings.build", {})
    first = svc.call("search", {"q": "fixture chart", "mode": "semantic", "limit": 2})
    assert len(first["hits"]) == 2 and first["next"]
    second = svc.call(
        "search", {"q": "fixture chart", "mode": "semantic", "limit": 2, "cursor": first["next"]}
    )
    seen = [(h["session"]["id"], h["event"]["seq"]) for h in first["hits"] + second["hits"]]
    assert len(seen) == len(set(seen)) == 3 and second["next"] is None
    with pytest.raises(UsageError):
        svc.call(
            "search",
            {
                "q": "fixture",
                "mode": "semantic",
                "cursor": svc.call("search", {"q": "fixture", "limit": 1, "mode": "words"})["next"] or "x",
            },
        )


def test_new_events_are_embedded_and_a_build_resumes(tmp_path: Path, toy_registry: Any) -> None:
    svc, emb = _service(tmp_path)
    try:
        svc.call("embeddings.build", {})
        calls = len(emb.calls)
        _session(
            tmp_path / "root", "deploy", "/work/ops", [("user", "ship the release to production servers")]
        )
        svc.update_index()
        status = svc.call("embeddings.status", {})
        assert status["events"] == 4 and status["events_embedded"] == 3 and not status["ready"]
        svc.call("embeddings.build", {})
        assert [t for c in emb.calls[calls:] for t in c] == ["ship the release to production servers"]
        assert (
            svc.call("search", {"q": "shipping releases", "mode": "semantic"})["hits"][0]["session"]["id"]
            == "deploy"
        )
    finally:
        svc.close()


def test_a_stopped_build_loses_at_most_a_batch_and_resumes(
    tmp_path: Path, toy_registry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agtaild.semantic.engine as engine_mod

    monkeypatch.setattr(engine_mod, "BATCH_EVENTS", 1)
    svc, emb = _service(tmp_path)
    try:
        stop = threading.Event()
        engine = svc.semantic
        engine.build(stop=stop, progress=lambda st: stop.set())
        assert svc.call("embeddings.status", {})["events_embedded"] == 1
        svc.call("embeddings.build", {})
        texts = [t for c in emb.calls for t in c]
        assert sorted(texts) == sorted([FLAKY, RACE, CHART])  # each embedded once
    finally:
        svc.close()


def test_another_model_empties_the_store_and_rebuilds(tmp_path: Path, toy_registry: Any) -> None:
    svc, _ = _service(tmp_path)
    try:
        svc.call("embeddings.build", {})
        other = HashEmbedder(32, name="other")
        svc._semantic = Engine(svc.config.data_dir, svc.config.index_path, embedder_factory=lambda s: other)
        with pytest.raises(Refused, match="another model"):
            svc.call("search", {"q": "fixture", "mode": "semantic"})
        hybrid = svc.call("search", {"q": "fixture", "mode": "hybrid"})  # falls back to full-text
        assert hybrid["hits"] and "another model" in hybrid["note"]
        assert {h["found_by"][0] for h in hybrid["hits"]} == {"full-text"}
        status = svc.call("embeddings.build", {})
        assert status["model"] == "test:other/32" and status["dimension"] == 32 and status["chunks"] == 3
        assert svc.call("search", {"q": "fixture", "mode": "semantic"})["hits"]
    finally:
        svc.close()


def test_events_the_index_dropped_are_forgotten(tmp_path: Path, toy_registry: Any) -> None:
    svc, _ = _service(tmp_path)
    try:
        svc.call("embeddings.build", {})
        (tmp_path / "root" / "chart.jsonl").unlink()
        svc.update_index()
        status = svc.call("embeddings.build", {})
        assert status["events"] == 2 and status["events_embedded"] == 2 and status["chunks"] == 2
        doc = svc.call("search", {"q": "logarithmic chart", "mode": "semantic"})
        assert {h["session"]["id"] for h in doc["hits"]} == {"login"}
    finally:
        svc.close()


def test_secrets_are_masked_before_any_embedder_sees_them(tmp_path: Path, toy_registry: Any) -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    root = tmp_path / "root"
    _session(root, "s", "/p", [("user", f"use the token {key} to push")])
    cfg = toy_config(tmp_path, root)
    svc = Service(cfg)
    svc.update_index()
    Path(cfg.data_dir, "semantic.json").write_text(json.dumps({"backend": "static"}))
    emb = HashEmbedder()
    svc._semantic = Engine(cfg.data_dir, cfg.index_path, embedder_factory=lambda s: emb)
    try:
        svc.call("embeddings.build", {})
        svc.call("search", {"q": f"where did I use {key}", "mode": "semantic"})
        sent = [t for c in emb.calls for t in c]
        assert len(sent) == 2 and all(key not in t for t in sent)
        assert "secret:" in sent[0]
    finally:
        svc.close()


def test_a_failing_embedder_never_fails_full_text(tmp_path: Path, toy_registry: Any) -> None:
    class Broken(HashEmbedder):
        fail = False

        def embed(self, texts: Any) -> Any:
            if self.fail:
                raise EmbedError("the model is gone")
            return super().embed(texts)

    broken = Broken()
    svc, _ = _service(tmp_path, broken)
    try:
        svc.call("embeddings.build", {})
        broken.fail = True
        with pytest.raises(Refused, match="the model is gone"):
            svc.call("search", {"q": "fixture", "mode": "semantic"})
        status = svc.call("embeddings.status", {})
        assert status["error"] == "the model is gone" and not status["healthy"] and not status["ready"]
        default = svc.call("search", {"q": "fixture"})
        assert default["hits"] and "failing" in default["note"] and "mode" not in default
        assert svc.call("search", {"q": "fixture", "mode": "hybrid"})["hits"]
    finally:
        svc.close()


def test_background_builds_after_index_changes_and_backs_off(tmp_path: Path, toy_registry: Any) -> None:
    class Flaky(HashEmbedder):
        failures = 1

        def embed(self, texts: Any) -> Any:
            if self.failures:
                self.failures -= 1
                raise EmbedError("not yet")
            return super().embed(texts)

    svc, emb = _service(tmp_path, Flaky())
    bg = Background(lambda: svc.semantic, idle_check=0.05, first_backoff=0.2)
    svc.embedder = bg
    try:
        bg.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not svc.call("embeddings.status", {})["ready"]:
            time.sleep(0.05)
        status = svc.call("embeddings.status", {})
        assert status["ready"] and status["error"] is None and emb.failures == 0
        doc = svc.call("embeddings.build", {})  # with a background embedder: it is woken
        assert doc["started"] is True
    finally:
        svc.close()
    assert bg._thread is None  # stopped with the service


def test_store_quantizes_within_a_small_error(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    from agtaild.semantic.store import quantize

    rng = np.random.default_rng(7)
    v = rng.normal(size=(50, 64)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q, scale = quantize(v)
    assert q.dtype == np.int8 and np.abs(q.astype(np.float32) * scale[:, None] - v).max() < 0.01
    store = VectorStore(tmp_path / "v.sqlite3", tmp_path / "index.sqlite3")
    assert store.use_model("m", 64) is True and store.use_model("m", 64) is False
    store.close()


def test_what_is_embedded() -> None:
    assert (
        source_text("tool_use", None, '{"command":  "pytest -x"}', "Bash", 1, None)
        == 'Bash: {"command": "pytest -x"} (failed)'
    )
    assert source_text("text", "hello", None, None, None, "user") == "hello"
    assert source_text("text", "hello", None, None, None, "system") == ""
    assert source_text("summary", " compacted ", None, None, None, None) == "compacted"
    text = " ".join(f"word{i}" for i in range(1000))
    parts = chunks(text)
    assert len(parts) == 4 and all(len(p) <= 1200 for p in parts)
    assert parts[0][-100:] in text and parts[1].split()[0] in parts[0]  # overlapping windows
    assert chunks("") == [] and chunks("short") == ["short"]


def test_settings_are_checked(tmp_path: Path) -> None:
    assert not load_settings(tmp_path).enabled
    for bad, why in (
        ([], "object"),
        ({"backend": "magic"}, "backend"),
        ({"backend": "openai", "url": "http://x"}, "url and model"),
        ({"backend": "openai", "url": "ftp://x", "model": "m"}, "http"),
        ({"backend": "static", "batch": 0}, "batch"),
        ({"backend": "static", "colour": 1}, "unknown key"),
        ({"backend": "static", "timeout": "1"}, "timeout"),
    ):
        with pytest.raises(UsageError, match=why):
            parse_settings(bad)
    (tmp_path / "semantic.json").write_text("{nope")
    with pytest.raises(UsageError, match="not JSON"):
        load_settings(tmp_path)


def test_bad_settings_turn_the_feature_off_not_search(tmp_path: Path, toy_registry: Any) -> None:
    svc, _ = _service(tmp_path)
    try:
        Path(svc.config.data_dir, "semantic.json").write_text('{"backend": "magic"}')
        status = svc.call("embeddings.status", {})
        assert status["state"] == "error" and "backend" in status["error"]
        assert svc.call("search", {"q": "fixture"})["hits"]
    finally:
        svc.close()


def test_the_index_is_attached_read_only(tmp_path: Path, toy_registry: Any) -> None:
    svc, _ = _service(tmp_path)
    try:
        store = svc.semantic.store()
        with store.attached() as db, pytest.raises(sqlite3.OperationalError):
            db.execute("DELETE FROM idx.events")
    finally:
        svc.close()


def test_without_settings_search_imports_nothing_of_it(tmp_path: Path, corpus: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from agtaild.cli import main; rc = main(sys.argv[1:]);"
        # only the settings' file name is looked at: no engine, store, numpy or tokenizers
        "light = {'agtaild.semantic', 'agtaild.semantic.settings'};"
        "bad = sorted(m for m in sys.modules if m not in light and (m == 'numpy' or m.startswith(('agtaild.semantic', 'tokenizers'))));"
        "print(bad); sys.exit(rc)"
    )
    root = f"claude-code={corpus / 'claude-code' / 'spotter' / 'projects'}"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "--data-dir",
            str(tmp_path / "d"),
            "--no-daemon",
            "--only-roots",
            "--root",
            root,
            "search",
            "test",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_hybrid_leaves_out_words_too_common_to_rank_by(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    from agtaild.query import semantic as meaning

    svc.call("embeddings.build", {})
    db, key = svc._reader(), str(svc.config.index_path)
    monkeypatch.setattr(meaning, "_common", {})
    assert meaning._or_query("logarithmic axis", db, key).words == '"logarithmic" OR "axis"'
    monkeypatch.setattr(meaning, "_common", {})
    monkeypatch.setattr(meaning, "COMMON_MATCHES", 0)  # every word found in more than 0 events is common
    assert meaning._or_query("logarithmic zzunknownword", db, key).words == '"zzunknownword"'
    assert (
        meaning._or_query("logarithmic axis", db, key).words == '"logarithmic" OR "axis"'
    )  # all common: kept
    doc = svc.call("search", {"q": "logarithmic zzunknownword", "mode": "hybrid"})
    assert doc["hits"] and all(h["found_by"] == ["semantic"] for h in doc["hits"])
    assert {"logarithmic"} <= {
        m.lower() for h in doc["hits"] for m in re.findall("«([^»]+)»", h.get("snippet") or "")
    }
