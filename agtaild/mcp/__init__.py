"""MCP: agents search and read their own history through agtail.

``tools`` defines the tools (schemas, argument checks, what each calls); ``render`` turns the
service's JSON into compact text an agent reads well; ``handlers`` is what the server answers,
as plain data; ``stdio`` speaks the protocol on stdin/stdout for `agtail mcp` with the standard
library alone (the handshake must not wait for the SDK's imports); ``server`` puts the same
answers on the official `mcp` SDK's low-level server, which ``http`` serves at ``/mcp`` in the
daemon (streamable HTTP). Only ``server`` and ``http`` import the SDK, and only when a client
asks the daemon's ``/mcp``.
"""
