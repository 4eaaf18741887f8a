"""A scripted stand-in for a language model, so real agent CLIs can be recorded offline.

Real agents write their transcripts only when they talk to a model. This server speaks the
OpenAI Chat Completions API (``/v1/chat/completions``, streamed or not), the OpenAI Responses
API (``/v1/responses``, streamed), the Anthropic Messages API (``/v1/messages``, streamed or
not) and Gemini's ``generateContent``/``streamGenerateContent`` (Gemini CLI) on 127.0.0.1, and
answers from a script instead of a model. The script is picked by the
tag ``[[S:agent/scenario]]`` that every recorded prompt carries on its first line; the step is
the number of assistant turns since the last tagged message, so tool round trips advance it.

Each request is appended to ``--log`` (JSON lines) so the tool schemas an agent offers can be
read back when its script is written. Scripts live in ``stub_scripts.py`` beside this file.

Run: ``python3 stubmodel.py --port 8765 --log /tmp/requests.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stub_scripts import Reply, plan_reply

TAG = re.compile(r"\[\[S:([\w.-]+)/([\w.-]+)\]\]")
MODEL = "stub-model"
_LOG_LOCK = threading.Lock()


def _text_of(content: Any) -> str:
    """Flatten the many shapes of message content (string, parts, blocks) to plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                for key in ("text", "content", "input_text", "output"):
                    if key in part:
                        out.append(_text_of(part[key]))
                        break
            else:
                out.append(str(part))
        return "\n".join(out)
    return "" if content is None else str(content)


def conversation_state(messages: list[dict[str, Any]]) -> tuple[str, str, int, list[str]]:
    """(agent, scenario, step, texts after the tag) for a request's message list."""
    last_tag = -1
    agent = scenario = ""
    for i, msg in enumerate(messages):
        content = msg.get("content")
        if isinstance(content, list) and content and all(
            isinstance(b, dict) and b.get("type") in ("tool_result", "function_call_output") for b in content
        ):
            continue  # a tool's output is no prompt, even when it quotes one (agtail's listings do)
        m = TAG.search(_text_of(content))
        if m and msg.get("role") in ("user", "human", None):
            last_tag, agent, scenario = i, m.group(1), m.group(2)
    if last_tag < 0:
        return "", "", 0, []
    later = messages[last_tag + 1 :]
    # One assistant turn may arrive as several consecutive assistant messages (text, then the
    # tool call): count runs, not messages.
    step, prev = 0, False
    for item in later:
        is_assistant = item.get("role") == "assistant" or item.get("type") == "function_call"
        step += is_assistant and not prev
        prev = is_assistant
    texts = [_text_of(item.get("content") or item.get("output")) for item in later]
    return agent, scenario, step, texts


