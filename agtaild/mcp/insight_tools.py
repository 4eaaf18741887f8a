"""The MCP read tools beyond finding and reading sessions: one session at a glance, its tool
calls, its child sessions, recent file changes, usage compared, an activity report, tool
usage, projects, and search within one session.

Each answer is text for an agent (agtaild.mcp.render), bounded twice: by the service (a page
size with a maximum, a cursor to continue) and here (``max_chars``, cut with a marker that
says how to get the rest). The service masks secrets in every answer these tools read
(agtaild.query.masking), as for the other tools.
"""

from __future__ import annotations

import os
from typing import Any

from agtaild.mcp import render
from agtaild.mcp.toolkit import (
    _AGENT,
    _CURSOR,
    _PROJECT,
    _SINCE,
    Call,
    Tool,
    ToolArgumentError,
    _integer,
    _more,
    _object,
    _pick,
    _split_id,
    _string,
)
from agtaild.words import count

_ID = _string(
    "the session, AGENT:ID as the other tools print it (e.g. claude-code:2c4d36d7; a unique id prefix works)"
)
_COLLECTION = _string("the copy imported into this collection (the listings name it)")
_UNTIL = _string("up to this date (included) or time")
_MAX = _integer(
    "at most about this many characters in the answer (cut with a marker)", 20_000, 1_000, 200_000
)
#: Sessions compare_usage takes at once.
MAX_COMPARED = 10


def _session(args: dict[str, Any], tool: str) -> dict[str, Any]:
    try:
        ref = _split_id(args["id"])
    except ToolArgumentError as exc:
        raise ToolArgumentError(str(exc).replace("read_session", tool)) from None
    return {**ref, **_pick(args, "collection")}


def _again(session: dict[str, Any], tool: str, **more: Any) -> str:
    parts = [f"id={render.ref(session)!r}"]
    if session.get("imported") and session.get("collection"):
        parts.append(f"collection={render.clean(session['collection'])!r}")
    parts += [f"{k}={v!r}" for k, v in more.items()]
    return f"{tool}({', '.join(parts)})"


def _state(session: dict[str, Any]) -> str:
    state = session.get("state") or {}
    bits = []
    if state.get("starred"):
        bits.append("starred")
    if state.get("hidden"):
        bits.append("hidden")
    labels = state.get("labels") or {}
    if labels:
        bits.append(
            "labels "
            + ", ".join(
                f"{render.clean(k)}={render.clean(v)}" if v else render.clean(k)
                for k, v in sorted(labels.items())
            )
        )
    if session.get("agent_title"):
        bits.append(f"agent's own title: {render.one_line(session['agent_title'], 160)}")
    return " | ".join(bits)


def session_overview(call: Call, args: dict[str, Any], here: str | None) -> str:
    doc = call("sessions.overview", _session(args, "session_overview"))
    s = doc["session"]
    lines = [render.session_header(s)]
    state = _state(s)
    if state:
        lines.append("your state: " + state)
    ending = s.get("ending")
    lines.append(
        f"ending: {render.clean(ending) if ending else 'none recorded'} | compactions: {s.get('compactions') or 0}"
    )
    tools = doc.get("tools") or []
    if tools:
        shown = ", ".join(
            f"{render.clean(t['tool'])} {t['calls']}" + (f" ({t['errors']} failed)" if t["errors"] else "")
            for t in tools[:15]
        )
        lines.append(
            f"tool calls: {doc['tool_calls']} ({doc['tool_errors']} failed): {shown}"
            + (f", … {len(tools) - 15} more tools" if len(tools) > 15 else "")
        )
    else:
        lines.append("tool calls: none")
    e = doc.get("edits") or {}
    lines.append(
        f"file changes: {count(e.get('changes') or 0, 'change')} of {count(e.get('files') or 0, 'file')}"
        + (f" ({e['failed']} failed)" if e.get("failed") else "")
    )
    kids = doc.get("children") or []
    total = doc.get("children_total") or 0
    if total:
        lines.append(f"child sessions (subagents): {total}")
        for c in kids:
            lines.append(
                f"  - {render.ref(c)} | {count(c.get('messages') or 0, 'msg')} | "
                f"{render.cost(c.get('usage')) or 'no usage'} | {render.one_line(c.get('title') or '', 120)}"
            )
        if total > len(kids):
            lines.append(f"  (all of them: {_again(s, 'child_sessions')})")
    else:
        lines.append("child sessions: none")
    lines.append(
        f"More: {_again(s, 'session_tool_calls')}, {_again(s, 'recent_edits')}, {_again(s, 'read_session')}"
    )
    return render.cut("\n".join(lines), args["max_chars"])


