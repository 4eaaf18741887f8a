"""HTTP/1.1 over one socket, with the socket module alone, for every call to agtaild.

Importing http.client (and the email package under it) takes longer than a CLI command
against a running daemon takes to run, so plain request/response calls go through here;
only following an SSE stream (`agtail tail -f`) uses http.client.

Each exchange has one deadline for the whole of it: a socket timeout alone bounds each read,
and a server that sends one byte a second would keep `agtail list` waiting for ever.
"""

from __future__ import annotations

import _socket  # the socket module's core: `socket` itself builds four enums at import (~15 % of a command)
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

#: Limits on what the daemon may answer, as http.client has them.
_MAXLINE = 65536
_MAXHEADERS = 100


class Connection:
    """One kept-alive HTTP/1.1 connection to agtaild (its unix socket, or TCP), written with
    the socket module alone: importing http.client (and the email package under it) takes
    longer than a CLI command against a running daemon takes to run.

    It sends what http.client sent (Host, Accept-Encoding: identity, Content-Length, then
    the caller's headers) and reads an answer by Content-Length, chunked, or up to the close.
    The daemon closing a kept-alive connection before answering is a ConnectionResetError (the
    caller retries once, as with http.client's RemoteDisconnected); anything else that is not
    HTTP is a ConnectionError.
    """

    def __init__(self, socket_path: str | None, host: str, port: int, *, tls: bool = False) -> None:
        self.socket_path = socket_path
        self.tls = tls
        self.address = (host, port)
        self.host_header = _host_header(host, port)
        self.sock: socket.socket | _socket.socket | None = None
        self._file: _DeadlineReader | None = None

    def connect(self, timeout: float | None) -> None:
        if self.socket_path:
            sock = unix_socket()
            sock.settimeout(timeout)
            try:
                sock.connect(self.socket_path)
            except OSError:
                sock.close()
                raise
        else:
            import socket

            sock = socket.create_connection(self.address, timeout)
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            if self.tls:  # imported only for https:// (a team server behind a TLS proxy)
                import ssl

                try:
                    sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.address[0])
                except (OSError, ssl.SSLError):
                    sock.close()
                    raise
        self.sock = sock
        self._file = _DeadlineReader(sock)

    def exchange(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: float | None,
        meanwhile: Callable[[], object] | None = None,
    ) -> tuple[int, bytes]:
        """Send one request, read its answer → (status, body), all within ``timeout`` seconds
        (TimeoutError past it; None: no deadline). ``meanwhile`` runs once the request is
        sent, before its answer is read: work of the caller's that the daemon's answer does
        not need (the CLI imports what it prints with while the daemon computes)."""
        head = _request_head(method, path, body, headers, self.host_header)
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.sock is None:
            self.connect(timeout)
        assert self.sock is not None and self._file is not None
        self._file.deadline, self._file.timeout = deadline, timeout
        self._file.arm()  # each request its own (a kept-alive socket keeps the last one)
        self.sock.sendall(head + body if body else head)
        if meanwhile is not None:
            meanwhile()
        fp = self._file
        while True:
            line = fp.readline(_MAXLINE + 1)
            if not line:
                raise ConnectionResetError("agtaild closed the connection without answering")
            version, status = _status_line(line)
            fields = _header_fields(fp)
            if status != 100:  # 100 Continue: the real answer follows
                break
        conn = fields.get("connection", "").lower()
        close = "close" in conn or (version == "HTTP/1.0" and "keep-alive" not in conn)
        length = fields.get("content-length", "")
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            data = b""
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            data = _read_chunked(fp)
        elif _is_number(length):
            data = fp.read(int(length))
            if len(data) < int(length):
                raise ConnectionError(
                    f"agtaild closed the connection mid-answer ({len(data)} of {length} bytes)"
                )
        else:
            data, close = fp.read(), True
        if close:
            self.close()
        return status, data

    def close(self) -> None:
        file, sock = self._file, self.sock
        self._file = self.sock = None
        if file is not None:
            file.close()
        if sock is not None:
            sock.close()


class _DeadlineReader:
    """``sock.makefile("rb")`` for what the exchange reads (readline, read), with a deadline
    for the whole answer: every wait on the socket gets only the time left."""

    def __init__(self, sock: socket.socket | _socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.deadline: float | None = None
        self.timeout: float | None = None

    def arm(self) -> None:
        """Give the socket the time left (TimeoutError when there is none)."""
        if self.deadline is None:
            self.sock.settimeout(None)
            return
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no whole answer within {self.timeout:g} s")
        self.sock.settimeout(left)

    def _fill(self) -> bool:
        """Read more into the buffer; False at the end of the stream."""
        self.arm()
        try:
            chunk = self.sock.recv(65536)
        except TimeoutError:
            raise TimeoutError(f"no whole answer within {self.timeout:g} s") from None
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def readline(self, limit: int = -1) -> bytes:
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0 and (limit < 0 or end < limit):
                return self._take(end + 1)
            if 0 <= limit <= len(self.buffer):
                return self._take(limit)
            if not self._fill():
                return self._take(len(self.buffer))

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self.buffer) < size:
            if not self._fill():
                break
        return self._take(len(self.buffer) if size < 0 else min(size, len(self.buffer)))

    def _take(self, n: int) -> bytes:
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    def close(self) -> None:
        self.buffer.clear()


