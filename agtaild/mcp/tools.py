"""The MCP tools: their schemas, their argument checks, and the service calls behind them.

Nothing here imports the SDK: a tool is a name, a description, a JSON Schema and a function
``(call, args, here) -> str`` where ``call(method, params)`` is the Backend protocol
(agtaild/query/backend.py: the daemon over JSON-RPC, or the service in-process, or the daemon's own
service for ``/mcp``) and ``here`` is the directory "this directory" means (the server's cwd
over stdio; None over HTTP, where the caller must say). Arguments are checked against the
schema here, so a wrong argument is a clear tool error and never reaches the service.
"""

from __future__ import annotations

from typing import Any

from agtaild.errors import AgtailError, worded
from agtaild.mcp import own, render
from agtaild.mcp.handoff import handoff_brief
from agtaild.mcp.insight_tools import INSIGHT_TOOLS
from agtaild.mcp.toolkit import (
    _AGENT,
    _CURSOR,
    _CWD,
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

__all__ = ["BY_NAME", "TOOLS", "Call", "Tool", "ToolArgumentError", "check_arguments", "error_text"]

def check_arguments(tool: Tool, args: Any) -> dict[str, Any]:
    """``args`` checked against ``tool.schema`` (the subset of JSON Schema the tools use),
    with defaults filled in. Raises ToolArgumentError naming the argument and what it wants."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ToolArgumentError(f"{tool.name}: the arguments must be an object")
    props: dict[str, Any] = tool.schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolArgumentError(
            f"{tool.name}: unknown argument(s) {', '.join(map(repr, unknown))}; it takes: {', '.join(props)}"
        )
    out: dict[str, Any] = {}
    for name, spec in props.items():
        value = args.get(name)
        if value is None:
            if name in tool.schema["required"]:
                raise ToolArgumentError(f"{tool.name}: argument {name!r} is required ({spec['description']})")
            if "default" in spec:
                out[name] = spec["default"]
            continue
        kind = spec["type"]
        if kind == "string":
            if not isinstance(value, str):
                raise ToolArgumentError(f"{tool.name}: argument {name!r} must be a string")
            if not value.strip() and name in tool.schema["required"]:
                raise ToolArgumentError(f"{tool.name}: argument {name!r} must not be empty")
            if "enum" in spec and value not in spec["enum"]:
                raise ToolArgumentError(f"{tool.name}: argument {name!r} must be one of {', '.join(spec['enum'])}")
            if len(value) > 10_000:
                raise ToolArgumentError(f"{tool.name}: argument {name!r} is over 10000 characters")
        elif kind == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise ToolArgumentError(f"{tool.name}: argument {name!r} must be an integer")
            if not spec["minimum"] <= value <= spec["maximum"]:
                raise ToolArgumentError(
                    f"{tool.name}: argument {name!r} must be between {spec['minimum']} and {spec['maximum']}"
                )
        out[name] = value
    return out


#: Service parameters a tool takes under another name.
_ARGUMENT_OF = {"q": "query"}


def error_text(err: BaseException) -> str:
    """A failed call as the tool's caller reads it: a refused parameter named as the tool's
    argument (``argument 'since': …``), never the service's method or the API's wording."""
    if isinstance(err, AgtailError):
        return worded(err, lambda name: f"argument {_ARGUMENT_OF.get(name, name)!r}")
    return str(err)


def search_sessions(call: Call, args: dict[str, Any], here: str | None) -> str:
    params = _pick(args, "agent", "project", "cwd", "since", "kind", "cursor")
    params.update(q=args["query"], limit=args["limit"])
    if args.get("mode"):
        params["mode"] = args["mode"]
    doc = call("search", params)
    return render.hits(doc, query=args["query"], more=_more(doc))


def list_sessions(call: Call, args: dict[str, Any], here: str | None) -> str:
    params = _pick(args, "agent", "project", "cwd", "since", "cursor")
    params["limit"] = args["limit"]
    doc = call("sessions.list", params)
    return render.session_list(doc.get("sessions") or [], heading="Sessions", more=_more(doc))


def sessions_here(call: Call, args: dict[str, Any], here: str | None) -> str:
    cwd = args.get("cwd") or here
    if not cwd:
        raise ToolArgumentError("sessions_here: argument 'cwd' is required here (the directory to look in)")
    params = {"cwd": cwd, "limit": args["limit"], **_pick(args, "agent", "since", "cursor")}
    doc = call("sessions.list", params)
    return render.session_list(doc.get("sessions") or [], heading=f"Sessions in {render.clean(cwd)}", more=_more(doc))


def read_session(call: Call, args: dict[str, Any], here: str | None) -> str:
    ref: dict[str, Any] = {**_split_id(args["id"]), **_pick(args, "collection")}
    session = call("sessions.get", ref)["session"]
    exact = {"agent": session["agent"], "id": session["id"], "path": session["path"]}
    budget = args["max_chars"]
    page = call("events.list", {**exact, "after_seq": args["after_seq"], "limit": args["limit"]})
    events = page.get("events") or []
    blocks: list[str] = []
    used = 0
    last_seq: int | None = None
    stopped = False
    for event in events:
        block = render.event_block(
            event, agent=session["agent"], text_chars=args["text_chars"], tool_chars=args["tool_output_chars"]
        )
        if blocks and used + len(block) > budget:
            stopped = True
            break
        blocks.append(render.cut(block, budget, "ask again with a larger max_chars"))
        used += len(block)
        last_seq = event.get("seq")
    header = render.session_header(session)
    if args["after_seq"] >= 0:
        header += f"\n(events after seq {args['after_seq']})"
    body = "\n\n".join(blocks) if blocks else "(no events in this range)"
    more = stopped or bool(page.get("next"))
    again = f"read_session(id={render.ref(session)!r}"
    if session.get("imported") and session.get("collection"):
        again += f", collection={render.clean(session['collection'])!r}"
    footer = f"(more: {again}, after_seq={last_seq}))" if more and last_seq is not None else "(end of session)"
    return f"{header}\n\n{body}\n\n{footer}"


def usage_summary(call: Call, args: dict[str, Any], here: str | None) -> str:
    import datetime

    since = args.get("since") or datetime.date.today().isoformat()
    params = {"since": since, "by": args["by"], **_pick(args, "agent", "project", "until")}
    doc = call("stats", params)
    scope = f"since {render.clean(since)}" + (f" until {render.clean(args['until'])}" if args.get("until") else "")
    for key in ("agent", "project"):
        if args.get(key):
            scope += f", {key} {render.clean(args[key])}"
    return render.usage_report(doc, by=args["by"], scope=scope)


def file_history(call: Call, args: dict[str, Any], here: str | None) -> str:
    import os

    path = args["path"].strip()
    if not os.path.isabs(path):
        if here is None:
            raise ToolArgumentError("file_history: argument 'path' must be absolute here")
        path = os.path.join(here, path)
    doc = call("files.history", {"path": path, "limit": args["limit"]})
    return render.file_history(doc, diff_lines=args["diff_lines"])


_KINDS = ["text", "thinking", "tool_use", "tool_result", "hook", "summary", "system", "unknown"]

TOOLS: list[Tool] = [
    Tool(
        "search_sessions",
        "Search past agent sessions",
        "Full-text search over the transcripts of every AI coding agent session on this machine "
        "(messages, thinking, tool calls and their output). Returns the best matches with the session "
        "id (AGENT:ID), the event's seq and a snippet; read around a match with read_session.",
        _object(
            {
                "query": _string("the text to find (by default a phrase: the words in this order)"),
                "agent": _AGENT,
                "project": _PROJECT,
                "cwd": _CWD,
                "since": _SINCE,
                "kind": _string("only events of this kind", enum=_KINDS),
                "mode": _string(
                    "phrase, prefix (last word may be unfinished), words (all words, any order), "
                    "regex (a Python regular expression; slow), semantic (by meaning, when embeddings are "
                    "built), hybrid (full-text and meaning fused). Default: phrase, or hybrid once the "
                    "vectors cover the index",
                    enum=["phrase", "prefix", "words", "regex", "semantic", "hybrid"],
                ),
                "limit": _integer("how many matches", 10, 1, 100),
                "cursor": _CURSOR,
            },
            ("query",),
        ),
        search_sessions,
    ),
    Tool(
        "list_sessions",
        "List recent agent sessions",
        "The most recently active AI coding agent sessions on this machine (all agents), newest first, "
        "with id (AGENT:ID), project, cwd, message count and title.",
        _object(
            {
                "agent": _AGENT,
                "project": _PROJECT,
                "cwd": _CWD,
                "since": _SINCE,
                "limit": _integer("how many sessions", 20, 1, 200),
                "cursor": _CURSOR,
            }
        ),
        list_sessions,
    ),
    Tool(
        "sessions_here",
        "Sessions in this directory",
        "Earlier agent sessions (of any agent) that ran in this working directory or below it: what was "
        "already tried here. Defaults to the directory this MCP server runs in.",
        _object(
            {
                "cwd": _string("the directory (absolute path); default: the server's working directory"),
                "agent": _AGENT,
                "since": _SINCE,
                "limit": _integer("how many sessions", 20, 1, 200),
                "cursor": _CURSOR,
            }
        ),
        sessions_here,
    ),
    Tool(
        "read_session",
        "Read a session's transcript",
        "One page of a session's transcript: each event with its seq, time, role and text; tool inputs "
        "and outputs are cut to tool_output_chars with a marker. Page on with after_seq (the footer says "
        "the value). The id is AGENT:ID as the other tools print it (a unique id prefix works).",
        _object(
            {
                "id": _string("the session, AGENT:ID (e.g. claude-code:2c4d36d7)"),
                "collection": _string("read the copy imported into this collection (the listings name it)"),
                "after_seq": _integer("start after this event seq (-1: from the start)", -1, -1, 2**53),
                "limit": _integer("at most this many events", 50, 1, 500),
                "max_chars": _integer("at most about this many characters of events in the page", 20_000, 1_000, 200_000),
                "text_chars": _integer("cut each message text at this many characters", 4_000, 100, 200_000),
                "tool_output_chars": _integer("cut each tool input and output at this many characters", 600, 50, 200_000),
            },
            ("id",),
        ),
        read_session,
    ),
    Tool(
        "usage_summary",
        "Token usage and cost",
        "Tokens and estimated cost of agent sessions on this machine, grouped by day, model, agent, "
        "project or session; by default today's.",
        _object(
            {
                "since": _string("from this date, time or age (default: today)"),
                "until": _string("up to this date (included) or time"),
                "by": _string("how to group", enum=["day", "model", "agent", "project", "session"], default="model"),
                "agent": _AGENT,
                "project": _PROJECT,
            }
        ),
        usage_summary,
    ),
    Tool(
        "handoff_brief",
        "Brief to continue another agent's session",
        "A brief of a session, made from its recorded events (no model call), to continue its work here: "
        "the task as the user stated it, the files changed with their last diffs, the commands run and "
        "how the tests last ended, where it stopped, the open todo list, and how to read more "
        "(read_session with after_seq). Secrets are masked. The same brief as `agtail handoff --print`.",
        _object(
            {
                "id": _string("the session to continue, AGENT:ID (e.g. claude-code:2c4d36d7)"),
                "collection": _string("the copy imported into this collection (the listings name it)"),
                "to": _string("the agent that continues it (an agent id: codex, gemini, …), named in the brief"),
                "max_tokens": _integer("the brief's budget, at about 4 characters a token", 8000, 200, 200_000),
            },
            ("id",),
        ),
        handoff_brief,
    ),
]

_OWN = _string(
    "your own session, AGENT:ID; default: the one your environment names (AGTAIL_SESSION, Claude Code's "
    "CLAUDE_CODE_SESSION_ID), else the newest session in this server's directory. Another session is refused"
)

TOOLS += [
    Tool(
        "set_title",
        "Name your own session",
        "Give the session you are working in a title, shown by agtail's listings, viewer and pickers "
        "(recorded as the agent's; a title the user gave is never overwritten). Only your own session.",
        _object({"title": _string("the title: one line, up to 300 characters"), "session": _OWN}, ("title",)),
        own.set_title,
        writes=True,
    ),
    Tool(
        "add_label",
        "Label your own session",
        "Put a label (KEY, or KEY=VALUE) on the session you are working in, e.g. topic=auth or wip; "
        "agtail's listings filter by it. A label of the user's with that key is never overwritten. Only your own session.",
        _object(
            {
                "key": _string("up to 64 letters, digits, '.', '_', '-', '/' or ':', starting with a letter or digit"),
                "value": _string("the value (up to 256 printable characters; empty: a bare key)"),
                "session": _OWN,
            },
            ("key",),
        ),
        own.add_label,
        writes=True,
    ),
    Tool(
        "remove_label",
        "Remove a label from your own session",
        "Take a label you put on the session you are working in off again (a label the user set stays). "
        "Only your own session.",
        _object({"key": _string("the label's key"), "session": _OWN}, ("key",)),
        own.remove_label,
        writes=True,
    ),
    Tool(
        "file_history",
        "Which sessions changed a file",
        "Every recorded change of a file (or of the files under a folder) by any agent session on this "
        "machine, newest first: the session (AGENT:ID), the event's seq, the prompt that led to it and "
        "its diff. Follows renames; paths recorded through symlinks or with another case are matched "
        "and marked. Read the session around a change with read_session.",
        _object(
            {
                "path": _string("the file or folder: absolute, or relative to the server's working directory"),
                "limit": _integer("how many changes", 20, 1, 200),
                "diff_lines": _integer("diff lines shown per change", 30, 0, 2000),
            },
            ("path",),
        ),
        file_history,
    ),
]

# The tools of a closer look (one session's overview, tool calls, children; edits, usage
# compared, reports, tool usage, projects, search in one session): agtaild.mcp.insight_tools.
TOOLS += INSIGHT_TOOLS

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