def _usage(body: dict[str, Any], reply: Reply) -> tuple[int, int]:
    prompt = len(json.dumps(body.get("messages") or body.get("input") or "")) // 4
    completion = max(1, len(reply.text + json.dumps(reply.tool_args or {})) // 4)
    return prompt, completion


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send_json(self, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data: Any, event: str | None = None) -> None:
        chunk = (f"event: {event}\n" if event else "") + "data: " + (
            data if isinstance(data, str) else json.dumps(data)
        ) + "\n\n"
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "stub"}]})
        else:
            self._send_json(200, {"ok": True})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "bad json"}})
            return
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/chat/completions"):
            api = "openai"
            messages = list(body.get("messages") or [])
        elif path.endswith("/messages"):
            api = "anthropic"
            messages = list(body.get("messages") or [])
        elif path.endswith("/responses"):
            api = "responses"
            messages = [m for m in body.get("input") or [] if isinstance(m, dict)]
        elif path.endswith((":generateContent", ":streamGenerateContent")):
            api = "gemini"
            messages = _gemini_messages(body)
            if body.get("tools"):  # functionDeclarations, named as the other APIs name tools
                body = {**body, "tools": [d for t in body["tools"] if isinstance(t, dict)
                                          for d in t.get("functionDeclarations") or []]}
            body["stream"] = path.endswith(":streamGenerateContent")
        else:
            self._send_json(404, {"error": {"message": f"no route {path}"}})
            return
        agent, scenario, step, later = conversation_state(messages)
        tools = [
            str((t.get("function") or t).get("name")) for t in body.get("tools") or []
            if isinstance(t, dict)
        ]
        reply = plan_reply(agent, scenario, step, later, tools, body)
        self.server.log({
            "t": time.time(), "path": path, "agent": agent, "scenario": scenario, "step": step,
            "stream": bool(body.get("stream")), "tools": tools, "reply": reply.describe(),
            "body": body,
        })
        if reply.status != 200:
            self._send_json(reply.status, {"error": {
                "message": reply.text, "type": "invalid_request_error", "code": reply.status}})
            return
        if api == "gemini":
            self._gemini(body, reply)
        elif api == "openai":
            self._openai(body, reply)
        elif api == "anthropic":
            self._anthropic(body, reply)
        else:
            self._responses(body, reply)

    # ---- OpenAI Chat Completions -------------------------------------------------------
    def _openai(self, body: dict[str, Any], reply: Reply) -> None:
        rid = "chatcmpl-" + uuid.uuid4().hex[:24]
        call_id = "call_" + uuid.uuid4().hex[:20]
        p, c = _usage(body, reply)
        usage = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        finish = "tool_calls" if reply.tool else "stop"
        calls = [{"id": call_id, "type": "function", "function": {
            "name": reply.tool, "arguments": json.dumps(reply.tool_args)}}] if reply.tool else None
        if not body.get("stream"):
            msg: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if reply.reasoning:
                msg["reasoning_content"] = reply.reasoning
            if calls:
                msg["tool_calls"] = calls
            if reply.delay:
                time.sleep(reply.delay)
            self._send_json(200, {"id": rid, "object": "chat.completion", "created": int(time.time()),
                                  "model": MODEL, "choices": [{"index": 0, "message": msg,
                                                               "finish_reason": finish}],
                                  "usage": usage})
            return
        self._start_sse()

        def chunk(delta: dict[str, Any], fin: str | None = None) -> None:
            self._sse({"id": rid, "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": MODEL, "choices": [{"index": 0, "delta": delta,
                                                    "finish_reason": fin}]})
        try:
            chunk({"role": "assistant", "content": ""})
            for piece in _pieces(reply.reasoning):
                chunk({"reasoning_content": piece})
            for piece in _pieces(reply.text):
                chunk({"content": piece})
                if reply.delay:
                    time.sleep(reply.delay)
            if calls:
                chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                       "function": {"name": reply.tool, "arguments": ""}}]})
                chunk({"tool_calls": [{"index": 0, "function": {
                    "arguments": json.dumps(reply.tool_args)}}]})
            chunk({}, finish)
            self._sse({"id": rid, "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": MODEL, "choices": [], "usage": usage})
            self._sse("[DONE]")
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ---- Anthropic Messages ------------------------------------------------------------
    def _anthropic(self, body: dict[str, Any], reply: Reply) -> None:
        mid = "msg_" + uuid.uuid4().hex[:24]
        tid = "toolu_" + uuid.uuid4().hex[:20]
        p, c = _usage(body, reply)
        blocks: list[dict[str, Any]] = []
        start: dict[str, Any]
        deltas: list[dict[str, Any]]
        if reply.reasoning:
            blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": "stub"})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        if reply.tool:
            blocks.append({"type": "tool_use", "id": tid, "name": reply.tool,
                           "input": reply.tool_args})
        stop = "tool_use" if reply.tool else "end_turn"
        usage = {"input_tokens": p, "output_tokens": c, "cache_read_input_tokens": 0,
                 "cache_creation_input_tokens": 0}
        if not body.get("stream"):
            self._send_json(200, {"id": mid, "type": "message", "role": "assistant",
                                  "model": body.get("model", MODEL), "content": blocks,
                                  "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        self._start_sse()
        try:
            self._sse({"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": body.get("model", MODEL),
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {**usage, "output_tokens": 1}}}, "message_start")
            for i, b in enumerate(blocks):
                if b["type"] == "thinking":
                    start, deltas = {"type": "thinking", "thinking": ""}, [
                        {"type": "thinking_delta", "thinking": x} for x in _pieces(b["thinking"])
                    ] + [{"type": "signature_delta", "signature": "stub"}]
                elif b["type"] == "text":
                    start, deltas = {"type": "text", "text": ""}, [
                        {"type": "text_delta", "text": x} for x in _pieces(b["text"])]
                else:
                    start = {"type": "tool_use", "id": tid, "name": reply.tool, "input": {}}
                    deltas = [{"type": "input_json_delta",
                               "partial_json": json.dumps(reply.tool_args)}]
                self._sse({"type": "content_block_start", "index": i, "content_block": start},
                          "content_block_start")
                for d in deltas:
                    self._sse({"type": "content_block_delta", "index": i, "delta": d},
                              "content_block_delta")
                    if reply.delay:
                        time.sleep(reply.delay)
                self._sse({"type": "content_block_stop", "index": i}, "content_block_stop")
            self._sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": {"output_tokens": c}}, "message_delta")
            self._sse({"type": "message_stop"}, "message_stop")
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ---- OpenAI Responses (streamed only; enough for agents that insist on it) ----------
    def _responses(self, body: dict[str, Any], reply: Reply) -> None:
        rid = "resp_" + uuid.uuid4().hex[:24]
        p, c = _usage(body, reply)
        output: list[dict[str, Any]] = []
        if reply.text:
            output.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:16],
                           "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": reply.text,
                                        "annotations": []}]})
        if reply.tool:
            output.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16],
                           "call_id": "call_" + uuid.uuid4().hex[:20], "name": reply.tool,
                           "arguments": json.dumps(reply.tool_args), "status": "completed"})
        resp = {"id": rid, "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": MODEL, "output": output,
                "usage": {"input_tokens": p, "output_tokens": c, "total_tokens": p + c}}
        if not body.get("stream"):
            self._send_json(200, resp)
            return
        self._start_sse()
        try:
            self._sse({"type": "response.created", "response": {**resp, "status": "in_progress",
                                                                 "output": []}},
                      "response.created")
            for i, item in enumerate(output):
                self._sse({"type": "response.output_item.added", "output_index": i,
                           "item": item}, "response.output_item.added")
                if item["type"] == "message":
                    for piece in _pieces(reply.text):
                        self._sse({"type": "response.output_text.delta", "output_index": i,
                                   "content_index": 0, "item_id": item["id"], "delta": piece},
                                  "response.output_text.delta")
                self._sse({"type": "response.output_item.done", "output_index": i,
                           "item": item}, "response.output_item.done")
            self._sse({"type": "response.completed", "response": resp}, "response.completed")
        except (BrokenPipeError, ConnectionResetError):
            pass


    # ---- Gemini generateContent (Gemini CLI, through GOOGLE_GEMINI_BASE_URL) ------------
    def _gemini(self, body: dict[str, Any], reply: Reply) -> None:
        p, c = _usage(body, reply)
        parts: list[dict[str, Any]] = []
        if reply.reasoning:
            parts.append({"text": reply.reasoning, "thought": True})
        if reply.text:
            parts.append({"text": reply.text})
        if reply.tool:
            parts.append({"functionCall": {"name": reply.tool, "args": reply.tool_args}})
        doc = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c},
               "modelVersion": MODEL}
        if not body.get("stream"):
            self._send_json(200, doc)
            return
        self._start_sse()
        try:
            self._sse(doc)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _gemini_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Gemini ``contents`` as the other APIs' messages: role user/assistant, text content."""
    out: list[dict[str, Any]] = []
    for item in body.get("contents") or []:
        if not isinstance(item, dict):
            continue
        parts = [x for x in item.get("parts") or [] if isinstance(x, dict)]
        text = "\n".join(str(x["text"]) for x in parts if "text" in x)
        if any("functionCall" in x for x in parts):
            out.append({"role": "assistant", "type": "function_call", "content": text})
        elif any("functionResponse" in x for x in parts):
            out.append({"role": "tool", "content": json.dumps([x["functionResponse"] for x in parts if "functionResponse" in x])})
        else:
            out.append({"role": "assistant" if item.get("role") == "model" else "user", "content": text})
    return out


def _pieces(text: str, size: int = 6) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] if text else []


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, log_path: Path | None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.log_path = log_path

    def log(self, entry: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        with _LOG_LOCK, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--log", type=Path, default=None)
    args = ap.parse_args()
    server = StubServer(args.port, args.log)
    print(f"stub model on http://127.0.0.1:{args.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
