"""`agtail history FILE` and `agtail blame FILE`: which recorded session wrote what
(agtaild.provenance; docs/provenance.md).

The daemon (or the in-process service) answers ``files.history`` from the index; blame reads
the file here, on the caller's side, and replays the history over it
(agtaild.provenance.blamefile), so the daemon never reads the files it is asked about.
"""

from __future__ import annotations

import argparse
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

_RANGE = re.compile(r"^\s*(\d+)?\s*(?:,\s*(\d+)?\s*)?$")
#: Characters of a prompt in the blame legend and the history headers.
PROMPT_SHOWN = 160


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "history",
        parents=[common],
        help="every recorded change of a file or folder, newest first, with its session and prompt",
        description="Every session that changed FILE (or a file under a folder), newest first: the "
        "session, the prompt that led to the change and its diff.",
    )
    p.add_argument("path", metavar="FILE", help="a file or folder (it need not exist any more)")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N changes (default 50)")
    p.add_argument("--full", action="store_true", help="whole diffs, not the first lines of each")
    p.add_argument("--no-diff", action="store_true", help="the changes without their diffs")
    _no_update(p)
    p.set_defaults(func=cmd_history)

    b = sub.add_parser(
        "blame",
        parents=[common],
        help="for each line of a file, the session and prompt that last wrote it",
        description="For each line of FILE as it is now, the recorded session and event that last wrote "
        "it; lines no recorded session wrote are marked as such (docs/provenance.md).",
    )
    b.add_argument("path", metavar="FILE", nargs="?", help="the file (not needed with --commit)")
    b.add_argument("-L", dest="lines", metavar="START,END", help="only these lines (1-based, inclusive)")
    b.add_argument("--rev", metavar="REV", help="blame the file as of this git commit")
    b.add_argument("--commit", metavar="REV", help="for each hunk of this git commit, the sessions whose edits it holds")
    _no_update(b)
    b.set_defaults(func=cmd_blame)


def _no_update(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-update", action="store_true",
        help="answer from the index as it is, without checking the files first (in-process only)",
    )  # fmt: skip


def _history(ctx: Any, path: str, *, replay: bool, limit: int = 200) -> dict[str, Any]:
    from agtaild.cli.query import call_once

    params: dict[str, Any] = {"path": os.path.abspath(os.path.expanduser(path))}
    if replay:
        params["replay"] = True
    else:
        params["limit"] = limit
    return call_once(ctx, "files.history", params)


def who(record: dict[str, Any]) -> str:
    s = record.get("session") or {}
    return f"{s.get('agent') or '?'}:{s.get('short_id') or s.get('id') or '?'}"


def _when(value: Any) -> str:
    from agtaild.cli.format import local_time

    return local_time(value) if value else "(no time)"


def _one_line(text: str, width: int = PROMPT_SHOWN) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cmd_history(ctx: Any) -> int:
    from agtaild.errors import UsageError

    if ctx.args.limit < 1:
        raise UsageError("--limit must be at least 1")
    doc = _history(ctx, ctx.args.path, replay=False, limit=ctx.args.limit)
    if ctx.json:
        ctx.out_json(doc)
        return 0
    records = doc.get("records") or []
    if not records:
        gone = "" if doc.get("exists") else " (and it does not exist)"
        ctx.err(f"agtail: no recorded session changed {doc.get('path')}{gone}")
        return 0
    from agtaild.cli.format import Style

    style = Style()
    for line in history_lines(doc, style, full=ctx.args.full, diffs=not ctx.args.no_diff):
        print(line)
    if doc.get("truncated"):
        ctx.err(f"agtail: {len(records)} of {doc.get('total')} changes shown (--limit N for more)")
    for other in doc.get("other_case") or []:
        ctx.err(f"agtail: note: {other} was recorded with another case: the same file only where case is ignored")
    return 0


def history_lines(doc: dict[str, Any], style: Any, *, full: bool = False, diffs: bool = True) -> list[str]:
    from agtaild.cli import diff

    out: list[str] = []
    for r in doc.get("records") or []:
        head = f"{_when(r.get('time'))}  {who(r)}  #{r.get('seq')}  {r.get('kind')}"
        if r.get("failed"):
            head += "  (failed)"
        path = r.get("path") or ""
        if r.get("from_path"):
            path = f"{r['from_path']} → {path}"
        if doc.get("directory") or r.get("match") != "same":
            head += f"  {path}"
        if r.get("match") in ("symlink", "case", "renamed"):
            head += f"  [{ {'symlink': 'through a symlink', 'case': 'another case', 'renamed': 'before a rename'}[r['match']] }]"
        out.append(style.bold(head))
        prompt = r.get("prompt")
        if prompt and prompt.get("text"):
            out.append("  " + style.cyan("> " + _one_line(prompt["text"])))
        if r.get("command"):
            out.append("  $ " + _one_line(str(r["command"]), 400))
        if diffs and r.get("hunks"):
            op = {"create": "create", "delete": "delete"}.get(str(r.get("kind")), "update")
            edit = {"path": r.get("path"), "op": op, "hunks": r["hunks"], "numbered": r.get("numbered"), "cut": r.get("cut")}
            out += diff.diff_lines({"files": [edit]}, style, full=full, indent="  ")[1:]
        out.append("")
    return out


