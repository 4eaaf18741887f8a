"""`agtail statusline` against a running agtaild, with the standard library's smallest pieces.

A status bar runs its command on every change and waits for it, so the whole process is the
figure that counts (≤ 50 ms, bench/RESULTS.md). The `agtail` console script (agtaild.entry)
sends a statusline command line here before anything else is imported. This module imports
the C halves of json and socket (``_json``, ``_socket``: the json package imports re, and
socket builds its enums at import; either doubles the process's time) and agtaild.amounts; it reads the data dir's agtaild.json, makes one JSON-RPC ``usage.live`` call
over the daemon's unix socket and prints the line. Never argparse, the CLI, msgspec or the
index (tests/test_statusline_fast.py holds it).

Everything else is the full command's (agtaild.cli.statusline), with stdin handed over as it
was read: options this module does not know (``--help``, ``--root``, …), ``--no-daemon``,
``AGTAIL_SERVER``, a data dir only platformdirs can name, a data dir no daemon serves, a daemon
reached only over TCP, and any failure of the daemon's answer (then in-process, as the full
command does). Empty or garbage input prints nothing and exits 0 here already.

The line itself (:func:`line`) is made here for both paths: this session's tokens and cost, the
5-hour window (Claude Code's own ``rate_limits`` when it sent them, else the block computed from
the index), and today's total of every agent.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (typing costs more than this whole module)
    from collections.abc import Sequence
    from typing import Any

#: The most of stdin read (Claude Code's JSON is a few KB).
MAX_INPUT = 1 << 20
#: Seconds the daemon may take before the line is given up (the status bar waits for it).
DAEMON_TIMEOUT = 2.0
#: The most of an answer read from the daemon (``usage.live`` without sessions: a few KB).
MAX_ANSWER = 16 << 20
DEFAULT_AGENT = "claude-code"
COMMAND = "statusline"


class HandOver(Exception):
    """Not this module's case: the full command answers (``no_daemon``: in-process)."""

    def __init__(self, no_daemon: bool = False) -> None:
        super().__init__()
        self.no_daemon = no_daemon


