"""agtaild's HTTP surface: REST under /api/v1, JSON-RPC 2.0 at /rpc, SSE live streams.

Modules: ``app`` (the application factory, error shape, limits), ``rest``, ``rpc``, ``sse``,
``security`` (token, Host/Origin, login link), ``params`` (the one parameter table),
``openapi`` (the generated document), ``hub`` (change feed), ``context`` (shared state),
``viewer`` (the static web viewer at ``/``), ``extensions`` (other modules' routes),
``guard`` (deadlines and the connection protocol) and ``admission`` (the budgets of
connections that have authenticated and of those that have not).

Layer rule: the API calls the query layer through the service object it is given and
imports the index only for its document shapes; it never imports the CLI or the daemon.
"""

from agtaild.api.app import create_app

__all__ = ["create_app"]
