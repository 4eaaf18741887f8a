"""Where things live: the data dir, the runtime dir, and the session roots to read.

Data dir: ``--data-dir``, else ``$AGTAIL_DATA_DIR``, else the platform user data dir
(``$XDG_DATA_HOME/agtail`` on Linux; see dirs.py). The import store and the archive live below it
and are read by the same adapters as the native roots (they mirror each agent's session root).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

# The dirs live in dirs.py (no msgspec, no platformdirs: the CLI finds a daemon with it alone).
from agtaild.dirs import APP as APP
from agtaild.dirs import default_data_dir as default_data_dir
from agtaild.dirs import runtime_dir as runtime_dir
from agtaild.errors import UsageError


class RootSpec(msgspec.Struct, frozen=True):
    """One directory (or DB file) an adapter reads, and how sessions found there are tagged."""

    agent: str
    path: str
    kind: str = "native"  # native | imported | archive
    collection: str | None = None


class Config(msgspec.Struct):
    data_dir: str
    roots: list[RootSpec]
    archive: bool = True
    #: Claude Code's plugin cache, for plugin attribution (None: the default under ~/.claude).
    claude_plugins_dir: str | None = None
    #: Offer the working directories the index knows to adapters that look for sessions in
    #: project folders (Aider). Off with --only-roots: then only the given roots are read.
    known_cwds: bool = False

    @property
    def index_path(self) -> Path:
        return Path(self.data_dir) / "index.sqlite3"

    @property
    def import_dir(self) -> Path:
        return Path(self.data_dir) / "imported"

    @property
    def archive_dir(self) -> Path:
        return Path(self.data_dir) / "archive"


def parse_root_option(value: str) -> tuple[str, str]:
    """``AGENT=PATH`` → (agent, path)."""
    agent, sep, path = value.partition("=")
    if not sep or not agent or not path:
        raise UsageError(f"--root expects AGENT=PATH, got {value!r}")
    return agent.strip(), path


def resolve_roots(
    root_options: list[str],
    *,
    only_roots: bool,
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[RootSpec]:
    """Every root to read: adapters' defaults (replaced per agent by --root), the import
    store's collections and the archive."""
    from agtaild.adapters import all_adapters, get_adapter

    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home()) if home is None else home
    given: dict[str, list[str]] = {}
    for opt in root_options:
        agent, path = parse_root_option(opt)
        get_adapter(agent)  # validates the agent id
        given.setdefault(agent, []).append(str(Path(path).expanduser().resolve()))

    roots: list[RootSpec] = []
    for adapter in all_adapters():
        if adapter.id in given:
            paths = given[adapter.id]
        elif only_roots:
            paths = []
        else:
            paths = [str(p) for p in adapter.default_roots(env, home)]
        roots.extend(RootSpec(agent=adapter.id, path=p) for p in paths)
    return [*roots, *store_roots(data_dir)]


def store_roots(data_dir: Path) -> list[RootSpec]:
    """The roots that follow the data dir: each agent's archive, and the import store's
    collections."""
    from agtaild.adapters import all_adapters

    adapters = all_adapters()
    roots = [RootSpec(agent=a.id, path=str(data_dir / "archive" / a.id), kind="archive") for a in adapters]
    import_dir = data_dir / "imported"
    if import_dir.is_dir():
        known = {a.id for a in adapters}
        for coll in sorted(import_dir.iterdir()):
            if not coll.is_dir() or coll.name.startswith("."):
                continue
            for agent_dir in sorted(coll.iterdir()):
                if agent_dir.name in known:
                    roots.append(
                        RootSpec(agent=agent_dir.name, path=str(agent_dir), kind="imported", collection=coll.name)
                    )
    return roots


def load_config(
    *,
    data_dir: str | None = None,
    root_options: list[str] | None = None,
    only_roots: bool = False,
    env: Mapping[str, str] | None = None,
) -> Config:
    env = os.environ if env is None else env
    ddir = Path(data_dir).expanduser() if data_dir else default_data_dir(env)
    ddir = ddir.resolve()
    roots = resolve_roots(root_options or [], only_roots=only_roots, data_dir=ddir, env=env)
    return Config(data_dir=str(ddir), roots=roots, known_cwds=not only_roots)
