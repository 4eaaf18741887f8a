"""`agtail export AGENT:ID… --to DIR`: the native files of chosen sessions plus manifest.json.

DIR gets the collection layout (``<agent>/<path relative to the session root>``) and a
``manifest.json`` listing each file's relative path, size, mtime, sha256, agent and session
id: a directory another machine can `agtail sync pull DIR_PARENT --collection DIR_NAME`, or
that the same adapters read if copied under an import store; the side files those sessions
depend on go with them, cut to what speaks of them (agtaild.sync.export_sides). Beside it, ``state-pack.json``:
the labels, stars, titles and hides of those sessions (agtaild.sync.statepack), which that pull
brings along. Exporting again into the same
DIR moves only the difference, like a push.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from agtaild.adapters.base import Unit
from agtaild.errors import NotFound, UsageError
from agtaild.fsnames import at_or_below
from agtaild.sync.directory import DirectoryDestination
from agtaild.sync.export_sides import cut_side_files
from agtaild.sync.manifest import machine_identity, open_hash_cache
from agtaild.sync.native import LocalFile, LocalFilesSource, native_files
from agtaild.sync.safety import DEFAULT_MAX_FILE_SIZE, check_not_native
from agtaild.sync.transfer import Limits, transfer


def _root_of(config: Any, session: dict[str, Any]) -> Any:
    """The configured root (native, imported or archive) that holds the session's unit."""
    unit_file = str(session.get("path") or "").split("#", 1)[0]
    best = None
    for spec in config.roots:
        if spec.agent != session["agent"]:
            continue
        if at_or_below(unit_file, spec.path) and (best is None or len(spec.path) > len(best.path)):
            best = spec
    return best


def unit_of(config: Any, session: dict[str, Any]) -> tuple[Any, Unit]:
    """The adapter and the unit that a session JSON was read from."""
    from agtaild.adapters import get_adapter

    adapter = get_adapter(session["agent"])
    spec = _root_of(config, session)
    ref = f"{session['agent']}:{session['id']}"
    if spec is None:
        raise NotFound(f"{ref}: its file {session.get('path')} is under none of the configured roots")
    for unit in adapter.discover(Path(spec.path)):
        if unit.path == session.get("path"):
            return adapter, unit
    raise NotFound(f"{ref}: {session.get('path')} is no longer there; run `agtail index` and retry")


def export_sessions(config: Any, sessions: list[dict[str, Any]], to: Path,
                    max_file_size: int | None = None, *, redact: bool = False) -> dict[str, Any]:
    """Write the sessions' files into ``to`` (only what differs) and its manifest.json;
    ``redact``: each file rewritten with every secret masked first (agtaild.sync.redact)."""
    from agtaild.adapters import all_adapters

    if to.exists() and not to.is_dir():
        raise UsageError(f"--to {str(to)!r} is a file, not a directory; name a new or existing directory")
    check_not_native(to, [r.path for r in config.roots if r.kind == "native"])
    pairs = [unit_of(config, s) for s in sessions]
    files: dict[str, LocalFile] = {}
    for (adapter, unit), session in zip(pairs, sessions, strict=True):
        for local in native_files(config, units=[(adapter, unit)]):
            have = files.setdefault(local.path, local)
            if session["id"] not in have.sessions:
                have.sessions.append(session["id"])
    sides = tempfile.TemporaryDirectory(prefix="agtail-export-sides-")
    side_errors = cut_side_files(files, pairs, Path(sides.name))
    origin, name = machine_identity(config.data_dir)
    cache = open_hash_cache(config.data_dir)
    source = LocalFilesSource(list(files.values()), cache, origin=origin, origin_name=name,
                              collection=to.name, where=f"this machine ({name})")
    if redact:
        from agtaild.sync.redact import redacting_source

        source = redacting_source(source)
    try:
        limits = Limits(max_file_size=max_file_size or DEFAULT_MAX_FILE_SIZE,
                        known_agents=[a.id for a in all_adapters()])
        report = transfer(source, DirectoryDestination(to, cache), limits)
        if redact:
            from agtaild.sync.redact import add_to_report

            add_to_report(report, source)  # type: ignore[arg-type]
        report.setdefault("errors", []).extend(side_errors)
    finally:
        source.close()
        cache.close()
        sides.cleanup()
    from agtaild.sync import statepack

    pack = statepack.build(config, sessions={(s["agent"], s["id"]) for s in sessions})
    statepack.write(to, pack)
    return {
        "to": str(to),
        "manifest": str(to / "manifest.json"),
        "state_pack": str(to / statepack.NAME),
        "sessions": [f"{s['agent']}:{s['id']}" for s in sessions],
        **{k: v for k, v in report.items() if k not in {"source", "destination", "dry_run"}},
    }
