"""`agtail export --format` with a daemon running: the document is the daemon's own export
endpoint, copied as it streams (no page of events crosses JSON-RPC), byte for byte what the
CLI writes without a daemon, and masked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agtaild.cli import main
from tests.daemon_proc import DaemonProc, copy_claude

BASIC = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("share-daemon")
    d = DaemonProc(base, {"claude-code": copy_claude(base / "claude")})
    try:
        yield d.start()
    finally:
        d.cleanup()


def _argv(d: DaemonProc, *rest: str, daemon: bool = True) -> list[str]:
    return [*([] if daemon else ["--no-daemon"]), "--data-dir", str(d.data_dir), "--only-roots",
            "--root", f"claude-code={d.roots['claude-code']}", *rest]  # fmt: skip


def test_the_cli_copies_the_daemons_export(
    daemon: DaemonProc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import agtaild.share.export as share_export

    alone: dict[str, bytes] = {}
    for fmt in ("md", "html", "json"):
        out = tmp_path / f"alone.{fmt}"
        assert (
            main(
                _argv(
                    daemon, "export", "claude-code:cd61be5e", "--format", fmt, "--to", str(out), daemon=False
                )
            )
            == 0
        )
        alone[fmt] = out.read_bytes()

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("made in the CLI, not copied from the daemon")

    monkeypatch.setattr(share_export, "export", refused)
    for fmt in ("md", "html", "json"):
        out = tmp_path / f"daemon.{fmt}"
        assert (
            main(_argv(daemon, "export", "cd61be5e", "--format", fmt, "--to", str(out))) == 0
        )  # an id alone
        assert out.read_bytes() == alone[fmt] and not Path(f"{out}.agtail-partial").exists()
    capsys.readouterr()
    assert (
        main(_argv(daemon, "export", "claude-code:nosuch", "--format", "md", "--to", str(tmp_path / "x.md")))
        == 4
    )
    assert "nosuch" in capsys.readouterr().err and not (tmp_path / "x.md").exists()
    assert main(_argv(daemon, "export", "claude-code:cd61be5e", "--format", "md", "--depth", "0")) == 0
    assert capsys.readouterr().out.startswith("# Create hello.py")
