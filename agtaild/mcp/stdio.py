"""`agtail mcp`: the Model Context Protocol on stdin/stdout, with the standard library alone.

An agent starts its MCP servers beside its first model request and lists the tools of those
that have answered by then (Claude Code in ``-p`` mode: about 2 s); importing the SDK (pydantic,
starlette, …) and resolving the roots took longer than that, so agtail's tools were often
missing. Here the handshake (``initialize``, ``ping``, ``tools/list``) is answered from data
(agtaild/mcp/handlers.py) as soon as the process runs; the backend — the daemon's client, or the
index in-process — is opened on a thread of its own meanwhile, and a tool call waits for it.
(bench/bench_mcp_start.py measures it: tests/test_mcp_start.py holds the bound.)

The transport is the specification's stdio: one JSON-RPC message per line, UTF-8, nothing
else on stdout; messages for people go to stderr. Requests are answered in the order they
come, except that tool calls run one at a time on a worker thread, so a ``ping`` is answered
while a search runs. A cancelled tool call that has not started is dropped unanswered.
"""

from __future__ import annotations

import json
import queue
import sys
import threading

from agtaild.mcp import handlers

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: the handshake is answered sooner
    from collections.abc import Callable
    from typing import IO, Any

    from agtaild.mcp.tools import Call

#: The longest request line read (the tools take a few short arguments).
MAX_LINE = 4 * 1024 * 1024

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


class Connection:
    """The backend, opened once on a thread of its own (``open`` may take a second: the roots
    are resolved, adapters imported, a first index started); ``call`` waits for it."""

    def __init__(self, open_call: Callable[[], Call]) -> None:
        self._open = open_call
        self._thread: threading.Thread | None = None
        self._call: Call | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agtail-mcp-open", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            self._call = self._open()
        except BaseException as err:  # reported with every tool call, as its error
            self._error = err

    def wait(self) -> None:
        """Until the backend is open (if it began opening), so that the caller can close it."""
        if self._thread is not None:
            self._thread.join()

    def __call__(self, method: str, params: dict[str, Any]) -> Any:
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._call is None:
            raise self._error if self._error is not None else RuntimeError("the backend did not open")
        return self._call(method, params)


class StdioServer:
    def __init__(self, call: Connection, *, here: str | None, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.call = call
        self.here = here
        self.stdin = stdin
        self.stdout = stdout
        self._write_lock = threading.Lock()
        self._jobs: queue.Queue[tuple[Any, dict[str, Any]] | None] = queue.Queue()
        self._cancelled: set[Any] = set()
        self._cancel_lock = threading.Lock()
        self._gone = threading.Event()

    # -- output ---------------------------------------------------------------------------
    def send(self, doc: dict[str, Any]) -> None:
        try:
            data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate the client sent us, echoed: escape it
            data = json.dumps(doc, separators=(",", ":")).encode("ascii")
        with self._write_lock:
            if self._gone.is_set():
                return
            try:
                self.stdout.write(data + b"\n")
                self.stdout.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._gone.set()  # the client went away: nothing more to say

    def result(self, rid: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str, data: Any = None) -> None:
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.send({"jsonrpc": "2.0", "id": rid, "error": err})

    # -- input ----------------------------------------------------------------------------
    def serve(self) -> None:
        """Read requests until stdin closes; then finish the tool calls already asked."""
        worker = threading.Thread(target=self._work, name="agtail-mcp-tools", daemon=True)
        worker.start()
        try:
            while not self._gone.is_set():
                line = self.stdin.readline(MAX_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    self._skip_rest_of_line()
                    self.error(None, INVALID_REQUEST, f"a message longer than {MAX_LINE} bytes")
                    continue
                if line.strip():
                    self.handle_line(line)
        finally:
            self._jobs.put(None)
            worker.join()

    def _skip_rest_of_line(self) -> None:
        while True:
            chunk = self.stdin.readline(MAX_LINE)
            if not chunk or chunk.endswith(b"\n"):
                return

    def handle_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError as err:  # not JSON, or not UTF-8
            self.error(None, PARSE_ERROR, f"Parse error: {err}")
            return
        if isinstance(message, list):
            self.error(None, INVALID_REQUEST, "Invalid request: batches are not supported (one message per line)")
            return
        if not isinstance(message, dict):
            self.error(None, INVALID_REQUEST, "Invalid request: not a JSON-RPC message")
            return
        method = message.get("method")
        if method is None:
            return  # a response to a request of ours: we send none
        has_id = "id" in message
        rid = message.get("id")
        params = message.get("params")
        if not isinstance(method, str) or (has_id and not isinstance(rid, (str, int))):
            if has_id:
                self.error(rid if isinstance(rid, (str, int)) else None, INVALID_REQUEST, "Invalid request")
            return
        if not has_id:
            self.notification(method, params)
        else:
            self.request(rid, method, params)

    def notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict) and "requestId" in params:
            with self._cancel_lock:
                self._cancelled.add(params["requestId"])
        # notifications/initialized and any other: nothing to do

    def request(self, rid: Any, method: str, params: Any) -> None:
        if method == "initialize":
            self.result(rid, handlers.initialize_result(params))
            self.call.start()  # the backend opens while the client goes on
        elif method == "ping":
            self.result(rid, {})
        elif method == "tools/list":
            self.result(rid, {"tools": handlers.tool_list()})
        elif method == "tools/call":
            if not isinstance(params, dict) or not isinstance(params.get("name"), str):
                self.error(rid, INVALID_PARAMS, "Invalid params: tools/call needs a tool 'name'")
                return
            self.call.start()
            self._jobs.put((rid, params))
        else:
            self.error(rid, METHOD_NOT_FOUND, "Method not found", method)

    # -- tool calls -----------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            rid, params = job
            with self._cancel_lock:
                if rid in self._cancelled:
                    self._cancelled.discard(rid)
                    continue
            text, is_error = handlers.run_tool(self.call, params["name"], params.get("arguments"), self.here)
            self.result(rid, {"content": [{"type": "text", "text": text}], "isError": is_error})


def run_stdio(open_call: Callable[[], Call], *, here: str | None) -> Connection:
    """Serve MCP on this process's stdin/stdout until the client closes stdin. Returns the
    connection, so the caller closes the backend it opened (if it did)."""
    connection = Connection(open_call)
    server = StdioServer(connection, here=here, stdin=sys.stdin.buffer, stdout=sys.stdout.buffer)
    try:
        server.serve()
        connection.wait()
    except KeyboardInterrupt:
        print("agtail mcp: interrupted", file=sys.stderr)
    return connection
