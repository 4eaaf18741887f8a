"""The modules that add endpoints beside the method routes: sync's import API, MCP's ``/mcp``, a session's export and the live usage stream.

Each listed module exposes ``register_routes(app: web.Application) -> None`` and may expose
``openapi_paths() -> dict`` so its routes are documented too. The app factory
(agtaild.api.app) mounts them and the OpenAPI document (agtaild.api.openapi) describes them;
both read the list from here, so neither imports the other.
"""

from __future__ import annotations

ROUTE_MODULES: list[str] = [
    "agtaild.sync.server", "agtaild.mcp.http", "agtaild.api.share", "agtaild.api.organize", "agtaild.api.live",
    "agtaild.api.allowlist",
]
