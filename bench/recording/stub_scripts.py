"""What the stub model says, per scenario and step.

A scenario is a list of abstract steps (a shell command, a file write, an edit, a final text).
Each step is turned into the concrete tool call the agent offers: the tool is found by name
among the request's ``tools`` (per-agent names first, then common ones) and its arguments are
named after that tool's JSON schema. Agents that offer no tools (gptme's markdown mode, Open
Interpreter's fallback) get the step as a fenced block in the reply text, which is how those
agents run tools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

WORKFILE = "notes.txt"
JA = "完了しました。ファイルを作成して編集しました。"


@dataclass
class Reply:
    text: str = ""
    reasoning: str = ""
    tool: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    delay: float = 0.0

    def describe(self) -> str:
        if self.status != 200:
            return f"HTTP {self.status}"
        return f"tool {self.tool}" if self.tool else f"text {self.text[:40]!r}"


#: The word the mcpfind scenario searches for (an earlier session's prompt holds it).
CODEWORD = "zorblax-codeword-25"

# Abstract steps: (kind, data).
SCENARIOS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "basic": [
        ("shell", {"command": "ls -la && echo hello-from-stub", "say": "Let me look around.",
                   "think": "The user wants a tour: list files first."}),
        ("write", {"path": WORKFILE, "content": "alpha\nbeta\n", "say": "Writing a file."}),
        ("edit", {"path": WORKFILE, "old": "beta", "new": "gamma", "say": "Now an edit."}),
        ("shell", {"command": "cat does-not-exist.txt", "say": "This command will fail."}),
        ("text", {"say": "Summary: listed files, wrote and edited notes.txt; the last command "
                         "failed as expected. " + JA}),
    ],
    # Open Interpreter runs code, not file tools: the write and the edit are Python.
    "codebasic": [
        ("shell", {"command": "ls -la && echo hello-from-stub", "say": "Let me look around.",
                   "think": "List the files first."}),
        ("code", {"language": "python", "say": "Writing a file.",
                  "code": f"open({WORKFILE!r}, 'w').write('alpha\\nbeta\\n')"}),
        ("code", {"language": "python", "say": "Now an edit.",
                  "code": f"p = {WORKFILE!r}\ns = open(p).read()\n"
                          "open(p, 'w').write(s.replace('beta', 'gamma'))"}),
        ("shell", {"command": "cat does-not-exist.txt", "say": "This command will fail."}),
        ("text", {"say": "Summary: listed files, wrote and edited notes.txt; the last command "
                         "failed as expected. " + JA}),
    ],
    "continue": [
        ("shell", {"command": f"cat {WORKFILE}", "say": "Reading the file again."}),
        ("text", {"say": "The file now says alpha and gamma. Continuing the same session."}),
    ],
    "text": [("text", {"say": "Hello! This is a plain text reply from the stub model.",
                       "think": "A greeting needs no tools."})],
    "apierror": [("error", {"status": 400, "say": "stub: this request is rejected on purpose"})],
    "slow": [("text", {"say": "Streaming slowly so that the run can be interrupted. " * 40,
                       "delay": 0.25})],
    "killtool": [("shell", {"command": "sleep 60", "say": "Running a long command."}),
                 ("text", {"say": "unreachable"})],
    "subagent": [
        ("subagent", {"task": "[[S:sub/child]] List the files in the current directory.",
                      "say": "Delegating to a subagent."}),
        ("text", {"say": "The subagent finished its listing."}),
    ],
    "child": [
        ("shell", {"command": "ls", "say": "Child agent listing files."}),
        ("text", {"say": "Child done: listed the files."}),
    ],
    # An agent that looks for its own earlier session through agtail's MCP tools, by their
    # real names as Claude Code offers them (mcp__<server>__<tool>), and labels the one it is in.
    "mcpfind": [
        ("mcp", {"tool": "mcp__agtail__sessions_here", "args": {}, "say": "Looking for earlier work here."}),
        ("mcp", {"tool": "mcp__agtail__search_sessions", "args": {"query": CODEWORD},
                 "say": "Searching for the codeword."}),
        ("mcp", {"tool": "mcp__agtail__add_label", "args": {"key": "found", "value": "earlier"},
                 "say": "Labelling this session."}),
        ("text", {"say": "Found the earlier session through agtail."}),
    ],
}

# Candidate tool names per abstract kind, most specific first.
TOOL_NAMES: dict[str, list[str]] = {
    "shell": ["terminal", "bash", "shell", "exec", "execute", "run_command", "run_shell_command",
              "execute_command", "Bash", "ipython"],
    "write": ["write_file", "write", "save", "create_file", "Write", "str_replace_based_edit_tool"],
    "edit": ["patch", "edit", "edit_file", "replace", "str_replace", "Edit", "apply_patch"],
    "subagent": ["delegate_task", "sessions_spawn", "subagent", "task", "Task", "spawn_agent",
                 "agent", "Agent"],
}

SYNONYMS: dict[str, list[str]] = {
    "command": ["command", "cmd", "code", "script", "input"],
    "path": ["path", "file_path", "filepath", "filename", "file", "target_file"],
    "content": ["content", "contents", "text", "file_text", "data"],
    "old": ["old_string", "old_str", "oldText", "old_text", "search", "old"],
    "new": ["new_string", "new_str", "newText", "new_text", "replace", "new"],
    "task": ["goal", "task", "prompt", "message", "instructions", "description"],
}


def _schema(body: dict[str, Any], name: str) -> dict[str, Any]:
    for t in body.get("tools") or []:
        fn = t.get("function") or t
        if fn.get("name") == name:
            params = fn.get("parameters") or fn.get("input_schema") or {}
            return params if isinstance(params, dict) else {}
    return {}


def _fill(schema: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """Name each wanted value after the schema's property that means it."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for key, value in wanted.items():
        for cand in SYNONYMS.get(key, [key]):
            if cand in props:
                out[cand] = value
                break
        else:
            out[key] = value
    for req in schema.get("required") or []:
        if req in out:
            continue
        if req == "language":
            out[req] = "shell"
        elif req == "mode":
            out[req] = "replace"
        elif req == "description":
            out[req] = "stub step"
    return out


