"""MCP: agents search and read their own history through agtail.

``tools`` defines the tools (schemas, argument checks, what each calls); ``render`` turns the
service's JSON into compact text an agent reads well; ``server`` puts them on the official
`mcp` SDK's low-level server (stdio for `agtail mcp`); ``http`` serves the same server at
``/mcp`` in the daemon (streamable HTTP). Only ``server`` and ``http`` import the SDK, and only
when they run, so the CLI's start-up does not pay for it.
"""
