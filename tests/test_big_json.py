"""big_json.decode_document: the same value as a plain decode, the collector paused only
while a large document decodes, and left as it was found (on, or off) — errors included."""

from __future__ import annotations

import gc

import msgspec
import pytest

from agtaild.adapters.big_json import PAUSE_ABOVE_BYTES, decode_document

_decoder = msgspec.json.Decoder()


def _big_doc() -> bytes:
    doc = {
        "messages": [{"role": "user", "text": f"message {i}", "parts": [i, {"n": i}]} for i in range(20000)]
    }
    data = msgspec.json.encode(doc)
    assert len(data) > PAUSE_ABOVE_BYTES
    return data


def test_same_value_as_a_plain_decode() -> None:
    data = _big_doc()
    assert decode_document(_decoder, data) == _decoder.decode(data)
    assert decode_document(_decoder, b'{"a": [1, 2]}') == {"a": [1, 2]}


def test_collector_paused_during_a_large_decode_only(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    class Spy:
        def decode(self, data: bytes) -> object:
            seen.append(gc.isenabled())
            return _decoder.decode(data)

    assert gc.isenabled()
    decode_document(Spy(), _big_doc())  # type: ignore[arg-type]
    decode_document(Spy(), b"[1]")  # type: ignore[arg-type]
    assert seen == [False, True]
    assert gc.isenabled()


def test_errors_propagate_and_the_collector_comes_back() -> None:
    torn = _big_doc()[:-10]
    with pytest.raises(msgspec.DecodeError):
        decode_document(_decoder, torn)
    assert gc.isenabled()


def test_a_collector_switched_off_stays_off() -> None:
    gc.disable()
    try:
        decode_document(_decoder, _big_doc())
        assert not gc.isenabled()
    finally:
        gc.enable()
