"""Four writers change the labels of the same two sessions at once for 30 s: the daemon
(``state.change`` through its API, as the user, and its rule pass after index updates), two CLI
processes (`agtail label`, through the daemon, writing the store themselves) and an MCP agent
(`agtail mcp` over stdio, the official SDK's client, labelling its own session as ``agent``).

Every writer logs each change it was told was accepted, in its own order. Afterwards: every
accepted change is in the store's change log, in each writer's order, and nothing else is (no
refused change, no lost one); and the labels are exactly the replay of that log.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.daemon_proc import CLAUDE_REAL, REPO, DaemonProc, append, claude_user_line

pytestmark = pytest.mark.slow

SECONDS = 30.0
S1 = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"  # the MCP agent's own session
S2 = "2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"
SHARED_KEYS = ("k0", "k1", "k2")

#: A CLI process: `agtail label` again and again until the deadline, each accepted change logged.
CLI_WORKER = r"""
import contextlib, io, json, random, sys, time
from agtaild.cli import main
name, data, root, deadline, log = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
rnd = random.Random(name)
base = ["--data-dir", data, "--only-roots", "--root", f"claude-code={root}", "--json"]
with open(log, "w") as out:
    i = 0
    while time.time() < deadline:
        sid = rnd.choice(sys.argv[6:])
        if rnd.random() < 0.4:
            key = f"own-{name}"
            args = ["label", f"claude-code:{sid}", key, "--remove"] if rnd.random() < 0.5 else ["label", f"claude-code:{sid}", f"{key}={name}-{i}"]
        else:
            key = rnd.choice(["k0", "k1", "k2"])
            args = ["label", f"claude-code:{sid}", f"{key}={name}-{i}"]
        buf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        with contextlib.redirect_stdout(buf):
            code = main([*base, *args])
        buf.flush()
        if code != 0:
            raise SystemExit(f"agtail {args} exited {code}")
        (change,) = json.loads(buf.buffer.getvalue())["changes"]
        if change["accepted"]:
            out.write(json.dumps([sid, change["key"], change["value"]]) + "\n")
            out.flush()
        i += 1
