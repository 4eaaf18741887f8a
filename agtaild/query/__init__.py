"""The query layer: the one place every front end calls.

``service.Service.call(method, params)`` answers the JSON-RPC methods of CONTRACT.md on the
local index; the CLI reaches it in-process or through a running daemon (``backend``), the
daemon's REST, JSON-RPC, SSE and MCP call it, and the team server answers the same methods
over PostgreSQL (agtaild.pg.service).

Layer rule: the query layer imports the index, the stores, the user's state (agtaild.userstate)
and the adapters, never the API,
the daemon or the CLI.
"""