def parse_range(text: str | None) -> tuple[int, int | None]:
    from agtaild.errors import UsageError

    if not text:
        return 1, None
    m = _RANGE.match(text)
    if not m or not (m.group(1) or m.group(2)):
        raise UsageError(f"-L {text!r}: expected START,END (1-based line numbers, e.g. -L 10,40)")
    start = int(m.group(1) or 1)
    end = int(m.group(2)) if m.group(2) else (None if "," in text else start)
    if start < 1 or (end is not None and end < start):
        raise UsageError(f"-L {text!r}: START must be at least 1 and END not before it")
    return start, end


def cmd_blame(ctx: Any) -> int:
    from agtaild.errors import UsageError
    from agtaild.provenance import blamefile

    args = ctx.args
    if args.commit:
        if args.rev or args.lines:
            raise UsageError("--commit takes no --rev or -L (it blames the commit's own hunks)")
        return _blame_commit(ctx, args.commit, args.path)
    if not args.path:
        raise UsageError("blame: FILE is required (or --commit REV)")
    start, end = parse_range(args.lines)
    path = os.path.abspath(os.path.expanduser(args.path))
    if args.rev:
        from agtaild.provenance import gitrev

        root = gitrev.work_tree(path)
        text = blamefile.text_of(gitrev.file_at(root, args.rev, path), f"{args.path}@{args.rev}")
        history = _history(ctx, path, replay=True)
        before = gitrev.commit_time(root, args.rev)
        history["records"] = [r for r in history.get("records") or [] if _epoch(r) is None or _epoch(r) <= before]  # type: ignore[operator]
    else:
        text = blamefile.read_text(path)
        history = _history(ctx, path, replay=True)
    doc = blamefile.blame_doc(history, text, start=start, end=end)
    if ctx.json:
        ctx.out_json(doc)
        return 0
    from agtaild.cli.format import Style

    for line in blame_lines(doc, Style()):
        print(line)
    if not history.get("records"):
        ctx.err(f"agtail: no recorded session changed {path}: every line is not from a recorded session")
    return 0


def _epoch(record: dict[str, Any]) -> float | None:
    from datetime import datetime

    when = record.get("time")
    if not when:
        return None
    return datetime.fromisoformat(str(when).replace("Z", "+00:00")).timestamp()


def blame_lines(doc: dict[str, Any], style: Any) -> list[str]:
    records = doc.get("records") or {}
    lines = doc.get("lines") or []
    width = len(str(lines[-1]["line"])) if lines else 1
    labels = {k: f"{who(r)} #{r.get('seq')}" for k, r in records.items()}
    room = max([len(v) for v in labels.values()] + [len("not recorded")]) + 2
    out = []
    for x in lines:
        key = x.get("record")
        if key is None:
            label = style.dim("not recorded".ljust(room))
        else:
            label = (labels[str(key)] + ("?" if x.get("ambiguous") else "")).ljust(room)
        out.append(f"{label}{style.dim(str(x['line']).rjust(width))}  {x['text']}")
    if records:
        out.append("")
        for key, r in records.items():
            prompt = (r.get("prompt") or {}).get("text")
            tail = f" — {_one_line(prompt)}" if prompt else ""
            out.append(style.bold(labels[key]) + f"  {_when(r.get('time'))}  {r.get('kind')}{tail}")
    if any(x.get("ambiguous") for x in lines):
        out.append(style.dim("? the edit was placed inexactly (its old text did not match) or the path differs in case"))
    return out


def _blame_commit(ctx: Any, rev: str, path: str | None) -> int:
    from agtaild.provenance import blamefile, gitrev

    root = gitrev.work_tree(os.path.abspath(path or "."))
    before = gitrev.commit_time(root, rev)
    result: list[dict[str, Any]] = []
    for file, ranges in sorted(gitrev.commit_hunks(root, rev).items()):
        try:
            text = blamefile.text_of(gitrev.file_at(root, rev, file), file)
        except Exception as exc:  # a binary or vanished file: said, the others still shown
            result.append({"path": file, "error": str(getattr(exc, "message", exc)), "hunks": []})
            continue
        history = _history(ctx, file, replay=True)
        history["records"] = [r for r in history.get("records") or [] if _epoch(r) is None or _epoch(r) <= before]  # type: ignore[operator]
        doc = blamefile.blame_doc(history, text)
        hunks: list[dict[str, Any]] = []
        for first, last in ranges:
            seen: dict[str, dict[str, Any]] = {}
            unrecorded = 0
            for x in doc["lines"][first - 1 : last]:
                if x["record"] is None:
                    unrecorded += 1
                    continue
                r = doc["records"][str(x["record"])]
                key = who(r)
                entry = seen.setdefault(key, {"session": r["session"], "lines": 0, "events": []})
                entry["lines"] += 1
                if r["seq"] not in entry["events"]:
                    entry["events"].append(r["seq"])
            hunks.append({"lines": [first, last], "sessions": list(seen.values()), "not_recorded": unrecorded})
        result.append({"path": file, "hunks": hunks})
    doc = {"commit": rev, "root": root, "files": result}
    if ctx.json:
        ctx.out_json(doc)
        return 0
    for f in result:
        print(f["path"])
        if f.get("error"):
            print(f"  ({f['error']})")
        for h in f["hunks"]:
            first, last = h["lines"]
            parts = [f"{s['session'].get('agent')}:{s['session'].get('short_id')} ({s['lines']} lines, #"
                     + ", #".join(map(str, s["events"])) + ")" for s in h["sessions"]]
            if h["not_recorded"]:
                parts.append(f"not recorded ({h['not_recorded']} lines)")
            print(f"  lines {first}-{last}: " + "; ".join(parts))
    return 0
