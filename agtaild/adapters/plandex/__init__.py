"""Plandex (``plandex-ai/plandex``): plans kept by a self-hosted Plandex server.

The server (not the ``plandex`` CLI) keeps each plan's files under
``$PLANDEX_BASE_DIR/orgs/<org>/plans/<plan>/``: one ``conversation/<message id>.json`` per
message, ``descriptions/<id>.json`` per reply that proposed changes, ``results/<id>.json`` per
file change built from a reply. Plan names, models and API usage live in the server's
PostgreSQL database and are not read. Modules: adapter (roots, units, session), plan (the
plan folder's files → events).
"""

from agtaild.adapters.plandex.adapter import PlandexAdapter

__all__ = ["PlandexAdapter"]
