"""AGTAIL_SERVER: the CLI against a daemon named by URL (a team server), over plain HTTP with
the token, and over https:// through a TLS-terminating proxy as docs/team.md sets it up."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_proc import CODEX_REAL, DaemonProc

AGTAIL = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("server")
    roots = base / "codex"
    shutil.copytree(CODEX_REAL, roots)
    d = DaemonProc(base, {"codex": roots})
    d.start()
    yield d
    d.cleanup()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    home = env.get("HOME") or os.environ["HOME"]
    full = {**os.environ, "HOME": home, **env}
    # A data dir with no daemon of its own: only AGTAIL_SERVER can answer.
    return subprocess.run([*AGTAIL, "--data-dir", str(Path(home) / "nowhere"), *args], capture_output=True, text=True, timeout=60, env=full)


def test_plain_url_with_the_token(daemon: DaemonProc, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "AGTAIL_SERVER": daemon.url, "AGTAIL_TOKEN": daemon.token}
    done = cli(env, "list", "--json")
    assert done.returncode == 0, done.stderr
    assert {s["agent"] for s in json.loads(done.stdout)["sessions"]} == {"codex"}
    (tmp_path / "tok").write_text(daemon.token + "\n")
    done = cli({"HOME": str(tmp_path), "AGTAIL_SERVER": daemon.url, "AGTAIL_TOKEN_FILE": str(tmp_path / "tok")}, "stats", "--json")
    assert done.returncode == 0, done.stderr


def test_wrong_token_and_bad_url_are_clear_errors(daemon: DaemonProc, tmp_path: Path) -> None:
    done = cli({"HOME": str(tmp_path), "AGTAIL_SERVER": daemon.url, "AGTAIL_TOKEN": "wrong"}, "list")
    assert done.returncode != 0 and "Traceback" not in done.stderr and done.stderr.strip()
    done = cli({"HOME": str(tmp_path), "AGTAIL_SERVER": "ftp://x"}, "list")
    assert done.returncode == 2 and "AGTAIL_SERVER" in done.stderr


def _proxy(listener: ssl.SSLSocket, target: tuple[str, int], stop: threading.Event) -> None:
    """A tiny TLS terminator: each accepted connection is piped to the daemon's TCP port."""

    def pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    listener.settimeout(0.2)
    while not stop.is_set():
        try:
            client, _ = listener.accept()
        except (TimeoutError, ssl.SSLError, OSError):
            continue
        upstream = socket.create_connection(target)
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()


def test_https_through_a_tls_proxy(daemon: DaemonProc, tmp_path: Path) -> None:
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        capture_output=True, text=True,
    )
    if made.returncode:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[:200]}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    raw = socket.create_server(("127.0.0.1", 0))
    listener = context.wrap_socket(raw, server_side=True)
    port = listener.getsockname()[1]
    host, daemon_port = daemon.url.removeprefix("http://").rsplit(":", 1)
    stop = threading.Event()
    thread = threading.Thread(target=_proxy, args=(listener, (host, int(daemon_port)), stop), daemon=True)
    thread.start()
    try:
        env = {"HOME": str(tmp_path), "AGTAIL_SERVER": f"https://localhost:{port}", "AGTAIL_TOKEN": daemon.token,
               "SSL_CERT_FILE": str(cert)}
        done = cli(env, "list", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["sessions"]
        # An untrusted certificate is refused, not ignored.
        done = cli({**env, "SSL_CERT_FILE": "/nonexistent"}, "list")
        assert done.returncode != 0 and "Traceback" not in done.stderr
    finally:
        stop.set()
        thread.join(5)
        listener.close()
