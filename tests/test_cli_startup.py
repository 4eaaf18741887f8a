"""`agtail` against a running daemon starts fast: it imports neither the HTTP stack of the
standard library nor msgspec, platformdirs, aiohttp or SQLite, and still prints exactly what it
printed with them. Also the pieces that make this possible: the client's own small HTTP/1.1
exchange, JSON written by the json module byte for byte as msgspec writes it, the data dir
without platformdirs, and the parser of only the command given."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agtail_client import ApiError, Client
from agtaild import cli, dirs
from tests.daemon_proc import DaemonProc, copy_claude

AGTAIL = [sys.executable, "-X", "importtime", "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]

#: What a read command against a daemon must not import (each costs more than the command).
HEAVY = (
    "http.client",
    "email",
    "msgspec",
    "platformdirs",
    "aiohttp",
    "sqlite3",
    "agtaild.config",
    "agtaild.query.service",
    "agtaild.index",
    "agtaild.model",
    # the MCP SDK and what it pulls in (only `agtail mcp` and the daemon's /mcp load them)
    "mcp",
    "mcp_types",
    "pydantic",
    "starlette",
    "httpx2",
    "anyio",
    "typing",  # only for annotations: imported under TYPE_CHECKING (~2 ms of a ~40 ms command)
)


#: What a read command over the unix socket does not import either: pathlib (with urllib.parse
#: and ipaddress under it) and the socket module's wrapper (four enums built at import) cost
#: ~20 % of such a command's instructions. Over TCP they are needed, and imported then.
UNIX_HEAVY = ("pathlib", "urllib", "ipaddress", "socket", "selectors")
#: And what a plain read command line (no --json) needs neither: argparse (agtaild.cli.fastparse
#: parses it), the json package (agtail_client.cjson), and re, enum and gettext under them —
#: together more than half of such a command's instructions.
PLAIN_HEAVY = ("argparse", "re", "enum", "gettext", "json", "datetime")


def imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports on stderr."""
    return {line.rpartition("|")[2].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


# -- against a real daemon -------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("startup")
    d = DaemonProc(base, {"claude-code": copy_claude(base / "claude")})
    try:
        yield d.start()
    finally:
        d.cleanup()


def agtail(d: DaemonProc, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items() if k != "AGTAIL_DATA_DIR"}
    full_env = {**base, "HOME": str(d.base / "home"), **(env or {})}
    return subprocess.run([*AGTAIL, *args], capture_output=True, timeout=60, env=full_env)


def expect_json(proc: subprocess.CompletedProcess[bytes], doc: Any) -> None:
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert proc.stdout == msgspec.json.encode(doc) + b"\n"  # what the CLI printed with msgspec


@pytest.mark.slow
def test_read_commands_against_the_daemon_import_nothing_heavy(daemon: DaemonProc) -> None:
    client = daemon.unix()
    try:
        page = client.call("sessions.list", {"limit": 5})
        first = page["sessions"][0]
        ref = f"{first['agent']}:{first['id']}"
        hits = client.call("search", {"q": "the", "limit": 5, "mode": "phrase"})
        stats = client.call("stats", {"by": "day"})
    finally:
        client.close()
    dd = ["--data-dir", str(daemon.data_dir)]
    runs = {
        "list --json": agtail(daemon, *dd, "list", "--limit", "5", "--json"),
        "list": agtail(daemon, *dd, "list", "--limit", "5"),
        "search --json": agtail(daemon, *dd, "search", "the", "--limit", "5", "--json"),
        "search": agtail(daemon, *dd, "search", "the", "--limit", "5"),
        "show": agtail(daemon, *dd, "show", ref),
        "stats": agtail(daemon, *dd, "stats"),
        "stats --json": agtail(daemon, *dd, "stats", "--json"),
        "tail": agtail(daemon, *dd, "tail", ref, "-n", "3"),
    }
    for name, proc in runs.items():
        assert proc.returncode == 0, (name, proc.stderr.decode()[-3000:])
        modules = imported(proc.stderr.decode())
        assert "agtail_client" in modules, name  # it did ask the daemon
        assert heavy(modules) == [], name
        assert sorted(modules & set(UNIX_HEAVY)) == [], name
        if "--json" not in name and name != "show":  # show's tool inputs are written by json
            assert sorted(modules & set(PLAIN_HEAVY)) == [], name
    expect_json(runs["list --json"], page)
    expect_json(runs["search --json"], hits)
    expect_json(runs["stats --json"], stats)
    assert first["id"][:8] in runs["list"].stdout.decode()
    # A missing session: the daemon's error, as an exit code, still without the heavy modules.
    gone = agtail(daemon, *dd, "show", "claude-code:00000000-nope")
    assert gone.returncode == 4 and b"no claude-code session" in gone.stderr
    assert heavy(imported(gone.stderr.decode())) == []


@pytest.mark.slow
def test_the_probe_sees_the_heavy_modules_in_process(daemon: DaemonProc, tmp_path: Path) -> None:
    """Without the daemon the same command needs them all, and the probe says so."""
    root = f"claude-code={daemon.roots['claude-code']}"
    local = agtail(daemon, "--data-dir", str(tmp_path / "d"), "--only-roots", "--root", root, "list", "--json")
    assert local.returncode == 0, local.stderr.decode()[-3000:]
    assert {"msgspec", "sqlite3", "agtaild.config", "agtaild.query.service"} <= set(heavy(imported(local.stderr.decode())))
    assert json.loads(local.stdout)["sessions"]


@pytest.mark.slow
def test_the_default_data_dir_and_tcp_with_the_token(daemon: DaemonProc, tmp_path: Path) -> None:
    client = daemon.unix()
    try:
        page = client.call("sessions.list", {"limit": 3})
    finally:
        client.close()
    # No --data-dir: $XDG_DATA_HOME/agtail, found without platformdirs.
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    (xdg / "agtail").symlink_to(daemon.data_dir)
    proc = agtail(daemon, "list", "--limit", "3", "--json", env={"XDG_DATA_HOME": str(xdg)})
    expect_json(proc, page)
    assert heavy(imported(proc.stderr.decode())) == []
    # No socket: TCP, with the token.
    moved = daemon.socket.with_name("moved")
    os.rename(daemon.socket, moved)
    try:
        proc = agtail(daemon, "--data-dir", str(daemon.data_dir), "list", "--limit", "3", "--json")
    finally:
        os.rename(moved, daemon.socket)
    expect_json(proc, page)
    assert heavy(imported(proc.stderr.decode())) == []


@pytest.mark.slow
def test_each_request_has_the_clients_timeout_after_discover(daemon: DaemonProc) -> None:
    """discover() checks health with a 2 s timeout; later calls must not keep it."""
    client = Client.discover(daemon.data_dir, timeout=33.0)
    assert client is not None
    try:
        client.call("agents.list", {})
        assert client._conn is not None and client._conn.sock is not None and client._conn._file is not None
        assert client._conn._file.timeout == 33.0  # the request's deadline (whole: connect, send, answer)
        assert 2.0 < (client._conn.sock.gettimeout() or 0) <= 33.0  # what was left of it at the last read
    finally:
        client.close()


# -- the HTTP/1.1 exchange -------------------------------------------------------------------


class Cut(bytes):
    """An answer after which the server closes the connection."""


class RawServer:
    """A unix-socket or TCP server that answers each request with the next scripted answer
    (raw bytes; None closes the connection without answering) and records what it got."""

    def __init__(self, answers: list[bytes | None], *, tcp: bool = False) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.connections = 0
        self.dir = tempfile.mkdtemp(prefix="agt", dir="/tmp")
        if tcp:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind(("127.0.0.1", 0))
            self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        else:
            self.path = os.path.join(self.dir, "s")
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(self.path)
        self.sock.listen()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn, conn.makefile("rb") as fp:
                while self.answers:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = fp.readline()
                        if not line:
                            break
                        head += line
                    if not head:
                        break
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    self.requests.append(head + fp.read(length))
                    answer = self.answers.pop(0)
                    if answer is None:
                        break
                    conn.sendall(answer)
                    if isinstance(answer, Cut) or b"Connection: close" in answer or answer.startswith(b"HTTP/1.0"):
                        break

    def close(self) -> None:
        self.sock.close()
        self.thread.join(5)
        shutil.rmtree(self.dir, ignore_errors=True)


def ok(body: bytes, *extra: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in extra)
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{head}\r\n".encode() + body


def test_bodies_by_length_chunked_and_up_to_the_close() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\n{\"a\":\r\n4\r\n 1}\n\r\n0\r\nX-Trailer: t\r\n\r\n"
    server = RawServer([ok(b'{"n": 1}'), chunked, b"HTTP/1.0 200 OK\r\n\r\n{\"c\": 3}", ok(b'{"d": 4}'),
                        b"HTTP/1.1 204 No Content\r\n\r\n", ok(b"{}", "Connection: close"), ok(b'{"e": 5}')])
    client = Client(socket_path=server.path)
    try:
        assert client.get("/one") == {"n": 1}
        assert client.get("/two") == {"a": 1}
        assert client.get("/three") == {"c": 3}  # read up to the close: the next request reconnects
        assert client.get("/four") == {"d": 4}
        assert client.request("POST", "/five") == (204, b"")
        assert client.get("/six") == {}
        assert client.get("/seven") == {"e": 5}
    finally:
        client.close()
        server.close()
    assert server.connections == 3
    assert [r.split(b" ")[1] for r in server.requests] == [
        b"/api/v1/one", b"/api/v1/two", b"/api/v1/three", b"/api/v1/four", b"/five", b"/api/v1/six", b"/api/v1/seven"
    ]


def test_a_kept_alive_connection_the_daemon_closed_is_retried_once() -> None:
    server = RawServer([ok(b'{"a": 1}'), None, ok(b'{"b": 2}')])
    client = Client(socket_path=server.path)
    try:
        assert client.get("/a") == {"a": 1}
        assert client.get("/b") == {"b": 2}
    finally:
        client.close()
        server.close()
    assert server.connections == 2 and len(server.requests) == 3


def test_meanwhile_runs_once_after_the_request_is_sent_and_before_the_answer() -> None:
    """The CLI imports what it prints with while the daemon computes: the work runs once the
    daemon has the request (never before it is sent), once even when the exchange is retried."""
    server = RawServer([ok(b'{"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}'), None, ok(b'{"b": 2}')])
    client = Client(socket_path=server.path)
    seen: list[int] = []

    def meanwhile() -> None:
        deadline = time.monotonic() + 5
        while len(server.requests) <= len(seen) and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append(len(server.requests))

    try:
        assert client.call("sessions.list", {}, meanwhile=meanwhile) == {"a": 1}
        assert seen == [1]  # the server had the request when it ran
        # The kept-alive connection is closed unanswered: the request is sent again, the work not.
        assert client.request("GET", "/b", meanwhile=meanwhile) == (200, b'{"b": 2}')
    finally:
        client.close()
        server.close()
    assert seen == [1, 2] and len(server.requests) == 3


def test_a_cut_answer_and_garbage_are_connection_errors_not_retried() -> None:
    for answer in (Cut(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"a\":"), b"SSH-2.0-OpenSSH\r\n\r\n"):
        server = RawServer([answer, ok(b"{}")])
        client = Client(socket_path=server.path)
        try:
            with pytest.raises(ConnectionError):
                client.get("/x")
            assert client._conn is None  # the next request starts afresh
        finally:
            client.close()
            server.close()
        assert len(server.requests) == 1


def test_nobody_listening_is_unreachable(tmp_path: Path) -> None:
    with pytest.raises(ApiError) as err:
        Client(socket_path=str(tmp_path / "none.sock")).call("agents.list")
    assert err.value.code == "unreachable"


@pytest.mark.parametrize("tcp", [False, True])
def test_requests_are_the_bytes_http_client_sent(tcp: bool) -> None:
    """The same request line and headers, in the same order, as the http.client the client
    used before (the daemon checks Host; the token goes over TCP only)."""
    import http.client

    exchanges: list[tuple[str, str, bytes | None, dict[str, str]]] = [
        ("GET", "/api/v1/sessions?limit=5&q=a+b", None, {}),
        ("POST", "/rpc", b'{"jsonrpc":"2.0"}', {"Content-Type": "application/json"}),
        ("POST", "/api/v1/login-link", None, {}),
    ]
    server = RawServer([ok(b"{}")] * (2 * len(exchanges)), tcp=tcp)
    client = Client(url=server.url, token="t0k") if tcp else Client(socket_path=server.path, token="t0k")
    try:
        for method, path, body, extra in exchanges:
            client.request(method, path, body, headers=extra)
        client.close()  # the server serves one connection at a time
        conn = (
            http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=10)
            if tcp
            else _unix_http_client(server.path)
        )
        for method, path, body, extra in exchanges:
            conn.request(method, path, body=body, headers=client._headers(extra))
            conn.getresponse().read()
        conn.close()
    finally:
        client.close()
        server.close()
    ours, theirs = server.requests[: len(exchanges)], server.requests[len(exchanges) :]
    assert ours == theirs
    assert all((b"Authorization: Bearer t0k" in r) == tcp for r in ours)


def _unix_http_client(path: str) -> Any:
    import http.client

    class Unix(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(path)

    return Unix("localhost", timeout=10)


def test_bad_requests_are_refused_before_sending() -> None:
    server = RawServer([ok(b"{}")])
    client = Client(socket_path=server.path, token="x")
    try:
        with pytest.raises(ValueError):
            client.get("/a b")
        with pytest.raises(ValueError):
            client.request("GET", "/x", headers={"X-Evil": "a\r\nHost: evil"})
        assert client.get("/fine") == {}
    finally:
        client.close()
        server.close()
    assert len(server.requests) == 1


# -- JSON out --------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=1e-8, max_value=1e-3)
    | st.text()
    | st.text(alphabet="0123456789e+-.:,[ ")
)
json_docs = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5), max_leaves=30
)