"""


def _daemon_writer(client: Any, deadline: float, log: list[list[Any]], stop: threading.Event) -> None:
    rnd = random.Random("daemon")
    i = 0
    while time.time() < deadline and not stop.is_set():
        sid = rnd.choice([S1, S2])
        if rnd.random() < 0.4:
            key = "own-daemon"
            params = {"unlabel": key} if rnd.random() < 0.5 else {"label": f"{key}=daemon-{i}"}
        else:
            key = rnd.choice(SHARED_KEYS)
            params = {"label": f"{key}=daemon-{i}"}
        (change,) = client.change_state("claude-code", sid, **params)["changes"]
        if change["accepted"]:
            log.append([sid, change["key"], change["value"]])
        i += 1


def _appender(path: Path, deadline: float, stop: threading.Event) -> None:
    """New events in S2 every second or so: index updates, after each of which the daemon's
    rule pass runs (and labels what has no ``ruled`` row yet)."""
    parent = None
    n = 0
    while time.time() < deadline and not stop.is_set():
        line, parent = claude_user_line(S2, f"more work {n}", parent=parent)
        append(path, line)
        n += 1
        stop.wait(1.0)


async def _mcp_writer(params: StdioServerParameters, deadline: float, log: list[list[Any]]) -> int:
    rnd = random.Random("mcp")
    refused = 0
    async with Client(params, read_timeout_seconds=60) as client:
        i = 0
        while time.time() < deadline:
            if rnd.random() < 0.4:
                key = "own-mcp"
                if rnd.random() < 0.5:
                    name, args, value = "remove_label", {"key": key}, None
                else:
                    name, args, value = "add_label", {"key": key, "value": f"mcp-{i}"}, f"mcp-{i}"
            else:
                key = rnd.choice(SHARED_KEYS)
                name, args, value = "add_label", {"key": key, "value": f"mcp-{i}"}, f"mcp-{i}"
            result = await client.call_tool(name, args)
            text = "".join(getattr(c, "text", "") for c in result.content)
            assert not result.is_error, text
            assert f"claude-code:{S1} (found by the environment (AGTAIL_SESSION))" in text, text
            if " done." in text:
                log.append([S1, key, value])
            else:
                assert "left as it is: the user set it" in text, text
                refused += 1
            i += 1
    return refused


def test_the_daemon_two_clis_and_an_mcp_agent_label_the_same_sessions_at_once(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    shutil.copytree(CLAUDE_REAL, root)
    daemon = DaemonProc(tmp_path, {"claude-code": root})
    data = daemon.data_dir
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    try:
        daemon.start()
        from agtaild.userstate import rules
        from agtaild.userstate.store import UserState

        st = UserState(data)
        rules.add(st, "agent=claude-code", "ruled", "yes")
        st.close()
        deadline = time.time() + SECONDS
        logs = {name: tmp_path / f"{name}.log" for name in ("cliA", "cliB")}
        clis = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    CLI_WORKER,
                    name,
                    str(data),
                    str(root),
                    str(deadline),
                    str(log),
                    S1,
                    S2,
                ],
                env=env,
                cwd=str(REPO),
                stderr=subprocess.PIPE,
            )
            for name, log in logs.items()
        ]
        stop = threading.Event()
        daemon_log: list[list[Any]] = []
        writer = threading.Thread(target=_daemon_writer, args=(daemon.tcp(), deadline, daemon_log, stop))
        s2_file = next(root.glob(f"*/{S2}.jsonl"))
        appender = threading.Thread(target=_appender, args=(s2_file, deadline, stop))
        writer.start()
        appender.start()
        mcp_log: list[list[Any]] = []
        argv = ["-c", "import sys; from agtaild.cli import main; sys.exit(main())", "mcp", "--data-dir", str(data),
                "--only-roots", "--root", f"claude-code={root}"]  # fmt: skip
        params = StdioServerParameters(
            command=sys.executable, args=argv, env={**env, "AGTAIL_SESSION": f"claude-code:{S1}"},
            cwd=str(tmp_path),
        )  # fmt: skip
        try:
            refused = anyio.run(_mcp_writer, params, deadline, mcp_log)
        finally:
            stop.set()
            writer.join(60)
            appender.join(60)
            for proc in clis:
                _out, err = proc.communicate(timeout=60)
                assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
        accepted = {
            "daemon": daemon_log,
            "mcp": mcp_log,
            **{name: [json.loads(x) for x in log.read_text().splitlines()] for name, log in logs.items()},
        }
    finally:
        daemon.cleanup()

    db = sqlite3.connect(data / "state.sqlite3")
    rows = db.execute("SELECT id, who, sid, what, key, value FROM changes ORDER BY id").fetchall()
    for name, log in accepted.items():
        assert len(log) >= 10, (name, len(log))  # every writer really wrote, all through the 30 s

        def mine(row: tuple[Any, ...], name: str = name) -> bool:
            return row[4] == f"own-{name}" or (row[5] or "").startswith(f"{name}-")

        # Every accepted change is in the log, in the writer's order, and no change of its is
        # there that it was not told was accepted.
        assert [[r[2], r[4], r[5]] for r in rows if mine(r)] == log, name
    assert {r[1] for r in rows if (r[5] or "").startswith("mcp-") or r[4] == "own-mcp"} == {"agent"}
    assert any(r[1] == "rule" and r[4] == "ruled" for r in rows)  # the daemon's rule pass took part
    attributed = sum(len(log) for log in accepted.values())
    assert len(rows) == attributed + sum(1 for r in rows if r[1] == "rule")
    # The state is exactly the replay of the accepted changes, in the store's order.
    replay: dict[tuple[str, str], str | None] = {}
    for _id, _who, sid, what, key, value in rows:
        assert what == "label"
        replay[(sid, key)] = value
    current = {(sid, key): value for sid, key, value in db.execute("SELECT sid, key, value FROM labels")}
    assert current == replay
    # An agent never overwrote the user's: a shared key the CLIs or the daemon held before the
    # agent's turn was refused to it, and it says so.
    assert refused > 0
