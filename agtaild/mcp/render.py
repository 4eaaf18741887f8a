"""The service's JSON as compact text for an agent to read.

An agent pays for every token it reads, so each session is one line, each event a header and
its text, and tool inputs and outputs are cut at a size the caller chooses, with a marker that
says how much was left out and how to get it. Every id printed is one `read_session` accepts
(``AGENT:ID``; an imported copy also names its collection).

Transcript text may hold anything (control characters, lone surrogates, text that looks like
JSON-RPC): :func:`clean` makes every string valid UTF-8 without terminal control codes, and
the transport JSON-encodes it, so no transcript can break the protocol.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from agtaild.words import count

#: C0/C1 control characters other than newline and tab (escape sequences, NUL, bell, …).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: Any) -> str:
    """``text`` as a string that is valid UTF-8 and holds no control character but \\n and \\t."""
    s = text if isinstance(text, str) else str(text)
    s = s.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become '?'
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s)


def cut(text: str, limit: int, how_to_see: str = "") -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how many were left out."""
    if len(text) <= limit:
        return text
    more = f"; {how_to_see}" if how_to_see else ""
    return text[:limit] + f" …[truncated: {count(len(text) - limit, 'more char', grouped=False)}{more}]"


def one_line(text: Any, limit: int) -> str:
    return cut(" ".join(clean(text).split()), limit)


def ref(session: dict[str, Any]) -> str:
    """The id `read_session` accepts for this session."""
    return f"{session.get('agent')}:{session.get('id')}"


def labels(session: dict[str, Any]) -> str:
    """Where a session comes from, when it is not simply this machine's live file."""
    out = []
    if session.get("imported"):
        out.append(f"[imported from collection {clean(session.get('collection') or '?')}]")
    if session.get("archived"):
        out.append("[archived: the agent's own file is gone; kept by agtail's archive]")
    if session.get("parent"):
        parent = session["parent"]
        out.append(f"[subagent of {parent.get('agent')}:{parent.get('id')}]")
    return " ".join(out)


def when(ts: Any) -> str:
    """``2026-11-30T00:28:43.959Z`` → ``2026-11-30 00:28`` (UTC as the agent wrote it)."""
    if not isinstance(ts, str) or len(ts) < 16:
        return "?"
    return ts[:10] + " " + ts[11:16]


def cost(usage: dict[str, Any] | None) -> str:
    if not usage:
        return ""
    value = usage.get("cost_usd")
    tokens = usage.get("total_tokens") or 0
    if isinstance(value, (int, float)):
        money = f"${value:.2f}"
    else:  # the known part is never hidden by a model without a price
        known = usage.get("cost_known_usd")
        dark = usage.get("unpriced_tokens")
        models = ", ".join(clean(m) for m in usage.get("unpriced_models") or [])
        money = (f"${known:.2f} known + " if known else "cost unknown: ") + (
            f"{count(dark, 'token')} unpriced" if isinstance(dark, int) else "unpriced"
        ) + (f" ({models})" if models else "")
    return f"{count(tokens, 'token')}, {money}"


def session_line(session: dict[str, Any]) -> str:
    parts = [
        ref(session),
        f"last active {when(session.get('ended') or session.get('started'))}",
        f"project {clean(session.get('project') or '?')}",
        count(session.get("messages") or 0, "msg"),
    ]
    if session.get("cwd"):
        parts.append(f"cwd {clean(session['cwd'])}")
    line = "- " + " | ".join(parts)
    tag = labels(session)
    if tag:
        line += " " + tag
    title = session.get("title") or session.get("first_prompt")
    if title:
        line += "\n  " + one_line(title, 160)
    return line


def session_list(sessions: Iterable[dict[str, Any]], *, heading: str, more: str | None) -> str:
    lines = [session_line(s) for s in sessions]
    if not lines:
        return f"{heading}: none."
    text = f"{heading} ({len(lines)}, most recently active first):\n" + "\n".join(lines)
    if more:
        text += f"\n(more: call again with {more})"
    text += "\nRead one with read_session(id=...)."
    return text


def hits(doc: dict[str, Any], *, query: str, more: str | None) -> str:
    found = doc.get("hits") or []
    if not found:
        return f"No matches for {clean(query)!r}."
    lines = [f"{count(len(found), 'match')} for {clean(query)!r}, best first:"]
    for hit in found:
        s, e = hit.get("session") or {}, hit.get("event") or {}
        what = e.get("kind") or "?"
        if e.get("tool"):
            what += f" {clean(e['tool'])}"
        head = f"- {ref(s)} seq {e.get('seq')} | {when(e.get('ts'))} | {what} | project {clean(s.get('project') or '?')}"
        tag = labels(s)
        if tag:
            head += " " + tag
        lines.append(head)
        lines.append("  " + one_line(hit.get("snippet") or e.get("text") or "", 300))
    if more:
        lines.append(f"(more: call again with {more})")
    lines.append("Read around a hit with read_session(id=..., after_seq=SEQ-1).")
    return "\n".join(lines)


