"""OpenClaw (npm ``openclaw``): every agent's transcripts in one SQLite database.

Since the 2026 SQLite cutover each OpenClaw agent keeps ``<state dir>/agents/<agentId>/agent/
openclaw-agent.sqlite`` (agent ``main`` by default; the state dir is ``~/.openclaw``, moved by
``OPENCLAW_STATE_DIR``, ``OPENCLAW_HOME`` or a profile). Its ``transcript_events`` table holds
one Pi-style (v4) tree entry per row, some of them zstd-compressed; ``session_windows`` and
``session_nodes`` give each session its key, parent and label. OpenClaw runs Pi's agent core
and writes its entry format, so the rows are read with Pi's tree parser
(agtaild.adapters.pi.tree) plus what OpenClaw adds (:mod:`.rows`). Modules: adapter (roots,
databases, resume), rows (row decoding and the OpenClaw entries).
"""

from agtaild.adapters.openclaw.adapter import OpenClawAdapter

__all__ = ["OpenClawAdapter"]
