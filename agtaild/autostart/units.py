"""The systemd user unit and the launchd agent of agtaild, rendered from one template each.

The templates (agtaild/data/service/) are the commented, hardened files: the copies in the
repository (systemd/agtaild.service, launchd/dev.agtail.agtaild.plist, for installing by hand)
are their rendering for a generic ``~/.local/bin`` install, and `agtail service install`
renders them for this installation: the agtaild next to the running interpreter, the data dir,
and the environment that moved the agents' roots. A test keeps the repository copies equal to
the generic rendering, so the two never drift apart.

Both files are UTF-8 text, and neither can name a path that is not UTF-8: a property list is
XML (characters, not bytes), and systemd ignores an ``Environment=`` that is not UTF-8 (so the
daemon would read the wrong roots) while a path setting like ``ReadWritePaths=`` takes no
escape for a raw byte. Such a name (the data dir, a root, the installation, a variable) is
refused with a sentence that names it, before anything is written or printed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape

from agtaild.errors import UsageError
from agtaild.fsnames import to_text

UNIT_NAME = "agtaild.service"
LABEL = "dev.agtail.agtaild"
PLIST_NAME = f"{LABEL}.plist"

#: Variables of agtail's own that the daemon reads and that belong in its service (not the
#: runtime dir or socket: the service manager gives those; never AGTAIL_REMOTE_TOKEN, a secret).
DAEMON_ENV = ("AGTAIL_LISTEN", "AGTAIL_ARCHIVE", "AGTAIL_PRICING", "AGTAIL_LOG_LEVEL")


@dataclass
class Installation:
    """What the service must start: argv (agtaild and its options), its environment, the data
    dir it writes, where launchd writes its log."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    data_dir: str = ""
    log_path: str = ""


def agtaild_path() -> Path:
    """The agtaild of the running interpreter (its bin dir: a venv, pipx, ~/.local)."""
    return Path(sys.executable).parent / ("agtaild.exe" if sys.platform == "win32" else "agtaild")


def moved_roots_env(environ: Mapping[str, str], adapter_env: Sequence[str]) -> dict[str, str]:
    """The variables set here that move an agent's data or change the daemon, sorted by name."""
    names = set(DAEMON_ENV) | set(adapter_env)
    return {name: environ[name] for name in sorted(names) if environ.get(name)}


