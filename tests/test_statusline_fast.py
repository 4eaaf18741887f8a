"""`agtail statusline` through a daemon's unix socket without the CLI: the `agtail` console
script (agtaild.entry) answers it with agtaild.statusline_fast, which imports neither argparse
nor json, re, socket, msgspec or the index, and prints the line the full command prints. What
it does not serve goes to the full command with stdin as it was; a daemon that is gone, stuck
or answers garbage gives the line from the index in-process; bad input prints nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agtaild import dirs, statusline_fast
from tests.daemon_proc import DaemonProc
from tests.live_helpers import claude_session

REPO = Path(__file__).resolve().parent.parent
#: A real Qwen Code chat with two responses' usageMetadata (tests/corpus/qwen/PROVENANCE.md).
QWEN = REPO / "tests" / "corpus" / "qwen" / "entireio-cli" / ".qwen"
QWEN_SESSION = "5111125b-e311-42be-8e4d-93942aaaacf4"
SAMPLE = REPO / "tests" / "fixtures" / "statusline" / "claude-code-2.1.json"
ENTRY = "import sys; from agtaild.entry import main; sys.exit(main())"
FULL = "import sys; from agtaild.cli import main; sys.exit(main())"

#: What the fast path must not import: each costs as much as the rest of the process.
HEAVY = ("argparse", "json", "re", "socket", "pathlib", "typing", "msgspec", "sqlite3", "agtaild.cli",
         "agtaild.config", "agtaild.index", "agtaild.query", "agtail_client", "platformdirs")  # fmt: skip


def imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports on stderr."""
    return {
        line.rpartition("|")[2].strip() for line in stderr.splitlines() if line.startswith("import time:")
    }


def environment(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp / "home"), "XDG_DATA_HOME": str(tmp / "xdg"), "TZ": "UTC",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "clients" / "python")])}  # fmt: skip
    for name in ("AGTAIL_DATA_DIR", "AGTAIL_SERVER", "AGTAIL_TOKEN", "AGTAIL_TOKEN_FILE"):
        env.pop(name, None)
    return env


def sessions(tmp: Path) -> tuple[Path, Path, float]:
    now = time.time()
    claude = tmp / "claude" / "projects"
    transcript = claude_session(claude, "fast-1111", "/w/app", [now - 120, now - 90, now - 60, now - 30])
    claude_session(claude, "other-2222", "/w/lib", [now - 600], tokens=500)
    return claude, transcript, now


def stdin_of(transcript: Path, now: float) -> bytes:
    doc = json.loads(
        SAMPLE.read_text()
        .replace("TRANSCRIPT", str(transcript))
        .replace("RESETS_5H", str(int(now + 2 * 3600 + 600)))
        .replace("RESETS_7D", str(int(now + 3 * 86400)))
    )
    del doc["rate_limits"]  # the block computed from the index, not Claude Code's own numbers
    return json.dumps(doc).encode()


def run(
    code: str, args: list[str], stdin: bytes, env: dict[str, str], *flags: str
) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, *flags, "-c", code, *args]
    return subprocess.run(argv, input=stdin, env=env, capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("statusline-fast")
    claude, transcript, now = sessions(tmp)
    qwen = tmp / "qwen"
    shutil.copytree(QWEN, qwen)
    daemon = DaemonProc(tmp, {"claude-code": claude, "qwen": qwen}, env={"TZ": "UTC"}, extra=["--no-archive"])
    daemon.start()
    try:
        yield {
            "env": environment(tmp),
            "data": str(daemon.data_dir),
            "stdin": stdin_of(transcript, now),
            "tmp": tmp,
        }
    finally:
        daemon.cleanup()


def test_through_the_socket_without_the_cli_the_full_command_s_line(served: dict[str, Any]) -> None:
    args = ["--data-dir", served["data"], "statusline"]
    fast = run(ENTRY, args, served["stdin"], served["env"], "-X", "importtime")
    assert fast.returncode == 0 and fast.stdout
    bare = run(
        "pass", [], b"", served["env"], "-X", "importtime"
    )  # what start-up imports anyway (site, .pth files)
    loaded = imported(fast.stderr.decode()) - imported(bare.stderr.decode())
    assert "agtaild.statusline_fast" in loaded and "_socket" in loaded
    assert not {m for m in loaded if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))}
    full = run(FULL, args, served["stdin"], served["env"])
    assert full.returncode == 0 and full.stderr == b""
    # The same numbers (the reset countdown may have moved a minute between the two runs).
    assert fast.stdout.split(b"resets")[0] == full.stdout.split(b"resets")[0]
    assert fast.stdout.startswith(b"4.4k $0.03 this session | block $0.03 (5.0k), resets ")
    assert fast.stdout.endswith(b" | today $0.03\n") and fast.stdout.count(b"\n") == 1


