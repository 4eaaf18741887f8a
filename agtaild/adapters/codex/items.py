"""`response_item` payloads (and the bare ResponseItems of pre-envelope rollouts).

These are the model-visible history: messages, reasoning, tool calls and their outputs.
Calls and outputs are paired by ``call_id``; the output is merged into the call's event.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agtaild.adapters.codex.emit import CodexParserBase, Line
from agtaild.adapters.codex.text import as_dict, as_str, content_text, dedupe_key, is_injected, msgpack_safe
from agtaild.adapters.kit import apply_patch
from agtaild.adapters.kit.jsonl import Category
from agtaild.model import project_of

CALL_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
RESPONSE_ITEM_TYPES = frozenset(
    {"message", "reasoning", "ghost_snapshot", "compaction", "compaction_summary"} | CALL_TYPES | OUTPUT_TYPES
)
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")
_EXIT_CODE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.MULTILINE)
#: The lines Codex writes above a command's output (``Output:`` ends them), and the
#: ``metadata`` key each becomes (the keys of Codex's JSON encoding where it has them).
_WRAPPER = re.compile(
    r"^(?:(Chunk ID|Wall time|Exit code|Original token count|Total output lines): (.*)"
    r"|(Process exited with code|Process running with session ID) (.*))$"
)
_WRAPPER_KEYS = {
    "Chunk ID": "chunk_id",
    "Wall time": "duration_seconds",
    "Exit code": "exit_code",
    "Process exited with code": "exit_code",
    "Process running with session ID": "session_id",
    "Original token count": "original_token_count",
    "Total output lines": "total_output_lines",
}
#: Wrapper lines at most before ``Output:`` (there are four or five).
_WRAPPER_LINES = 8


def split_wrapper(text: str) -> tuple[str, dict[str, Any]] | None:
    """(the command's output, the wrapper's fields) of an exec output Codex wrapped —
    ``Chunk ID: …`` / ``Wall time: 0.0 seconds`` / ``Process exited with code 0`` /
    ``Original token count: 3`` / ``Output:`` (older: ``Exit code`` / ``Wall time`` /
    ``Total output lines`` / ``Output:``) — or None when ``text`` does not start with one."""
    meta: dict[str, Any] = {}
    start = 0
    for _ in range(_WRAPPER_LINES):
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if line == "Output:":
            return ((text[end + 1 :] if end >= 0 else ""), meta) if meta else None
        m = _WRAPPER.match(line)
        if m is None or end < 0:
            return None
        label, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        meta[_WRAPPER_KEYS[label]] = _wrapper_value(_WRAPPER_KEYS[label], value.strip())
        start = end + 1
    return None


def _wrapper_value(key: str, value: str) -> Any:
    if key == "chunk_id":
        return value
    if key == "duration_seconds":
        number = value.split(" ", 1)[0]
        try:
            return float(number)
        except ValueError:
            return value
    return int(value) if re.fullmatch(r"-?\d+", value) else value
_json = msgspec.json.Decoder()


def decode_arguments(arguments: Any) -> Any:
    """Codex stores call arguments as a JSON *string*; decode it when it parses."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return _json.decode(arguments)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return arguments


def output_result(output: Any, depth: int = 0) -> tuple[Any, int | None, dict[str, Any]]:
    """(result, exit code, extras) of a call output in any of its encodings.

    Strings are either JSON ``{"output", "metadata": {"exit_code", …}}`` or text with an
    ``Exit code: N`` / ``Process exited with code N`` header; arrays hold content items.
    """
    extras: dict[str, Any] = {}
    if isinstance(output, dict) and depth < 2:  # FunctionCallOutputPayload as an object
        success = output.get("success")
        body = output.get("content", output.get("output"))
        result, code, extras = output_result(body, depth + 1)
        if success is False and code is None:
            code = 1
        return result, code, extras
    if isinstance(output, list):
        return content_text(output), None, extras
    if not isinstance(output, str):
        return output, None, extras
    stripped = output.lstrip()
    if stripped.startswith("{") and '"output"' in stripped:
        decoded = decode_arguments(output)
        if isinstance(decoded, dict) and "output" in decoded:
            meta = as_dict(decoded.get("metadata"))
            code = meta.get("exit_code")
            if meta:
                extras["metadata"] = meta
            return decoded.get("output"), code if isinstance(code, int) else None, extras
    wrapped = split_wrapper(output) if output[:1] in ("C", "E", "W", "P", "O", "T") else None
    if wrapped is not None:
        body, meta = wrapped
        extras["metadata"] = meta
        code = meta.get("exit_code")
        return body, code if isinstance(code, int) else None, extras
    match = _EXIT_CODE.search(output[:400])
    return output, int(match.group(1)) if match else None, extras


