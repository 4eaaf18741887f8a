"""Masking answers cheaply loses nothing: a secret in every kind of text field of every answer
shape is masked, on the first read and on a read answered from the verdict cache; only the
fields that are ids, timestamps or enums by construction go unscanned."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agtaild.config import Config, RootSpec
from agtaild.query.masking import PLAIN, AnswerMasker
from agtaild.query.service import Service
from agtaild.secrets import default_scanner
from tests.index_toy import ToyAdapter, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

# Format-valid fakes, assembled here so that no scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "Z5ZPAR3B7TTE2QXN"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def event(**fields: Any) -> dict[str, Any]:
    base = {"seq": 1, "kind": "text", "ts": "2026-01-01T00:00:00Z", "role": "user", "text": None, "tool": None,
            "input": None, "result": None, "hook": None, "uuid": "u1", "raw": None, "extra": {}}  # fmt: skip
    return {**base, **fields}


FIELD_KINDS: list[tuple[str, dict[str, Any]]] = [
    ("text", {"events": [event(text=f"the token is {GITHUB}")]}),
    ("thinking", {"events": [event(kind="thinking", text=f"they pasted {AWS} again")]}),
    ("tool input", {"events": [event(kind="tool_use", tool="Bash", input={"command": f"curl -H 'x: {GITHUB}'"})]}),
    ("input key context", {"events": [event(kind="tool_use", input={"env": {"STRIPE_KEY": STRIPE}})]}),
    ("tool result text", {"events": [event(kind="tool_result", result=f"AWS_ACCESS_KEY_ID={AWS}\n")]}),
    ("tool result blocks", {"events": [event(kind="tool_result", result=[{"type": "text", "text": GITHUB}])]}),
    ("embedded JSON", {"events": [event(kind="tool_use", input=json.dumps({"cmd": f"push {GITHUB}"}))]}),
    ("hook", {"events": [event(kind="hook", hook={"command": f"echo {AWS}"})]}),
    ("raw", {"events": [event(kind="unknown", raw={"t": "odd", "payload": GITHUB})]}),
    ("extra", {"events": [event(extra={"note": f"key {AWS}"})]}),
    ("title", {"sessions": [{"agent": "toy", "id": "s", "title": f"deploy with {AWS}"}]}),
    ("first prompt", {"sessions": [{"agent": "toy", "id": "s", "first_prompt": f"use {GITHUB}"}]}),
    ("path", {"sessions": [{"agent": "toy", "id": "s", "path": f"/tmp/{AWS}/s.jsonl"}]}),
    ("cwd", {"session": {"agent": "toy", "id": "s", "cwd": f"/home/u/{AWS}"}}),
    ("git branch and project", {"sessions": [{"agent": "toy", "id": "s", "git_branch": f"fix-{AWS}", "project": AWS}]}),
    ("models list", {"sessions": [{"agent": "toy", "id": "s", "models": [f"m-{GITHUB}"]}]}),
    ("search snippet", {"hits": [{"session": {"agent": "toy", "id": "s"}, "seq": 3, "snippet": f"… {GITHUB} …"}]}),
    ("hit's session title", {"hits": [{"session": {"agent": "toy", "id": "s", "title": AWS}, "snippet": "x"}]}),
    ("project list", {"projects": [{"project": f"p-{AWS}", "root": f"/r/{GITHUB}", "cwds": [f"/c/{AWS}"]}]}),
    ("resume argv", {"agent": "toy", "id": "s", "cwd": f"/w/{AWS}", "argv": ["toy", f"--token={GITHUB}"]}),
    ("a field no one listed", {"events": [event(brand_new_field=f"x {GITHUB}")]}),
    ("a plain name holding a dict", {"events": [event(kind={"odd": GITHUB})]}),
]


def leaks(doc: Any) -> list[str]:
    text = json.dumps(doc, ensure_ascii=False)
    return [s for s in (GITHUB, AWS, STRIPE) if s in text]


@pytest.mark.parametrize("name,answer", FIELD_KINDS, ids=[n for n, _ in FIELD_KINDS])
def test_a_secret_in_every_field_kind_is_masked_first_and_from_the_cache(name: str, answer: dict[str, Any]) -> None:
    assert leaks(answer), "the case plants a secret"
    before = copy.deepcopy(answer)
    masker = AnswerMasker(default_scanner())
    first = masker.mask(answer)
    again = masker.mask(copy.deepcopy(answer))  # the whole answer's verdict
    assert leaks(first) == [] and leaks(again) == [] and "«secret:" in json.dumps(first, ensure_ascii=False)
    assert again == first
    assert answer == before  # the query's own answer is not changed in place
    # One item seen before inside a new answer: answered by the item's own verdict.
    bigger = copy.deepcopy(answer)
    for value in bigger.values():
        if isinstance(value, list):
            value.append({"agent": "toy", "id": "other", "title": "nothing here"})
    assert leaks(masker.mask(bigger)) == []


def test_a_clean_answer_is_the_very_object_and_ids_are_not_rewritten() -> None:
    masker = AnswerMasker(default_scanner())
    answer = {"events": [event(text="nothing secret here", uuid=AWS)], "next": None}
    assert masker.mask(answer) is answer  # uuid is PLAIN: an id by construction, never scanned
    assert "uuid" in PLAIN and "text" not in PLAIN
    assert masker.mask(copy.deepcopy(answer)) == answer


def test_a_changed_text_is_scanned_again_not_answered_from_the_cache() -> None:
    masker = AnswerMasker(default_scanner())
    clean = {"events": [event(text="the token is ready")]}
    assert masker.mask(clean) is clean
    dirty = {"events": [event(text=f"the token is {GITHUB}")]}
    assert leaks(masker.mask(dirty)) == []


def test_the_cache_is_bounded() -> None:
    masker = AnswerMasker(default_scanner(), max_verdicts=10)
    for i in range(50):
        masker.mask({"events": [event(text=f"line {i}")]})
    assert len(masker._verdicts) <= 10


@pytest.fixture
def svc(tmp_path: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    root = tmp_path / f"root-{AWS}"
    lines = [
        toy_line(t="meta", id="leaky", cwd=f"/home/{AWS}", title=f"deploy with {AWS}"),
        toy_line(t="msg", role="user", text=f"use the token {GITHUB} to push", ts="2026-01-01T10:00:00Z"),
        toy_line(t="tool", id="c1", name="Bash", input={"env": {"STRIPE_KEY": STRIPE}}, ts="2026-01-01T10:00:01Z"),
        toy_line(t="result", id="c1", output={"stdout": f"AWS_ACCESS_KEY_ID={AWS}"}, ts="2026-01-01T10:00:02Z"),
        toy_line(t="strange", payload=f"Authorization: token {GITHUB}", ts="2026-01-01T10:00:03Z"),
    ]
    write_session(root / "leaky.jsonl", lines)
    service = Service(Config(data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(root))], archive=False))
    service.update_index()
    yield service
    service.close()


def test_every_answer_of_an_indexed_session_read_twice_is_masked(svc: Service) -> None:
    calls = [
        ("sessions.list", {}),
        ("sessions.get", {"agent": "toy", "id": "leaky"}),
        ("events.list", {"agent": "toy", "id": "leaky"}),
        ("search", {"q": "token"}),
        ("search", {"q": "push"}),
        ("projects.list", {}),
    ]
    for method, params in calls:
        revealed = svc.call(method, params, reveal=True)
        for _ in range(2):
            assert leaks(svc.call(method, params)) == [], method
        assert svc.call(method, params, reveal=True) == revealed  # masking changed nothing in place
    events = svc.call("events.list", {"agent": "toy", "id": "leaky"})["events"]
    assert {e["kind"] for e in events} >= {"text", "tool_use", "unknown"}
    assert any(e["result"] for e in events) and any(e["raw"] for e in events)


@pytest.mark.parametrize("name,answer", FIELD_KINDS, ids=[n for n, _ in FIELD_KINDS])
def test_the_first_pass_scans_the_very_texts_of_the_plan(name: str, answer: dict[str, Any]) -> None:
    from agtaild.secrets import jsonwalk

    odd = {"{\"k\": 1}": "  [\"x\", {\"password\": \"in\"}]", "t": ("a", ["b"]), "n": [1, None, True]}
    for value in [answer, odd]:
        planned: list[str] = []
        cheap: list[str] = []
        jsonwalk.plan_value(value, planned, "ctx")
        jsonwalk.texts_of(value, cheap, "ctx")
        assert cheap == planned and planned
