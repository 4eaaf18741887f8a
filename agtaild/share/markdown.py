"""A session as Markdown that renders as meant on GitHub (a PR description, a bug report).

- a header: title, agent, models, cwd, project, git branch, started and ended, tokens and cost;
- each turn under a heading with its role and time; the active branch only unless
  ``branches`` (then inactive events are marked);
- thinking folded (``<details>``), tool calls as fenced blocks with their results cut at
  ``result_lines``, edits as unified diffs (```` ```diff ````), subagents inlined under the call
  that spawned them down to ``depth``, compaction as a divider.

Nothing from a transcript becomes HTML: text outside code has its ``<`` and ``&`` escaped, and
every fence is longer than any run of backticks in what it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO

from agtaild.share import diffs
from agtaild.share.gather import SharedSession
from agtaild.share.parts import as_text, cut_block, header_facts, plural
from agtaild.share.redact import Redactor

_BACKTICKS = re.compile(r"`+")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def fence(text: str, info: str = "") -> str:
    """``text`` in a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip(chr(10))}\n{ticks}\n"


def safe_prose(text: str) -> str:
    """Agent-written Markdown with no raw HTML: outside code, ``<`` and ``&`` become entities."""
    out: list[str] = []
    in_fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE_LINE.match(line)
        if in_fence is not None:
            out.append(line)
            if m and m.group(1)[0] == in_fence[0] and len(m.group(1)) >= len(in_fence):
                in_fence = None
            continue
        if m:
            in_fence = m.group(1)
            out.append(line)
            continue
        out.append(_escape_outside_code(line))
    if in_fence is not None:  # an unclosed fence would swallow the rest of the document
        out.append(in_fence)
    return "\n".join(out)


def _escape_outside_code(line: str) -> str:
    parts: list[str] = []
    last = 0
    for m in _INLINE_CODE.finditer(line):
        parts.append(_escape(line[last : m.start()]))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_escape(line[last:]))
    return "".join(parts)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write(shared: SharedSession, out: TextIO, *, redact: Redactor, depth: int = 1, level: int = 1) -> None:
    """Write the session (and its subagents down to ``depth``) to ``out``."""
    s = shared.session
    r = redact.text
    title = r(s.get("title") or s.get("first_prompt") or s["id"]).split("\n", 1)[0]
    out.write(f"{'#' * level} {_escape(title)}\n\n")
    out.write("| | |\n|---|---|\n")
    for name, value in header_facts(s):
        out.write(f"| {name} | {_escape(r(value)).replace('|', '&#124;')} |\n")
    out.write("\n")
    if not redact.secrets_masked and level == 1:
        out.write("> Secrets are **not** masked in this document (the scanner is not installed).\n\n")
    _write_events(shared, shared.events(), out, redact=redact, depth=depth, level=level)


def _write_events(
    shared: SharedSession,
    events: Iterable[dict[str, Any]],
    out: TextIO,
    *,
    redact: Redactor,
    depth: int,
    level: int,
) -> None:
    r = redact.text
    h = "#" * min(level + 1, 6)
    last_role: str | None = None
    for ev in events:
        kind = ev.get("kind")
        role = ev.get("role")
        extra = ev.get("extra") or {}
        inactive = extra.get("branch") == "inactive"
        mark = " *(inactive branch)*" if inactive else ""
        when = f" · {ev['ts']}" if ev.get("ts") else ""
        if kind == "text" and ev.get("text"):
            if role != last_role or role == "user":
                out.write(
                    f"{h} {'User' if role == 'user' else 'Assistant' if role == 'assistant' else (role or 'Text').title()}{when}{mark}\n\n"
                )
            last_role = role
            out.write(safe_prose(r(ev["text"])).rstrip() + "\n\n")
        elif kind == "thinking" and ev.get("text"):
            out.write(
                f"<details><summary>Thinking{mark}</summary>\n\n{fence(r(ev['text']), 'text')}\n</details>\n\n"
            )
        elif kind == "tool_use":
            last_role = "assistant"
            _write_tool(shared, ev, out, redact=redact, depth=depth, level=level, mark=mark)
        elif kind == "tool_result":
            text, more = cut_block(r(as_text(ev.get("result"))))
            out.write(f"Result{' (failed)' if ev.get('is_error') else ''}:\n\n{fence(text, 'text')}")
            if more:
                out.write(f"*… {plural(more, 'more line')}*\n")
            out.write("\n")
        elif kind == "summary" or (kind == "system" and ev.get("subtype") == "compact_boundary"):
            if "compact" in str(ev.get("subtype") or "") or kind == "system":
                out.write(f"---\n\n*The conversation was compacted here{when}.*\n\n")
            if ev.get("text") and kind == "summary":
                out.write(
                    f"<details><summary>Summary</summary>\n\n{fence(r(ev['text']), 'text')}\n</details>\n\n"
                )
        elif kind == "system" and ev.get("text") and ev.get("is_error"):
            out.write(
                f"> **Error**{when}: {_escape(r(ev['text'])).splitlines()[0] if ev['text'].strip() else ''}\n\n"
            )


def _write_tool(
    shared: SharedSession,
    ev: dict[str, Any],
    out: TextIO,
    *,
    redact: Redactor,
    depth: int,
    level: int,
    mark: str,
) -> None:
    r = redact.text
    tool = ev.get("tool") or "tool"
    status = " — failed" if ev.get("is_error") else ""
    out.write(f"**{_escape(r(str(tool)))}**{status}{mark}\n\n")
    edit = (ev.get("extra") or {}).get("edit")
    diff = diffs.unified(edit, shared.session.get("cwd")) if edit else ""
    inp = ev.get("input")
    if diff:
        out.write(fence(r(diff), "diff"))
        note = [] if diffs.numbered(edit) else ["line numbers as the agent recorded them, not the file's"]
        if diffs.cut(edit):
            note.append(f"{plural(diffs.cut(edit), 'more diff line')} not recorded")
        if note:
            out.write(f"*({'; '.join(note)})*\n")
        out.write("\n")
    elif inp not in (None, "", {}):
        command = (
            inp.get("command") if isinstance(inp, dict) and isinstance(inp.get("command"), str) else None
        )
        text, more = cut_block(r(command if command is not None else as_text(inp)))
        out.write(fence(text, "sh" if command is not None else "json"))
        if more:
            out.write(f"*… {plural(more, 'more line')}*\n")
        out.write("\n")
    result = ev.get("result")
    if result not in (None, "") and not diff:
        text, more = cut_block(r(as_text(result)))
        out.write(
            f"<details><summary>Output{' (failed)' if ev.get('is_error') else ''}</summary>\n\n{fence(text, 'text')}"
        )
        if more:
            out.write(f"*… {plural(more, 'more line')}*\n")
        out.write("\n</details>\n\n")
    child = shared.children.get(ev.get("tool_use_id") or "") if ev.get("tool_use_id") else None
    if child is not None:
        title = _escape(r(child.get("title") or child["id"]).split("\n", 1)[0])
        if depth > 0:
            out.write(f"<details><summary>Subagent: {title}</summary>\n\n")
            write(shared.child(child), out, redact=redact, depth=depth - 1, level=min(level + 2, 5))
            out.write("</details>\n\n")
        else:
            out.write(f"*Subagent: {title} (`agtail show {child['agent']}:{child['id']}`)*\n\n")