def handle_response_item(p: CodexParserBase, line: Line, item: dict[str, Any]) -> Category:
    kind = item.get("type")
    if not isinstance(kind, str):
        return p.emit_unknown(line, item)
    if kind == "message":
        return _message(p, line, item)
    if kind == "reasoning":
        return _reasoning(p, line, item)
    if kind in CALL_TYPES:
        return _call(p, line, item)
    if kind in OUTPUT_TYPES:
        return _output(p, line, item)
    if kind in ("compaction", "compaction_summary"):
        return compaction(p, line, None, {"remote": True})
    if kind == "ghost_snapshot":
        return "metadata"
    return p.emit_unknown(line, item)


def _message(p: CodexParserBase, line: Line, item: dict[str, Any]) -> Category:
    role = as_str(item.get("role")) or "user"
    text = content_text(item.get("content"))
    if not text.strip():
        return "skipped"
    uuid = as_str(item.get("id"))
    if role in ("developer", "system"):
        return p.emit_system(line, text, "instructions", role=role, uuid=uuid)
    if role == "user" and (is_injected(text) or _provenance_not_user(item)):
        if p.st.session.cwd is None and text.lstrip().startswith("<environment_context>"):
            found = _CWD.search(text)  # older rollouts name the cwd only here
            if found:
                p.st.session.cwd = found.group(1).strip()
                p.st.session.project = project_of(p.st.session.cwd)
        return p.emit_system(line, text, "context", role="user", uuid=uuid)
    extra = {"phase": item["phase"]} if isinstance(item.get("phase"), str) else None
    return p.emit_text(line, role, text, uuid=uuid, extra=extra)


def _provenance_not_user(item: dict[str, Any]) -> bool:
    """0.17x tags each content item's provenance; harness/tool text is not a prompt."""
    meta = as_dict(item.get("internal_chat_message_metadata_passthrough"))
    provenances = [as_dict(as_dict(m).get("provenance")).get("type") for m in meta.get("content_item_metadata") or []]
    return bool(provenances) and "user" not in provenances


def reasoning_parts(summary: Any) -> list[str]:
    parts: list[str] = []
    for part in summary if isinstance(summary, list) else []:
        text = part if isinstance(part, str) else as_str(as_dict(part).get("text"))
        if text and text.strip():
            parts.append(text)
    return parts


def emit_thinking(p: CodexParserBase, line: Line, parts: list[str], uuid: str | None, subtype: str | None) -> Category:
    """One thinking event per reasoning item; its event_msg copies (one per part) merge."""
    if not parts:
        return "skipped"
    st = p.st
    kind = "thinking" if subtype is None else f"thinking-{subtype}"
    text = parts[0] if len(parts) == 1 else "\n\n".join(parts)
    whole = dedupe_key(kind, text)
    if len(parts) == 1:
        return p.emit_text(line, "assistant", text, kind="thinking", uuid=uuid, subtype=subtype, key=whole)
    keys = [dedupe_key(kind, part) for part in parts]
    if whole in st.recent_text or all(k in st.recent_text for k in keys):
        for k in [whole, *keys]:
            st.recent_text.pop(k, None)
        return "merged"
    category = p.emit_text(line, "assistant", text, kind="thinking", uuid=uuid, subtype=subtype, key=whole)
    seq = st.recent_text.get(whole)
    if seq is not None:
        for k in keys:
            st.recent_text[k] = seq
    return category


