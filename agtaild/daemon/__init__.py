"""agtaild, the long-running daemon: its start-up and its own moving parts.

- ``main``: start-up and shutdown (``agtaild`` and ``python -m agtaild.daemon``).
- ``watcher``: watchdog observers (or polling) over the session roots, handed to asyncio.
- ``scheduler``: debounces watched paths and runs index updates one at a time, off the loop.

The viewer's routes belong to the API (agtaild.api.viewer): the team server serves the same
viewer without a daemon.

Layer rule: the daemon wires the query layer (agtaild.query), the API (agtaild.api) and the
index together; nothing imports agtaild.daemon (the CLI starts the daemon as a process).
"""
