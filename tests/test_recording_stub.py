"""The stand-in model used to record real agents (bench/recording): it must answer each API the
way real clients parse it, and walk a scenario one step per assistant turn."""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench" / "recording"))
import stubmodel

SHELL_TOOL = {"type": "function", "function": {"name": "terminal", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}
EDIT_TOOL = {"type": "function", "function": {"name": "edit", "parameters": {
    "type": "object", "properties": {"path": {}, "edits": {}}, "required": ["path", "edits"]}}}


@pytest.fixture
def stub(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "requests.jsonl"
    server = stubmodel.StubServer(0, log)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()
        server.server_close()


def _post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _sse(raw: bytes) -> list[Any]:
    lines = [ln[6:] for ln in raw.decode().splitlines() if ln.startswith("data: ")]
    return [json.loads(ln) for ln in lines if ln != "[DONE]"]


def test_openai_stream_assembles_a_tool_call_named_after_the_schema(stub: tuple[str, Path]) -> None:
    base, log = stub
    body = {"model": "m", "stream": True, "tools": [SHELL_TOOL],
            "messages": [{"role": "user", "content": "[[S:x/basic]] go"}]}
    status, raw = _post(base + "/v1/chat/completions", body)
    chunks = _sse(raw)
    calls = [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])]
    args = "".join(tc["function"].get("arguments", "") for tc in calls)
    reasoning = "".join(ch["delta"].get("reasoning_content", "") for c in chunks for ch in c["choices"])
    assert status == 200
    assert calls[0]["function"]["name"] == "terminal"
    assert json.loads(args) == {"command": "ls -la && echo hello-from-stub"}
    assert reasoning.startswith("The user wants a tour")
    assert chunks[-1]["usage"]["completion_tokens"] > 0  # the usage chunk comes last
    assert json.loads(log.read_text().splitlines()[0])["scenario"] == "basic"


def test_steps_advance_once_per_assistant_turn_even_when_split(stub: tuple[str, Path]) -> None:
    base, _ = stub
    # Open Interpreter sends a turn as two assistant messages (text, then the call): still step 1.
    messages = [
        {"role": "user", "content": "[[S:x/basic]] go"},
        {"role": "assistant", "content": "Let me look around."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                "function": {"name": "terminal"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    tools = [SHELL_TOOL, {"type": "function", "function": {"name": "write_file", "parameters": {
        "properties": {"path": {}, "content": {}}}}}]
    status, raw = _post(base + "/v1/chat/completions",
                        {"model": "m", "messages": messages, "tools": tools})
    call = json.loads(raw)["choices"][0]["message"]["tool_calls"][0]["function"]
    assert status == 200
    assert call["name"] == "write_file"
    assert json.loads(call["arguments"]) == {"path": "notes.txt", "content": "alpha\nbeta\n"}


def test_anthropic_edit_uses_the_edits_list_and_errors_are_http(stub: tuple[str, Path]) -> None:
    base, _ = stub
    messages = [{"role": "user", "content": "[[S:x/basic]] go"}]
    for _ in range(2):  # two finished turns: the next step is the edit
        messages += [{"role": "assistant", "content": [{"type": "text", "text": "."}]},
                     {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}]
    status, raw = _post(base + "/v1/messages",
                        {"model": "m", "messages": messages, "tools": [EDIT_TOOL["function"]]})
    blocks = json.loads(raw)["content"]
    use = next(b for b in blocks if b["type"] == "tool_use")
    assert status == 200
    assert use["input"] == {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}
    status, raw = _post(base + "/v1/messages",
                        {"model": "m", "messages": [{"role": "user", "content": "[[S:x/apierror]] no"}]})
    assert status == 400
    assert "rejected on purpose" in json.loads(raw)["error"]["message"]


def test_untagged_side_requests_get_a_short_title(stub: tuple[str, Path]) -> None:
    base, _ = stub
    body = {"model": "m", "messages": [
        {"role": "system", "content": "Generate concise conversation titles."},
        {"role": "user", "content": "Title for: [[S:x/basic]] go"}]}
    status, raw = _post(base + "/v1/chat/completions", body)
    assert status == 200
    assert json.loads(raw)["choices"][0]["message"]["content"] == "Stub session title"
