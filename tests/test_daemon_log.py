"""What the daemon's log says: when the first index is done and what it holds (a new install
lists its sessions while they are still being read, and the log says when that is over)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL, DaemonProc, wait_until


def test_the_log_says_when_the_first_index_is_done(tmp_path: Path) -> None:
    daemon = DaemonProc(tmp_path, {"claude-code": CLAUDE_REAL, "codex": CODEX_REAL})
    try:
        daemon.start()
        with daemon.unix() as client:
            agents = {a["id"]: a["sessions"] for a in client.call("agents.list", {})["agents"]}
        line = wait_until(lambda: re.search(r"INFO agtaild\S*: first index done: .*", daemon.log()), 30,
                          "the first-index line")
        total = sum(agents.values())
        assert f"first index done: {total} sessions of 2 agents (" in line.group()
        for agent in ("claude-code", "codex"):
            assert f"{agent} {agents[agent]}" in line.group()
        assert re.search(r" in \d+\.\d s$", line.group())
        assert daemon.log().count("first index done") == 1  # once, not at every update
    finally:
        daemon.cleanup()
