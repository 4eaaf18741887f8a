"""``GET /api/v1/usage/live/stream``: the live usage document as Server-Sent Events.

Event ``usage`` carries the whole ``usage.live`` answer (id = its ``now``). A new one is sent
when the index changes (the change hub wakes the stream; changes closer together than
``MIN_GAP`` seconds make one answer) and at least every ``interval`` seconds when nothing
changes, because burn rates and reset times move with the clock alone. `agtail top` and the
viewer's live page read it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

from agtaild.api.context import CTX
from agtaild.api.params import METHOD_TABLE, Method, Param
from agtaild.api.rest import API
from agtaild.api.sse import _frame, _open, _wait

PATH = f"{API}/usage/live/stream"
#: Changes closer together than this make one answer.
MIN_GAP = 1.0
LIVE_STREAM = Method(
    "usage.live.stream",
    "Live usage, re-sent when the index changes and every interval seconds (SSE)",
    (
        *(p for p in METHOD_TABLE["usage.live"].params if p.name != "session"),
        Param("interval", "integer", "seconds between answers when nothing changes (default 10)", minimum=1, maximum=300),
    ),
)


async def stream(request: web.Request) -> web.StreamResponse:
    ctx = request.app[CTX]
    params = LIVE_STREAM.parse_query(request.query)
    interval = float(params.pop("interval", 10))
    hub = ctx.hub
    resp = await _open(request)
    hub.subscribers += 1
    try:
        while not hub.closed:
            pos = hub.last  # before reading: a change meanwhile wakes the next wait at once
            doc: dict[str, Any] = await ctx.call("usage.live", params)
            await resp.write(_frame("usage", doc, str(doc.get("now"))))
            started = time.monotonic()
            woke = await _wait(request, hub, pos, interval)
            if woke is None:
                break
            if woke:
                await asyncio.sleep(max(0.0, MIN_GAP - (time.monotonic() - started)))
    except ConnectionResetError:
        pass  # the client went away
    finally:
        hub.subscribers -= 1
    return resp


def register_routes(app: web.Application) -> None:
    app.router.add_get(PATH, stream)


def openapi_paths() -> dict[str, Any]:
    from agtaild.api.openapi import _sse_op

    return {PATH: {"get": _sse_op("streamLiveUsage", LIVE_STREAM, "Events `usage` (the usage.live answer; id = its `now`).")}}
