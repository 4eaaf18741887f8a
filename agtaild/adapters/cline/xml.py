"""Cline's text tool protocol: tool calls written as XML blocks inside the assistant's text.

Before native tool calling (and still for models without it, e.g. Cline CLI 2.x against an
OpenAI-compatible endpoint), Cline and its forks (Roo Code, Kilo Code) ask the model to write
each tool call as ``<tool_name><param>value</param>…</tool_name>`` in its reply, and answer
it in the next user message with a text block headed ``[tool_name for 'arg'] Result:``.
This module splits an assistant text into prose, ``<thinking>`` and tool calls, and
recognises those result headers. Only known tool names are taken as calls, so prose that
mentions a tag stays prose.
"""

from __future__ import annotations

import re
from typing import Any

#: Tool names of Cline, Roo Code and Kilo Code's text protocol (their system prompts).
TOOLS: frozenset[str] = frozenset(
    {
        "execute_command",
        "read_file",
        "write_to_file",
        "replace_in_file",
        "apply_diff",
        "insert_content",
        "search_and_replace",
        "search_files",
        "list_files",
        "list_code_definition_names",
        "codebase_search",
        "browser_action",
        "use_mcp_tool",
        "access_mcp_resource",
        "load_mcp_documentation",
        "ask_followup_question",
        "plan_mode_respond",
        "act_mode_respond",
        "attempt_completion",
        "new_task",
        "switch_mode",
        "update_todo_list",
        "fetch_instructions",
        "web_fetch",
        "web_search",
        "condense",
        "summarize_task",
        "report_bug",
        "new_rule",
        "run_slash_command",
        "generate_image",
        "focus_chain",
        "use_subagents",
    }
)

_BLOCK = re.compile(r"<([a-z_]+)>(.*?)</\1>", re.S)
_PARAM = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.S)
#: ``[execute_command for 'ls'] Result:`` / ``[read_file] Result:`` (the result header).
RESULT_HEADER = re.compile(r"^\[([a-z_]+)(?: for '(.*?)')?\] Result:[ \t]*\n?", re.S)
_FAILED = (
    "The tool execution failed",
    "Command failed with exit code",
    "Error executing",
    "The user denied this operation",
)


def split_text(text: str) -> list[tuple[str, Any]]:
    """The pieces of an assistant text in order: ("text", str), ("thinking", str) or
    ("tool", (name, params)). Text between and around the blocks is kept (trimmed)."""
    out: list[tuple[str, Any]] = []
    pos = 0
    for m in _BLOCK.finditer(text):
        name = m.group(1)
        if name not in TOOLS and name != "thinking":
            continue
        _prose(out, text[pos : m.start()])
        if name == "thinking":
            body = m.group(2).strip()
            if body:
                out.append(("thinking", body))
        else:
            out.append(("tool", (name, params_of(m.group(2)))))
        pos = m.end()
    _prose(out, text[pos:])
    return out


def _prose(out: list[tuple[str, Any]], piece: str) -> None:
    piece = piece.strip()
    if piece:
        out.append(("text", piece))


def params_of(body: str) -> dict[str, str]:
    """A tool block's parameters (``<path>a.py</path>`` → {"path": "a.py"}); a block with no
    parameter tags keeps its body under "text"."""
    params = {m.group(1): m.group(2) for m in _PARAM.finditer(body)}
    if not params and body.strip():
        params["text"] = body.strip()
    return params


def tool_result(text: str) -> tuple[str, str, bool] | None:
    """(tool name, result text, looks like an error) when ``text`` starts with a result
    header, else None."""
    m = RESULT_HEADER.match(text)
    if not m:
        return None
    body = text[m.end() :]
    return m.group(1), body, body.lstrip().startswith(_FAILED)
