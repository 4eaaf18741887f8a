"""`agtail doctor`: what could lose history or break sync on this machine, and how to fix it.

Agents delete their own transcripts: Claude Code prunes sessions older than
``cleanupPeriodDays`` (30 when unset), Gemini CLI can be set to (``general.sessionRetention``).
The doctor says so, and whether agtail's archive (which keeps them anyway) is on and how big
it is. It also reports tools sync uses (rsync, fzf) and leftovers of interrupted transfers, and
each agent found with its roots, sessions and unmapped share per format version
(:mod:`agtaild.cli.doctor_agents`), and what in the data dir other users could read
(:mod:`agtaild.cli.doctor_modes`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from agtaild.words import count

CLAUDE_DEFAULT_CLEANUP_DAYS = 30


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help="check for settings that lose history, and sync health")
    p.add_argument("--verify-archive", action="store_true",
                   help="also decompress every archived file and check every frame's sha256 (reads the whole archive)")
    p.set_defaults(func=cmd_doctor)


def _check(name: str, status: str, message: str) -> dict[str, str]:
    return {"name": name, "status": status, "message": message}


def _read_json(path: Path) -> Any:
    try:
        import json

        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return {"__error__": str(exc)}


def claude_checks(config: Any, archive_on: bool) -> list[dict[str, str]]:
    """cleanupPeriodDays in each Claude Code config dir that has a projects root here."""
    out = []
    dirs = {Path(r.path).parent for r in config.roots if r.agent == "claude-code" and r.kind == "native"}
    for cfg in sorted(dirs):
        if not (cfg / "projects").is_dir():
            continue
        settings = _read_json(cfg / "settings.json")
        if isinstance(settings, dict) and "__error__" in settings:
            out.append(_check("claude-code retention", "warn", f"{cfg}/settings.json is unreadable: {settings['__error__']}"))
            continue
        days = settings.get("cleanupPeriodDays") if isinstance(settings, dict) else None
        kept = "agtail's archive keeps them" if archive_on else "agtail's archive is OFF, so they are lost"
        if days is None:
            out.append(_check("claude-code retention", "warn",
                              f"Claude Code deletes sessions older than {CLAUDE_DEFAULT_CLEANUP_DAYS} days "
                              f"(cleanupPeriodDays is not set in {cfg}/settings.json); {kept}. To keep them in "
                              "Claude Code too, set \"cleanupPeriodDays\": 100000 there"))
        elif isinstance(days, int) and days < 3650:
            out.append(_check("claude-code retention", "warn",
                              f"Claude Code deletes sessions older than {days} days (cleanupPeriodDays in "
                              f"{cfg}/settings.json); {kept}"))
        else:
            out.append(_check("claude-code retention", "ok", f"cleanupPeriodDays is {days} in {cfg}/settings.json"))
    return out


def gemini_checks(home: Path, archive_on: bool) -> list[dict[str, str]]:
    settings = _read_json(home / ".gemini" / "settings.json")
    if not isinstance(settings, dict):
        return []
    general = settings.get("general") if isinstance(settings.get("general"), dict) else {}
    retention = general.get("sessionRetention") if isinstance(general, dict) else None
    if isinstance(retention, dict) and retention.get("enabled"):
        kept = "agtail's archive keeps them" if archive_on else "agtail's archive is OFF, so they are lost"
        age = retention.get("maxAge") or retention.get("maxCount") or "a limit"
        return [_check("gemini retention", "warn",
                       f"Gemini CLI deletes old sessions (general.sessionRetention: {age}); {kept}")]
    return []


def import_checks(config: Any) -> list[dict[str, str]]:
    from agtaild.store.imports import list_collections

    out = []
    for col in list_collections(config):
        if "error" in col:
            out.append(_check(f"collection {col['name']}", "warn", col["error"]))
            continue
        notes = []
        if col["partials"]:
            notes.append(f"{count(col['partials'], 'partial file')} from an interrupted pull (pull again to finish)")
        if col["conflicts"]:
            notes.append(f"{count(col['conflicts'], 'conflict copy')} (see docs/sync.md, Conflicts)")
        if col["problems"]:
            notes.append("; ".join(col["problems"][:3]))
        status = "warn" if notes else "ok"
        out.append(_check(f"collection {col['name']}", status,
                          "; ".join(notes) or f"{count(col['sessions'], 'session')}, last sync {col['last_sync'] or '-'}"))
    return out


def discovery_checks(config: Any) -> list[dict[str, str]]:
    """Folders and entries below the roots that discovery cannot look at (a directory made
    unreadable, a symlink loop, an I/O error): their sessions are kept but not updated."""
    from agtaild.adapters import get_adapter
    from agtaild.adapters.kit import scan

    out = []
    for root in config.roots:
        if not os.path.exists(root.path):
            continue
        with scan.collecting() as problems:
            try:
                for _unit in get_adapter(root.agent).discover(Path(root.path)):
                    pass
            except Exception as exc:
                problems.append(scan.Problem(root.path, f"discovery failed: {exc}"))
        if problems:
            from agtaild.fsnames import to_text

            listed = "; ".join(f"{to_text(p.path)}: {p.error}" for p in problems[:5])
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            out.append(_check(f"{root.agent} discovery", "warn",
                              f"{len(problems)} unreadable entr{'y' if len(problems) == 1 else 'ies'} under "
                              f"{root.path}, their sessions are kept as last indexed: {listed}{more}"))
    return out


def runtime_check(env: dict[str, str]) -> dict[str, str]:
    from agtaild.dirs import runtime_dir_choice

    path, why = runtime_dir_choice(env)
    if why is None:
        return _check("runtime dir", "ok", str(path))
    return _check("runtime dir", "info", f"{path} ({why}; agtaild puts its socket there)")


def index_check(config: Any) -> dict[str, str]:
    from agtaild.index.storage import is_writable

    data, index = Path(config.data_dir), Path(config.index_path)
    corrupt = sorted(p.name for p in data.glob("index.sqlite3.corrupt-*") if not p.name.endswith(("-wal", "-shm")))
    if index.exists() and not is_writable(data, index):
        return _check("index", "warn", f"{index} is read-only: commands show it as it is and cannot update it")
    if corrupt:
        return _check("index", "info", f"damaged indexes were moved aside and rebuilt: {', '.join(corrupt[-3:])} "
                      f"in {data} (safe to delete)")
    return _check("index", "ok", str(index) if index.exists() else f"{index} (not built yet)")


def archive_pins_check(archive: dict[str, Any]) -> dict[str, str] | None:
    """What the archive's finisher could not store as a first index read it (a pin rewritten
    in place or replaced: agtaild.store.archive.losses), and sets it left aside; None when
    there is nothing to say."""
    count, left = archive.get("pin_problem_count", 0), archive.get("pin_sets_left", 0)
    if not count and not left:
        return None
    pins = Path(archive["dir"]) / ".zstore" / "pins"
    parts = []
    if count:
        last = archive["pin_problems"][-1]
        parts.append(f"{count} pinned file(s) could not be archived as the index read them (latest: "
                     f"{last['path']}: {last['problem']}); listed in {pins / 'problems.jsonl'} (remove it once read)")
    if left:
        parts.append(f"{left} pinned set folder(s) held files agtail did not write and were set aside in {pins} "
                     "(*.left: look, then remove them)")
    return _check("archive pins", "warn", "; ".join(parts))


def run_doctor(config: Any, env: dict[str, str] | None = None) -> dict[str, Any]:
    import shutil

    from agtaild.store.archive.archiver import archive_usage

    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    checks: list[dict[str, str]] = []
    data = Path(config.data_dir)
    if data.exists() and not data.is_dir():
        checks.append(_check("data dir", "error", f"{data} is not a directory"))
    elif data.exists() and not os.access(data, os.W_OK):
        checks.append(_check("data dir", "error", f"{data} is not writable; fix its permissions"))
    else:
        checks.append(_check("data dir", "ok", str(data)))
    if data.is_dir():
        from agtaild.cli.doctor_modes import permissions_check
        from agtaild.store.archive.blobs import STORE_DIR
        from agtaild.store.archive.pins import pins_root

        checks.append(permissions_check(data, pins_root(Path(config.archive_dir) / STORE_DIR)))
    checks.append(index_check(config))
    checks.append(runtime_check(env))
    checks.extend(discovery_checks(config))
    archive = archive_usage(config)
    archive_on = bool(archive["enabled"])
    if archive_on:
        pending = archive["pending_files"]
        waiting = f"; {count(pending, 'file')} read by a first index wait for the archive's finisher" if pending else ""
        checks.append(_check("archive", "ok", f"on: {count(archive['archived_files'], 'file', grouped=False)} of {archive['archived_bytes']} "
                             f"bytes, {archive['bytes']} bytes on disk (compressed) in {archive['dir']}{waiting}"))
    else:
        checks.append(_check("archive", "warn", "off: sessions an agent deletes are lost (unset AGTAIL_ARCHIVE=0 to turn it on)"))
    pins_check = archive_pins_check(archive)
    if pins_check is not None:
        checks.append(pins_check)
    from agtaild.cli.doctor_semantic import semantic_check

    checks.append(semantic_check(config))
    checks.extend(claude_checks(config, archive_on))
    checks.extend(gemini_checks(home, archive_on))
    checks.extend(import_checks(config))
    from agtaild.cli.doctor_agents import agent_report

    agents, agent_checks = agent_report(config)
    checks.extend(agent_checks)
    from agtaild.cli.doctor_unreadable import unreadable_checks

    checks.extend(unreadable_checks(home))
    for tool, why in (("rsync", "sync over ssh:// remotes"), ("fzf", "the `agtail pick` fuzzy finder")):
        found = shutil.which(tool)
        checks.append(_check(tool, "ok" if found else "info", found or f"not installed (needed for {why})"))
    return {"checks": checks, "archive": archive, "agents": agents,
            "ok": not any(c["status"] == "error" for c in checks)}


def restore_damaged(config: Any, damaged: list[dict[str, Any]]) -> None:
    """Store each damaged archived file again from its native file where that still exists
    (sets ``restored`` on each entry)."""
    from agtaild.store.archive.archiver import archive_enabled, archiver_for

    archiver = archiver_for(config) if archive_enabled(config) else None
    for d in damaged:
        try:
            d["restored"] = archiver is not None and archiver.restore_damaged(d["path"])
        except OSError as exc:  # e.g. a read-only data dir: reported as damaged
            d["restored"] = False
            d["problem"] += f" (not stored again: {exc})"


def verify_archive_check(config: Any) -> tuple[dict[str, str], dict[str, Any]]:
    """Every archived file read back through its checksums (agtaild.store.archive.view)."""
    from agtaild.store.archive.view import verify_store

    result = verify_store(config)
    if result["damaged"]:
        restore_damaged(config, result["damaged"])
        lost = [d for d in result["damaged"] if not d["restored"]]
        again = len(result["damaged"]) - len(lost)
        restored = f"{again} stored again from their native files" if again else ""
        if not lost:
            return _check("archive integrity", "warn",
                          f"{len(result['damaged'])} of {result['files']} archived files were damaged: {restored}"), result
        listed = "; ".join(d["problem"] for d in lost[:5])
        more = f" (and {len(lost) - 5} more)" if len(lost) > 5 else ""
        return _check("archive integrity", "error",
                      f"{len(lost)} of {result['files']} archived files are damaged and are not served (their native "
                      f"file is gone){'; ' + restored if restored else ''}: {listed}{more}"), result
    return _check("archive integrity", "ok",
                  f"{count(result['files'], 'file', grouped=False)}, {result['bytes']} bytes, stored in {result['stored_bytes']}: "
                  "every frame verified"), result


def cmd_doctor(ctx: Any) -> int:
    doc = run_doctor(ctx.config)
    if getattr(ctx.args, "verify_archive", False):
        check, doc["archive_verify"] = verify_archive_check(ctx.config)
        doc["checks"].append(check)
        doc["ok"] = doc["ok"] and check["status"] != "error"
    if ctx.json:
        ctx.out_json(doc)
    else:
        marks = {"ok": "ok  ", "warn": "WARN", "error": "FAIL", "info": "info"}
        for c in doc["checks"]:
            print(f"[{marks.get(c['status'], c['status'])}] {c['name']}: {c['message']}")
    return 0 if doc["ok"] else 1