@settings(max_examples=500, deadline=None)
@given(json_docs)
def test_stdlib_json_is_msgspec_byte_for_byte_or_declines(doc: Any) -> None:
    fast = cli.stdlib_json_bytes(doc)
    assert fast is None or fast == msgspec.json.encode(doc)


def test_stdlib_json_writes_the_usual_documents_and_declines_the_rest() -> None:
    usual = {"sessions": [{"id": "5e-4112-a", "mtime": 1795999340.8623142, "cost": 0.25, "n": 3, "t": "«x» é\n"}]}
    assert cli.stdlib_json_bytes(usual) == msgspec.json.encode(usual)
    for doc in (1e-05, [1e16], {"a": 2.5e-7}, 2**64, float("nan"), "\ud800", {"p": Path("/x")}, {"k": (1e-5,)}):
        assert cli.stdlib_json_bytes(doc) is None, doc


def test_out_json_uses_msgspec_once_it_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process (msgspec loaded anyway), the output is msgspec's own, as before."""
    import datetime

    ctx = cli.Context(cli.build_parser().parse_args(["list"]))
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    doc = {"when": datetime.date(2026, 1, 2), "f": 1e-05}
    ctx.out_json(doc)
    assert out.getvalue() == msgspec.json.encode(doc) + b"\n"


