"""The user's state travels with a push and a pull (agtaild.sync.statepack): a label set on
the laptop shows on the desktop's imported copy, over a directory remote, ssh (rsync against a
local path) and HTTP; precedence holds in the merge (a user's change over an agent's over a
rule's, then the newer); a tampered pack is refused whole with a clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config
from agtaild.sync import rsync as rsync_mod
from agtaild.sync.remote import pull, push
from agtaild.sync.statepack import NAME
from agtaild.userstate.store import Change, UserState
from tests.synctools import TOKEN, api_server, make_machine
from tests.test_sync_e2e import all_sessions, index_of


@pytest.fixture
def two(tmp_path: Path, corpus: Path) -> tuple[Config, Config]:
    a = make_machine(tmp_path / "a", corpus, claude=True, codex=False)
    b = make_machine(tmp_path / "b", corpus, claude=False, codex=False)
    return a, b


def first_session(config: Config) -> dict[str, Any]:
    svc = index_of(config)
    try:
        return sorted(all_sessions(svc), key=lambda s: s["id"])[0]
    finally:
        svc.close()


def label_on(config: Config, agent: str, sid: str, key: str, value: str, who: str = "user") -> None:
    st = UserState(config.data_dir)
    try:
        st.apply([Change(("", agent, sid), "label", value, key=key, who=who)])
    finally:
        st.close()


def imported_state(b: Config, collection: str, agent: str, sid: str) -> dict[str, Any]:
    svc = index_of(b)
    try:
        found = [
            s
            for s in all_sessions(svc, imported=True, collection=collection, hidden="include")
            if s["agent"] == agent and s["id"] == sid
        ]
        assert len(found) == 1
        return dict(found[0].get("state") or {})
    finally:
        svc.close()


def test_a_label_set_on_the_laptop_shows_on_the_desktops_imported_copy(
    two: tuple[Config, Config], tmp_path: Path
) -> None:
    a, b = two
    s = first_session(a)
    label_on(a, s["agent"], s["id"], "client", "acme")
    st = UserState(a.data_dir)
    st.apply(
        [
            Change(("", s["agent"], s["id"]), "star", "1"),
            Change(("", s["agent"], s["id"]), "title", "Laptop's name"),
        ]
    )
    st.close()
    share = tmp_path / "share"
    share.mkdir()
    rep = push(a, str(share), "laptop")
    assert rep["errors"] == [] and rep["state"]["sent"] and (share / "laptop" / NAME).is_file()
    got = pull(b, str(share), "laptop")
    assert got["errors"] == [] and got["state"]["accepted"] == 3
    state = imported_state(b, "laptop", s["agent"], s["id"])
    assert state["labels"] == {"client": "acme"} and state["starred"] and state["title"] == "Laptop's name"
    svc = index_of(b)
    try:  # the label filters the imported copy in
        listed = all_sessions(svc, label="client=acme")
        assert [(x["collection"], x["id"]) for x in listed] == [("laptop", s["id"])]
    finally:
        svc.close()
    # Pulled again, nothing changes and no change is recorded twice.
    again = pull(b, str(share), "laptop")
    assert again["state"]["accepted"] == 0
    hist = UserState(b.data_dir).history(("laptop", s["agent"], s["id"]))
    assert len(hist) == 3
    # A removal on the laptop is carried too.
    st = UserState(a.data_dir)
    st.apply([Change(("", s["agent"], s["id"]), "label", None, key="client")])
    st.close()
    push(a, str(share), "laptop")
    pull(b, str(share), "laptop")
    assert imported_state(b, "laptop", s["agent"], s["id"]).get("labels") == {}


def test_the_merge_keeps_precedence_then_the_newer(two: tuple[Config, Config], tmp_path: Path) -> None:
    a, b = two
    s = first_session(a)
    agent, sid = s["agent"], s["id"]
    here = ("laptop", agent, sid)
    # On the desktop, its user already titled the imported copy; an agent labelled it.
    st_b = UserState(b.data_dir)
    st_b.apply(
        [
            Change(here, "title", "desktop user's", who="user"),
            Change(here, "label", "old", key="phase", who="agent"),
        ]
    )
    st_b.close()
    # On the laptop (later): an agent's title, and an agent's newer phase label, a rule's label.
    st_a = UserState(a.data_dir)
    st_a.apply(
        [
            Change(("", agent, sid), "title", "laptop agent's", who="agent"),
            Change(("", agent, sid), "label", "new", key="phase", who="agent"),
            Change(("", agent, sid), "label", "r", key="ruled", who="rule"),
        ]
    )
    st_a.close()
    share = tmp_path / "share"
    share.mkdir()
    push(a, str(share), "laptop")
    rep = pull(b, str(share), "laptop")
    assert rep["errors"] == [] and rep["state"]["accepted"] == 2  # the title loses to the user's
    state = imported_state(b, "laptop", agent, sid)
    assert state["title"] == "desktop user's"
    assert state["labels"] == {"phase": "new", "ruled": "r"}
    # The desktop's agent changes the phase again, later than the laptop: a new pull of the
    # same (older) pack does not take it back.
    st_b = UserState(b.data_dir)
    st_b.apply([Change(here, "label", "newest", key="phase", who="agent")])
    st_b.close()
    pull(b, str(share), "laptop")
    assert imported_state(b, "laptop", agent, sid)["labels"]["phase"] == "newest"


def _tampered(path: Path, how: str) -> None:
    doc = json.loads(path.read_bytes())
    if how == "value":
        doc["labels"][0][3] = "evil"
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:-20])
        return
    elif how == "control":  # a row that is bad as a change, with a digest made to match
        from agtaild.sync.statepack import LISTS
        from agtaild.userstate.envelope import digest

        doc["labels"].append([doc["labels"][0][0], doc["labels"][0][1], "bad", "a\x1bb", "user", 1.0])
        doc["sha256"] = digest(doc, LISTS)
    elif how == "version":
        doc["version"] = 99
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("value", "do not match its sha256"),
        ("truncated", "not JSON"),
        ("control", "control"),
        ("version", "version 99"),
    ],
)
def test_a_tampered_pack_is_refused_whole(
    two: tuple[Config, Config], tmp_path: Path, how: str, says: str
) -> None:
    a, b = two
    s = first_session(a)
    ref = ("", s["agent"], s["id"])
    st = UserState(a.data_dir)
    st.apply([Change(ref, "label", "acme", key="client"), Change(ref, "star", "1"), Change(ref, "hide", "1")])
    st.close()
    share = tmp_path / "share"
    share.mkdir()
    push(a, str(share), "laptop")
    _tampered(share / "laptop" / NAME, how)
    rep = pull(b, str(share), "laptop")
    assert rep["files"] > 0  # the sessions came
    assert rep["state"]["error"] and says in rep["state"]["error"] and "was refused" in rep["state"]["error"]
    assert [e["path"] for e in rep["errors"]] == [NAME]
    dump = UserState(b.data_dir).dump()
    assert dump["labels"] == [] and dump["marks"] == []  # nothing half applied


def test_the_state_travels_over_http_both_ways(two: tuple[Config, Config]) -> None:
    a, b = two
    s = first_session(a)
    label_on(a, s["agent"], s["id"], "client", "acme")
    with api_server(b) as server:
        rep = push(a, server.url, "laptop", token=TOKEN)
        assert rep["errors"] == [] and rep["state"]["merged"]["accepted"] == 1
    assert imported_state(b, "laptop", s["agent"], s["id"])["labels"] == {"client": "acme"}
    # B pulls A's sessions from A's daemon, with their state.
    label_on(a, s["agent"], s["id"], "client", "acme2")
    with api_server(a) as server_a:
        back = pull(b, server_a.url, "from-a", token=TOKEN)
    assert back["errors"] == [] and back["state"]["accepted"] == 1
    assert imported_state(b, "from-a", s["agent"], s["id"])["labels"] == {"client": "acme2"}


def test_the_state_travels_over_ssh(
    two: tuple[Config, Config], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if rsync_mod.rsync_binary() is None:
        pytest.skip("rsync is not installed (apt-get install rsync)")
    target = tmp_path / "server"
    target.mkdir()
    monkeypatch.setattr(rsync_mod, "parse_ssh_remote", lambda remote: rsync_mod.RsyncRemote(str(target)))
    a, b = two
    s = first_session(a)
    label_on(a, s["agent"], s["id"], "client", "acme")
    rep = push(a, "ssh://server/agtail", "laptop")
    assert rep["errors"] == [] and (target / "laptop" / NAME).is_file()
    got = pull(b, "ssh://server/agtail", "laptop")
    assert got["errors"] == [] and got["state"]["accepted"] == 1
    assert imported_state(b, "laptop", s["agent"], s["id"])["labels"] == {"client": "acme"}


def test_an_imported_copys_state_stays_with_its_machine(two: tuple[Config, Config], tmp_path: Path) -> None:
    """B's own label on its imported copy of A's session is B's: B's push does not send it."""
    a, b = two
    s = first_session(a)
    share = tmp_path / "share"
    share.mkdir()
    push(a, str(share), "laptop")
    pull(b, str(share), "laptop")
    st = UserState(b.data_dir)
    st.apply([Change(("laptop", s["agent"], s["id"]), "label", "b", key="mine")])
    st.close()
    push(b, str(share), "desktop")
    doc = json.loads((share / "desktop" / NAME).read_bytes())
    assert doc["labels"] == [] and doc["marks"] == []


def test_a_pull_of_some_agents_takes_only_their_state(tmp_path: Path, corpus: Path) -> None:
    a = make_machine(tmp_path / "a", corpus, claude=True, codex=True)
    b = make_machine(tmp_path / "b", corpus, claude=False, codex=False)
    svc = index_of(a)
    try:
        sessions = all_sessions(svc)
    finally:
        svc.close()
    claude_one = next(s for s in sessions if s["agent"] == "claude-code")
    codex_one = next(s for s in sessions if s["agent"] == "codex")
    label_on(a, claude_one["agent"], claude_one["id"], "k", "claude")
    label_on(a, codex_one["agent"], codex_one["id"], "k", "codex")
    share = tmp_path / "share"
    share.mkdir()
    push(a, str(share), "laptop")
    got = pull(b, str(share), "laptop", agents=["codex"])
    assert got["errors"] == [] and got["state"]["accepted"] == 1
    dump = UserState(b.data_dir).dump()
    assert [r[1] for r in dump["labels"]] == ["codex"]
