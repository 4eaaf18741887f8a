"""`agtail service install | uninstall | status | logs`: agtaild started at login by the
system's service manager (a systemd user unit on Linux, a LaunchAgent on macOS).

install writes the unit for THIS installation (the agtaild next to the running interpreter,
the data dir, the --root options and the environment that moved the agents' data, all as
absolute paths: a service has no shell and no cwd) and starts it; uninstall stops and removes
it (the data dir is kept); status says whether it runs, its pid, socket, URL and last error;
logs shows its log. ``--dry-run`` prints what would be written and run, and does nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ACTIONS = ("install", "uninstall", "status", "logs")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "service",
        parents=[common],
        help="run agtaild at login: install, uninstall, status or logs of its systemd/launchd service",
        description="Run agtaild at login as a systemd user service (Linux) or a LaunchAgent (macOS).",
    )
    p.add_argument("action", choices=ACTIONS, help="install (write and start), uninstall (stop and remove), status, logs")
    p.add_argument("--dry-run", action="store_true", help="print what would be written and run; change nothing")
    p.add_argument("--manager", choices=("systemd", "launchd"), default=None,
                   help="the service manager (default: launchd on macOS, systemd elsewhere)")
    p.add_argument("-n", "--lines", type=int, default=100, metavar="N", help="logs: the last N lines (default 100)")
    p.add_argument("-f", "--follow", action="store_true", help="logs: keep printing new lines")
    p.set_defaults(func=run)


def run(ctx: Any) -> int:
    from agtaild.autostart.managers import manager_for

    args = ctx.args
    name = args.manager or ("launchd" if sys.platform == "darwin" else "systemd")
    manager = manager_for(name, os.environ)
    data_dir = Path(ctx.resolved_data_dir)
    if args.action == "install":
        return _install(ctx, manager, data_dir)
    if args.action == "uninstall":
        return _apply(ctx, manager, manager.uninstall(), f"removed {manager.path} (the data dir {data_dir} is kept)")
    if args.action == "status":
        return _status(ctx, manager, data_dir)
    return _logs(ctx, manager)


def _install(ctx: Any, manager: Any, data_dir: Path) -> int:
    from agtaild import __version__
    from agtaild.adapters import all_adapters
    from agtaild.autostart.units import installation, launchd_plist, systemd_unit
    from agtaild.errors import AgtailError, UsageError

    adapters = all_adapters()
    adapter_env = [var for adapter in adapters for var in adapter.env_vars]
    for option in ctx.root_options:  # the daemon would refuse to start on an unknown agent
        agent = option.partition("=")[0]
        if agent not in {a.id for a in adapters}:
            raise UsageError(f"--root {option}: unknown agent {agent!r} (known: {', '.join(sorted(a.id for a in adapters))})")
    from agtaild.autostart.units import require_utf8

    require_utf8(str(manager.path), "the service file")
    log_path = str(getattr(manager, "log_path", ""))
    inst = installation(str(data_dir), os.environ, adapter_env, ctx.root_options, ctx.only_roots, log_path)
    if not Path(inst.argv[0]).exists() and not ctx.args.dry_run:
        raise AgtailError(f"{inst.argv[0]} does not exist: agtaild is not installed next to {sys.executable}")
    text = launchd_plist(inst, __version__) if manager.name == "launchd" else systemd_unit(inst, __version__)
    note = f"agtaild runs as a {manager.name} service ({manager.path}); `agtail service status` shows it"
    if manager.name == "systemd":
        note += "\nto keep it running while you are logged out: loginctl enable-linger $USER"
    return _apply(ctx, manager, manager.install(text, data_dir), note)


def _apply(ctx: Any, manager: Any, steps: list[Any], note: str) -> int:
    from agtaild.autostart.managers import execute

    if ctx.args.dry_run:
        if ctx.json:
            ctx.out_json({"manager": manager.name, "path": str(manager.path), "dry_run": True,
                          "steps": [s.describe() for s in steps]})
            return 0
        for step in steps:
            if step.action == "write":
                print(f"would write {step.path}:")
                print(step.text, end="" if step.text.endswith("\n") else "\n")
            elif step.action == "run":
                print("would run: " + _shell_words(step.argv))
            else:
                print(f"would {step.action} {step.path}")
        return 0
    done = execute(steps)
    if ctx.json:
        ctx.out_json({"manager": manager.name, "path": str(manager.path), "dry_run": False, "steps": done})
    else:
        for step in done:
            what = "ran: " + _shell_words(step["argv"]) if step["action"] == "run" else f"{step['action']} {step['path']}"
            failed = f" (exit {step['exit']})" if step.get("exit") else ""
            ctx.err(what + failed)
        print(note)
    return 0


def _status(ctx: Any, manager: Any, data_dir: Path) -> int:
    from agtail_client import Client, read_state

    if ctx.args.dry_run:
        print("would run: " + _shell_words(manager.status_argv()))
        return 0
    doc: dict[str, Any] = {"manager": manager.name, "path": str(manager.path), "installed": manager.path.exists()}
    doc.update(manager.status())
    state = read_state(data_dir) or {}
    client = Client.discover(data_dir, timeout=5.0)
    if client is not None:
        client.close()
    doc.update({"data_dir": str(data_dir), "socket": state.get("socket"), "url": state.get("url"),
                "daemon_pid": state.get("pid"), "answers": client is not None})
    if ctx.json:
        ctx.out_json(doc)
        return 0
    print(f"{manager.name}: {doc['path']}" + ("" if doc["installed"] else " (not installed)"))
    print(f"state:      {doc['active']}{' (' + doc['sub'] + ')' if doc['sub'] else ''}"
          f"{', enabled' if doc['enabled'] and doc['installed'] else ''}")
    print(f"pid:        {doc['pid'] or '-'}")
    print(f"data dir:   {data_dir}")
    print(f"socket:     {doc['socket'] or '-'}")
    print(f"url:        {doc['url'] or '-'}")
    print(f"answers:    {'yes' if doc['answers'] else 'no'}")
    print(f"last error: {doc['last_error'] or '-'}")
    return 0


def _logs(ctx: Any, manager: Any) -> int:
    from agtaild.autostart.managers import run
    from agtaild.errors import UsageError

    if ctx.args.lines < 1:
        raise UsageError("--lines must be at least 1")
    argv = manager.logs_argv(ctx.args.lines, ctx.args.follow)
    if ctx.args.dry_run:
        print("would run: " + _shell_words(argv))
        return 0
    sys.stdout.flush()
    return run(argv, capture=False, check=False).returncode


def _shell_words(argv: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in argv)
