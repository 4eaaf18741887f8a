"""Whose index a data dir holds: an index belongs to one set of roots.

The index (and the archive beside it) mirror the roots they were built from. A command run
in-process with other roots (``--root``, ``--only-roots``) used to rewrite the index a running
daemon serves: its lists then showed the command's sessions until the daemon's next rescan,
and the archive kept the command's files for good. So the data dir records its owner's roots
(``<data dir>/roots.json``) and every in-process command is matched against it:

* the daemon owns its data dir: it records its roots when it starts (and says so in its log
  when they replace other ones);
* a command without ``--root``/``--only-roots`` means the data dir's own roots: it uses the
  recorded ones (a daemon's, or those a command recorded with ``--data-dir``), and records its
  defaults when the data dir has no owner yet or was last claimed by the defaults of a command
  (defaults follow the environment);
* a command with other roots never touches that index: it works on an index of its own, a
  data dir under the cache dir named after its roots (said on stderr), with an archive of its
  own and the named data dir's import store (read, never written); it claims a data dir
  without an owner only when that data dir was named with ``--data-dir``, never the default
  one.

`agtail sync` works on the named data dir's import store whoever owns its index.

Only the native roots count (and whether project folders are looked into): the archive and
the import store follow the data dir.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from agtaild.config import Config, RootSpec, store_roots
from agtaild.dirs import default_cache_dir

RECORD = "roots.json"


def roots_key(config: Config) -> dict[str, Any]:
    """What makes two configs read the same files into a data dir."""
    native = sorted({(r.agent, r.path) for r in config.roots if r.kind == "native"})
    return {"roots": [list(pair) for pair in native], "known_cwds": bool(config.known_cwds)}


def read_record(data_dir: str | Path) -> dict[str, Any] | None:
    """The data dir's owner record, or None (none yet, or unreadable: then nobody owns it)."""
    try:
        doc = json.loads((Path(data_dir) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("roots"), list):
        return None
    try:
        roots = [[str(a), str(p)] for a, p in doc["roots"]]
    except (TypeError, ValueError):
        return None
    return {**doc, "roots": sorted(roots), "known_cwds": bool(doc.get("known_cwds"))}


def write_record(config: Config, *, by: str, defaults: bool) -> bool:
    """Record ``config``'s roots as the data dir's owner (atomically). False when the data dir
    cannot be written (a read-only one: nothing is indexed into it either)."""
    data_dir = Path(config.data_dir)
    doc = {
        **roots_key(config),
        "by": by,
        "defaults": defaults,
        "pid": os.getpid(),
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    tmp = data_dir / f".{RECORD}.{os.getpid()}"
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, data_dir / RECORD)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
    return True


def same_owner(record: dict[str, Any] | None, config: Config) -> bool:
    if record is None:
        return False
    key = roots_key(config)
    return record["roots"] == key["roots"] and record["known_cwds"] == key["known_cwds"]


def _who(record: dict[str, Any]) -> str:
    return "agtaild's" if record.get("by") == "agtaild" else "those of an earlier command"


def scratch_dir(config: Config) -> Path:
    """The data dir of ``config``'s own index: under the cache dir, named after its roots and
    the data dir it stands beside (so the same command finds the same index again)."""
    key = json.dumps({"beside": config.data_dir, **roots_key(config)}, sort_keys=True)
    name = hashlib.sha256(key.encode()).hexdigest()[:16]
    return default_cache_dir() / "roots" / name


def _moved(config: Config, data_dir: Path) -> Config:
    """``config`` on another data dir: its native roots and the import store it named (which is
    only read), with that dir's own archive (which indexing writes)."""
    kept = [r for r in config.roots if r.kind in ("native", "imported")]
    archive = [r for r in store_roots(data_dir) if r.kind == "archive"]
    return Config(data_dir=str(data_dir), roots=[*kept, *archive], archive=config.archive,
                  claude_plugins_dir=config.claude_plugins_dir, known_cwds=config.known_cwds)


def _adopted(config: Config, record: dict[str, Any]) -> Config:
    """``config`` with the recorded native roots (those of agents this agtail still knows)."""
    from agtaild.adapters import all_adapters

    known = {a.id for a in all_adapters()}
    native = [RootSpec(agent=a, path=p) for a, p in record["roots"] if a in known]
    data_dir = Path(config.data_dir)
    return Config(data_dir=config.data_dir, roots=[*native, *store_roots(data_dir)], archive=config.archive,
                  claude_plugins_dir=config.claude_plugins_dir, known_cwds=record["known_cwds"])


def for_command(config: Config, *, given_roots: bool, explicit_dir: bool) -> tuple[Config, str | None]:
    """The config an in-process command works on, and what to tell the user (None: nothing).

    ``given_roots``: the command had ``--root``/``--only-roots``; ``explicit_dir``: its data dir
    was named with ``--data-dir``."""
    record = read_record(config.data_dir)
    if same_owner(record, config):
        return config, None
    if not given_roots:
        if record is None or (record.get("by") == "agtail" and record.get("defaults")):
            write_record(config, by="agtail", defaults=True)
            return config, None
        return _adopted(config, record), None
    if record is None and explicit_dir:
        write_record(config, by="agtail", defaults=False)
        return config, None
    scratch = scratch_dir(config)
    moved = _moved(config, scratch)
    if not same_owner(read_record(scratch), moved):
        write_record(moved, by="agtail", defaults=False)
    whose = (f"belongs to {_who(record)} roots" if record is not None
             else "is the default one, which these roots never claim")
    note = (f"the index in {config.data_dir} {whose}, not these; using a separate index for them in "
            f"{scratch} (the other is left as it is; --data-dir DIR names another)")
    return moved, note


def for_daemon(config: Config, *, defaults: bool) -> str | None:
    """Record the daemon's roots as its data dir's; the warning for the log when they replace
    other ones (None: they were its roots already, or it had none)."""
    record = read_record(config.data_dir)
    if same_owner(record, config):
        if record is not None and record.get("by") != "agtaild":
            write_record(config, by="agtaild", defaults=defaults)
        return None
    write_record(config, by="agtaild", defaults=defaults)
    if record is None:
        return None
    return (f"the index in {config.data_dir} was built from other roots ({_who(record)}, recorded "
            f"{record.get('recorded', '?')}); it follows this daemon's roots from now on (its first scan "
            "reads them; what only the other roots held stays as the archive's copies)")
