"""A zero-dependency client for agtaild: the standard library only, so it can be copied into
any script, editor plugin or CI job as a single file.

It speaks HTTP/1.1 over the unix socket (no token needed: file permissions protect it) or TCP
(with the token), keeps one connection alive, calls JSON-RPC methods, reads REST documents and
follows Server-Sent Events. Not thread-safe: one Client per thread.

    from agtaild.client import Client
    c = Client.discover("~/.local/share/agtail")          # socket first, then TCP
    c.call("search", {"q": "flaky test", "limit": 5})
    for ev in c.follow("claude-code", "2c4d36d7"):        # new events as they are written
        print(ev["seq"], ev["kind"], ev.get("text"))
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import socket
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass
class SseEvent:
    event: str
    data: Any
    id: str | None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


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
        self._conn: http.client.HTTPConnection | None = None
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
    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        if self._conn is None:
            if self.socket_path:
                self._conn = _UnixConnection(self.socket_path, timeout)
            else:
                parts = urllib.parse.urlsplit(self.url or "")
                if parts.scheme != "http" or not parts.hostname:
                    raise ValueError(f"expected an http:// URL, got {self.url!r}")
                self._conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
        self._conn.timeout = timeout
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
            conn = self._connection(self.timeout if timeout is None else timeout)
            try:
                conn.request(method, path, body=body, headers=self._headers(headers))
                resp = conn.getresponse()
                return resp.status, resp.read()
            except (ConnectionRefusedError, FileNotFoundError) as err:
                self.close()
                raise Unreachable(f"agtaild does not answer at {self.socket_path or self.url}: {err}") from None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2:
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
        stream_client = Client(socket_path=self.socket_path, url=self.url, token=self.token, timeout=self.timeout)
        conn = stream_client._connection(None)  # no read timeout: the server sends keep-alives
        headers = self._headers({"Accept": "text/event-stream"})
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        try:
            conn.request("GET", "/api/v1" + path + _query(params), headers=headers)
            resp = conn.getresponse()
        except (ConnectionRefusedError, FileNotFoundError) as err:
            stream_client.close()
            raise Unreachable(f"agtaild does not answer: {err}") from None
        if resp.status != 200:
            body = resp.read()
            stream_client.close()
            _document(resp.status, body)
        return EventStream(stream_client, resp)

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

    def __init__(self, client: Client, resp: http.client.HTTPResponse) -> None:
        self._client = client
        self._resp = resp
        self.last_event_id: str | None = None

    def __iter__(self) -> Iterator[SseEvent]:
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
            self._client.close()

    _iterating = False

    def close(self) -> None:
        """End the stream. From another thread this only shuts the socket down, which wakes
        the reader; the reader closes the connection itself (closing it here would race)."""
        sock = getattr(self._client._conn, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if not self._iterating:
            self._client.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