# -- JSON, with the C scanner alone ------------------------------------------------------------
class _Decoding:
    """What json's C scanner reads off a decoder: json.loads' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


def loads(data: bytes) -> Any:
    """``json.loads(data)`` for UTF-8 ``data`` (ValueError when it is not JSON), through the
    scanner json itself uses, without importing json (and re under it)."""
    try:
        from _json import make_scanner
    except ImportError:  # an interpreter without the accelerator
        import json

        return json.loads(data)
    text = data.decode("utf-8")
    if text[:1] == "\ufeff":  # as json.loads reads UTF-8 bytes
        text = text[1:]
    start = len(text) - len(text.lstrip(" \t\n\r"))
    decoding: Any = _Decoding  # what the scanner reads off a JSONDecoder
    try:
        doc, end = make_scanner(decoding)(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    if text[end:].strip(" \t\n\r"):
        raise ValueError("not JSON: extra data after the document")
    return doc


def quoted(text: str) -> str:
    """``text`` as a JSON string (``json.dumps(text)``)."""
    try:
        from _json import encode_basestring_ascii
    except ImportError:
        import json

        return json.dumps(text)
    return str(encode_basestring_ascii(text))


# -- the input --------------------------------------------------------------------------------
def parse_argv(argv: Sequence[str]) -> dict[str, str | None] | None:
    """``data_dir`` and ``agent`` of a statusline command line that names nothing else; None
    for anything this module does not serve (the full parser answers it, errors included).

    Before the command only ``--data-dir``; after it ``--data-dir`` and ``--agent`` too, each
    ``--opt VALUE`` or ``--opt=VALUE``, the last one given winning, as argparse has it."""
    opts: dict[str, str | None] = {"data_dir": None, "agent": DEFAULT_AGENT}
    named = False
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == COMMAND and not named:
            named = True
            continue
        name, eq, value = arg.partition("=")
        if name not in ("--data-dir", "--agent") or (name == "--agent" and not named):
            return None
        if not eq:
            if i >= len(args):
                return None
            value = args[i]
            i += 1
        if not value or value.startswith("-"):
            return None
        opts["data_dir" if name == "--data-dir" else "agent"] = value
    return opts if named else None


def read_input(raw: bytes) -> dict[str, Any] | None:
    """The statusline JSON (None: empty, not JSON, not an object, or no session id)."""
    try:
        doc = loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("session_id"), str) or not doc["session_id"]:
        return None
    return doc


def read_stdin() -> bytes:
    try:
        stream = sys.stdin
        if stream is None:
            return b""
        return bytes(
            stream.buffer.read(MAX_INPUT) if hasattr(stream, "buffer") else stream.read(MAX_INPUT).encode()
        )
    except (OSError, ValueError, UnicodeError):
        return b""


# -- the daemon -------------------------------------------------------------------------------
def data_dir(given: str | None, env: dict[str, str] | None = None) -> str:
    """The data dir as the CLI resolves it (agtaild.cli.Context.resolved_data_dir): ``given``,
    else ``$AGTAIL_DATA_DIR``, else the Linux user data dir as platformdirs gives it (the cases
    agtaild.dirs writes out). Elsewhere only platformdirs knows: :class:`HandOver`."""
    environ = os.environ if env is None else env
    path = given if given is not None else environ.get("AGTAIL_DATA_DIR") or None
    if path is None:
        if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
            raise HandOver
        if environ.get("ANDROID_DATA") == "/data" and environ.get("ANDROID_ROOT") == "/system":
            raise HandOver
        xdg = environ.get("XDG_DATA_HOME", "")
        home = environ.get("HOME", "")
        if xdg.startswith("/"):
            path = os.path.join(xdg, "agtail")
        elif not xdg.strip() and home.startswith("/"):
            path = os.path.join(home, ".local", "share", "agtail")
        else:
            raise HandOver
    return os.path.realpath(os.path.expanduser(path))


def daemon_socket(directory: str) -> str:
    """The unix socket of the daemon serving ``directory``, from its agtaild.json. No daemon
    (no such file, or it names another data dir): in-process. A daemon without a socket (TCP
    and a token): the full command."""
    try:
        with open(os.path.join(directory, "agtaild.json"), "rb") as fh:
            info = loads(fh.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        raise HandOver(no_daemon=True) from None
    if not isinstance(info, dict) or os.path.normpath(str(info.get("data_dir", ""))) != directory:
        raise HandOver(no_daemon=True)
    path = info.get("socket")
    if not isinstance(path, str) or not path:
        raise HandOver
    return path


def request_body(given: dict[str, Any], agent: str) -> bytes:
    """The JSON-RPC request of this session's line: ``usage.live`` with :func:`params`."""
    session = quoted(params(agent, given)["session"])
    return (
        '{"jsonrpc":"2.0","method":"usage.live","params":{"session":' + session + ',"sessions":false},"id":1}'
    ).encode()


