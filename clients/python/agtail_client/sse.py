"""Server-Sent Events from agtaild: the frames, the open stream, and its parser.

A stream has a connection of its own, opened with http.client without a read timeout (the
daemon sends a keep-alive comment every 15 s). http.client is imported only here, when a
stream is opened: a plain call does not pay for it.
"""

from __future__ import annotations

import _socket

from agtail_client import cjson as json  # json.loads/dumps without the json package (agtail_client.cjson)

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `agtail` starts faster (tests/test_cli_startup.py)
    import http.client
    from collections.abc import Iterator
    from typing import Any


class SseEvent:
    """One Server-Sent Event: its ``event`` name, its ``data`` (parsed JSON when it is JSON)
    and its ``id`` (what to send back as Last-Event-ID to resume after it)."""

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


class EventStream:
    """An open SSE response: iterate for SseEvents; close() from any thread ends it.

    ``last_event_id`` is the id of the last frame read: open the stream again with it as
    ``last_event_id`` to miss nothing.
    """

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._resp = resp
        self.last_event_id: str | None = None

    def __iter__(self) -> Iterator[SseEvent]:
        import http.client  # already loaded: the stream was opened with it

        self._iterating = True
        try:
            for ev in parse_sse(self._resp):
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
                sock.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass
        if not self._iterating:
            self._conn.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stream_connection(
    socket_path: str | None, address: tuple[str, int] | None, *, tls: bool = False
) -> http.client.HTTPConnection:
    """An http.client connection without a read timeout, for a stream: http.client is imported
    here, so only a caller that follows pays for it."""
    import http.client

    if not socket_path:
        assert address is not None
        if tls:
            return http.client.HTTPSConnection(address[0], address[1], timeout=None)
        return http.client.HTTPConnection(address[0], address[1], timeout=None)
    path = socket_path

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            import socket

            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(path)
            except OSError:
                sock.close()
                raise
            self.sock = sock

    return UnixConnection("localhost", timeout=None)


def parse_sse(resp: Any) -> Iterator[SseEvent]:
    """Frames from anything with ``readline()`` returning bytes (an HTTP response)."""
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
