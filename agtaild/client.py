"""A zero-dependency client for agtaild: the standard library only, so it can be copied into
any script, editor plugin or CI job as a single file.

It speaks HTTP/1.1 over the unix socket (no token needed: file permissions protect it) or TCP
(with the token), keeps one connection alive, calls JSON-RPC methods, reads REST documents and
follows Server-Sent Events. Not thread-safe: one Client per thread.

Requests and answers go over a small HTTP/1.1 exchange on a plain socket; http.client is
imported only to follow a stream. (The `agtail` CLI imports this module on every command
against a daemon, and importing http.client would cost more than the command itself.)

    from agtaild.client import Client
    c = Client.discover("~/.local/share/agtail")          # socket first, then TCP
    c.call("search", {"q": "flaky test", "limit": 5})
    for ev in c.follow("claude-code", "2c4d36d7"):        # new events as they are written
        print(ev["seq"], ev["kind"], ev.get("text"))
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agtaild.http_wire import Connection

if TYPE_CHECKING:
    import http.client

STATE_FILE = "agtaild.json"


class ApiError(Exception):
    """An error answer: ``code`` is agtail's error code (bad_request, not_found, …)."""

    def __init__(self, code: str, message: str, status: int = 0, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.data = data


class Unreachable(ApiError):
    """Nobody answers at this address (the daemon is not running)."""

    def __init__(self, message: str) -> None:
        super().__init__("unreachable", message)


class SseEvent:
    """One Server-Sent Event: its ``event`` name, its ``data`` (parsed JSON when it is JSON)
    and its ``id``."""

    __slots__ = ("data", "event", "id")

    def __init__(self, event: str, data: Any, id: str | None) -> None:
        self.event = event
        self.data = data
        self.id = id

    def __repr__(self) -> str:
        return f"SseEvent(event={self.event!r}, data={self.data!r}, id={self.id!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SseEvent):
            return NotImplemented
        return (self.event, self.data, self.id) == (other.event, other.data, other.id)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as a dataclass)


