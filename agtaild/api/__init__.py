"""agtaild's HTTP surface: REST under /api/v1, JSON-RPC 2.0 at /rpc, SSE live streams.

Modules: ``app`` (the application factory, error shape, limits), ``rest``, ``rpc``, ``sse``,
``security`` (token, Host/Origin, login link), ``params`` (the one parameter table),
``openapi`` (the generated document), ``hub`` (change feed), ``context`` (shared state).
"""

from agtaild.api.app import create_app

__all__ = ["create_app"]
