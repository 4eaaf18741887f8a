"""How the client reaches agtaild: one kept-alive connection (unix socket, or TCP with the
token), JSON-RPC calls, REST documents and Server-Sent Events.

Requests and answers go over the small HTTP/1.1 exchange of ``wire`` on a plain socket;
http.client is imported only to follow a stream. (The `agtail` CLI imports this module on every
command against a daemon, and importing http.client would cost more than the command itself.)
Not thread-safe: one client per thread.

Plain ``http://`` is accepted only to a loopback host: anywhere else the token and every
transcript would cross the network in clear, so it is refused (:class:`InsecureServer`)
unless the caller opts in (``insecure=True``, or ``AGTAIL_INSECURE=1`` in the environment),
and then a warning says so (:class:`InsecureConnectionWarning`, shown on stderr by default).
Every request has a total deadline (``timeout``): a server that trickles its answer a byte at
a time does not hold the caller past it.
"""

from __future__ import annotations

import itertools
import os

from agtail_client import cjson as json  # json.loads/dumps without the json package (agtail_client.cjson)
from agtail_client.discovery import read_state, read_token, resolve_data_dir_name
from agtail_client.errors import ApiError, Unreachable, error_for, rpc_error
from agtail_client.sse import EventStream, stream_connection
from agtail_client.wire import Connection, urlencode

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any, BinaryIO, TypeVar

    T = TypeVar("T", bound="Transport")

API = "/api/v1"


#: Host names that always mean this machine (besides 127.0.0.0/8 and ::1).
LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback", "localhost.localdomain"})


class InsecureServer(ValueError):
    """An ``http://`` URL to a host that is not loopback, without the opt-in."""


class InsecureConnectionWarning(UserWarning):
    """An ``http://`` URL to a host that is not loopback, used because the caller opted in."""


def is_loopback(host: str) -> bool:
    """Does ``host`` (a name or an address, as in a URL) always mean this machine?"""
    import ipaddress

    host = host.strip("[]").partition("%")[0].lower().rstrip(".")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def insecure_allowed(insecure: bool | None = None) -> bool:
    """``insecure`` when given, else whether ``AGTAIL_INSECURE`` is set to 1 (or true/yes)."""
    if insecure is not None:
        return insecure
    return os.environ.get("AGTAIL_INSECURE", "").strip().lower() in ("1", "true", "yes")


def check_url(url: str, *, insecure: bool | None = None) -> str | None:
    """Is ``url`` safe to send a token to? None when it is (https, or http to loopback); the
    warning to show when it is not but the caller opted in; InsecureServer otherwise (and
    ValueError when it is no http(s) URL at all)."""
    host, port = host_port(url)
    if is_tls(url) or is_loopback(host):
        return None
    where = f"{host}:{port}"
    if not insecure_allowed(insecure):
        raise InsecureServer(
            f"{url} is plain http to {where}, which is not this machine: the token and the transcripts would "
            "cross the network in clear. Use https:// (a TLS proxy in front of agtaild, docs/team.md) or an ssh "
            "tunnel to 127.0.0.1; or, knowing that, pass --insecure (AGTAIL_INSECURE=1)"
        )
    return f"talking to {url} over plain http: the token and the transcripts cross the network to {where} in clear"


