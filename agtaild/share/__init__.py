"""Sharing a session: for people (Markdown, one self-contained HTML file, JSON) and for another
agent (a handoff brief that continues the work elsewhere).

- ``gather``: a session, its events page by page and its subagents, through the query layer's
  methods (the CLI's backend or the daemon's service: the same documents either way).
- ``markdown``, ``html``: the two documents for people; ``brief``: the handoff brief.
- ``diffs``: an edit (``extra.edit``) as a unified diff that applies; ``redact``: what every
  exit masks (secrets, and with ``--redact-paths`` the home directory and user name).

Layer rule: a front-end helper beside the API and MCP: it calls the query layer's methods
through the ``call`` it is given and imports nothing of the index, the daemon or the CLI.
"""