def _host_header(host: str, port: int) -> str:
    """The Host header http.client sends for (host, port)."""
    try:
        name = host.encode("ascii").decode("ascii")
    except UnicodeEncodeError:
        name = host.encode("idna").decode("ascii")
    if ":" in name:  # an IPv6 address: bracketed, without its zone
        name = "[" + name.partition("%")[0] + "]"
    return name if port == 80 else f"{name}:{port}"


def _request_head(method: str, path: str, body: bytes | None, headers: dict[str, str], host: str) -> bytes:
    """The request line and headers, as http.client wrote them (ValueError where it refused)."""
    if any(ch <= " " or ch == "\x7f" for ch in method + path):
        raise ValueError(f"cannot send {method} {path!r}: spaces or control characters")
    given = {name.lower() for name in headers}
    fields = []
    if "host" not in given:
        fields.append(f"Host: {host}")
    if "accept-encoding" not in given:
        fields.append("Accept-Encoding: identity")
    if "content-length" not in given and (body is not None or method in ("POST", "PUT", "PATCH")):
        fields.append(f"Content-Length: {len(body or b'')}")
    for name, value in headers.items():
        if not name or any(ch in "\r\n: " for ch in name) or "\r" in value or "\n" in value:
            raise ValueError(f"invalid HTTP header {name!r}: {value!r}")
        fields.append(f"{name}: {value}")
    return (
        f"{method} {path} HTTP/1.1\r\n".encode("ascii")
        + "".join(f + "\r\n" for f in fields).encode("latin-1")
        + b"\r\n"
    )


def _status_line(line: bytes) -> tuple[str, int]:
    """b"HTTP/1.1 200 OK\\r\\n" → ("HTTP/1.1", 200)."""
    parts = line.decode("latin-1").split(None, 2)
    if len(line) > _MAXLINE or len(parts) < 2 or not parts[0].startswith("HTTP/") or not _is_number(parts[1]):
        raise ConnectionError(f"agtaild answered something that is not HTTP: {line[:100]!r}")
    return parts[0], int(parts[1])


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _header_fields(fp: _DeadlineReader) -> dict[str, str]:
    fields: dict[str, str] = {}
    for _ in range(_MAXHEADERS + 1):
        line = fp.readline(_MAXLINE + 1)
        if len(line) > _MAXLINE:
            raise ConnectionError("agtaild answered a header line that is too long")
        if line in (b"\r\n", b"\n", b""):
            return fields
        name, _, value = line.decode("latin-1").partition(":")
        fields[name.strip().lower()] = value.strip()
    raise ConnectionError(f"agtaild answered more than {_MAXHEADERS} headers")


def _read_chunked(fp: _DeadlineReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        line = fp.readline(_MAXLINE + 1)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise ConnectionError(
                f"agtaild closed the connection mid-answer (chunk size {line[:40]!r})"
            ) from None
        if size == 0:
            break
        chunk = fp.read(size)
        if len(chunk) < size or fp.read(2) != b"\r\n":
            raise ConnectionError("agtaild closed the connection mid-answer (a chunk is cut short)")
        chunks.append(chunk)
    _header_fields(fp)  # trailers, if any
    return b"".join(chunks)


def unix_socket() -> _socket.socket:
    """A stream socket on the unix domain, from ``_socket`` (what ``socket.socket`` wraps): the
    calls made on it here (settimeout, connect, sendall, recv, shutdown, close) are the same."""
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


#: What :func:`quote` keeps as it is (RFC 3986's unreserved characters, as urllib.parse).
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def quote(text: str, safe: str = "/", *, plus: bool = False) -> str:
    """``urllib.parse.quote`` (``quote_plus`` with ``plus``), without importing urllib.parse
    (it brings ipaddress: ~10 % of a command against the daemon): UTF-8, every byte outside
    the unreserved set and ``safe`` as %XX."""
    keep = _UNRESERVED | frozenset(safe.encode("ascii"))
    out = []
    for byte in text.encode("utf-8"):
        if byte in keep:
            out.append(chr(byte))
        elif plus and byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def urlencode(items: dict[str, object]) -> str:
    """``urllib.parse.urlencode(items)`` for a dict of scalars (each value as ``str``)."""
    return "&".join(
        f"{quote(str(k), '', plus=True)}={quote(str(v), '', plus=True)}" for k, v in items.items()
    )