class Transport:
    """The wire half of :class:`agtail_client.Client`: addresses, requests, errors."""

    def __init__(
        self,
        *,
        socket_path: str | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        insecure: bool | None = None,
    ) -> None:
        """``timeout``: the most any one request may take, whole (connect, send, answer);
        ``insecure``: allow plain http:// to a host that is not loopback (default: only when
        ``AGTAIL_INSECURE=1``), with an InsecureConnectionWarning."""
        if not socket_path and not url:
            raise ValueError("give socket_path or url")
        if not socket_path:
            warning = check_url(
                str(url), insecure=insecure
            )  # a bad URL is an error now, not at the first call
            if warning is not None:
                import warnings

                warnings.warn(warning, InsecureConnectionWarning, stacklevel=2)
        self.socket_path = socket_path
        self.url = url
        self.token = token
        self.timeout = timeout
        self._conn: Connection | None = None
        self._ids = itertools.count(1)
        #: The daemon's agtaild.json when found by discover().
        self.info: dict[str, Any] = {}
        self._data_dir: str | None = None

    @property
    def data_dir(self) -> Path | None:
        """The data dir discover() found it through (to find it again after a restart)."""
        if self._data_dir is None:
            return None
        from pathlib import Path

        return Path(self._data_dir)

    # -- finding the daemon ---------------------------------------------------------------
    @classmethod
    def discover(
        cls: type[T], data_dir: str | os.PathLike[str] | None = None, *, timeout: float = 30.0
    ) -> T | None:
        """The daemon serving ``data_dir`` (default: as the CLI finds it), from its
        agtaild.json: its unix socket first, then TCP with the token file. None when none
        answers."""
        directory = resolve_data_dir_name(data_dir)
        info = read_state(directory)
        if info is None:
            return None

        def candidates() -> Iterator[T]:  # made one at a time: TCP only when the socket does not answer
            if info.get("socket"):
                yield cls(socket_path=str(info["socket"]), timeout=timeout)
            if info.get("url"):
                try:
                    yield cls(url=str(info["url"]), token=read_token(directory), timeout=timeout)
                except ValueError:
                    pass  # not an http:// URL: nothing to try there

        for client in candidates():
            try:
                client.health(timeout=2.0)
            except (ApiError, OSError, ValueError):
                client.close()
                continue
            client.info = info
            client._data_dir = directory
            return client
        return None

    def rediscover(self) -> bool:
        """Find the daemon again through the data dir it was found by (a restarted daemon may
        listen on another TCP port); False when none answers (or it was not discovered)."""
        if self._data_dir is None:
            return False
        fresh = type(self).discover(self._data_dir, timeout=self.timeout)
        if fresh is None:
            return False
        self.close()
        self.socket_path, self.url, self.token, self.info = (
            fresh.socket_path,
            fresh.url,
            fresh.token,
            fresh.info,
        )
        fresh.close()
        return True

    @classmethod
    def connect(cls: type[T], data_dir: str | os.PathLike[str] | None = None, *, timeout: float = 30.0) -> T:
        """Like :meth:`discover`, but raises :class:`Unreachable` (saying where it looked)
        when no daemon answers."""
        client = cls.discover(data_dir, timeout=timeout)
        if client is None:
            where = resolve_data_dir_name(data_dir)
            raise Unreachable(
                f"no agtaild answers for the data dir {where} (is it running? `agtaild`, or `agtail service install`)"
            )
        return client

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------------
    def _connection(self) -> Connection:
        if self._conn is None:
            if self.socket_path:
                self._conn = Connection(self.socket_path, "localhost", 80)
            else:
                host, port = host_port(self.url)
                self._conn = Connection(None, host, port, tls=is_tls(self.url))
        return self._conn

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "agtail-client"}
        if self.token and not self.socket_path:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        meanwhile: Callable[[], object] | None = None,
    ) -> tuple[int, bytes]:
        """One HTTP exchange on the kept-alive connection (reconnecting once if it went stale).
        ``meanwhile``: run once, after the request is sent and before its answer is read."""
        todo = [meanwhile] if meanwhile is not None else []

        def once() -> None:
            while todo:
                todo.pop()()

        for attempt in (1, 2):
            conn = self._connection()
            try:
                return conn.exchange(
                    method,
                    path,
                    body,
                    self._headers(headers),
                    self.timeout if timeout is None else timeout,
                    once if todo else None,
                )
            except (ConnectionRefusedError, FileNotFoundError) as err:
                self.close()
                raise Unreachable(
                    f"agtaild does not answer at {self.socket_path or self.url}: {err}"
                ) from None
            except (BrokenPipeError, ConnectionResetError):  # a kept-alive connection the daemon closed
                self.close()
                if attempt == 2:
                    raise
            except BaseException:
                self.close()  # whatever was half read, the next request starts on a new connection
                raise
        raise AssertionError("unreachable")

    def get(
        self, path: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """A REST document (``path`` under /api/v1, e.g. "/sessions"); raises ApiError."""
        status, raw = self.request("GET", API + path + query(params), timeout=timeout)
        return document(status, raw)

    def post(self, path: str, doc: Any = None) -> dict[str, Any]:
        """POST a JSON document to a REST path (under /api/v1); raises ApiError."""
        body = json.dumps(doc).encode() if doc is not None else b""
        status, raw = self.request("POST", API + path, body, headers={"Content-Type": "application/json"})
        return document(status, raw)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        meanwhile: Callable[[], object] | None = None,
    ) -> Any:
        """One JSON-RPC call → its result; raises ApiError (a subclass per error code).
        ``meanwhile``: the caller's own work, run while the daemon answers (see ``request``)."""
        req = {"jsonrpc": "2.0", "method": method, "params": params or {}, "id": next(self._ids)}
        status, raw = self.request(
            "POST",
            "/rpc",
            json.dumps(req).encode(),
            headers={"Content-Type": "application/json"},
            meanwhile=meanwhile,
        )
        if status != 200:
            document(status, raw)  # raises the REST error (401, 403, 413)
        try:
            answer = json.loads(raw)
        except ValueError:
            raise ApiError("error", f"JSON-RPC answer is not JSON: {raw[:200]!r}", status) from None
        if not isinstance(answer, dict):
            raise ApiError("error", f"JSON-RPC answer is not an object: {raw[:200]!r}", status)
        if "error" in answer:
            raise rpc_error(answer["error"])
        return answer.get("result")

    def health(self, *, timeout: float | None = None) -> dict[str, Any]:
        """``GET /health``: the daemon's version, and (to trusted callers) its state."""
        return self.get("/health", timeout=timeout)

    def login_url(self) -> str:
        """A one-time link that logs a browser into the viewer (valid 10 minutes, one use)."""
        path = self.post("/login-link")["path"]
        base = self.url or self.info.get("url")
        if not base:
            raise ApiError(
                "unreachable", "this agtaild does not listen on TCP (--listen none): no browser can reach it"
            )
        return str(base).rstrip("/") + path

    def download(
        self, path: str, params: dict[str, Any] | None, out: BinaryIO, *, timeout: float | None = None
    ) -> dict[str, str]:
        """GET ``path`` (under /api/v1) and copy its body into ``out`` as it arrives, on a
        connection of its own (a document of any size, e.g. a session's export, is never held
        whole); returns the response's headers. Raises ApiError on an error status, and
        ``OSError`` (http.client's ``IncompleteRead`` among them) when the body is cut short."""
        import http.client

        conn = stream_connection(
            self.socket_path, None if self.socket_path else host_port(self.url), tls=is_tls(self.url)
        )
        conn.timeout = self.timeout if timeout is None else timeout
        try:
            try:
                conn.request("GET", API + path + query(params), headers=self._headers({"Accept": "*/*"}))
                resp = conn.getresponse()
            except (ConnectionRefusedError, FileNotFoundError) as err:
                raise Unreachable(
                    f"agtaild does not answer at {self.socket_path or self.url}: {err}"
                ) from None
            if resp.status != 200:
                document(resp.status, resp.read())
            while chunk := resp.read1(1 << 20):
                out.write(chunk)
            return {k: v for k, v in resp.getheaders()}
        except http.client.IncompleteRead as err:
            raise ConnectionResetError(f"the download from agtaild was cut short ({err})") from None
        finally:
            conn.close()

    # -- live streams ---------------------------------------------------------------------
    def stream(
        self, path: str, params: dict[str, Any] | None = None, *, last_event_id: str | None = None
    ) -> EventStream:
        """Server-Sent Events from ``path`` (under /api/v1), on a connection of its own.
        Iterate it; ``close()`` (from any thread) ends it."""
        conn = stream_connection(
            self.socket_path, None if self.socket_path else host_port(self.url), tls=is_tls(self.url)
        )
        headers = self._headers({"Accept": "text/event-stream"})
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        try:
            conn.request("GET", API + path + query(params), headers=headers)
            resp = conn.getresponse()
        except (ConnectionRefusedError, FileNotFoundError) as err:
            conn.close()
            raise Unreachable(f"agtaild does not answer at {self.socket_path or self.url}: {err}") from None
        if resp.status != 200:
            body = resp.read()
            conn.close()
            document(resp.status, body)
        return EventStream(conn, resp)

    def close(self) -> None:
        """Close the kept-alive connection (the next call opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def host_port(url: str | None) -> tuple[str, int]:
    import urllib.parse  # only for TCP: the unix socket needs no URL

    parts = urllib.parse.urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http:// or https:// URL, got {url!r}")
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def is_tls(url: str | None) -> bool:
    """A daemon behind a TLS proxy (a team server): https:// URLs, verified as browsers do."""
    return (url or "").lower().startswith("https://")


def query(params: dict[str, Any] | None) -> str:
    """``?a=1&b=true`` for the parameters that are not None (booleans as true/false)."""
    if not params:
        return ""
    items = {
        k: ("true" if v is True else "false" if v is False else v) for k, v in params.items() if v is not None
    }
    return "?" + urlencode(items) if items else ""


def document(status: int, raw: bytes) -> dict[str, Any]:
    """A REST answer's document, or its error raised."""
    try:
        doc = json.loads(raw) if raw else {}
    except ValueError:
        raise ApiError("error", f"HTTP {status}: not JSON: {raw[:200]!r}", status) from None
    if status >= 400 or (isinstance(doc, dict) and doc.get("ok") is False):
        err = doc.get("error", {}) if isinstance(doc, dict) else {}
        err = err if isinstance(err, dict) else {}
        raise error_for(str(err.get("code", "error")), str(err.get("message", f"HTTP {status}")), status)
    return doc if isinstance(doc, dict) else {"result": doc}
