"""agtail_client against a real agtaild on temp dirs: finding the daemon as the CLI does, the
typed calls (lists that follow cursors, single documents, usage, resume), the error tree, live
events over SSE resumed with Last-Event-ID, the README's examples run as written, and the
package standing alone on the standard library."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agtail_client import (
    ApiError,
    BadRequest,
    Client,
    NotFound,
    Refused,
    Unauthorized,
    Unreachable,
    default_data_dir,
    error_for,
)
from tests.daemon_proc import DaemonProc, append, claude_user_line, copy_claude, copy_codex, wait_until

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "clients" / "python"
EXAMPLES = PKG / "examples"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("client-py")
    d = DaemonProc(base, {"claude-code": copy_claude(base / "claude"), "codex": copy_codex(base / "codex")})
    try:
        yield d.start()
    finally:
        d.cleanup()


@pytest.fixture
def client(daemon: DaemonProc) -> Iterator[Client]:
    with Client.connect(daemon.data_dir) as c:
        yield c


def example_env(d: DaemonProc) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "AGTAIL_DATA_DIR"}
    return {**env, "HOME": str(d.base / "home"), "AGTAIL_DATA_DIR": str(d.data_dir), "PYTHONUNBUFFERED": "1"}


# -- finding the daemon ------------------------------------------------------------------------


def test_connect_prefers_the_unix_socket_and_falls_back_to_tcp_with_the_token(
    daemon: DaemonProc, tmp_path: Path
) -> None:
    with Client.connect(daemon.data_dir) as c:
        assert c.socket_path == str(daemon.socket) and c.info["pid"] == daemon.proc.pid  # type: ignore[union-attr]
    # The same daemon, its socket gone from agtaild.json's point of view: TCP + token.
    info = json.loads((daemon.data_dir / "agtaild.json").read_text())
    (tmp_path / "agtaild.json").write_text(json.dumps({**info, "socket": str(tmp_path / "gone.sock")}))
    shutil.copy(daemon.data_dir / "token", tmp_path / "token")
    with Client.connect(tmp_path) as c:
        assert c.socket_path is None and c.url == daemon.url and c.token == daemon.token
        assert c.session("claude-code", "2c4d36d7")["id"].startswith("2c4d36d7")


def test_the_data_dir_comes_from_the_environment_as_for_the_cli(
    daemon: DaemonProc, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGTAIL_DATA_DIR", str(daemon.data_dir))
    assert default_data_dir() == daemon.data_dir
    with Client.connect() as c:
        assert c.info["data_dir"] == str(daemon.data_dir)
    monkeypatch.delenv("AGTAIL_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", "/srv/x")
    if sys.platform == "linux":
        assert default_data_dir() == Path("/srv/x/agtail")
        from agtaild.dirs import default_data_dir as daemon_default

        assert daemon_default() == default_data_dir()  # the daemon's rule (platformdirs) agrees


def test_no_daemon_is_unreachable_naming_where_it_looked(tmp_path: Path) -> None:
    assert Client.discover(tmp_path) is None
    with pytest.raises(Unreachable, match=re.escape(str(tmp_path))) as err:
        Client.connect(tmp_path)
    assert err.value.code == "unreachable" and isinstance(err.value, ApiError)
    (tmp_path / "agtaild.json").write_text(
        json.dumps({"socket": str(tmp_path / "s.sock"), "url": "http://127.0.0.1:9"})
    )
    assert Client.discover(tmp_path) is None  # a stale agtaild.json: nobody answers
    with pytest.raises(Unreachable):
        Client(socket_path=str(tmp_path / "s.sock")).call("agents.list")
    with pytest.raises(ValueError, match="http://"):
        Client(url="ftp://example.org")


# -- lists that follow cursors -----------------------------------------------------------------


def test_sessions_follow_the_cursor_to_the_end(client: Client) -> None:
    whole = client.call("sessions.list", {"limit": 1000})["sessions"]
    assert len(whole) >= 10
    paged = list(client.sessions(page_size=3))
    assert [(s["agent"], s["id"], s["path"]) for s in paged] == [
        (s["agent"], s["id"], s["path"]) for s in whole
    ]
    assert [s["id"] for s in client.sessions(limit=4, page_size=3)] == [s["id"] for s in whole[:4]]
    assert list(client.sessions(limit=0)) == []
    codex = list(client.sessions(agent="codex", page_size=2))
    assert codex and {s["agent"] for s in codex} == {"codex"}
    assert len(codex) == sum(s["agent"] == "codex" for s in whole)


def test_search_pages_are_the_single_answer(client: Client) -> None:
    whole = client.call("search", {"q": "hello", "limit": 1000})["hits"]
    assert len(whole) >= 3
    paged = list(client.search("hello", page_size=2))
    assert [(h["session"]["id"], h["event"]["seq"]) for h in paged] == [
        (h["session"]["id"], h["event"]["seq"]) for h in whole
    ]
    tools = list(client.search("hello.py", kind="tool_use"))
    assert tools and all(h["event"]["kind"] == "tool_use" for h in tools)


def test_events_in_order_across_pages(client: Client) -> None:
    s = client.session("claude-code", "2c4d36d7")
    whole = client.call("events.list", {"agent": "claude-code", "id": s["id"], "limit": 10_000})["events"]
    events = list(client.events("claude-code", s["id"], page_size=2))
    assert events == whole and len(events) > 4
    assert [e["seq"] for e in client.events("claude-code", s["id"], after_seq=2, limit=2)] == [
        e["seq"] for e in whole if e["seq"] > 2
    ][:2]


def test_session_stats_agents_and_resume(client: Client) -> None:
    s = client.session("claude-code", "2c4d36d7")  # a unique prefix
    assert s == client.call("sessions.get", {"agent": "claude-code", "id": s["id"]})["session"]
    stats = client.stats(by="agent")
    assert {r["key"] for r in stats["rows"]} == {"claude-code", "codex"}
    assert stats["totals"]["total_tokens"] == sum(r["total_tokens"] for r in stats["rows"]) > 0
    assert {a["id"]: a["sessions"] > 0 for a in client.agents() if a["id"] in ("claude-code", "codex")} == {
        "claude-code": True,
        "codex": True,
    }
    resume = client.resume_command("claude-code", s["id"])
    assert resume["agent"] == "claude-code" and resume["argv"] == ["claude", f"--resume={s['id']}"]


def test_a_closer_look_overview_tool_calls_children_and_edits(client: Client) -> None:
    over = client.overview("claude-code", "77734736")
    assert over["children_total"] == 1 and over["session"]["id"].startswith("77734736")
    kids = list(client.children("claude-code", "77734736"))
    assert [k["id"] for k in kids] == ["agent-abeadf394adf045da"]
    codex = client.session("codex", "01a229d7-c676")
    whole = client.call("tools.calls", {"agent": "codex", "id": codex["id"], "limit": 500})["calls"]
    assert list(client.tool_calls("codex", codex["id"], page_size=1)) == whole and len(whole) >= 3
    assert {c["tool"] for c in client.tool_calls("codex", codex["id"], tool="exec_command")} == {
        "exec_command"
    }
    edits = list(client.recent_edits(cwd="/tmp/rt", page_size=2, diff_lines=1))
    assert len(edits) >= 5 and all(len(e["diff"]) <= 1 for e in edits)
    times = [e["time"] for e in edits]
    assert times == sorted(times, reverse=True)


# -- errors ------------------------------------------------------------------------------------


def test_errors_are_one_tree_with_the_apis_codes(daemon: DaemonProc, client: Client) -> None:
    with pytest.raises(NotFound) as nf:
        client.session("claude-code", "no-such-session")
    assert nf.value.code == "not_found" and isinstance(nf.value, ApiError)
    with pytest.raises(BadRequest) as bad:
        client.stats(by="weekday")
    assert bad.value.code == "bad_request" and "by" in bad.value.message
    with pytest.raises(NotFound):
        client.call("no.such.method")
    with pytest.raises(BadRequest):
        client.get("/sessions", {"limit": 0})  # the REST error shape maps onto the same classes
    with Client(url=daemon.url, token="wrong") as tcp, pytest.raises(Unauthorized) as unauth:
        tcp.call("agents.list")
    assert unauth.value.status == 401
    assert type(error_for("refused", "x")) is Refused
    newer = error_for("some_future_code", "x")
    assert type(newer) is ApiError and newer.code == "some_future_code"


def test_the_cli_maps_the_clients_errors_as_before(daemon: DaemonProc) -> None:
    """backend.DaemonBackend (the CLI's and the MCP server's way to the daemon) keeps working."""
    from agtaild.errors import NotFound as CliNotFound
    from agtaild.query.backend import DaemonBackend

    backend = DaemonBackend(Client.connect(daemon.data_dir))
    try:
        assert backend.call("sessions.list", {"limit": 1})["sessions"]
        with pytest.raises(CliNotFound):
            backend.call("sessions.get", {"agent": "claude-code", "id": "nope"})
    finally:
        backend.close()


# -- live ----------------------------------------------------------------------------------------


class Follower:
    """Runs an iterator of events on a thread; the test waits for what it expects."""

    def __init__(self, events: Iterator[dict[str, Any]]) -> None:
        self.queue: queue.Queue[Any] = queue.Queue()
        self.thread = threading.Thread(target=self._run, args=(events,), daemon=True)
        self.thread.start()

    def _run(self, events: Iterator[dict[str, Any]]) -> None:
        try:
            for ev in events:
                self.queue.put(ev)
            self.queue.put(StopIteration())
        except Exception as err:
            self.queue.put(err)

    def next(self, timeout: float = 30.0) -> Any:
        return self.queue.get(timeout=timeout)


def live_session(d: DaemonProc, name: str) -> tuple[Path, str]:
    """A new Claude Code session file under the daemon's root, indexed."""
    sid = f"{name}-0000-4000-8000-000000000000"[:36]
    path = d.roots["claude-code"] / "-tmp-rt-claude-home-src-demo-app" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    line, _ = claude_user_line(sid, "first line of a live session")
    append(path, line)
    with Client.connect(d.data_dir) as c:
        wait_until(lambda: c.session("claude-code", sid), 30, "the live session indexed")
    return path, sid


