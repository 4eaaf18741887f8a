"""What gptme writes *into* an assistant message's text: thinking, tool calls, edits.

gptme keeps each message as one text. Inside an assistant's:

* thinking is ``<think>…</think>`` (reasoning models' output kept inline);
* a tool call of the native tool format (``tool_format = "tool"``, the default for
  OpenAI-compatible models) is a line ``@<tool>(<call id>): {json arguments}``;
* in the markdown format a call is a fenced block whose info string names the tool and its
  argument: ```` ```shell ````, ```` ```save notes.txt ````, ```` ```patch notes.txt ```` …;
* edits are the ``save`` (whole file), ``append`` and ``patch`` tools; a patch holds
  ``<<<<<<< ORIGINAL`` / ``=======`` / ``>>>>>>> UPDATED`` blocks.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.kit import edits

_THINK = re.compile(r"<think(?:ing)?>(.*?)(?:</think(?:ing)?>|\Z)", re.S)
_NATIVE = re.compile(r"^@([A-Za-z_][\w.-]*)\(([^()\s]*)\): ?(.*)$", re.M)
_FENCE = re.compile(r"^(`{3,})([A-Za-z_][\w.-]*)(?:[ \t]+(.*?))?[ \t]*$")
_PATCH = re.compile(r"<{7} ORIGINAL\n(.*?)\n?={7}\n(.*?)\n?>{7} UPDATED", re.S)
#: Fenced blocks gptme runs as a tool (markdown tool format), by their info string's first word.
MARKDOWN_TOOLS = frozenset({"shell", "bash", "sh", "save", "append", "patch", "ipython", "python", "py", "tmux"})
#: Tools whose markdown argument (after the tool name) is a file path.
_PATH_TOOLS = frozenset({"save", "append", "patch"})
#: Longest text scanned for calls (a pasted file of megabytes is not searched line by line).
MAX_SCAN = 2_000_000

_decoder = msgspec.json.Decoder()


def split_thinking(text: str) -> tuple[str | None, str]:
    """(the ``<think>`` parts joined, the text without them)."""
    if "<think" not in text:
        return None, text
    parts = [m.group(1).strip() for m in _THINK.finditer(text)]
    rest = _THINK.sub("", text).strip()
    thinking = "\n\n".join(p for p in parts if p)
    return thinking or None, rest


class Call(msgspec.Struct):
    tool: str
    call_id: str | None
    args: Any


def native_calls(text: str) -> tuple[str, list[Call]]:
    """(the text before the first call, the ``@tool(id): {…}`` calls in order)."""
    if "@" not in text or len(text) > MAX_SCAN:
        return text, []
    matches = list(_NATIVE.finditer(text))
    calls: list[Call] = []
    for i, m in enumerate(matches):
        raw = m.group(3)
        args = _json(raw)
        if args is _NOT_JSON:  # arguments that go on over several lines
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            raw = text[m.start(3) : end].strip()
            args = _json(raw)
            if args is _NOT_JSON:
                args = raw
        calls.append(Call(tool=m.group(1), call_id=m.group(2) or None, args=args))
    before = text[: matches[0].start()].strip() if matches else text
    return before, calls


def markdown_calls(text: str) -> tuple[str, list[Call]]:
    """(the text outside tool blocks, the fenced tool blocks in order)."""
    if "```" not in text or len(text) > MAX_SCAN:
        return text, []
    out: list[str] = []
    calls: list[Call] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m and m.group(2) in MARKDOWN_TOOLS:
            fence, tool, arg = m.group(1), m.group(2), (m.group(3) or "").strip()
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != fence:
                j += 1
            body = "\n".join(lines[i + 1 : j])
            calls.append(Call(tool=tool, call_id=None, args=_markdown_args(tool, arg, body)))
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out).strip(), calls


def _markdown_args(tool: str, arg: str, body: str) -> dict[str, Any]:
    if tool in _PATH_TOOLS:
        key = "patch" if tool == "patch" else "content"
        return {"path": arg, key: body + "\n" if body else body}
    return {"command" if tool in ("shell", "bash", "sh", "tmux") else "code": body}


_NOT_JSON = object()


def _json(raw: str) -> Any:
    try:
        return _decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return _NOT_JSON


def edit_of(tool: str, args: Any) -> dict[str, Any] | None:
    """``extra.edit`` of a ``save`` / ``append`` / ``patch`` call (from its arguments only)."""
    if not isinstance(args, dict) or not isinstance(args.get("path"), str):
        return None
    path = args["path"]
    if tool in ("save", "append") and isinstance(args.get("content"), str):
        change = edits.from_texts(path, "", args["content"], op="create" if tool == "save" else "update")
        return edits.edit_doc([change])
    if tool == "patch" and isinstance(args.get("patch"), str) and len(args["patch"]) <= edits.MAX_TEXT:
        hunks: list[dict[str, Any]] = []
        for m in _PATCH.finditer(args["patch"]):
            hunks += edits.hunks_from_texts(m.group(1), m.group(2))
        return edits.edit_doc([edits.file_change(path, hunks)]) if hunks else None
    return None


_RETURN_CODE = re.compile(r"^Return code: (-?\d+)\s*$", re.M)


def exit_code(result: str) -> int | None:
    """The ``Return code: N`` gptme's shell tool appends to a failed command's output."""
    m = _RETURN_CODE.search(result) if "Return code:" in result else None
    return int(m.group(1)) if m else None
