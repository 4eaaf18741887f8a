"""The progress's rate and ETA follow the last quarter of the reading (agtaild.index.progress):
a reading that speeds up (the machine's load fell) gets the ETA of its new speed."""

from __future__ import annotations

from typing import Any

import pytest

from agtaild.index import progress as progress_module
from agtaild.index.progress import IndexProgress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Any:
    c = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", c)
    return c


def test_the_eta_follows_the_speed_of_the_last_quarter(clock: Clock) -> None:
    p = IndexProgress()
    p.reading(10_000, 10_000_000)
    for _ in range(300):  # 300 s at 10 kB/s
        clock.now += 1.0
        p.stored(10_000)
    for _ in range(100):  # then 100 s at 40 kB/s
        clock.now += 1.0
        p.stored(40_000)
    s = p.snapshot()
    assert s["bytes_done"] == 7_000_000
    # The last quarter (100 s) read at 40 kB/s: 3 MB left take 75 s (the whole average,
    # 17.5 kB/s, would say 171 s).
    assert s["rate_bytes_per_second"] == 40_000
    assert s["eta_seconds"] == 75.0


def test_early_on_the_whole_reading_is_the_window(clock: Clock) -> None:
    p = IndexProgress()
    p.reading(4, 4000)
    clock.now += 0.4
    p.stored(1000)
    assert p.snapshot()["eta_seconds"] is None  # under half a second of reading
    clock.now += 1.6
    p.stored(1000)
    s = p.snapshot()
    assert s["rate_bytes_per_second"] == 1000 and s["eta_seconds"] == 2.0  # 2000 bytes in 2 s