class Client:
    def __init__(
        self, *, socket_path: str | None = None, url: str | None = None, token: str | None = None, timeout: float = 30.0
    ) -> None:
        if not socket_path and not url:
            raise ValueError("give socket_path or url")
        self.socket_path = socket_path
        self.url = url
        self.token = token
        self.timeout = timeout
        self._conn: Connection | None = None
        self._ids = itertools.count(1)
        #: The daemon's agtaild.json when found by discover().
        self.info: dict[str, Any] = {}

    # -- finding the daemon ---------------------------------------------------------------
    @classmethod
    def discover(cls, data_dir: str | os.PathLike[str], *, timeout: float = 30.0) -> Client | None:
        """The daemon serving ``data_dir`` (from its agtaild.json), socket first; None when
        none answers."""
        info = read_state(data_dir)
        if info is None:
            return None
        token = _read_token(Path(data_dir).expanduser())
        candidates = []
        if info.get("socket"):
            candidates.append(cls(socket_path=info["socket"], timeout=timeout))
        if info.get("url"):
            candidates.append(cls(url=info["url"], token=token, timeout=timeout))
        for client in candidates:
            try:
                client.health(timeout=2.0)
            except (ApiError, OSError, ValueError):
                client.close()
                continue
            client.info = info
            return client
        return None

    # -- requests -------------------------------------------------------------------------
    def _connection(self) -> Connection:
        if self._conn is None:
            if self.socket_path:
                self._conn = Connection(self.socket_path, "localhost", 80)
            else:
                host, port = _host_port(self.url)
                self._conn = Connection(None, host, port)
        return self._conn

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "agtail-client"}
        if self.token and not self.socket_path:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    def request(
        self, method: str, path: str, body: bytes | None = None, *, headers: dict[str, str] | None = None, timeout: float | None = None
    ) -> tuple[int, bytes]:
        """One HTTP exchange on the kept-alive connection (reconnecting once if it went stale)."""
        for attempt in (1, 2):
            conn = self._connection()
            try:
                return conn.exchange(method, path, body, self._headers(headers), self.timeout if timeout is None else timeout)
            except (ConnectionRefusedError, FileNotFoundError) as err:
                self.close()
                raise Unreachable(f"agtaild does not answer at {self.socket_path or self.url}: {err}") from None
            except (BrokenPipeError, ConnectionResetError):  # a kept-alive connection the daemon closed
                self.close()
                if attempt == 2:
                    raise
            except BaseException:
                self.close()  # whatever was half read, the next request starts on a new connection
                raise
        raise AssertionError("unreachable")

    def get(self, path: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> dict[str, Any]:
        """A REST document (``path`` under /api/v1, e.g. "/sessions"); raises ApiError."""
        status, raw = self.request("GET", "/api/v1" + path + _query(params), timeout=timeout)
        return _document(status, raw)

    def post(self, path: str, doc: Any = None) -> dict[str, Any]:
        """POST a JSON document to a REST path (under /api/v1); raises ApiError."""
        body = json.dumps(doc).encode() if doc is not None else b""
        status, raw = self.request("POST", "/api/v1" + path, body, headers={"Content-Type": "application/json"})
        return _document(status, raw)

    def login_url(self) -> str:
        """A one-time link that logs a browser into the viewer (valid 10 minutes, one use)."""
        path = self.post("/login-link")["path"]
        base = self.url or self.info.get("url")
        if not base:
            raise ApiError("unreachable", "this agtaild does not listen on TCP (--listen none): no browser can reach it")
        return str(base).rstrip("/") + path

    def health(self, *, timeout: float | None = None) -> dict[str, Any]:
        return self.get("/health", timeout=timeout)

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """One JSON-RPC call → its result; raises ApiError with agtail's error code."""
        req = {"jsonrpc": "2.0", "method": method, "params": params or {}, "id": next(self._ids)}
        status, raw = self.request("POST", "/rpc", json.dumps(req).encode(), headers={"Content-Type": "application/json"})
        if status != 200:
            _document(status, raw)  # raises the REST error (401, 403, 413)
        answer = json.loads(raw)
        if "error" in answer:
            err = answer["error"]
            data = err.get("data") or {}
            code = data.get("code") or {-32601: "not_found", -32602: "bad_request"}.get(err.get("code"), "error")
            raise ApiError(code, err.get("message", "error"), data.get("status", 0), data)
        return answer["result"]

    # -- live streams ---------------------------------------------------------------------
    def stream(self, path: str, params: dict[str, Any] | None = None, *, last_event_id: str | None = None) -> EventStream:
        """Server-Sent Events from ``path`` (under /api/v1), on a connection of its own.
        Iterate it; ``close()`` (from any thread) ends it."""
        conn = _http_connection(self.socket_path, self.url)  # no read timeout: the server sends keep-alives
        headers = self._headers({"Accept": "text/event-stream"})
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        try:
            conn.request("GET", "/api/v1" + path + _query(params), headers=headers)
            resp = conn.getresponse()
        except (ConnectionRefusedError, FileNotFoundError) as err:
            conn.close()
            raise Unreachable(f"agtaild does not answer: {err}") from None
        if resp.status != 200:
            body = resp.read()
            conn.close()
            _document(resp.status, body)
        return EventStream(conn, resp)

    def follow(self, agent: str, session_id: str, *, after_seq: int | None = None) -> Iterator[dict[str, Any]]:
        """New events of one session as they are written. Ends when the session is removed;
        raises Unreachable when the daemon goes away (resume with the last seq seen as
        ``after_seq``)."""
        params = {"after_seq": after_seq} if after_seq is not None else None
        path = f"/sessions/{urllib.parse.quote(agent, safe='')}/{urllib.parse.quote(session_id, safe='')}/follow"
        with self.stream(path, params) as events:
            for ev in events:
                if ev.event == "event":
                    yield ev.data
                elif ev.event == "removed":
                    return
        raise Unreachable("agtaild ended the stream (it is stopping or restarting)")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class EventStream:
    """An open SSE response: iterate for SseEvents; close() from any thread ends it."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._resp = resp
        self.last_event_id: str | None = None

    def __iter__(self) -> Iterator[SseEvent]:
        import http.client  # already loaded: the stream was opened with it

        self._iterating = True
        try:
            for ev in _parse_sse(self._resp):
                if ev.id is not None:
                    self.last_event_id = ev.id
                yield ev
        except (OSError, ValueError, http.client.HTTPException):
            return  # closed under us, or the daemon went away: the stream is over
        finally:
            self._iterating = False
            self._conn.close()

    _iterating = False

    def close(self) -> None:
        """End the stream. From another thread this only shuts the socket down, which wakes
        the reader; the reader closes the connection itself (closing it here would race)."""
        sock = getattr(self._conn, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if not self._iterating:
            self._conn.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _host_port(url: str | None) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url or "")
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"expected an http:// URL, got {url!r}")
    return parts.hostname, parts.port or 80


def _http_connection(socket_path: str | None, url: str | None) -> http.client.HTTPConnection:
    """An http.client connection without a read timeout, for a stream: http.client is imported
    here, so only a command that follows pays for it."""
    import http.client

    if not socket_path:
        host, port = _host_port(url)
        return http.client.HTTPConnection(host, port, timeout=None)
    path = socket_path

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(path)
            except OSError:
                sock.close()
                raise
            self.sock = sock

    return UnixConnection("localhost", timeout=None)


def _parse_sse(resp: http.client.HTTPResponse) -> Iterator[SseEvent]:
    event, last_id = "message", None
    data: list[str] = []
    while True:
        line = resp.readline()
        if not line:
            return
        text = line.decode("utf-8").rstrip("\r\n")
        if not text:
            if data:
                payload = "\n".join(data)
                try:
                    parsed: Any = json.loads(payload)
                except ValueError:
                    parsed = payload
                yield SseEvent(event, parsed, last_id)
            event, data = "message", []
            continue
        if text.startswith(":"):
            continue
        name, _, value = text.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            last_id = value


def _query(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    items = {k: ("true" if v is True else "false" if v is False else v) for k, v in params.items() if v is not None}
    return "?" + urllib.parse.urlencode(items) if items else ""


def _document(status: int, raw: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(raw) if raw else {}
    except ValueError:
        raise ApiError("error", f"HTTP {status}: not JSON: {raw[:200]!r}", status) from None
    if status >= 400 or (isinstance(doc, dict) and doc.get("ok") is False):
        err = doc.get("error", {}) if isinstance(doc, dict) else {}
        raise ApiError(err.get("code", "error"), err.get("message", f"HTTP {status}"), status)
    return doc if isinstance(doc, dict) else {"result": doc}


def read_state(data_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A daemon's agtaild.json (None when there is none, or it is unreadable)."""
    try:
        doc = json.loads((Path(data_dir).expanduser() / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _read_token(data_dir: Path) -> str | None:
    try:
        return (data_dir / "token").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
