"""agtaild, the long-running daemon: its start-up and its own moving parts.

- ``main``: start-up and shutdown (``agtaild`` and ``python -m agtaild.daemon``).
- ``watcher``: watchdog observers (or polling) over the session roots, handed to asyncio.
- ``scheduler``: debounces watched paths and runs index updates one at a time, off the loop.
- ``web_routes``: the static web viewer (agtaild/web/) at ``/``.

Layer rule: the daemon wires the query layer (agtaild.query), the API (agtaild.api) and the
index together; nothing below it imports agtaild.daemon.
"""
