"""A stand-in for agtaild that answers whatever the test tells it to, on 127.0.0.1 only: the
server AGTAIL_SERVER names may be anyone's, and the CLI must not trust what it answers.

``answers`` maps a JSON-RPC method to its result (a value, or a function of the params);
every request is recorded (method, path, headers, JSON-RPC method). With ``trickle`` each
answer is sent one byte every ``trickle`` seconds, for at most ``trickle_for`` seconds.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class HostileServer:
    def __init__(self, answers: dict[str, Any], *, trickle: float | None = None, trickle_for: float = 20.0) -> None:
        self.answers = answers
        self.trickle = trickle
        self.trickle_for = trickle_for
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                owner.record(self, None)
                self.answer(200, {"ok": True, "status": "ok", "version": "0.0.0"})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    req = json.loads(body)
                except ValueError:
                    req = {}
                owner.record(self, req.get("method"))
                method, params = req.get("method"), req.get("params") or {}
                if method not in owner.answers:
                    self.answer(200, {"jsonrpc": "2.0", "id": req.get("id"),
                                      "error": {"code": -32601, "message": f"no method {method}"}})
                    return
                result = owner.answers[method]
                if isinstance(result, Callable):  # type: ignore[arg-type]
                    result = result(params)
                self.answer(200, {"jsonrpc": "2.0", "id": req.get("id"), "result": result})

            def answer(self, status: int, doc: Any) -> None:
                body = json.dumps(doc).encode()
                raw = (f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body  # fmt: skip
                if owner.trickle is None:
                    self.wfile.write(raw)
                    return
                stop = time.monotonic() + owner.trickle_for
                try:
                    for byte in raw:
                        if time.monotonic() > stop:
                            break
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(owner.trickle)
                except OSError:
                    pass  # the client gave up: that is the point
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def record(self, handler: BaseHTTPRequestHandler, rpc_method: str | None) -> None:
        self.requests.append({"method": handler.command, "path": handler.path, "rpc": rpc_method,
                              "headers": dict(handler.headers.items())})

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> HostileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
