"""Every non-Claude adapter reads every corpus sample exactly as recorded in
tests/fixtures/adapter_reads.json (written from the adapters before their read-speed work,
commit 9b16dcb): reading faster must not change one mapped field. See tests/adapter_reads.py
for what the digests cover and how to regenerate them after a deliberate mapping change."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adapter_reads import CORPUS, EXPECTED, digests, pinned_copy


def test_reads_equal_the_recorded_digests(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    found = digests(pinned_copy(CORPUS, tmp_path / "corpus"))
    # (an agent added since the digests were written is not checked until they are rewritten)
    changed = sorted(agent for agent in expected if expected[agent] != found.get(agent))
    assert not changed, (
        f"reads changed for {changed}: {[(a, expected.get(a), found.get(a)) for a in changed]}"
    )
    assert sum(n for n, _ in found.values()) > 1000  # the corpus was found and read
