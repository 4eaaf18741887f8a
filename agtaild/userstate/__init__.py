"""What a user decided about their sessions: labels, stars, titles, hides, and the rules that
set labels. It is theirs, not derived: it lives in ``<data dir>/state.sqlite3``, apart from the
index, with migrations of its own, and no rebuild of the index touches it.

- ``store``: the store (:class:`store.UserState`), keyed by (collection, agent, session id),
  every change recorded with who made it (``user``, ``agent``, ``rule``) and when; a user's
  change wins over an agent's, an agent's over a rule's.
- ``checks``: what a label key, a value and a title may be (bad input is refused whole).

Layer rule: the foundation only (agtaild.errors, agtaild.dirs); the query layer reads it, the
index never imports it.
"""
