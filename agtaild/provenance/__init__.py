"""Provenance: which recorded session wrote each line of a file (docs/provenance.md).

Modules, in the order data flows through them:

* ``paths``   — a recorded path made absolute and comparable (cwd joined, ``..`` resolved,
  symlinks not followed), and how a path asked for matches the recorded ones.
* ``shell``   — the files a shell command names as written (``cat > f``, ``sed -i``, ``mv``).
* ``records`` — at index time: the events of a read → rows of the ``edits`` table, each with
  the replay operations of one file change (agtaild.index.prepare calls it).
* ``history`` — at query time: a file's recorded changes, newest first, with the prompt that
  led to each (the ``files.history`` method).
* ``replay``  — blame: the recorded changes replayed over the file's known states, matched
  line by line against the file as it is now (``lines``: how lines are compared).
* ``gitrev``  — the file as of a commit, and a commit's hunks (``--rev``, ``--commit``).

Layer rule: ``paths``, ``shell`` and ``records`` import only the foundation (the index imports
them while it writes); the rest may read the index (its schema and codec) but never import the
query layer, the API, MCP, the daemon or the CLI.
"""
