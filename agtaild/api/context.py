"""What every API handler shares: the service, the thread pool, the change hub, the security.

The service is synchronous SQLite, so every call runs in a pool of reader threads (the
service keeps one read connection per thread) and its JSON is encoded there too: a large
events page never stalls the event loop. Index writes never go through this pool; they belong
to the one writer task (see agtaild/daemon/scheduler.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
from aiohttp import web

from agtaild.api.answers import Answers, answer_key
from agtaild.api.hub import ChangeHub
from agtaild.api.security import Security
from agtaild.errors import AgtailError, Forbidden, NotFound, UsageError, error_body

log = logging.getLogger("agtaild.api")

_encoder = msgspec.json.Encoder()


class ServiceLike(Protocol):
    """The part of agtaild.query.service.Service the API uses (tests pass a small fake)."""

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...


@dataclass
class ApiContext:
    service: ServiceLike
    methods: Collection[str]
    hub: ChangeHub
    security: Security
    executor: ThreadPoolExecutor
    #: Runs an index update through the writer task (index.update); None: not available.
    update: Callable[[bool], Awaitable[dict[str, Any]]] | None = None
    #: Extra /health details for trusted callers (watch mode, index state, …).
    health: Callable[[], dict[str, Any]] = field(default=lambda: {})
    version: str = ""
    started: float = field(default_factory=time.time)
    #: Encoded stats answers, while the index and the prices are unchanged.
    answers: Answers = field(default_factory=Answers)

    def has_method(self, method: str) -> bool:
        return method in self.methods

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One service call on a reader thread → its result document."""
        self._check_method(method)
        loop = asyncio.get_running_loop()
        fn = self._revealing(method, params) or self.service.call
        # The caller's context goes along (agtaild.api.caller: the team server answers by it).
        return await loop.run_in_executor(self.executor, contextvars.copy_context().run, fn, method, params)

    def _revealing(
        self, method: str, params: dict[str, Any]
    ) -> Callable[[str, dict[str, Any]], dict[str, Any]] | None:
        """``reveal=true`` taken out of ``params``: None when not asked; the service's unmasked
        call when the peer may reveal (logged); Forbidden otherwise (agtaild.api.reveal)."""
        from agtaild.api import reveal

        who = reveal.take(params)
        if who is None:
            return None
        call = self.service.call
        try:
            takes = "reveal" in inspect.signature(call).parameters
        except (TypeError, ValueError):
            takes = False
        if not takes:
            raise Forbidden("this server holds only masked text: there is nothing to reveal")
        config = getattr(self.service, "config", None)
        reveal.record(getattr(config, "data_dir", None), who, method, params)
        return lambda m, p: call(m, p, reveal=True)  # type: ignore[call-arg]

    async def call_encoded(
        self, method: str, params: dict[str, Any], *, ok: bool = True, fresh: bool = False
    ) -> bytes:
        """One service call on a reader thread, encoded there (with ``"ok": true`` for REST).
        A stats answer comes from ``answers`` while the service's ``data_version()`` is unchanged
        (agtaild/api/answers.py); ``fresh``: computed again all the same (and kept)."""
        self._check_method(method)
        revealing = self._revealing(method, params)
        version: Callable[[], Any] | None = getattr(self.service, "data_version", None)
        key = answer_key(method, ok, params) if version is not None and revealing is None else None

        def encoded(doc: dict[str, Any]) -> bytes:
            return ok_json(doc) if ok else _encoder.encode(doc)

        def run() -> bytes:
            if revealing is not None:
                return encoded(revealing(method, params))  # never kept: the next caller may not reveal
            if key is None or version is None:
                return encoded(self.service.call(method, params))
            token = version()  # before the answer: a change meanwhile makes a new token
            body = None if fresh else self.answers.get(key, token)
            if body is None:
                body = encoded(self.service.call(method, params))
                self.answers.put(key, token, body)
            return body

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, contextvars.copy_context().run, run)

    async def run(self, fn: Callable[[], Any]) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, contextvars.copy_context().run, fn)

    def _check_method(self, method: str) -> None:
        if method not in self.methods:
            raise NotFound(f"this daemon does not offer {method!r} (it needs a newer agtaild)")


CTX = web.AppKey("agtail", ApiContext)


def ok_json(doc: Any) -> bytes:
    """The success shape: ``{"ok": true, …the document…}``. A new top-level dict (a few keys)
    costs less than splicing the encoded body, which copied it twice (0.7 ms of a 0.5 MB
    stats answer)."""
    if isinstance(doc, dict):
        return _encoder.encode({"ok": True, **doc})
    body = _encoder.encode(doc)  # e.g. a struct: its fields after "ok"
    if body == b"{}":
        return b'{"ok":true}'
    if body[:1] == b"{":
        return b'{"ok":true,' + body[1:]
    return _encoder.encode({"ok": True, "result": doc})


async def json_object_body(request: web.Request, shape: str) -> dict[str, Any]:
    """A POST's JSON object (an empty body: {}); UsageError (400) for anything else, ``shape``
    saying what the body should be."""
    raw = await request.read()
    try:
        body = msgspec.json.decode(raw) if raw.strip() else {}
    except msgspec.DecodeError as err:
        raise UsageError(f"the body is not JSON: {err}") from None
    if not isinstance(body, dict):
        raise UsageError(f"the body must be {shape}")
    return body


def json_response(body: bytes, status: int = 200) -> web.Response:
    return web.Response(body=body, status=status, content_type="application/json")


def error_response(err: AgtailError) -> web.Response:
    return json_response(_encoder.encode(error_body(err)), status=err.http_status)


def error_shape(status: int, code: str, message: str) -> web.Response:
    body = {"ok": False, "error": {"code": code, "message": message}, "status": status}
    return json_response(_encoder.encode(body), status=status)


def encode(doc: Any) -> bytes:
    return _encoder.encode(doc)