def _reasoning(p: CodexParserBase, line: Line, item: dict[str, Any]) -> Category:
    uuid = as_str(item.get("id"))
    summary = emit_thinking(p, line, reasoning_parts(item.get("summary")), uuid, None)
    raw = reasoning_parts(item.get("content"))
    if raw:
        raw_category = emit_thinking(p, line, raw, uuid, "raw")
        if summary != "events":
            return raw_category
    return summary


def _call(p: CodexParserBase, line: Line, item: dict[str, Any]) -> Category:
    kind = item.get("type")
    call_id = as_str(item.get("call_id")) or as_str(item.get("id"))
    extra: dict[str, Any] = {}
    if kind == "function_call":
        tool = as_str(item.get("name")) or "function"
        data = decode_arguments(item.get("arguments"))
        if isinstance(item.get("namespace"), str):
            extra["namespace"] = item["namespace"]
    elif kind == "custom_tool_call":
        tool = as_str(item.get("name")) or "custom_tool"
        data = item.get("input")
    elif kind == "local_shell_call":
        tool, data = "local_shell", item.get("action")
    elif kind == "web_search_call":
        tool, data = "web_search", item.get("action")
    elif kind == "tool_search_call":
        tool, data = "tool_search", decode_arguments(item.get("arguments"))
    else:
        tool = "image_generation"
        data = {"revised_prompt": item.get("revised_prompt")}
    if isinstance(item.get("status"), str):
        extra["status"] = item["status"]
    event = p.new_event(line, "tool_use", role="assistant", tool=tool, input=data, uuid=as_str(item.get("id")))
    event.subtype = str(kind)
    event.extra.update(extra)
    edit = apply_patch.edit_of(tool, data)
    if edit is not None:
        event.extra["edit"] = edit
    if kind == "image_generation_call":
        image = item.get("result")
        event.result = f"[generated image, {len(image)} base64 characters]" if isinstance(image, str) else None
    category = p.open_call(line, call_id, event)
    if kind in ("web_search_call", "image_generation_call") and call_id and category == "events":
        p.close_call(call_id, event)  # no separate output item follows these
    return category


def _output(p: CodexParserBase, line: Line, item: dict[str, Any]) -> Category:
    call_id = as_str(item.get("call_id"))
    body = item.get("tools") if item.get("type") == "tool_search_output" else item.get("output")
    result, code, extras = output_result(body)
    call = p.find_call(call_id)
    if call is None or call_id is None:
        orphan = p.new_event(line, "tool_result", role="tool", result=result, tool_use_id=call_id)
        orphan.is_error = None if code is None else code != 0
        orphan.extra.update(extras)
        p.emit(orphan)
        return "events"
    if call.result is not None and call.extra.get("output_line"):
        return "merged"  # the same output again (copied prefix)
    call.result = result
    if code is not None:
        call.is_error = code != 0
        call.extra["exit_code"] = code
    call.extra.update(extras)
    call.extra["output_line"] = line.no
    p.update_call(call)
    p.close_call(call_id, call)
    return "merged"


def compaction(p: CodexParserBase, line: Line, text: str | None, extra: dict[str, Any]) -> Category:
    """Codex marks one compaction with up to three records (`compacted`, the remote
    `compaction` item, `context_compacted` / a ContextCompaction item): count and show it once.
    The group ends with the next conversation event. Copied compactions are the parent's.
    """
    st = p.st
    current = st.compaction_event
    if st.in_compaction and current is not None:
        if text and not current.text:
            current.text = text
            current.extra.update(msgpack_safe(extra))
            p.emit(current)
        return "merged"
    st.in_compaction = True
    if not line.copied:
        st.session.compactions += 1
    event = p.new_event(line, "summary", text=text, subtype="compaction")
    event.extra.update(msgpack_safe(extra))
    p.emit(event)
    st.compaction_event = event
    return "events"
