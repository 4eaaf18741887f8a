"""The user's own state (labels, stars, titles, hides): kept apart from the index, ranked by who
set it, never half applied, and the same as the replay of its accepted changes under load."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import time
from pathlib import Path

import pytest

from agtaild.errors import UsageError
from agtaild.userstate.store import FILE, Change, UserState

A = ("", "claude-code", "s1")
B = ("laptop", "codex", "s2")


def test_labels_marks_and_titles_round_trip(tmp_path: Path) -> None:
    st = UserState(tmp_path)
    st.apply([Change(A, "label", "acme", key="client"), Change(A, "label", "", key="wip"), Change(A, "star", "1"),
              Change(B, "title", "  the flaky login test  "), Change(B, "hide", "1")])  # fmt: skip
    got = st.of([A, B, ("", "x", "none")])
    assert got[A] == {
        "labels": {"client": "acme", "wip": ""},
        "starred": True,
        "hidden": False,
        "title": None,
    }
    assert got[B] == {"labels": {}, "starred": False, "hidden": True, "title": "the flaky login test"}
    assert st.matching(label=("client", None)) == {A} and st.matching(label=("client", "other")) == set()
    assert st.matching(starred=True) == {A} and st.matching(hidden=True) == {B}
    st.apply([Change(A, "label", None, key="wip"), Change(A, "star", None)])
    assert st.of([A])[A]["labels"] == {"client": "acme"} and not st.of([A])[A]["starred"]
    assert [h["what"] for h in st.history(A)] == ["label", "label", "star", "label", "star"]
    assert (tmp_path / FILE).stat().st_mode & 0o777 in (
        0o600,
        0o644,
    )  # the umask decides; never world-writable
    st.close()


def test_a_user_wins_over_an_agent_and_an_agent_over_a_rule(tmp_path: Path) -> None:
    st = UserState(tmp_path)
    assert st.apply([Change(A, "label", "from-rule", key="client", who="rule")])[0][1]
    assert st.apply([Change(A, "label", "from-agent", key="client", who="agent")])[0][1]
    assert not st.apply([Change(A, "label", "rule-again", key="client", who="rule")])[0][1]
    assert st.apply([Change(A, "title", "mine", who="user")])[0][1]
    assert not st.apply([Change(A, "title", "the agent's", who="agent")])[0][1]
    assert st.of([A])[A]["title"] == "mine"
    # a user's removal is kept: an agent cannot bring the label back
    assert st.apply([Change(A, "label", None, key="client", who="user")])[0][1]
    assert not st.apply([Change(A, "label", "again", key="client", who="agent")])[0][1]
    assert "client" not in st.of([A]).get(A, {"labels": {}})["labels"]


@pytest.mark.parametrize(
    "bad",
    [
        Change(A, "label", "x", key="bad key"),
        Change(A, "label", "x", key=""),
        Change(A, "label", "a\x1b[31mb", key="k"),
        Change(A, "label", "v" * 10_000, key="k"),
        Change(A, "title", "line\nbreak"),
        Change(A, "title", "   "),
        Change(("", "", "s"), "star", "1"),
        Change(A, "star", "1", who="root"),
        Change(A, "explode", "1"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_half_applied(tmp_path: Path, bad: Change) -> None:
    st = UserState(tmp_path)
    with pytest.raises(UsageError):
        st.apply([Change(B, "label", "ok", key="good"), bad])
    assert st.of([A, B]) == {}


def test_a_session_carries_a_bounded_number_of_labels(tmp_path: Path) -> None:
    st = UserState(tmp_path)
    st.apply([Change(A, "label", "", key=f"k{i}") for i in range(64)])
    with pytest.raises(UsageError, match="at most 64"):
        st.apply([Change(A, "label", "", key="one-more")])
    assert len(st.of([A])[A]["labels"]) == 64


def test_a_dump_carries_to_another_machine_with_its_precedence(tmp_path: Path) -> None:
    laptop = UserState(tmp_path / "laptop")
    laptop.apply(
        [
            Change(A, "label", "acme", key="client"),
            Change(A, "star", "1"),
            Change(A, "title", "by the agent", who="agent"),
        ]
    )
    desktop = UserState(tmp_path / "desktop")
    desktop.apply([Change(("laptop", "claude-code", "s1"), "title", "the desktop user's", who="user")])
    assert (
        desktop.load(json.loads(json.dumps(laptop.dump())), collection="laptop") == 2
    )  # the agent's title loses
    got = desktop.of([("laptop", "claude-code", "s1")])[("laptop", "claude-code", "s1")]
    assert got == {
        "labels": {"client": "acme"},
        "starred": True,
        "hidden": False,
        "title": "the desktop user's",
    }
    with pytest.raises(UsageError):
        desktop.load({"version": 1, "labels": [["x"]], "marks": []})


def test_a_damaged_store_is_an_error_that_says_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / FILE).write_bytes(b"not a database" * 100)
    with pytest.raises(Exception, match="labels, stars, titles and hides"):
        UserState(tmp_path).of([A]) or UserState(tmp_path).apply([Change(A, "star", "1")])
    assert (tmp_path / FILE).read_bytes().startswith(b"not a database")  # never replaced


def _writer(data_dir: str, who: str, n: int, seed: int) -> None:
    import random

    rnd = random.Random(seed)
    st = UserState(data_dir)
    for i in range(n):
        ref = ("", "claude-code", f"s{rnd.randrange(5)}")
        kind = rnd.choice(["label", "label", "star", "hide", "title"])
        value = None if rnd.random() < 0.2 else f"{who}-{i}"
        st.apply([Change(ref, kind, value, key=f"k{rnd.randrange(3)}" if kind == "label" else "", who=who)])
    st.close()


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_writer, args=(str(tmp_path), who, 150, i))
        for i, who in enumerate(["user", "agent", "rule", "user"])
    ]
    start = time.time()
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert time.time() - start < 120
    # the current state is exactly the replay of the accepted changes, in order
    replay: dict[tuple[str, str, str, str], str | None] = {}
    db = sqlite3.connect(tmp_path / FILE)
    for agent, sid, what, key, value in db.execute(
        "SELECT agent, sid, what, key, value FROM changes ORDER BY id"
    ):
        replay[(agent, sid, what, key)] = value
    current = {
        (a, s, "label", k): v for a, s, k, v in db.execute("SELECT agent, sid, key, value FROM labels")
    }
    current |= {(a, s, m, ""): v for a, s, m, v in db.execute("SELECT agent, sid, mark, value FROM marks")}
    assert current == replay and len(replay) > 10