def _pick(kind: str, tools: list[str]) -> str | None:
    for name in TOOL_NAMES[kind]:
        if name in tools:
            return name
    return None


def _concrete(kind: str, data: dict[str, Any], tools: list[str], body: dict[str, Any]) -> Reply:
    say, think = data.get("say", ""), data.get("think", "")
    if kind == "text":
        return Reply(text=say, reasoning=think, delay=data.get("delay", 0.0))
    if kind == "error":
        return Reply(text=say, status=data["status"])
    if kind == "mcp":  # one named tool with fixed arguments, when the agent offers it
        if data["tool"] not in tools:
            return Reply(text=f"{say} (the tool {data['tool']} was not offered)")
        return Reply(text=say, reasoning=think, tool=data["tool"], tool_args=dict(data["args"]))
    if kind == "code":
        if "execute" in tools:
            return Reply(text=say, reasoning=think, tool="execute",
                         tool_args={"language": data["language"], "code": data["code"]})
        return Reply(text=f"{say}\n\n```{data['language']}\n{data['code']}\n```",
                     reasoning=think)
    name = _pick(kind, tools)
    if name is None and kind == "subagent" and "ipython" in tools:
        # gptme exposes subagents as Python functions inside its ipython tool.
        code = (f"subagent('lister', {data['task']!r})\n"
                "print(subagent_wait('lister', timeout=90))")
        return Reply(text=say, reasoning=think, tool="ipython", tool_args={"code": code})
    if name is None and kind == "subagent" and "tool_call" in tools:
        # OpenClaw keeps sessions_spawn behind its tool-search catalog; tool_call reaches it.
        return Reply(text=say, reasoning=think, tool="tool_call", tool_args={
            "id": "sessions_spawn", "args": {"task": data["task"], "runtime": "subagent"}})
    if name is None and kind == "edit":
        name = _pick("write", tools)
        if name is not None:
            return _tool(name, body, {"path": data["path"], "content": "alpha\ngamma\n"}, say,
                         think)
    if name is None:
        return Reply(text=say + "\n\n" + _fenced(kind, data), reasoning=think)
    if kind == "shell":
        return _tool(name, body, {"command": data["command"]}, say, think)
    if kind == "write":
        return _tool(name, body, {"path": data["path"], "content": data["content"]}, say, think)
    if kind == "edit":
        schema = _schema(body, name)
        props = schema.get("properties") or {}
        if "edits" in props:  # pi / OpenClaw style: a list of replacements
            return Reply(text=say, reasoning=think, tool=name, tool_args={
                "path": data["path"], "edits": [{"oldText": data["old"], "newText": data["new"]}]})
        if "patch" in props and "old_string" not in props:
            return Reply(text=say, reasoning=think, tool=name, tool_args={
                "path": data["path"], "patch": _conflict_patch(data)})
        return _tool(name, body, {"path": data["path"], "old": data["old"], "new": data["new"]},
                     say, think)
    return _tool(name, body, {"task": data["task"]}, say, think)


def _tool(name: str, body: dict[str, Any], wanted: dict[str, Any], say: str, think: str) -> Reply:
    return Reply(text=say, reasoning=think, tool=name, tool_args=_fill(_schema(body, name), wanted))


def _conflict_patch(data: dict[str, Any]) -> str:
    return (f"<<<<<<< ORIGINAL\n{data['old']}\n=======\n{data['new']}\n>>>>>>> UPDATED\n")


def _fenced(kind: str, data: dict[str, Any]) -> str:
    """The step as the fenced block a markdown-tool agent executes."""
    if kind == "shell":
        return f"```shell\n{data['command']}\n```"
    if kind == "write":
        return f"```save {data['path']}\n{data['content']}```"
    if kind == "edit":
        return f"```patch {data['path']}\n{_conflict_patch(data)}```"
    return json.dumps(data)


def _is_side_request(body: dict[str, Any], tools: list[str]) -> bool:
    """A title or summary request an agent sends beside the conversation (no tools offered)."""
    if tools:
        return False
    system = [body.get("system")] + [m.get("content") for m in body.get("messages") or []
                                     if m.get("role") in ("system", "developer")]
    text = json.dumps(system).lower()
    return "title" in text and len(text) < 4000


def plan_reply(agent: str, scenario: str, step: int, later: list[str], tools: list[str],
               body: dict[str, Any]) -> Reply:
    """The reply for one request; untagged side requests (titles, summaries) get a short text."""
    if not agent or _is_side_request(body, tools):
        return Reply(text="Stub session title")
    steps = SCENARIOS.get(scenario) or SCENARIOS["text"]
    if step >= len(steps):
        if "complete" in tools:  # gptme's autonomous mode ends on this tool
            return Reply(text="", tool="complete", tool_args={})
        return Reply(text="Done.")
    kind, data = steps[step]
    return _concrete(kind, data, tools, body)
