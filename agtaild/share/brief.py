"""A handoff brief: what another agent needs to continue a session, made from the recorded
events alone (deterministic, no model call).

The brief says the task as the user stated it (the first and the last prompt), what was done
(files created and edited with their final diffs, commands run with their status, the test
commands' last outcome), where it stopped (the ending, the last answer, a call left without a
result), the open todo list where the agent kept one, and how to read more
(``agtail show AGENT:ID --around SEQ``). It fits a token budget, counted as one token per four
characters (a stated approximation; real tokenizers differ by ±25 % on prose and code): diffs
are cut first, then the command list, then the prompts, and the brief says what was cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agtaild.share import diffs
from agtaild.share.gather import SharedSession
from agtaild.share.markdown import fence
from agtaild.share.parts import plural
from agtaild.share.redact import Redactor

DEFAULT_MAX_TOKENS = 8000
CHARS_PER_TOKEN = 4
#: Tool names whose input is a shell command, and where the command sits in the input.
_COMMAND_KEYS = ("command", "cmd")
_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "file", "filename", "target_file")
_TODO_TOOLS = {"todowrite", "update_plan", "todo_write", "todo", "write_todos"}
_TEST_COMMAND = re.compile(r"\b(pytest|py\.test|tox|nox|jest|vitest|mocha|go test|cargo test|npm (run )?test|"
                           r"yarn test|pnpm test|make (check|test)|rspec|phpunit|ctest|mvn test|gradle test)\b")  # fmt: skip


@dataclass
class _Facts:
    first_prompt: str | None = None
    last_prompt: str | None = None
    last_prompt_seq: int | None = None
    last_answer: str | None = None
    last_answer_seq: int | None = None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    commands: list[tuple[str, bool | None, int]] = field(default_factory=list)
    tests: dict[str, tuple[bool | None, int]] = field(default_factory=dict)
    todo: dict[str, dict[str, Any]] = field(default_factory=dict)
    todo_seq: int | None = None
    unfinished: list[tuple[str, int]] = field(default_factory=list)
    last_seq: int = -1


def _command_of(inp: Any) -> str | None:
    if isinstance(inp, dict):
        for key in _COMMAND_KEYS:
            value = inp.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, list) and value and all(isinstance(x, str) for x in value):
                return " ".join(value)
    return None


def collect(shared: SharedSession, redact: Redactor) -> _Facts:
    f = _Facts()
    r = redact.text
    cwd = shared.session.get("cwd")
    for ev in shared.events():
        seq = int(ev.get("seq", -1))
        f.last_seq = max(f.last_seq, seq)
        kind, role = ev.get("kind"), ev.get("role")
        if kind == "text" and ev.get("text") and role == "user":
            text = r(ev["text"])
            f.first_prompt = f.first_prompt or text
            f.last_prompt, f.last_prompt_seq = text, seq
        elif kind == "text" and ev.get("text") and role == "assistant":
            f.last_answer, f.last_answer_seq = r(ev["text"]), seq
        elif kind == "tool_use":
            inp = ev.get("input")
            failed = bool(ev.get("is_error"))
            done = ev.get("result") not in (None, "") or failed
            edit = (ev.get("extra") or {}).get("edit")
            if edit and not failed:
                for file in diffs.files_of(edit):
                    path = r(str(file.get("path") or "?"))
                    entry = f.files.setdefault(path, {"ops": [], "edits": [], "seq": seq})
                    entry["ops"].append(file.get("op") or "update")
                    entry["edits"].append({"files": [file]})
                    entry["seq"] = seq
            command = _command_of(inp)
            if command is not None:
                command = r(command)
                status = None if not done else not failed
                f.commands.append((command, status, seq))
                if _TEST_COMMAND.search(command):
                    f.tests[command] = (status, seq)
            _track_todo(f, str(ev.get("tool") or "").lower(), redact.value(inp), seq)
            if not edit and isinstance(inp, dict) and not failed and isinstance(inp.get("content"), str):
                written = next((inp[k] for k in _PATH_KEYS if isinstance(inp.get(k), str)), None)
                if written:
                    entry = f.files.setdefault(r(written), {"ops": [], "edits": [], "seq": seq})
                    entry["ops"].append("write")
                    entry["seq"] = seq
            if not done:
                f.unfinished.append((r(str(ev.get("tool") or "tool")), seq))
    if cwd:
        f.files = {_relative(p, r(cwd)): v for p, v in f.files.items()}
    return f


def _relative(path: str, cwd: str) -> str:
    base = cwd.rstrip("/") + "/"
    return path[len(base) :] if path.startswith(base) else path


def _track_todo(f: _Facts, tool: str, inp: Any, seq: int) -> None:
    """The agent's todo list as it stands: a whole list (TodoWrite, update_plan, write_todos)
    replaces it; TaskCreate adds one item and TaskUpdate changes one (Claude Code 2.1)."""
    if not isinstance(inp, dict):
        return
    if tool in _TODO_TOOLS:
        items = inp.get("todos") or inp.get("plan") or inp.get("items")
        if isinstance(items, list):
            f.todo = {}
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    text = item.get("content") or item.get("step") or item.get("text") or item.get("title")
                    if isinstance(text, str):
                        f.todo[str(i)] = {"text": text, "status": str(item.get("status") or "pending")}
                elif isinstance(item, str):
                    f.todo[str(i)] = {"text": item, "status": "pending"}
            f.todo_seq = seq
    elif tool == "taskcreate" and isinstance(inp.get("subject"), str):
        f.todo[str(len(f.todo) + 1)] = {"text": inp["subject"], "status": "pending"}
        f.todo_seq = seq
    elif tool == "taskupdate" and str(inp.get("taskId")) in f.todo and isinstance(inp.get("status"), str):
        f.todo[str(inp["taskId"])]["status"] = inp["status"]
        f.todo_seq = seq


def _todo_lines(todo: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for item in todo.values():
        status = item["status"].lower()
        done = status in ("completed", "done")
        out.append(
            f"- [{'x' if done else ' '}] {item['text']}"
            + ("" if done or status == "pending" else f" ({status})")
        )
    return out


def _cut(text: str, chars: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= chars else (text[: max(chars - 1, 0)] + "…", True)


def build(shared: SharedSession, *, target: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS,
          redact: Redactor | None = None) -> str:  # fmt: skip
    """The brief, in Markdown, within ``max_tokens`` (approximately)."""
    redact = redact or Redactor()
    facts = collect(shared, redact)
    budget = max(max_tokens, 200) * CHARS_PER_TOKEN
    # From generous to tight: diff lines per file, commands listed, prompt characters.
    for diff_lines, commands, prompt_chars in (
        (80, 30, 6000),
        (30, 20, 3000),
        (10, 12, 1500),
        (0, 8, 800),
        (0, 4, 300),
    ):
        text = _render(shared, facts, target, diff_lines, commands, prompt_chars, redact)
        if len(text) <= budget:
            return text
    # Still too long: cut what comes before the closing section, and say so there.
    head, _, more = text.rpartition("## More\n")
    note = "- Cut to fit the budget: the text above was cut short as well.\n"
    keep = max(budget - len(more) - len(note) - len("…\n\n## More\n"), 0)
    return head[:keep].rstrip() + "…\n\n## More\n" + more + note


def _render(
    shared: SharedSession, f: _Facts, target: str | None, diff_lines: int, n_commands: int, prompt_chars: int,
    redact: Redactor,
) -> str:
    s = shared.session
    ref = f"{s['agent']}:{s['id']}"
    cut: list[str] = []
    out: list[str] = []
    who = f"in {target}" if target else "here"
    out.append("# Handoff: continue a task started in another agent\n")
    out.append(
        f"This task was worked on in {s['agent']} (session `{ref}`"
        + (f", in `{redact.text(s['cwd'])}`" if s.get("cwd") else "")
        + f"). Continue it {who}. Everything below comes from that session's transcript; "
        f"run `agtail show {ref}` for the whole of it.\n"
    )
    out.append("## The task, as the user stated it\n")
    first, was_cut = _cut(f.first_prompt or "(no prompt was recorded)", prompt_chars)
    out.append(fence(first, "text"))
    if was_cut:
        cut.append("the first prompt")
    if f.last_prompt and f.last_prompt != f.first_prompt:
        last, was_cut = _cut(f.last_prompt, prompt_chars)
        out.append(f"The latest request (seq {f.last_prompt_seq}):\n")
        out.append(fence(last, "text"))
        if was_cut:
            cut.append("the latest request")
    out.append("## What was done\n")
    if f.files:
        out.append(f"Files changed ({len(f.files)}):\n")
        for path, entry in f.files.items():
            ops = entry["ops"]
            verb = (
                "created"
                if ops[0] == "create"
                else "deleted"
                if ops[-1] == "delete"
                else "written"
                if ops[0] == "write"
                else "edited"
            )
            out.append(
                f"- `{path}`: {verb}"
                + (f", {plural(len(ops), 'edit')}" if len(ops) > 1 else "")
                + f" (last at seq {entry['seq']})"
            )
        out.append("")
        if diff_lines and any(e["edits"] for e in f.files.values()):
            out.append("The last change to each file:\n")
            for path, entry in f.files.items():
                if not entry["edits"]:
                    continue
                lines = redact.text(diffs.unified(entry["edits"][-1], s.get("cwd"))).split("\n")
                if len(lines) > diff_lines:
                    cut.append(f"the diff of {path}")
                    lines = [*lines[:diff_lines], f"… (agtail show {ref} --around {entry['seq']})"]
                out.append(fence("\n".join(lines), "diff"))
        elif not diff_lines:
            cut.append("every diff")
    else:
        out.append("No file edits were recorded.\n")
    if f.commands:
        shown = f.commands[-n_commands:]
        if len(shown) < len(f.commands):
            cut.append(f"{plural(len(f.commands) - len(shown), 'earlier command')}")
        out.append(f"Commands run ({len(f.commands)}; the last {len(shown)}):\n")
        for command, status, seq in shown:
            mark = "ok" if status else "failed" if status is False else "no result"
            out.append(
                f"- `{_cut(command.splitlines()[0], 160)[0].replace('`', chr(39))}` → {mark} (seq {seq})"
            )
        out.append("")
    if f.tests:
        out.append("Test commands, as they last ended:\n")
        for command, (status, seq) in f.tests.items():
            mark = "passed" if status else "failed" if status is False else "no result"
            out.append(
                f"- `{_cut(command.splitlines()[0], 160)[0].replace('`', chr(39))}`: {mark} (seq {seq})"
            )
        out.append("")
    out.append("## Where it stopped\n")
    ending = s.get("ending")
    out.append(
        f"- The session ended: {ending}."
        if ending
        else "- The session has no recorded ending flag (finished normally, or still open)."
    )
    for tool, seq in f.unfinished[-3:]:
        out.append(f"- A `{tool}` call got no result (seq {seq}).")
    out.append("")
    if f.last_answer:
        answer, was_cut = _cut(f.last_answer, prompt_chars)
        out.append(f"The agent's last message (seq {f.last_answer_seq}):\n")
        out.append(fence(answer, "text"))
        if was_cut:
            cut.append("the last message")
    if f.todo:
        lines = _todo_lines(f.todo)
        if lines:
            open_items = sum(1 for x in f.todo.values() if x["status"].lower() not in ("completed", "done"))
            out.append(f"## The todo list ({open_items} open, as of seq {f.todo_seq})\n")
            out.extend(lines)
            out.append("")
    out.append("## More\n")
    out.append(
        f"- The whole session: `agtail show {ref}`; one place in it: `agtail show {ref} --around SEQ`."
    )
    if cut:
        out.append(f"- Cut to fit the budget: {', '.join(cut)}.")
    return "\n".join(out).rstrip() + "\n"