def test_follow_gives_new_events_and_resumes_with_last_event_id(daemon: DaemonProc) -> None:
    path, sid = live_session(daemon, "5e5e1111")
    c = Client.connect(daemon.data_dir)
    whole = Follower(c.follow("claude-code", sid, after_seq=-1))
    first = whole.next()
    assert first["seq"] == 0 and "first line" in first["text"]
    append(path, claude_user_line(sid, "second line, written while followed")[0])
    second = whole.next()
    assert second["seq"] > first["seq"] and "second line" in second["text"]
    # A new stream resumed after the first event misses nothing and repeats nothing.
    resumed = Follower(c.follow("claude-code", sid, last_event_id=str(first["seq"])))
    assert resumed.next()["seq"] == second["seq"]
    append(path, claude_user_line(sid, "third line")[0])
    assert "third line" in resumed.next()["text"] and "third line" in whole.next()["text"]
    # The agent deletes the file: the archive's copy stands in, the same session, and the
    # stream follows it there (nothing repeated, nothing ended).
    path.unlink()
    wait_until(lambda: c.session("claude-code", sid)["archived"], 30, "the archived copy listed")
    with pytest.raises(queue.Empty):
        whole.next(timeout=1.5)


def test_changes_say_reset_then_what_changed(daemon: DaemonProc) -> None:
    c = Client.connect(daemon.data_dir)
    changes = Follower(c.changes(agent="claude-code", last_event_id="not-this-run-0"))
    assert changes.next() == {"action": "reset"}  # missed changes: list again
    path, sid = live_session(daemon, "c4a9e111")
    while True:
        change = changes.next()
        if change.get("id") == sid:
            break
    assert change["agent"] == "claude-code" and change["path"] == str(path) and change["action"]


