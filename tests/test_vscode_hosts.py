"""The VS Code-family host folders every extension agent shares."""

from __future__ import annotations

from pathlib import Path

from agtaild.adapters.kit import vscode_hosts


def test_linux_and_macos_folders_of_every_host(tmp_path: Path) -> None:
    dirs = vscode_hosts.user_dirs({}, tmp_path)
    assert tmp_path / ".config" / "Code" / "User" in dirs
    assert tmp_path / ".config" / "VSCodium" / "User" in dirs
    assert tmp_path / "Library" / "Application Support" / "Cursor" / "User" in dirs
    assert len(dirs) == 2 * len(vscode_hosts.HOSTS)


def test_xdg_config_home_and_portable_move_the_folders(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "VSCODE_PORTABLE": str(tmp_path / "port")}
    dirs = vscode_hosts.user_dirs(env, tmp_path)
    assert dirs[0] == tmp_path / "port" / "user-data" / "User"
    assert tmp_path / "cfg" / "Windsurf" / "User" in dirs
    assert tmp_path / ".config" / "Code" / "User" not in dirs


def test_global_storage_lowercases_the_extension_id(tmp_path: Path) -> None:
    roots = vscode_hosts.global_storage({}, tmp_path, "saoudrizwan.claude-dev")
    assert tmp_path / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" in roots
    assert all(
        p.name == "rooveterinaryinc.roo-cline"
        for p in vscode_hosts.global_storage({}, tmp_path, "RooVeterinaryInc.roo-cline")
    )
    assert tmp_path / ".config" / "Code" / "User" / "workspaceStorage" in vscode_hosts.workspace_storage(
        {}, tmp_path
    )