def session_tool_calls(call: Call, args: dict[str, Any], here: str | None) -> str:
    params = {
        **_session(args, "session_tool_calls"),
        "limit": args["limit"],
        "after_seq": args["after_seq"],
        **_pick(args, "tool", "cursor"),
    }
    session = call("sessions.get", _session(args, "session_tool_calls"))["session"]
    doc = call("tools.calls", params)
    calls = doc.get("calls") or []
    lines = [
        f"Tool calls of {render.ref(session)}"
        + (f" (only {render.clean(args['tool'])})" if args.get("tool") else "")
        + f": {len(calls)} in this page, in order"
    ]
    for c in calls:
        head = f"- seq {c['seq']} | {render.when(c.get('ts'))} | {render.clean(c.get('tool') or '?')} | {c['status']}"
        if c.get("duration_ms") is not None:
            head += f" | {c['duration_ms']} ms"
        if c.get("subagent"):
            head += f" | subagent {render.clean(session['agent'])}:{render.clean(c['subagent'])}"
        lines.append(head)
        if c.get("input"):
            cut = (
                f" …[{c['input_cut']} more chars: read_session(after_seq={c['seq'] - 1})]"
                if c.get("input_cut")
                else ""
            )
            lines.append("  input: " + render.one_line(c["input"], 400) + cut)
    if not calls:
        lines.append("(none in this range)")
    if doc.get("next"):
        lines.append(f"(more: call again with cursor={doc['next']!r})")
    return render.cut("\n".join(lines), args["max_chars"], "ask for fewer with limit, or a larger max_chars")


def recent_edits(call: Call, args: dict[str, Any], here: str | None) -> str:
    params: dict[str, Any] = {
        "limit": args["limit"],
        "diff_lines": args["diff_lines"],
        **_pick(args, "cursor"),
    }
    scope = ""
    if args.get("id"):
        params.update(_session(args, "recent_edits"))
        scope = f"session {render.clean(args['id'])}"
    cwd = args.get("cwd") or (None if args.get("id") else here)
    if cwd:
        if not os.path.isabs(cwd):
            raise ToolArgumentError("recent_edits: argument 'cwd' must be an absolute path")
        params["cwd"] = cwd
        scope = (scope + " under " if scope else "under ") + render.clean(cwd)
    if not args.get("id") and not cwd:
        raise ToolArgumentError("recent_edits: give argument 'id' (a session) or 'cwd' (a directory)")
    doc = call("edits.recent", params)
    edits = doc.get("edits") or []
    if not edits:
        return f"No recorded file change {scope}."
    lines = [f"File changes {scope}, newest first ({len(edits)} in this page):"]
    for e in edits:
        s = e.get("session") or {}
        head = (
            f"- {render.when(e.get('time'))} {render.clean(e.get('kind'))} {render.clean(e.get('path'))}"
            f" | {render.clean(s.get('agent'))}:{render.clean(s.get('short_id') or s.get('id'))} seq {e.get('seq')}"
        )
        if e.get("failed"):
            head += " (failed)"
        if e.get("from_path"):
            head += f" (from {render.clean(e['from_path'])})"
        lines.append(head)
        if e.get("command"):
            lines.append("  command: " + render.one_line(e["command"], 300))
        lines += ["    " + render.clean(x) for x in e.get("diff") or []]
        if e.get("diff_cut"):
            lines.append(f"    … {e['diff_cut']} more diff lines (diff_lines=N shows more)")
    if doc.get("next"):
        lines.append(f"(more: call again with cursor={doc['next']!r})")
    return render.cut("\n".join(lines), args["max_chars"], "ask for fewer with limit or diff_lines")


def child_sessions(call: Call, args: dict[str, Any], here: str | None) -> str:
    doc = call(
        "sessions.children",
        {**_session(args, "child_sessions"), "limit": args["limit"], **_pick(args, "cursor")},
    )
    parent = doc.get("parent") or {}
    kids = doc.get("sessions") or []
    if not kids:
        return f"{render.ref(parent)} has no child sessions."
    lines = [f"Child sessions of {render.ref(parent)}: {doc.get('total', len(kids))} in all, oldest first"]
    lines += [render.session_line(s) for s in kids]
    if doc.get("next"):
        lines.append(f"(more: call again with {_more(doc)})")
    lines.append("Read one with read_session(id=...), or session_overview(id=...).")
    return render.cut("\n".join(lines), args["max_chars"])