# -- the data dir ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("xdg", "home"),
    [
        ("/x/data", "/home/u"),
        (None, "/home/u"),
        ("", "/home/u/"),
        ("   ", "/home/u"),
        ("relative/data", "/home/u"),
        (None, "relative-home"),
        (None, None),
        ("/x//data/", "/"),
    ],
)
def test_the_data_dir_is_the_one_platformdirs_gives(
    xdg: str | None, home: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    for name, value in (("XDG_DATA_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("AGTAIL_DATA_DIR", raising=False)
    assert dirs.default_data_dir() == Path(platformdirs.user_data_dir("agtail", appauthor=False))
    monkeypatch.setenv("AGTAIL_DATA_DIR", "~/elsewhere")
    assert dirs.default_data_dir() == Path("~/elsewhere").expanduser()


def test_the_data_dir_name_is_the_default_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The string the CLI finds the daemon by is the Path the daemon is started with."""
    from agtail_client import discovery

    for xdg in (str(tmp_path / "xdg"), "relative", None):
        if xdg is None:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_DATA_HOME", xdg)
        monkeypatch.delenv("AGTAIL_DATA_DIR", raising=False)
        assert Path(dirs.default_data_dir_name()) == dirs.default_data_dir()
        assert Path(discovery.data_dir_name()) == discovery.default_data_dir()
        monkeypatch.setenv("AGTAIL_DATA_DIR", "~/elsewhere")
        assert Path(dirs.default_data_dir_name()) == dirs.default_data_dir() == Path("~/elsewhere").expanduser()


@given(st.text(), st.text(alphabet=st.sampled_from("/:@!$&'()*+,;= ")))
@settings(max_examples=300, deadline=None)
def test_the_clients_url_quoting_is_urllib_parses(text: str, safe: str) -> None:
    import urllib.parse

    from agtail_client.wire import quote, urlencode

    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate: never in a command line's UTF-8 or a JSON document
    assert quote(text, safe) == urllib.parse.quote(text, safe=safe)
    params = {"q": text, "n": 3, text or "k": True}
    assert urlencode(params) == urllib.parse.urlencode(params)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=300, deadline=None)
def test_the_clients_json_is_the_json_modules(value: Any) -> None:
    """agtail_client.cjson (json's C halves, without the json package) writes what json.dumps
    writes and reads it back as json.loads does (NaN included: compared by repr)."""
    from agtail_client import cjson

    text = json.dumps(value)
    assert cjson.dumps(value) == text
    assert repr(cjson.loads(text)) == repr(json.loads(text))
    assert repr(cjson.loads(text.encode())) == repr(json.loads(text.encode()))
    for bad in ("", "{", "[1,]", "1 2", "\ufeff1"):
        with pytest.raises(ValueError):
            cjson.loads(bad)


# -- the parser ------------------------------------------------------------------------------


def test_commands_names_every_command_with_the_module_that_registers_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    def choices(parser: argparse.ArgumentParser) -> set[str]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return set(action.choices)

    everything = choices(cli.build_parser())
    assert set(cli.COMMANDS) == everything
    for module in cli.COMMAND_MODULES:
        monkeypatch.setattr("agtaild.cli.commands.COMMAND_MODULES", [module])
        assert choices(cli.build_parser()) == {c for c, m in cli.COMMANDS.items() if m == module}, module
        monkeypatch.undo()


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--limit", "5"],
        ["list", "--bogus"],
        ["--data-dir", "x", "list", "-h"],
        ["--data-dir=list", "show", "a:b", "--full"],
        ["--root", "claude-code=/x", "--only-roots", "--no-daemon", "search", "a", "b", "--mode", "words"],
        ["--json", "stats", "--by", "nope"],
        ["tail", "-f", "x:y"],
        ["sync", "push"],
        ["sync", "-h"],
        ["pick", "--print"],
        ["show"],
        ["--data", "d", "list"],
        ["nope"],
        [],
        ["-h"],
    ],
)
def test_the_parser_of_one_command_parses_as_the_whole_one(argv: list[str]) -> None:
    def parse(parser: Any) -> tuple[Any, ...]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                result: Any = vars(parser.parse_args(argv))
            except SystemExit as exit:
                result = exit.code
        return result, out.getvalue(), err.getvalue()

    assert parse(cli.build_parser(argv)) == parse(cli.build_parser())


def test_the_global_options_are_the_ones_skipped_before_the_command() -> None:
    from agtaild.cli.parser import Parser

    actions = [a for a in cli._common_options(False, Parser)._actions if a.option_strings]
    assert {s for a in actions if a.nargs == 0 for s in a.option_strings} == set(cli._FLAG_OPTIONS)
    assert {s for a in actions if a.nargs != 0 for s in a.option_strings} == set(cli._VALUE_OPTIONS)


def test_the_command_is_named_only_when_that_is_certain() -> None:
    assert cli.command_named(["--data-dir", "list", "--root=a=b", "--json", "show", "x:y"]) == "show"
    assert cli.command_named(["--root", "a=b", "--no-daemon", "--only-roots", "tail"]) == "tail"
    for argv in (["--data", "d", "list"], ["-h", "list"], ["--", "list"], ["lis"], [], ["--data-dir"]):
        assert cli.command_named(argv) is None, argv


@pytest.mark.parametrize("columns", [None, "", "0", "-3", "abc", "57", "300"])
def test_help_width_is_shutils(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert cli.help_width() == shutil.get_terminal_size().columns - 2