@pytest.mark.slow
def test_follow_reconnects_across_a_daemon_restart_on_another_port(tmp_path: Path) -> None:
    """TCP only (--socket none) on a free port: the restarted daemon listens elsewhere, and
    the client finds it again through agtaild.json, resuming after the last event it gave."""
    d = DaemonProc(
        tmp_path,
        {"claude-code": copy_claude(tmp_path / "claude")},
        extra=["--socket", "none"],
        socket_path=tmp_path / "unused.sock",
    )

    def start() -> None:
        d.start(wait_indexed=False)
        wait_until(lambda: (d.tcp().health().get("index") or {}).get("updates", 0) >= 1, 60, "the first scan")

    try:
        start()
        path, sid = live_session(d, "7e571111")
        c = Client.connect(d.data_dir)
        assert c.socket_path is None
        follower = Follower(c.follow("claude-code", sid, after_seq=-1, reconnect=True))
        assert follower.next()["seq"] == 0
        first_url = d.url
        d.stop()
        append(path, claude_user_line(sid, "written while agtaild was down")[0])
        start()
        ev = follower.next(60)
        assert ev["seq"] == 1 and "while agtaild was down" in ev["text"]  # resumed after seq 0
        assert c.url == d.url != first_url
    finally:
        d.cleanup()


# -- the README's examples, run as written -------------------------------------------------------


