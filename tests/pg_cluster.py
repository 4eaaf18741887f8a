"""A throw-away PostgreSQL cluster for the tests: a real server, never a mock.

``initdb`` into a temporary folder, ``pg_ctl start`` listening only on a unix socket in that
folder (no TCP port, so parallel runs never collide), one database per test. PostgreSQL refuses
to run as root: as root the cluster belongs to the ``postgres`` user (Debian's package creates
it) and commands run through ``runuser`` (or ``setpriv``), found by absolute path: root's PATH
often lacks /usr/sbin (cron, containers, ``su`` without ``-``). When no server can be started, or
no such tool is there, the tests skip, saying why (.ci/run installs Debian's ``postgresql``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


#: Where runuser and setpriv live when PATH does not name the folder (util-linux installs
#: runuser in /usr/sbin or /sbin, setpriv in /usr/bin or /bin).
DROP_TOOL_DIRS = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")


def _tool(name: str) -> str | None:
    """``name`` on PATH, else in :data:`DROP_TOOL_DIRS`: an absolute path, or None."""
    found = shutil.which(name)
    if found:
        return os.path.abspath(found)
    for folder in DROP_TOOL_DIRS:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class Cluster:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.socket_dir = folder / "sock"
        self.log = folder / "server.log"
        self.as_root = os.geteuid() == 0

    def as_postgres(self, argv: list[str]) -> list[str]:
        """``argv`` run as the ``postgres`` user (PostgreSQL refuses root), or a skip that
        says what is missing."""
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root, and there is no postgres user to run PostgreSQL as")
        runuser = _tool("runuser")
        if runuser:
            return [runuser, "-u", "postgres", "--", *argv]
        setpriv = _tool("setpriv")
        if setpriv:
            return [setpriv, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--", *argv]
        where = ", ".join(DROP_TOOL_DIRS)
        pytest.skip(f"running as root, and neither runuser nor setpriv is on PATH or in {where} "
                    "(util-linux): cannot run PostgreSQL as the postgres user")

    def _run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        if self.as_root:
            argv = self.as_postgres(argv)
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
        if not initdb or not pg_ctl:
            pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        self.socket_dir.mkdir(parents=True)
        if self.as_root:
            shutil.chown(self.folder, "postgres")
            shutil.chown(self.socket_dir, "postgres")
        done = self._run(
            [initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]
        )
        if done.returncode:
            pytest.skip(f"initdb failed: {done.stderr.strip()[:300]}")
        options = f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}' -c fsync=off"
        done = self._run([pg_ctl, "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start"])
        if done.returncode:
            pytest.skip(f"pg_ctl start failed: {done.stderr.strip()[:300]} {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return self.log.read_text()[-500:]
        except OSError:
            return ""

    def stop(self) -> None:
        pg_ctl = _bin("pg_ctl")
        if pg_ctl and self.data.exists():
            self._run([pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    pytest.importorskip("psycopg")
    folder = Path(tempfile.mkdtemp(prefix="agtail-pg-"))
    cluster = Cluster(folder)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh, empty database on the session's cluster."""
    return pg_cluster.new_database()