def test_options_after_the_command_and_in_one_word(served: dict[str, Any]) -> None:
    first = run(ENTRY, ["--data-dir", served["data"], "statusline"], served["stdin"], served["env"]).stdout
    for args in (
        ["statusline", "--data-dir", served["data"]],
        [f"--data-dir={served['data']}", "statusline", "--agent=claude-code"],
    ):
        out = run(ENTRY, args, served["stdin"], served["env"], "-X", "importtime")
        assert out.stdout.split(b"resets")[0] == first.split(b"resets")[0]
        assert "agtaild.cli" not in imported(out.stderr.decode())


def test_another_agent_s_status_bar_its_session_and_today(served: dict[str, Any]) -> None:
    """Qwen Code's statusline JSON (session_id, no transcript_path, no rate_limits): this
    session's numbers and today's, and no Claude block, which is not Qwen's window."""
    stdin = json.dumps({"session_id": QWEN_SESSION, "version": "0.14.1", "model": {"display_name": "qwen3-coder"},
                        "workspace": {"current_dir": "/repo"}}).encode()  # fmt: skip
    args = ["--data-dir", served["data"], "statusline", "--agent", "qwen"]
    fast = run(ENTRY, args, stdin, served["env"])
    full = run(FULL, args, stdin, served["env"])
    assert fast.returncode == 0 and fast.stdout == full.stdout
    assert re.fullmatch(rb"[0-9.]+[kM]? \S+ this session \| today \$[0-9.,]+\n", fast.stdout), fast.stdout
    assert not fast.stdout.startswith(b"0 ")  # its responses' tokens were counted
    # An id that is no session of this agent: today's total alone.
    unknown = run(ENTRY, args, served["stdin"], served["env"])
    assert re.fullmatch(rb"today \$[0-9.,]+\n", unknown.stdout), unknown.stdout


@pytest.mark.parametrize(
    "stdin",
    [b"", b"   \n", b"garbage{", b"[1, 2]", b'{"cwd": "/w"}', b'{"session_id": 7}', b'{"session_id": ""}', b"\xff\xfe\x00",
     b"[" * 100_000, b'{"session_id": "' + b"x" * 2_000_000 + b'"}', b'{"session_id": "a"} trailing'],
    ids=["empty", "blank", "garbage", "array", "no-session", "bad-session", "empty-session", "binary", "deep", "huge",
         "trailing"],
)  # fmt: skip
def test_bad_input_prints_nothing_and_exits_0(served: dict[str, Any], stdin: bytes) -> None:
    out = run(ENTRY, ["--data-dir", served["data"], "statusline"], stdin, served["env"])
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


def test_what_it_does_not_serve_goes_to_the_full_command(served: dict[str, Any]) -> None:
    # Help, an option of the full parser, a team server: the full command, stdin and all.
    helped = run(ENTRY, ["statusline", "--help"], b"", served["env"])
    assert helped.returncode == 0 and helped.stdout.startswith(b"usage: agtail statusline")
    wrong = run(ENTRY, ["statusline", "--colour"], served["stdin"], served["env"])
    assert wrong.returncode == 2 and b"--colour" in wrong.stderr and wrong.stdout == b""
    env = {**served["env"], "AGTAIL_SERVER": "http://127.0.0.1:9"}  # nobody listens: the index in-process
    out = run(ENTRY, ["--data-dir", served["data"], "statusline"], served["stdin"], env, "-X", "importtime")
    assert out.returncode == 0 and out.stdout.startswith(b"4.4k $0.03 this session")
    assert "agtaild.cli" in imported(out.stderr.decode())


# -- a daemon that is gone, stuck, or answers garbage: the index in-process -------------------
class FakeDaemon:
    """A unix socket that accepts and answers ``reply`` (None: never answers)."""

    def __init__(self, path: Path, reply: bytes | None) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.reply = reply
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            conn.recv(65536)
            if self.reply is None:
                self.held.append(conn)
                continue
            conn.sendall(self.reply)
            conn.close()

    def close(self) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def indexed(tmp_path: Path) -> dict[str, Any]:
    claude, transcript, now = sessions(tmp_path)
    env = environment(tmp_path)
    data = tmp_path / "data"
    built = run(
        FULL,
        ["--data-dir", str(data), "--no-daemon", "--only-roots", "--root", f"claude-code={claude}", "index"],
        b"",
        env,
    )
    assert built.returncode == 0, built.stderr
    sock_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"agtail-fake-{os.getpid()}-{time.monotonic_ns()}"
    sock_dir.mkdir()
    return {
        "env": env,
        "data": data,
        "stdin": stdin_of(transcript, now),
        "sock": sock_dir / "d.sock",
        "sock_dir": sock_dir,
    }


