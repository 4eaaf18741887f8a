"""The OpenAI-compatible embeddings backend against a fake endpoint on 127.0.0.1: batching, the key,
timeouts, 500s, a wrong dimension, NaNs, an unreachable server — lexical search never affected."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from agtaild.errors import Refused
from agtaild.query.service import Service
from agtaild.semantic.embedders import EmbedError
from agtaild.semantic.endpoint import EndpointEmbedder
from agtaild.semantic.settings import parse_settings
from tests.index_toy import toy_config, toy_line, toy_registry, write_session
from tests.semantic_fakes import FakeEndpoint

__all__ = ["toy_registry"]


@pytest.fixture
def endpoint() -> Any:
    server = FakeEndpoint()
    yield server
    server.stop()


def _embedder(endpoint: FakeEndpoint, **extra: Any) -> EndpointEmbedder:
    settings = parse_settings({"backend": "openai", "url": endpoint.url, "model": "fake-embed", **extra})
    return EndpointEmbedder(settings, sleep=lambda s: None)


def test_batches_and_learns_the_dimension(endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test-123")
    emb = _embedder(endpoint, batch=2, key_env="FAKE_KEY")
    vecs = emb.embed(["a", "b", "c", "d", "e"])
    assert vecs.shape == (5, 64) and emb.dimension == 64 and emb.model_id.endswith("/64")
    assert [len(r["input"]) for r in endpoint.requests] == [2, 2, 1]
    assert {r["model"] for r in endpoint.requests} == {"fake-embed"}
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-test-123"
    assert abs(float((vecs[0] ** 2).sum()) - 1) < 1e-5


def test_the_key_comes_from_a_file(endpoint: FakeEndpoint, tmp_path: Path) -> None:
    (tmp_path / "key").write_text("sk-from-file\n")
    _embedder(endpoint, key_file=str(tmp_path / "key")).embed(["x"])
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-from-file"


@pytest.mark.parametrize(
    ("behaviour", "why", "tries"),
    [
        ("error500", "HTTP 500", 3),
        ("wrong_dimension", "dimension 63, expected 64", 1),
        ("nan", "NaN", 1),
        ("garbage", "not an embeddings response", 1),
    ],
)
def test_bad_answers_are_errors(endpoint: FakeEndpoint, behaviour: str, why: str, tries: int) -> None:
    emb = _embedder(endpoint, dimension=64)
    endpoint.behaviour = behaviour
    with pytest.raises(EmbedError, match=why):
        emb.embed(["one", "two"])
    assert len(endpoint.requests) == tries  # only what may pass is tried again


def test_a_hanging_endpoint_times_out(endpoint: FakeEndpoint) -> None:
    emb = _embedder(endpoint, timeout=0.3)
    endpoint.behaviour = "hang"
    started = time.monotonic()
    with pytest.raises(EmbedError, match=r"did not answer within 0\.3 s"):
        emb.embed(["x"])
    assert time.monotonic() - started < 5 and len(endpoint.requests) == 3


def test_backoff_waits_double_each_time(endpoint: FakeEndpoint) -> None:
    waits: list[float] = []
    settings = parse_settings({"backend": "openai", "url": endpoint.url, "model": "m"})
    emb = EndpointEmbedder(settings, sleep=waits.append)
    endpoint.behaviour = "error500"
    with pytest.raises(EmbedError):
        emb.embed(["x"])
    assert waits == [0.5, 1.0]


def test_unreachable(endpoint: FakeEndpoint) -> None:
    url = endpoint.url
    endpoint.stop()
    emb = EndpointEmbedder(parse_settings({"backend": "openai", "url": url, "model": "m"}), sleep=lambda s: None)
    with pytest.raises(EmbedError, match="unreachable"):
        emb.embed(["x"])


def test_end_to_end_through_the_service(endpoint: FakeEndpoint, tmp_path: Path, toy_registry: Any) -> None:
    root = tmp_path / "root"
    write_session(root / "a.jsonl", [toy_line(t="meta", id="a", cwd="/p"),
                                     toy_line(t="msg", role="user", text="the flaky authentication fixture", ts="2024-01-01T00:00:00Z")])
    cfg = toy_config(tmp_path, root)
    svc = Service(cfg)
    svc.update_index()
    Path(cfg.data_dir, "semantic.json").write_text(json.dumps(
        {"backend": "openai", "url": endpoint.url, "model": "fake-embed", "timeout": 0.5}))
    try:
        status = svc.call("embeddings.build", {})
        assert status["ready"] and status["model"] == f"openai:fake-embed@{endpoint.url}/64"
        assert svc.call("search", {"q": "authenticating", "mode": "semantic"})["hits"]
        endpoint.behaviour = "hang"
        with pytest.raises(Refused, match="did not answer"):
            svc.call("search", {"q": "authenticating", "mode": "semantic"})
        assert svc.call("embeddings.status", {})["error"].startswith("the embeddings endpoint")
        started = time.monotonic()
        doc = svc.call("search", {"q": "flaky"})  # lexical search: unaffected, and does not wait
        assert doc["hits"] and "failing" in doc["note"] and time.monotonic() - started < 0.5
        endpoint.behaviour = "ok"
        endpoint.release.set()
    finally:
        svc.close()


@pytest.mark.parametrize(("behaviour", "status", "why"), [
    ("ok", "ok", "1 of 1 events embedded"),
    ("error500", "warn", "HTTP 500"),
    ("wrong_dimension", "warn", "dimension 63, expected 64"),
    ("nan", "warn", "NaN"),
    ("stopped", "warn", "unreachable"),
])
def test_doctor_says_what_is_wrong(endpoint: FakeEndpoint, tmp_path: Path, toy_registry: Any, behaviour: str,
                                   status: str, why: str) -> None:
    from agtaild.cli.doctor_semantic import semantic_check

    root = tmp_path / "root"
    write_session(root / "a.jsonl", [toy_line(t="meta", id="a", cwd="/p"),
                                     toy_line(t="msg", role="user", text="hello there", ts="2024-01-01T00:00:00Z")])
    cfg = toy_config(tmp_path, root)
    assert semantic_check(cfg)["status"] == "info"
    svc = Service(cfg)
    svc.update_index()
    Path(cfg.data_dir, "semantic.json").write_text(json.dumps(
        {"backend": "openai", "url": endpoint.url, "model": "fake", "dimension": 64, "timeout": 0.5}))
    svc.call("embeddings.build", {})
    svc.close()
    if behaviour == "stopped":
        endpoint.stop()
    else:
        endpoint.behaviour = behaviour
    check = semantic_check(cfg)
    assert check["status"] == status and why in check["message"], check
