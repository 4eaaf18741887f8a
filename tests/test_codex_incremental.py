"""Incremental reads of Codex rollouts store exactly what one read does; .zst reads the same."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import zstandard

from agtaild.adapters.base import Unit
from agtaild.adapters.codex.adapter import CodexAdapter
from tests.replay_helpers import Store, line_cuts, read_once, replay_growing_file

SETTLED = 4_000_000_000.0
#: Codex homes in the corpus (each holds sessions/ and maybe archived_sessions/).
HOMES = (
    "codex/agent-history",
    "codex/agent-sessions",
    "codex/claude-code-log",
    "codex/codexbar/harness-smoke/codex-home",
    "real/codex-0.171.0",
)


def corpus_files(corpus: Path) -> list[tuple[str, str]]:
    out = []
    for home in HOMES:
        for unit in CodexAdapter().discover(corpus / home / "sessions"):
            out.append((home, str(Path(unit.path).relative_to(corpus / home))))
    return out


def copy_home(corpus: Path, home: str, tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(corpus / home, dst)
    return dst


def unit_for(adapter: CodexAdapter, home: Path, path: Path) -> Unit:
    units = [u for u in adapter.discover(home / "sessions") if u.path == str(path)]
    assert len(units) == 1, path
    return units[0]


def test_corpus_has_the_expected_files(corpus: Path) -> None:
    assert len(corpus_files(corpus)) == 14


@pytest.mark.parametrize("settled", [False, True], ids=["live", "settled"])
def test_every_line_and_mid_line_cut_equals_one_read(corpus: Path, tmp_path: Path, settled: bool) -> None:
    for n, (home_name, rel) in enumerate(corpus_files(corpus)):
        home = copy_home(corpus, home_name, tmp_path / str(n))
        path = home / rel
        data = path.read_bytes()
        adapter = CodexAdapter()
        unit = unit_for(adapter, home, path)
        replayed = replay_growing_file(adapter, path, path, line_cuts(data), unit, settled=settled)
        once = read_once(CodexAdapter(), unit, now=SETTLED)
        assert replayed.snapshot() == once.snapshot(), rel
        assert path.read_bytes() == data


def test_random_byte_cuts_equal_one_read(corpus: Path, tmp_path: Path) -> None:
    rng = random.Random(20261130)
    for n, (home_name, rel) in enumerate(corpus_files(corpus)):
        home = copy_home(corpus, home_name, tmp_path / str(n))
        path = home / rel
        size = path.stat().st_size
        for attempt in range(3):
            cuts = sorted(rng.randrange(1, max(size, 2)) for _ in range(rng.randint(1, 12)))
            adapter = CodexAdapter()
            unit = unit_for(adapter, home, path)
            replayed = replay_growing_file(adapter, path, path, cuts, unit, settled=attempt == 1)
            assert replayed.snapshot() == read_once(CodexAdapter(), unit, now=SETTLED).snapshot(), (rel, cuts)


def test_a_read_without_news_changes_nothing(corpus: Path) -> None:
    adapter = CodexAdapter()
    unit = next(iter(adapter.discover(corpus / "real/codex-0.171.0/sessions")))
    first = adapter.read(unit, now=SETTLED)
    again = adapter.read(unit, first.state, now=SETTLED)
    assert again.reset is False and again.events == [] and again.usage == []
    assert again.session == first.session


def test_zst_rollout_reads_like_the_plain_file(corpus: Path, tmp_path: Path) -> None:
    home = copy_home(corpus, "real/codex-0.171.0", tmp_path)
    day = home / "sessions/2026/11/30"
    plain = next(day.glob("*c676*.jsonl"))
    packed = plain.with_name(plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor(level=3).compress(plain.read_bytes()))
    adapter = CodexAdapter()
    # Both present: the plain rollout wins, the .zst is not a second session.
    paths = [u.path for u in adapter.discover(home / "sessions")]
    assert str(plain) in paths and str(packed) not in paths
    plain_store = read_once(adapter, unit_for(adapter, home, plain), now=SETTLED)
    plain.unlink()
    packed_unit = unit_for(adapter, home, packed)
    result = adapter.read(packed_unit, None, now=SETTLED)
    assert result.state is None and result.reset is True
    packed_store = Store()
    packed_store.apply(result)
    events, usage, session = packed_store.snapshot()
    plain_events, plain_usage, plain_session = plain_store.snapshot()
    assert events == plain_events and usage == plain_usage
    assert session.pop("path") == str(packed) and plain_session.pop("path") == str(plain)
    assert session == plain_session
    assert session["title"] == "Create hello.py, run it, add a Japanese greeting. [[S:codex/basic]]"


def test_corrupt_zst_is_a_bad_row_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000000.jsonl.zst"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x28\xb5\x2f\xfd this is not zstd data")
    adapter = CodexAdapter()
    result = adapter.read(unit_for(adapter, tmp_path, path), now=SETTLED)
    s = result.session
    assert s.truncated and s.bad_lines == 1 and s.accounting.balanced()
    assert "read_error" in s.extra and s.id == "0199aaaa-0000-7000-8000-000000000000"