def _usage_row(label: str, usage: dict[str, Any] | None, extra: str = "") -> str:
    u = usage or {}
    return (
        f"- {label}: {render.cost(u) or 'no usage recorded'} | input {u.get('input_tokens') or 0:,} | "
        f"output {u.get('output_tokens') or 0:,} | cache read {u.get('cache_read_tokens') or 0:,}" + extra
    )


def compare_usage(call: Call, args: dict[str, Any], here: str | None) -> str:
    sessions = [x.strip() for x in (args.get("sessions") or "").split(",") if x.strip()]
    periods = [args.get(k) for k in ("a_since", "a_until", "b_since", "b_until")]
    if sessions and any(periods):
        raise ToolArgumentError(
            "compare_usage: give either 'sessions' or the periods (a_since, b_since…), not both"
        )
    if sessions:
        if not 2 <= len(sessions) <= MAX_COMPARED:
            raise ToolArgumentError(
                f"compare_usage: 'sessions' names 2 to {MAX_COMPARED} sessions, comma-separated"
            )
        lines = ["Usage of the sessions compared:"]
        for name in sessions:
            s = call("sessions.get", _split_id(name))["session"]
            extra = f" | {count(s.get('messages') or 0, 'msg')} | {render.one_line(s.get('title') or '', 80)}"
            lines.append(_usage_row(render.ref(s), s.get("usage"), extra))
        return render.cut("\n".join(lines), args["max_chars"])
    if not args.get("a_since") or not args.get("b_since"):
        raise ToolArgumentError(
            "compare_usage: give 'sessions' (AGENT:ID,AGENT:ID…) or two periods: a_since and b_since "
            "(with a_until and b_until)"
        )
    lines = [
        "Usage of the periods compared"
        + (f" (agent {render.clean(args['agent'])})" if args.get("agent") else "")
        + (f" (project {render.clean(args['project'])})" if args.get("project") else "")
        + ":"
    ]
    totals = []
    for name in ("a", "b"):
        params = {"since": args[f"{name}_since"], "by": "agent", **_pick(args, "agent", "project")}
        if args.get(f"{name}_until"):
            params["until"] = args[f"{name}_until"]
        doc = call("stats", params)
        label = f"{name.upper()} {render.clean(args[f'{name}_since'])} → {render.clean(args.get(f'{name}_until') or 'now')}"
        per = ", ".join(
            f"{render.clean(r.get('key'))} {render.cost(r)}" for r in (doc.get("rows") or [])[:10]
        )
        lines.append(_usage_row(label, doc.get("totals"), f" | by agent: {per}" if per else ""))
        totals.append(doc.get("totals") or {})
    a, b = (t.get("total_tokens") or 0 for t in totals)
    if a:
        lines.append(f"B is {b / a * 100:.0f}% of A in tokens.")
    ca, cb = (t.get("cost_usd") for t in totals)
    if isinstance(ca, int | float) and isinstance(cb, int | float) and ca:
        lines.append(f"B is {cb / ca * 100:.0f}% of A in estimated cost.")
    return render.cut("\n".join(lines), args["max_chars"])


def activity_report(call: Call, args: dict[str, Any], here: str | None) -> str:
    doc = call("report", _pick(args, "since", "until", "agent", "project"))
    projects = doc.get("projects") or []
    head = f"Activity since {render.clean(doc.get('since') or '?')}" + (
        f" until {render.clean(doc['until'])}" if doc.get("until") else ""
    )
    if not projects:
        return head + ": no sessions."
    lines = [head + f": {count(len(projects), 'project')}"]
    for p in projects:
        sessions = p.get("sessions") or []
        lines.append(f"## {render.clean(p.get('project') or '?')} ({count(len(sessions), 'session')})")
        for s in sessions:
            line = (
                f"- {render.ref(s)} | {render.when(s.get('started'))} | {count(s.get('prompt_count') or 0, 'prompt')}"
                f" | {count(s.get('commands') or 0, 'command')} ({s.get('commands_failed') or 0} failed)"
                f" | {render.cost(s.get('usage')) or 'no usage'}"
            )
            lines.append(line)
            if s.get("title"):
                lines.append("  " + render.one_line(s["title"], 160))
            files = s.get("files_edited") or []
            if files:
                lines.append(
                    "  files: "
                    + ", ".join(render.clean(f) for f in files[:10])
                    + (f", … {len(files) - 10} more" if len(files) > 10 else "")
                )
            fixed = s.get("failed_then_passed") or []
            if fixed:
                lines.append("  failed, then passed: " + ", ".join(render.one_line(f, 80) for f in fixed[:5]))
    return render.cut("\n".join(lines), args["max_chars"], "narrow it with since/until, agent or project")


