"""gc_pause: reads and large decodes run with the cyclic collector paused, give the same
values as without, and leave the collector as they found it (on, or off) — errors included."""

from __future__ import annotations

import gc
from pathlib import Path

import msgspec
import pytest

from agtaild.adapters import all_adapters
from agtaild.adapters.kit.gc_pause import PAUSE_ABOVE_BYTES, collector_paused, decode_document, paused_read

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


def test_collector_paused_during_a_large_decode_only() -> None:
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
    with pytest.raises(msgspec.DecodeError):
        decode_document(_decoder, _big_doc()[:-10])
    assert gc.isenabled()

    @paused_read
    def failing_read() -> None:
        assert not gc.isenabled()
        raise OSError("gone")

    with pytest.raises(OSError):
        failing_read()
    assert gc.isenabled()


def test_nested_pauses_and_a_collector_switched_off_stay_as_found() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause did not switch it back on
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        decode_document(_decoder, _big_doc())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_every_adapter_read_leaves_the_collector_on(corpus: Path) -> None:
    """Through the registry, on each adapter's own samples (paused inside, on after)."""
    read = 0
    for adapter in all_adapters():
        for rel in adapter.sample_roots[:1]:
            for unit in list(adapter.discover(corpus / rel))[:2]:
                adapter.read(unit, None, now=2_000_000_000.0)
                read += 1
                assert gc.isenabled(), adapter.id
    assert read > 20
