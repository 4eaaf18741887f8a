"""tests/pg_cluster.py itself: as root the cluster runs as ``postgres`` through runuser (or
setpriv), found by absolute path even when PATH lacks /usr/sbin; without either, the team
tests skip with the reason instead of erroring."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest

from tests import pg_cluster
from tests.pg_cluster import Cluster

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root drops to the postgres user")


@needs_root
@pytest.mark.parametrize(
    ("tool", "tool_dirs"), [("runuser", pg_cluster.DROP_TOOL_DIRS), ("setpriv", ("/usr/bin", "/bin"))]
)
def test_cluster_starts_as_root_without_sbin_on_path(
    tool: str, tool_dirs: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    psycopg = pytest.importorskip("psycopg")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # root's PATH in many containers and cron jobs
    monkeypatch.setattr(pg_cluster, "DROP_TOOL_DIRS", tool_dirs)
    if pg_cluster._tool(tool) is None:
        pytest.skip(f"no {tool} in {tool_dirs} on this machine")
    folder = Path(tempfile.mkdtemp(prefix="agtail-pg-"))
    cluster = Cluster(folder)
    try:
        cluster.start()  # skips (with its reason) when PostgreSQL is not installed
        assert cluster.as_postgres(["true"])[0] == pg_cluster._tool(tool)
        with psycopg.connect(cluster.new_database(), autocommit=True) as conn:
            assert conn.execute("SELECT current_user").fetchone() == ("postgres",)
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@needs_root
def test_no_privilege_drop_tool_is_a_skip_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres user here (that is the other skip)")
    monkeypatch.setattr(pg_cluster, "DROP_TOOL_DIRS", (str(tmp_path / "none"),))
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    with pytest.raises(pytest.skip.Exception, match=r"neither runuser nor setpriv"):
        Cluster(tmp_path / "c").as_postgres(["true"])