def tool_usage(call: Call, args: dict[str, Any], here: str | None) -> str:
    params = {"by": "tool", "limit": args["limit"], **_pick(args, "since", "until", "agent", "project")}
    doc = call("stats", params)
    rows = doc.get("rows") or []
    totals = doc.get("totals") or {}
    if not rows:
        return "No tool calls recorded in that range."
    lines = [f"Tool calls: {totals.get('calls') or 0} ({totals.get('errors') or 0} failed), most used first:"]
    for r in rows:
        agents = ", ".join(f"{render.clean(a)} {n}" for a, n in sorted((r.get("agents") or {}).items()))
        lines.append(
            f"- {render.clean(r.get('key'))} [{render.clean(r.get('category') or '?')}]: {r.get('calls')} calls, "
            f"{r.get('errors') or 0} failed" + (f" ({agents})" if agents else "")
        )
    return render.cut("\n".join(lines), args["max_chars"])


def list_projects(call: Call, args: dict[str, Any], here: str | None) -> str:
    doc = call("projects.list", _pick(args, "agent", "since"))
    projects = doc.get("projects") or []
    if not projects:
        return "No projects."
    shown = projects[: args["limit"]]
    lines = [f"Projects ({len(projects)}, showing {len(shown)}):"]
    for p in shown:
        lines.append(
            f"- {render.clean(p.get('project') or '?')} | {render.clean(p.get('root') or '?')} | "
            f"{count(p.get('sessions') or 0, 'session')} | last active {render.when(p.get('last_active'))} | "
            f"{', '.join(render.clean(a) for a in p.get('agents') or [])} | {render.cost(p)}"
        )
    if len(projects) > len(shown):
        lines.append(f"(… {len(projects) - len(shown)} more: a larger limit, or agent/since to narrow)")
    lines.append("Sessions of one: list_sessions(project=...) or sessions_here(cwd=ROOT).")
    return render.cut("\n".join(lines), args["max_chars"])


def search_session(call: Call, args: dict[str, Any], here: str | None) -> str:
    session = call("sessions.get", _session(args, "search_session"))["session"]
    params: dict[str, Any] = {
        "q": args["query"],
        "session": f"{session['agent']}:{session['id']}",
        "limit": args["limit"],
        **_pick(args, "kind", "mode", "cursor"),
    }
    if session.get("collection"):
        params["collection"] = session["collection"]
    doc = call("search", params)
    return render.cut(render.hits(doc, query=args["query"], more=_more(doc)), args["max_chars"])


_KINDS = ["text", "thinking", "tool_use", "tool_result", "hook", "summary", "system", "unknown"]