def rpc(path: str, body: bytes, timeout: float = DAEMON_TIMEOUT) -> Any:
    """One JSON-RPC call (``body``) over the unix socket at ``path`` (HTTP/1.1, ``Connection:
    close``), the whole exchange within ``timeout`` seconds → its result. Any failure raises."""
    import _socket

    head = (
        "POST /rpc HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nUser-Agent: agtail-statusline\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("ascii")
    deadline = time.monotonic() + timeout
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    chunks: list[bytes] = []
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(head + body)
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no whole answer within {timeout:g} s")
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER:
                raise ValueError("the answer is too large")
    finally:
        sock.close()
    return rpc_result(b"".join(chunks))


def rpc_result(raw: bytes) -> Any:
    """The result of a JSON-RPC answer read up to the close (ValueError if it is none)."""
    top, sep, payload = raw.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    status = lines[0].split(None, 2)
    if not sep or len(status) < 2 or not status[0].startswith("HTTP/1.") or status[1] != "200":
        raise ValueError(f"not a 200 answer: {lines[0][:80]!r}")
    fields = {k.strip().lower(): v.strip() for k, _, v in (field.partition(":") for field in lines[1:])}
    if fields.get("transfer-encoding", "").lower() == "chunked":
        payload = dechunk(payload)
    elif fields.get("content-length", "").isdigit():
        length = int(fields["content-length"])
        if len(payload) < length:
            raise ValueError("the answer was cut short")
        payload = payload[:length]
    answer = loads(payload)
    if not isinstance(answer, dict) or "result" not in answer:
        raise ValueError("not a JSON-RPC result")
    return answer["result"]


def dechunk(payload: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        size_line, sep, rest = payload.partition(b"\r\n")
        if not sep:
            raise ValueError("a chunk is cut short")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            return b"".join(out)
        if len(rest) < size + 2 or rest[size : size + 2] != b"\r\n":
            raise ValueError("a chunk is cut short")
        out.append(rest[:size])
        payload = rest[size + 2 :]


# -- the line ---------------------------------------------------------------------------------
def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _until(seconds: float) -> str:
    s = max(0, int(seconds))
    if s >= 86400:
        return f"{s // 86400}d{s % 86400 // 3600:02d}h"
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m"


def _recorded_windows(given: dict[str, Any], now: float) -> list[str]:
    """Claude Code's own rate_limits from stdin, as it sent them."""
    limits = given.get("rate_limits")
    out = []
    if isinstance(limits, dict):
        for key, name in (("five_hour", "5h"), ("seven_day", "7d")):
            w = limits.get(key)
            if not isinstance(w, dict):
                continue
            used = _number(w.get("used_percentage"))
            if used is None:
                continue
            resets = _number(w.get("resets_at"))
            out.append(f"{name} {used:g}%" + (f" ↻{_until(resets - now)}" if resets is not None else ""))
    return out


def line(given: dict[str, Any], doc: dict[str, Any], agent: str = DEFAULT_AGENT) -> str:
    """The status line of ``agent``'s status bar from its statusline JSON and the ``usage.live``
    answer. The 5-hour window is Claude Code's: in another agent's bar, the session and today."""
    from agtaild.amounts import cost_cell, tokens

    now = float(doc.get("now_epoch") or 0)
    parts = []
    session = doc.get("session")
    if session:
        u = session["usage"]
        parts.append(f"{tokens(u['total_tokens'])} {cost_cell(u)} this session")
    recorded = _recorded_windows(given, now)
    if recorded:
        parts.append(" · ".join(recorded))
    elif agent == DEFAULT_AGENT:
        block = next((w for w in doc.get("windows") or [] if w.get("kind") == "block"), None)
        if block is not None:
            resets = time.strftime(
                "%H:%M", time.localtime(now + block["resets_in_seconds"])
            )  # the block's end
            parts.append(
                f"block {cost_cell(block['usage'])} ({tokens(block['usage']['total_tokens'])}),"
                f" resets {resets} ({_until(block['resets_in_seconds'])})"
            )
    today = doc.get("today")
    if today:
        parts.append(f"today {cost_cell(today['usage'])}")
    return " | ".join(parts)


def params(agent: str, given: dict[str, Any]) -> dict[str, Any]:
    """The ``usage.live`` parameters of this session's line (:func:`request_body` writes them)."""
    return {"session": f"{agent}:{given['session_id']}", "sessions": False}


def write_line(text: str) -> None:
    """``text`` and a newline on stdout as UTF-8, its control characters made visible."""
    from agtaild.textsafe import visible

    if not text:
        return
    sys.stdout.flush()  # what was written before, first
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text stream alone (a test's capture)
        sys.stdout.write(visible(text) + "\n")
        sys.stdout.flush()
        return
    out.write((visible(text) + "\n").encode("utf-8", "replace"))
    out.flush()


# -- the command ------------------------------------------------------------------------------
def main(argv: Sequence[str], opts: dict[str, str | None]) -> int:
    """`agtail ARGV…`, a statusline command line (``opts``: its :func:`parse_argv`): the line
    through the daemon's socket, or the full command (handed the same stdin). Exits 0 whatever
    happens."""
    try:
        if os.environ.get("AGTAIL_SERVER"):  # a team server (TCP, TLS, a token): the full client
            return hand_over(argv, None, no_daemon=False)
        raw = read_stdin()
        given = read_input(raw)
        if given is None:
            return 0
        try:
            sock = daemon_socket(data_dir(opts["data_dir"]))
            agent = opts["agent"] or DEFAULT_AGENT
            text = line(given, rpc(sock, request_body(given, agent)), agent)
        except HandOver as why:
            return hand_over(argv, raw, no_daemon=why.no_daemon)
        except Exception:  # the daemon went away, is stuck, or answered something else: in-process
            return hand_over(argv, raw, no_daemon=True)
        write_line(text)
    except BaseException:  # a status bar is no place for a traceback
        return 0
    return 0


def hand_over(argv: Sequence[str], raw: bytes | None, *, no_daemon: bool) -> int:
    """The full `agtail` command line (``--no-daemon`` added when the daemon was found wanting),
    with stdin as this module read it (``raw``; None: not read)."""
    try:
        if raw is not None:
            import io

            sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace")
        from agtaild.cli import main as full

        return full(["--no-daemon", *argv] if no_daemon else list(argv)) or 0
    except SystemExit as end:  # argparse's --help and usage errors
        return end.code if isinstance(end.code, int) else 0
    except BaseException:
        return 0