@pytest.mark.parametrize(
    "reply",
    [None, b"", b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\n{}", b"HTTP/1.1 200 OK\r\n\r\nnot json",
     b'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{"result": {}}', b"garbage", "gone", "no-socket-field", "broken-state"],
    ids=["stuck", "closes", "error", "not-json", "cut-short", "not-http", "gone", "tcp-only", "broken-state"],
)  # fmt: skip
def test_a_daemon_that_fails_gives_the_line_from_the_index(indexed: dict[str, Any], reply: Any) -> None:
    data, sock = indexed["data"], indexed["sock"]
    state: dict[str, Any] = {"data_dir": os.path.realpath(data), "socket": str(sock), "url": None}
    fake = None
    if reply == "no-socket-field":
        state["socket"] = None
    elif reply != "gone" and reply != "broken-state":
        fake = FakeDaemon(sock, reply)
    (data / "agtaild.json").write_text("{not json" if reply == "broken-state" else json.dumps(state))
    try:
        out = run(ENTRY, ["--data-dir", str(data), "statusline"], indexed["stdin"], indexed["env"])
    finally:
        if fake is not None:
            fake.close()
        sock.unlink(missing_ok=True)
        indexed["sock_dir"].rmdir()
    assert (out.returncode, out.stderr) == (0, b"")
    assert out.stdout.startswith(b"4.4k $0.03 this session | block $0.03 (5.0k), resets ")


# -- the pieces ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "served"),
    [
        (["statusline"], {"data_dir": None, "agent": "claude-code"}),
        (["--data-dir", "/d", "statusline"], {"data_dir": "/d", "agent": "claude-code"}),
        (["--data-dir=/d", "statusline", "--data-dir", "/e"], {"data_dir": "/e", "agent": "claude-code"}),
        (["statusline", "--agent", "qwen"], {"data_dir": None, "agent": "qwen"}),
        (["statusline", "--agent=qwen", "--data-dir=/d"], {"data_dir": "/d", "agent": "qwen"}),
        (["--agent", "qwen", "statusline"], None),  # the full parser says what is wrong
        (["statusline", "--help"], None),
        (["statusline", "--no-daemon"], None),
        (["--root", "claude-code=/x", "statusline"], None),
        (["statusline", "--data-dir"], None),
        (["statusline", "--data-dir", "--agent"], None),
        (["statusline", "--data-dir="], None),
        (["--data", "/d", "statusline"], None),  # an abbreviation: argparse's to read
        (["statusline", "statusline"], None),
        (["search", "statusline"], None),
        ([], None),
    ],
)
def test_which_command_lines_it_serves(argv: list[str], served: dict[str, str] | None) -> None:
    assert statusline_fast.parse_argv(argv) == served


@settings(max_examples=300, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
))  # fmt: skip
def test_its_json_reads_what_json_reads(doc: Any) -> None:
    for text in (
        json.dumps(doc),
        json.dumps(doc, indent=2, ensure_ascii=False),
        f" \n{json.dumps(doc)}\t\r\n",
    ):
        assert statusline_fast.loads(text.encode("utf-8")) == json.loads(text)
    if isinstance(doc, str):
        assert statusline_fast.quoted(doc) == json.dumps(doc)


@pytest.mark.parametrize("raw", [b"", b" ", b"{", b"[1,]", b"{} {}", b"nul", b"\xff", b"'x'", b'{"a": NaN'])
def test_its_json_refuses_what_json_refuses(raw: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(raw)
    with pytest.raises(ValueError):
        statusline_fast.loads(raw)


@pytest.mark.parametrize(
    "environ",
    [
        {"HOME": "/home/u"},
        {"HOME": "/home/u", "XDG_DATA_HOME": "/x/data"},
        {"HOME": "/home/u", "XDG_DATA_HOME": "  "},
        {"HOME": "/home/u", "AGTAIL_DATA_DIR": "~/agt"},
        {"HOME": "/home/u", "AGTAIL_DATA_DIR": "", "XDG_DATA_HOME": "/x/data"},
    ],
)
def test_the_data_dir_is_the_cli_s(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]) -> None:
    for name in ("HOME", "XDG_DATA_HOME", "AGTAIL_DATA_DIR", "ANDROID_DATA", "ANDROID_ROOT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert statusline_fast.data_dir(None) == str(dirs.default_data_dir().expanduser().resolve())
    assert statusline_fast.data_dir("~/given/../d") == str(Path("~/given/../d").expanduser().resolve())


def test_a_data_dir_only_platformdirs_knows_goes_to_the_full_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGTAIL_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # platformdirs decides what that means
    with pytest.raises(statusline_fast.HandOver):
        statusline_fast.data_dir(None)


def test_answers_by_length_chunked_or_up_to_the_close() -> None:
    body = b'{"jsonrpc": "2.0", "result": {"today": 1}, "id": 1}'
    by_length = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
        + b"0\r\n\r\n"
    )
    closed = b"HTTP/1.1 200 OK\r\n\r\n" + body
    for raw in (by_length, chunked, closed):
        assert statusline_fast.rpc_result(raw) == {"today": 1}
    failed = b'{"jsonrpc": "2.0", "error": {"code": -32602, "message": "bad"}, "id": 1}'
    error = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(failed) + failed
    for bad in (error, by_length[:-5], chunked[:-12], b"HTTP/1.1 401 Unauthorized\r\n\r\n{}", body):
        with pytest.raises(ValueError):
            statusline_fast.rpc_result(bad)