INSIGHT_TOOLS: list[Tool] = [
    Tool(
        "session_overview",
        "One session at a glance",
        "A session's title (yours and the agent's), labels, star and hide, models, time, messages, token usage "
        "and cost, how it ended, compactions, its tool calls counted by tool (with failures), the files it "
        "changed, and its child sessions (subagents, up to 20 listed). Text, one fact per line.",
        _object({"id": _ID, "collection": _COLLECTION, "max_chars": _MAX}, ("id",)),
        session_overview,
    ),
    Tool(
        "session_tool_calls",
        "A session's tool calls",
        "The tool calls of one session in order: seq, time, tool name, status (ok, error, or no result "
        "recorded), duration in ms where the agent recorded when the result came, and the input cut to 400 "
        "characters. Filter by tool; page on with the cursor printed at the end.",
        _object(
            {
                "id": _ID,
                "collection": _COLLECTION,
                "tool": _string(
                    "only calls of this tool, by the name the agent records (e.g. Bash, Edit, exec_command)"
                ),
                "after_seq": _integer("only calls after this event seq", -1, -1, 2**53),
                "limit": _integer("calls per page", 50, 1, 500),
                "cursor": _CURSOR,
                "max_chars": _MAX,
            },
            ("id",),
        ),
        session_tool_calls,
    ),
    Tool(
        "recent_edits",
        "Recent file changes",
        "The file changes (writes, edits, patches, deletes, renames) that one session made, or that any session "
        "made under a directory, newest first: time, kind, path, the session (AGENT:ID) and seq, and the "
        "first diff_lines lines of each diff. Default: under this server's working directory.",
        _object(
            {
                "id": _string("only this session's changes, AGENT:ID"),
                "collection": _COLLECTION,
                "cwd": _string(
                    "only changes of files under this absolute directory (default without id: the server's)"
                ),
                "limit": _integer("changes per page", 20, 1, 200),
                "diff_lines": _integer("diff lines shown per change", 30, 0, 2000),
                "cursor": _CURSOR,
                "max_chars": _MAX,
            }
        ),
        recent_edits,
    ),
    Tool(
        "child_sessions",
        "A session's child sessions",
        "The sessions one session started (subagents, tasks), oldest first, one line each with id, time, "
        "messages and title; page on with the cursor.",
        _object(
            {
                "id": _ID,
                "collection": _COLLECTION,
                "limit": _integer("sessions per page", 50, 1, 500),
                "cursor": _CURSOR,
                "max_chars": _MAX,
            },
            ("id",),
        ),
        child_sessions,
    ),
    Tool(
        "compare_usage",
        "Compare token usage",
        "Token usage and estimated cost side by side: of 2 to 10 sessions (sessions=AGENT:ID,AGENT:ID…), or of "
        "two periods (a_since/a_until against b_since/b_until, optionally of one agent or project), with B as a "
        "share of A.",
        _object(
            {
                "sessions": _string("2 to 10 sessions, AGENT:ID, comma-separated"),
                "a_since": _string("period A from this date, time or age"),
                "a_until": _string("period A up to this date (included) or time"),
                "b_since": _string("period B from this date, time or age"),
                "b_until": _string("period B up to this date (included) or time"),
                "agent": _AGENT,
                "project": _PROJECT,
                "max_chars": _MAX,
            }
        ),
        compare_usage,
    ),
    Tool(
        "activity_report",
        "What was done in a period",
        "A report of a period (default: today) by project: each session with its start, prompts, commands run "
        "(and failed), cost, title, the files it edited and the tests that failed then passed.",
        _object({"since": _SINCE, "until": _UNTIL, "agent": _AGENT, "project": _PROJECT, "max_chars": _MAX}),
        activity_report,
    ),
    Tool(
        "tool_usage",
        "Which tools agents used",
        "Tool calls counted by tool over all sessions (optionally of a period, an agent or a project), most "
        "used first: calls, failures, its category (shell, read, write, …) and calls per agent.",
        _object(
            {
                "since": _SINCE,
                "until": _UNTIL,
                "agent": _AGENT,
                "project": _PROJECT,
                "limit": _integer("how many tools", 30, 1, 500),
                "max_chars": _MAX,
            }
        ),
        tool_usage,
    ),
    Tool(
        "list_projects",
        "Projects worked on",
        "The projects (working directories) agent sessions ran in, most recently active first: name, root "
        "directory, sessions, last activity, agents, tokens and cost.",
        _object(
            {
                "agent": _AGENT,
                "since": _SINCE,
                "limit": _integer("how many projects", 50, 1, 1000),
                "max_chars": _MAX,
            }
        ),
        list_projects,
    ),
    Tool(
        "search_session",
        "Search within one session",
        "Full-text search inside one session only (messages, thinking, tool calls and their output): the "
        "matching events with seq and snippet; read around one with read_session(id, after_seq=SEQ-1).",
        _object(
            {
                "id": _ID,
                "collection": _COLLECTION,
                "query": _string("the text to find (by default a phrase)"),
                "kind": _string("only events of this kind", enum=_KINDS),
                "mode": _string(
                    "phrase, prefix, words or regex", enum=["phrase", "prefix", "words", "regex"]
                ),
                "limit": _integer("how many matches", 20, 1, 100),
                "cursor": _CURSOR,
                "max_chars": _MAX,
            },
            ("id", "query"),
        ),
        search_session,
    ),
]