def run_example(d: DaemonProc, name: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env=example_env(d),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(d.base),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_readme_shows_each_example_as_it_is() -> None:
    readme = (PKG / "README.md").read_text()
    for example in ("daily_cost.py", "touched_file.py", "follow_live.py"):
        body = (EXAMPLES / example).read_text().split('"""', 2)[2].strip()
        assert body in readme, f"README.md does not show {example} as it is"


def test_example_daily_cost(daemon: DaemonProc, client: Client) -> None:
    out = run_example(daemon, "daily_cost.py", "2000-01-01").splitlines()
    stats = client.stats(by="day", since="2000-01-01")
    assert len(out) == len(stats["rows"]) + 1
    for line, row in zip(out, stats["rows"], strict=False):
        assert line.split()[:2] == [row["key"], str(row["total_tokens"])]
    assert out[-1].split()[:2] == ["total", str(stats["totals"]["total_tokens"])]


def test_example_touched_file(daemon: DaemonProc) -> None:
    out = run_example(daemon, "touched_file.py", "hello.py").splitlines()
    assert out and all(re.match(r"^(claude-code|codex):\S+  /", line) for line in out)
    assert any(line.startswith("claude-code:") and "Bash" in line for line in out)
    assert any(line.startswith("codex:") for line in out)


def test_example_follow_live(daemon: DaemonProc) -> None:
    path, sid = live_session(daemon, "f0110111")
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "follow_live.py"), f"claude-code:{sid}"],
        env=example_env(daemon),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"following claude-code:{sid}"
        # The stream is open once the first frame could arrive; write until the example prints it.
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
        for attempt in range(20):
            append(path, claude_user_line(sid, f"hello from the test {attempt}")[0])
            try:
                line = lines.get(timeout=3)
                break
            except queue.Empty:
                continue
        else:
            raise AssertionError(
                f"the example printed nothing: {proc.stderr.read() if proc.poll() is not None else ''}"
            )  # type: ignore[union-attr]
        assert re.match(r"^\d+ text hello from the test \d+$", line.strip()), line
    finally:
        proc.terminate()
        proc.wait(10)


# -- the package on its own ----------------------------------------------------------------------


def test_the_package_needs_only_the_standard_library(daemon: DaemonProc) -> None:
    """Imported from clients/python alone (no site-packages): it loads, finds the daemon and
    answers, and nothing outside the standard library and agtail_client was imported."""
    code = (
        "import sys, json; import agtail_client as a\n"
        "c = a.Client.connect(sys.argv[1]); n = len(list(c.sessions())); c.close()\n"
        "std = set(sys.stdlib_module_names)\n"
        "other = sorted(m for m in sys.modules if m.split('.')[0] not in std and m != '__main__' and not m.startswith('agtail_client'))\n"
        "print(json.dumps({'n': n, 'other': other}))"
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(PKG), "HOME": str(daemon.base / "home")}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(daemon.data_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["n"] >= 10 and doc["other"] == []


def needs_modern_setuptools() -> None:
    """Wheels are built offline with this venv's setuptools (the dev extra asks for >= 77: the
    license field of PEP 639, and bdist_wheel built in)."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(
            f"setuptools {setuptools.__version__} is older than the dev extra asks (>= 77): run make setup"
        )


def test_its_pyproject_builds_a_wheel_without_dependencies(tmp_path: Path) -> None:
    needs_modern_setuptools()
    src = tmp_path / "src"  # a copy: building writes build/ and *.egg-info next to the sources
    shutil.copytree(PKG, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    import zipfile

    (wheel,) = tmp_path.glob("agtail_client-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agtail_client/__init__.py" in names and "agtail_client/py.typed" in names
    assert not any(n.startswith("agtaild") for n in names)
    meta = next(n for n in names if n.endswith("METADATA"))
    assert "Requires-Dist" not in zipfile.ZipFile(wheel).read(meta).decode()


def test_agtails_own_wheel_carries_the_client_and_the_service_templates(tmp_path: Path) -> None:
    """`pip install .` / `pipx install .` of agtail installs agtail_client too (one source)."""
    needs_modern_setuptools()
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    skip = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(REPO / "agtaild", src / "agtaild", ignore=skip)
    shutil.copytree(PKG, src / "clients" / "python", ignore=skip)
    os.symlink(os.readlink(REPO / "agtail_client"), src / "agtail_client")  # the one source, linked
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    import zipfile

    (wheel,) = tmp_path.glob("agtaild-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "agtail_client/__init__.py",
        "agtail_client/wire.py",
        "agtail_client/py.typed",
        "agtaild/adapters/claude/parser.py",
        "agtaild/data/service/agtaild.service.in",
        "agtaild/data/service/dev.agtail.agtaild.plist.in",
    } <= names
    assert not any(n.startswith(("clients/", "examples/")) for n in names)


def test_change_state_and_the_state_filters(client: Client) -> None:
    sid = "2c4d36d7-6d89-496b-a1e7-ec2a43aa5de6"
    doc = client.change_state("claude-code", sid[:8], label="client=acme", star=True)
    assert [c["accepted"] for c in doc["changes"]] == [True, True] and doc["session"]["state"][
        "starred"
    ] is True
    assert [s["id"] for s in client.sessions(label="client=acme")] == [sid]
    assert [s["id"] for s in client.sessions(starred=True)] == [sid]
    with pytest.raises(BadRequest):
        client.change_state("claude-code", sid, label="bad key", hide=True)
    assert list(client.sessions(hidden="only")) == []
    client.change_state("claude-code", sid, unlabel="client", star=False)
    assert list(client.sessions(label="client")) == [] and list(client.sessions(starred=True)) == []
