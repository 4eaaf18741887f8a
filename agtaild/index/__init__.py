"""The index: a disposable SQLite + FTS5 derivative of the agents' native session files.

Modules, in the order data flows through them:

* ``schema``   — connections, named migrations, ``INDEX_VERSION`` (a mismatch rebuilds).
* ``text``     — what of an event is searchable, and how user text becomes a safe query.
* ``prepare``  — one unit read by its adapter and turned into rows (runs in worker processes).
* ``writer``   — applies prepared rows under the read protocol (reset / upserts / state).
* ``update``   — finds what changed on disk and drives prepare + writer; one writer at a time.
* ``queries``, ``search``, ``stats`` — the read side used by :mod:`agtaild.query.service`.

Nothing here imports the adapters or the API at module import time, so the CLI starts fast.

Layer rule: the index imports the foundation, the adapters (through the registry) and the
stores' hooks; it never imports the query layer, the API, MCP, the daemon or the CLI.
"""
