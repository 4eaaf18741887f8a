"""The API keeps encoded stats answers (agtaild/api/answers.py) only while nothing they depend
on changed: a commit to the index, another price table or a relative time bound means the
answer is computed again — and always equals what the service answers now."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agtaild.api.answers import Answers, answer_key
from agtaild.api.app import CTX, create_app
from agtaild.api.context import ok_json
from agtaild.api.security import Security
from agtaild.query.methods import METHODS
from agtaild.query.service import Service
from tests.index_toy import ToyAdapter, append, toy_config, toy_line, toy_registry, write_session

__all__ = ["toy_registry"]

TOKEN = "t" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SONNET = "claude-sonnet-4-5-20250929"


def usage(key: str, ts: str, n: int) -> str:
    return toy_line(
        t="usage", key=key, model=SONNET, ts=ts, **{"in": n, "out": 2 * n, "cr": 3 * n, "cw": 4 * n}
    )


@pytest.fixture
def toy(tmp_path: Path, toy_registry: ToyAdapter) -> Iterator[tuple[Service, Path]]:
    root = tmp_path / "root"
    path = write_session(
        root / "a" / "A.jsonl",
        [toy_line(t="meta", id="A", cwd="/src/a"), usage("k1", "2026-03-01T10:00:00Z", 100)],
    )
    svc = Service(toy_config(tmp_path, root))
    svc.update_index()
    yield svc, path
    svc.close()


def test_what_identifies_an_answer() -> None:
    assert answer_key("stats", True, {"by": "day"}) == answer_key("stats", True, {"by": "day"})
    assert answer_key("stats", True, {"by": "day"}) != answer_key("stats", False, {"by": "day"})
    assert answer_key("stats", True, {"limit": 1}) != answer_key("stats", True, {"limit": True})
    assert answer_key("stats", True, {"since": "2026-03-01", "until": None}) is not None
    for bound in ("7d", "today", "2026-03-01T10:00:00Z", "yesterday"):
        assert answer_key("stats", True, {"since": bound}) is None  # moves with the clock
        assert answer_key("stats", True, {"until": bound}) is None
    assert answer_key("search", True, {"q": "x"}) is None
    assert answer_key("stats", True, {"by": ["day"]}) is None


def test_the_answers_kept_are_few_and_need_the_same_version() -> None:
    kept = Answers(size=2)
    kept.put(("a",), 1, b"A")
    kept.put(("b",), 1, b"B")
    assert kept.get(("a",), 1) == b"A"
    assert kept.get(("a",), 2) is None  # another version: computed again
    kept.put(("c",), 1, b"C")  # "b" was used least recently
    assert kept.get(("b",), 1) is None and kept.get(("c",), 1) == b"C" and kept.get(("a",), 1) == b"A"
    # Bytes are bounded too: a big answer pushes the older out; one over a quarter is not kept.
    small = Answers(size=10, max_bytes=40)
    for name in "abcd":
        small.put((name,), 1, name.encode() * 10)
    assert [small.get((n,), 1) is not None for n in "abcd"] == [True] * 4
    small.put(("e",), 1, b"e" * 10)
    assert small.get(("a",), 1) is None and small.get(("e",), 1) == b"e" * 10
    small.put(("big",), 1, b"x" * 11)
    assert small.get(("big",), 1) is None and small.get(("e",), 1) is not None
    small.put(("e",), 2, b"E")  # replaced, not counted twice
    assert small.get(("e",), 2) == b"E" and small._bytes == 31


async def test_answers_follow_the_index_and_the_prices(
    aiohttp_client: Any, toy: tuple[Service, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, path = toy
    app = create_app(svc, methods=METHODS, security=Security(TOKEN), readers=2)
    client = await aiohttp_client(app, headers=AUTH)
    answers = app[CTX].answers

    async def stats(**params: str) -> dict[str, Any]:
        resp = await client.get("/api/v1/stats", params=params)
        assert resp.status == 200
        doc: dict[str, Any] = msgspec.json.decode(await resp.read())
        return doc

    def now(**params: str) -> dict[str, Any]:
        return {"ok": True, **svc.call("stats", params)}

    first = await stats(by="session")
    assert first == now(by="session") and answers.misses == 1
    assert await stats(by="session") == first and answers.hits == 1
    # The same question over JSON-RPC is its own answer, kept as well.
    rpc = {"jsonrpc": "2.0", "method": "stats", "params": {"by": "session"}, "id": 1}
    for _ in range(2):
        resp = await client.post("/rpc", json=rpc)
        assert (await resp.json())["result"] == svc.call("stats", {"by": "session"})
    assert answers.hits == 2

    # Asked with "Cache-Control: no-cache": computed again all the same.
    calls: list[str] = []
    real = svc.call
    with monkeypatch.context() as patch:
        patch.setattr(svc, "call", lambda method, params=None: calls.append(method) or real(method, params))
        await stats(by="session")
        assert calls == []  # kept
        resp = await client.get(
            "/api/v1/stats", params={"by": "session"}, headers={"Cache-Control": "no-cache"}
        )
        assert msgspec.json.decode(await resp.read()) == first
        assert calls == ["stats"]

    # A new response in the index: computed again.
    append(path, [usage("k2", "2026-03-02T10:00:00Z", 50)])
    svc.update_index()
    second = await stats(by="session")
    assert second == now(by="session") and second != first
    assert second["totals"]["input_tokens"] == 150

    # Another price table (the user's file): computed again, with its price.
    (Path(str(svc.config.data_dir)) / "pricing.json").write_text(
        json.dumps({"models": {SONNET: {"input": 1000, "output": 0, "cache_read": 0, "cache_write": 0}}})
    )
    third = await stats(by="session")
    assert third == now(by="session") and third["totals"]["cost_usd"] == pytest.approx(0.15)

    # A relative bound is never kept: "7d" means another week tomorrow.
    hits = answers.hits
    for _ in range(2):
        assert await stats(by="day", since="7d") == now(by="day", since="7d")
    assert answers.hits == hits


def test_the_success_shape_puts_ok_first() -> None:
    """ok_json: "ok" first, then the document's fields in their order (encoded once)."""

    class Point(msgspec.Struct):
        x: int
        y: int

    assert ok_json({"totals": {"a": 1}, "rows": [1, 2]}) == b'{"ok":true,"totals":{"a":1},"rows":[1,2]}'
    assert ok_json({}) == b'{"ok":true}'
    assert ok_json(Point(1, 2)) == b'{"ok":true,"x":1,"y":2}'
    assert ok_json([1]) == b'{"ok":true,"result":[1]}'