def require_utf8(value: str, what: str) -> str:
    """``value`` when it can be written into a unit file (UTF-8); else the sentence why not."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"cannot write the service: {what} '{to_text(value)}' is not valid UTF-8, and systemd units and "
            "launchd property lists can only name UTF-8 paths and values: rename it, or choose one whose name "
            "is UTF-8"
        ) from None
    return value


def installation(
    data_dir: str, environ: Mapping[str, str], adapter_env: Sequence[str], root_options: Sequence[str], only_roots: bool,
    log_path: str = "",
) -> Installation:
    """This installation's service: absolute paths only (a service has no cwd or shell), all
    of them UTF-8 (:func:`require_utf8`)."""
    daemon = agtaild_path()
    require_utf8(sys.executable, "the installation (the Python that runs agtail)")
    require_utf8(str(daemon), "the agtaild program")
    require_utf8(data_dir, "the data dir")
    require_utf8(log_path, "the log file")
    argv = [str(daemon), "--data-dir", data_dir]
    if only_roots:
        argv.append("--only-roots")
    for option in root_options:
        agent, sep, path = option.partition("=")
        if not sep or not agent or not path:
            raise UsageError(f"--root expects AGENT=PATH, got {option!r}")
        argv += ["--root", require_utf8(f"{agent}={Path(path).expanduser().absolute()}", "the root")]
    env = {"PYTHONUNBUFFERED": "1", **moved_roots_env(environ, adapter_env)}
    for name, value in env.items():
        require_utf8(name, "the variable name")
        require_utf8(value, f"the value of {name}")
    return Installation(argv=argv, env=env, data_dir=data_dir, log_path=log_path)


def _template(name: str) -> str:
    return resources.files("agtaild").joinpath("data", "service", name).read_text(encoding="utf-8")


def _fill(text: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


# -- systemd ---------------------------------------------------------------------------------

SYSTEMD_GENERIC_HEADER = """\
# agtaild as a systemd *user* service.
#
# Easiest: `agtail service install` writes this unit with the paths of your installation,
# then enables and starts it (`agtail service status`, `agtail service logs`). By hand:
#
#   mkdir -p ~/.config/systemd/user ~/.local/share/agtail
#   cp systemd/agtaild.service ~/.config/systemd/user/
#   systemctl --user daemon-reload && systemctl --user enable --now agtaild
#   journalctl --user -u agtaild        # the start-up line has a one-time viewer login link
#
# ExecStart assumes `pipx install agtaild` (or any install that puts agtaild in ~/.local/bin);
# point it at your venv's bin/agtaild otherwise. Options: `systemctl --user edit agtaild` and
# add e.g. Environment=AGTAIL_LISTEN=127.0.0.1:7718 (see `agtaild --help` for every variable).
"""


def systemd_quote(value: str, *, command: bool = False) -> str:
    """One word of a unit file: specifiers escaped (%%), quoted (C-style) when it holds a space,
    a quote or a backslash; in a command line ``$`` is doubled too (systemd expands $VAR there,
    not in Environment=). Control characters cannot be written at all."""
    if any(ord(ch) < 32 or ch == "\x7f" for ch in value):
        raise UsageError(f"cannot write {value!r} into a systemd unit: it holds a control character")
    value = value.replace("%", "%%")
    if command:
        value = value.replace("$", "$$")
    if value and not any(ch in value for ch in " \t\"'\\;"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_systemd(header: str, exec_start: str, environment: Sequence[str], data_dir: str) -> str:
    return _fill(_template("agtaild.service.in"), {
        "HEADER": header.rstrip("\n"),
        "EXEC_START": exec_start,
        "ENVIRONMENT": "\n".join(environment),
        "DATA_DIR": data_dir,
    })


def systemd_generic() -> str:
    """systemd/agtaild.service as the repository ships it."""
    return render_systemd(SYSTEMD_GENERIC_HEADER, "%h/.local/bin/agtaild", ["Environment=PYTHONUNBUFFERED=1"], "%h/.local/share/agtail")


def systemd_unit(inst: Installation, version: str) -> str:
    """The unit `agtail service install` writes for ``inst``."""
    header = (
        f"# agtaild as a systemd *user* service, written by `agtail service install` (agtail {version})\n"
        f"# for the installation of {sys.executable}.\n"
        "# Run that command again after moving the installation, the data dir or an agent's data;\n"
        "# `agtail service uninstall` removes it. Your own settings: `systemctl --user edit agtaild`\n"
        "# (a drop-in, kept when this file is written again)."
    )
    exec_start = " ".join(systemd_quote(arg, command=True) for arg in inst.argv)
    environment = [f"Environment={systemd_quote(f'{k}={v}')}" for k, v in inst.env.items()]
    text = render_systemd(header, exec_start, environment, systemd_quote(inst.data_dir))
    if uses_tmp(inst):  # a private /tmp would hide them from the service
        text = text.replace("\nPrivateTmp=yes\n", "\n# (Off here: this installation keeps files under /tmp.)\nPrivateTmp=no\n")
    return text


def uses_tmp(inst: Installation) -> bool:
    """Does the service need a file under /tmp or /var/tmp (the data dir, a root, agtaild)?"""
    words = [*inst.argv, inst.data_dir, *inst.env.values()]
    return any(part.startswith(("/tmp/", "/var/tmp/")) or "=/tmp/" in part or "=/var/tmp/" in part for part in words)


# -- launchd ---------------------------------------------------------------------------------

LAUNCHD_GENERIC_HEADER = """\
  agtaild as a macOS LaunchAgent (runs as you, at login).

  Easiest: `agtail service install` writes this file with the paths of your installation and
  loads it (`agtail service status`, `agtail service logs`). By hand:

    mkdir -p ~/Library/Logs/agtail
    cp launchd/dev.agtail.agtaild.plist ~/Library/LaunchAgents/
    # edit the agtaild path below if it is not ~/.local/bin/agtaild (e.g. `which agtaild`)
    launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/dev.agtail.agtaild.plist
    launchctl kickstart -k gui/$(id -u)/dev.agtail.agtaild      # restart
    launchctl bootout gui/$(id -u)/dev.agtail.agtaild           # stop and unload

  launchd does not expand ~ or $HOME: replace USER below with your user name."""


def plist_string(value: str) -> str:
    if any((ord(ch) < 32 and ch not in "\t\n\r") or ch in "\ufffe\uffff" for ch in value):
        raise UsageError(f"cannot write {value!r} into a property list: it holds a control character")
    return f"<string>{escape(value)}</string>"


def render_launchd(header: str, argv: Sequence[str], env: Mapping[str, str], log_path: str) -> str:
    if "--" in header:
        raise ValueError("an XML comment cannot hold '--'")
    return _fill(_template("dev.agtail.agtaild.plist.in"), {
        "HEADER": header.rstrip("\n"),
        "PROGRAM_ARGUMENTS": "\n".join(f"    {plist_string(arg)}" for arg in argv),
        "ENVIRONMENT": "\n".join(f"    <key>{escape(k)}</key>\n    {plist_string(v)}" for k, v in env.items()),
        "LOG_PATH": escape(log_path),
    })


def launchd_generic() -> str:
    """launchd/dev.agtail.agtaild.plist as the repository ships it."""
    return render_launchd(LAUNCHD_GENERIC_HEADER, ["/Users/USER/.local/bin/agtaild"], {"PYTHONUNBUFFERED": "1"},
                          "/Users/USER/Library/Logs/agtail/agtaild.log")


def launchd_plist(inst: Installation, version: str) -> str:
    """The LaunchAgent `agtail service install` writes for ``inst``."""
    where = sys.executable.replace("--", "- -")  # an XML comment cannot hold "--"
    header = (
        f"  agtaild as a macOS LaunchAgent, written by `agtail service install` (agtail {version})\n"
        f"  for the installation of {where}.\n"
        "  Run that command again after moving the installation, the data dir or an agent's data;\n"
        "  `agtail service uninstall` unloads and removes it."
    )
    return render_launchd(header, inst.argv, inst.env, inst.log_path)


def user_config_dir(environ: Mapping[str, str]) -> Path:
    """$XDG_CONFIG_HOME (absolute), else ~/.config: where systemd looks for user units."""
    xdg = environ.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else Path(environ.get("HOME") or Path.home()) / ".config"
