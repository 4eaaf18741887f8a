"""REST under /api/v1: thin handlers that parse the query with the method table and call the
service on a reader thread. Successes are ``{"ok": true, …document…}``; errors take the one
shape from agtaild/errors.py (raised here, rendered by the error middleware in app.py).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from agtaild.api.context import CTX, json_response, ok_json
from agtaild.api.params import METHOD_TABLE
from agtaild.api.security import is_trusted

API = "/api/v1"


@dataclass(frozen=True)
class Route:
    """A GET route that is exactly one service method (documented from the method table)."""

    path: str
    method: str
    operation_id: str


ROUTES: tuple[Route, ...] = (
    Route(f"{API}/agents", "agents.list", "listAgents"),
    Route(f"{API}/sessions", "sessions.list", "listSessions"),
    Route(f"{API}/sessions/{{agent}}/{{id}}", "sessions.get", "getSession"),
    Route(f"{API}/sessions/{{agent}}/{{id}}/events", "events.list", "listEvents"),
    Route(f"{API}/sessions/{{agent}}/{{id}}/resume", "resume.command", "getResumeCommand"),
    Route(f"{API}/sessions/{{agent}}/{{id}}/overview", "sessions.overview", "getSessionOverview"),
    Route(f"{API}/sessions/{{agent}}/{{id}}/children", "sessions.children", "listSessionChildren"),
    Route(f"{API}/sessions/{{agent}}/{{id}}/tools", "tools.calls", "listToolCalls"),
    Route(f"{API}/edits", "edits.recent", "listRecentEdits"),
    Route(f"{API}/search", "search", "search"),
    Route(f"{API}/stats", "stats", "getStats"),
    Route(f"{API}/usage/live", "usage.live", "getLiveUsage"),
    Route(f"{API}/report", "report", "getReport"),
    Route(f"{API}/machines", "machines.list", "listMachines"),  # a team server's; 404 elsewhere
    Route(f"{API}/projects", "projects.list", "listProjects"),
    Route(f"{API}/secrets", "secrets.list", "listSecrets"),
    Route(f"{API}/files/history", "files.history", "getFileHistory"),
    Route(f"{API}/embeddings", "embeddings.status", "getEmbeddingsStatus"),
)


def service_handler(route: Route) -> Callable[[web.Request], Awaitable[web.Response]]:
    spec = METHOD_TABLE[route.method]

    async def handler(request: web.Request) -> web.Response:
        params = spec.parse_query(request.query, request.match_info)
        # "Cache-Control: no-cache": an answer computed now, not one kept (agtaild/api/answers.py).
        fresh = "no-cache" in request.headers.get("Cache-Control", "").lower()
        body = await request.app[CTX].call_encoded(route.method, params, fresh=fresh)
        return json_response(body)

    handler.__name__ = route.operation_id
    handler.__doc__ = spec.summary
    return handler


async def health(request: web.Request) -> web.Response:
    """Liveness for anyone; the details (paths, roots, watch state) only for trusted callers,
    because paths name users and projects."""
    ctx = request.app[CTX]
    doc: dict[str, object] = {"status": "ok", "version": ctx.version}
    if is_trusted(request, ctx.security):
        doc.update(
            {
                "uptime_seconds": round(time.time() - ctx.started, 3),
                "python": platform.python_version(),
                "live_streams": ctx.hub.subscribers,
                "changes_published": ctx.hub.last,
            }
        )
        doc.update(ctx.health())
    return json_response(ok_json(doc))


async def login_link(request: web.Request) -> web.Response:
    """POST: a one-time login URL for the viewer (what `agtail open` prints)."""
    ctx = request.app[CTX]
    if request.query:
        raise_unknown(request)
    code = ctx.security.new_login_code()
    return json_response(ok_json({"path": f"/login?code={code}", "expires_in": 600}))


def raise_unknown(request: web.Request) -> None:
    from agtaild.api.params import ParamError

    name = next(iter(request.query.keys()))
    raise ParamError(name, "is not a parameter of this endpoint (accepted: none)")


def add_routes(app: web.Application) -> None:
    app.router.add_get(f"{API}/health", health)
    for route in ROUTES:
        app.router.add_get(route.path, service_handler(route))
    app.router.add_post(f"{API}/login-link", login_link)