def session_header(session: dict[str, Any]) -> str:
    lines = [f"Session {ref(session)}"]
    tag = labels(session)
    if tag:
        lines.append(tag)
    for key, label in (("title", "title"), ("cwd", "cwd"), ("project", "project"), ("git_branch", "branch")):
        if session.get(key):
            lines.append(f"{label}: {one_line(session[key], 300)}")
    if session.get("models"):
        lines.append("models: " + ", ".join(clean(m) for m in session["models"]))
    lines.append(
        f"time: {when(session.get('started'))} → {when(session.get('ended'))} (UTC) | "
        f"{count(session.get('messages') or 0, 'msg')} | {cost(session.get('usage')) or 'no usage recorded'}"
    )
    return "\n".join(lines)


def _compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)


def event_block(event: dict[str, Any], *, agent: str, text_chars: int, tool_chars: int) -> str:
    """One event: a header line, then its text (tool input and output cut at ``tool_chars``)."""
    seq = event.get("seq")
    kind = event.get("kind") or "unknown"
    role = event.get("role") or ""
    head = f"[{seq}] {when(event.get('ts'))} {role} {kind}".replace("  ", " ")
    hint = "read_session(..., tool_output_chars=N) shows more"
    body: list[str] = []
    if kind in ("tool_use", "tool_result"):
        tool = clean(event.get("tool") or "?")
        head += f" {tool}"
        if event.get("is_error"):
            head += " (error)"
        extra = event.get("extra") or {}
        if isinstance(extra, dict) and extra.get("subagent"):
            head += f" → subagent {clean(agent)}:{clean(extra['subagent'])}"
        if event.get("input") is not None:
            body.append("input: " + cut(clean(_compact_json(event["input"])), tool_chars, hint))
        if event.get("result") is not None:
            result = event["result"] if isinstance(event["result"], str) else _compact_json(event["result"])
            body.append("output: " + cut(clean(result), tool_chars, hint))
        elif event.get("text"):
            body.append(cut(clean(event["text"]), tool_chars, hint))
    elif kind == "hook":
        hook = event.get("hook") or {}
        head += f" {clean(hook.get('event') or '')} {clean(hook.get('tool') or '')}".rstrip()
        text = hook.get("text") or hook.get("command") or event.get("text") or ""
        if text:
            body.append(cut(clean(text), tool_chars, hint))
    else:
        text = event.get("text")
        if text is None and event.get("raw") is not None:
            text = _compact_json(event["raw"])
        if text:
            body.append(cut(clean(text), text_chars, f"read_session(..., text_chars=...) from after_seq={seq}"))
    return head + ("\n" + "\n".join(body) if body else "")


def usage_report(doc: dict[str, Any], *, by: str, scope: str) -> str:
    totals = doc.get("totals") or {}
    lines = [f"Usage {scope}: {cost(totals) or 'nothing recorded'}"]
    if totals:
        lines.append(
            "  input {input_tokens:,} | output {output_tokens:,} | cache read {cache_read_tokens:,} | "
            "cache write {cache_write_tokens:,}".format(**{k: totals.get(k) or 0 for k in (
                "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")})
        )
    rows = doc.get("rows") or []
    if rows:
        lines.append(f"By {by}:")
        for row in rows[:50]:
            line = f"- {clean(row.get('key') or '?')}: {cost(row)}"
            if row.get("models"):
                line += " (" + ", ".join(clean(m) for m in row["models"][:5]) + ")"
            lines.append(line)
        if len(rows) > 50:
            lines.append(f"… and {count(len(rows) - 50, 'more row')}")
    undated = doc.get("undated")
    if undated:
        lines.append(f"Not counted above: {cost(undated)} of usage with no time at all (neither the "
                     "records nor their sessions say when), so outside any date range.")
    lines.append("Costs are estimates from list prices; 'cost unknown' means a model has no price.")
    return "\n".join(lines)


def file_history(doc: dict[str, Any], *, diff_lines: int) -> str:
    """A file's recorded changes (``files.history``), newest first, each with its session,
    prompt and the first ``diff_lines`` lines of its diff."""
    records = doc.get("records") or []
    path = clean(doc.get("path"))
    if not records:
        gone = "" if doc.get("exists") else " (the file does not exist)"
        return f"No recorded agent session changed {path}{gone}."
    shown = f"{len(records)} of {doc.get('total')}" if doc.get("truncated") else str(len(records))
    out = [f"History of {path}: {shown} recorded changes, newest first"]
    for r in records:
        s = r.get("session") or {}
        head = f"- {when(r.get('time'))} {clean(s.get('agent'))}:{clean(s.get('short_id') or s.get('id'))} seq {r.get('seq')} {clean(r.get('kind'))}"
        if r.get("failed"):
            head += " (failed)"
        if r.get("match") and r.get("match") != "same":
            head += f" [{clean(r['match'])}: {clean(r.get('path'))}]"
        out.append(head)
        prompt = (r.get("prompt") or {}).get("text")
        if prompt:
            out.append(f"  prompt: {one_line(prompt, 300)}")
        if r.get("command"):
            out.append(f"  command: {one_line(r['command'], 300)}")
        lines = [x for h in r.get("hunks") or [] for x in h.get("lines") or [] if isinstance(x, str)]
        for x in lines[:diff_lines]:
            out.append("    " + clean(x))
        if len(lines) > diff_lines:
            out.append(f"    … {len(lines) - diff_lines} more diff lines")
    return "\n".join(out)
