"""Amp (Sourcegraph): one JSON document per thread, ``~/.local/share/amp/threads/T-<uuid>.json``.

``$XDG_DATA_HOME`` moves ``~/.local/share``; the VS Code extension's older store
``<editor User>/globalStorage/sourcegraph.amp/threads3/`` holds the same documents. A thread is
rewritten whole on every save (read whole: :class:`JsonDocAdapter`).

Thread (FORMATS.md §13, FORMATS-longtail §14; checked on two real threads of CLI
0.0.1772237000, tests/corpus/amp/git-ai): ``id``, ``title``, ``created`` (ms), ``agentMode``,
``env.initial.trees[0]`` (``displayName``, ``uri`` → cwd, ``repository.ref`` → branch),
``env.initial.platform`` (``clientType``, ``clientVersion``), ``messages[]`` with ``role``,
``messageId``, Anthropic-style ``content`` blocks, ``state{type, stopReason}`` and
``usage{model, inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens,
timestamp}`` on assistant messages, and ``meta.traces[].endTime``. A ``tool_result`` block
holds ``toolUseID`` and ``run{status, result}``; ``result`` is an object: ``Read`` gives
``{absolutePath, content}``, ``edit_file`` gives ``{diff}`` (a fenced unified diff with the
file's own line numbers, the call's input being ``{path, old_str, new_str}``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlparse

from agtaild.adapters.base import ResumeCommand, Unit, env_path
from agtaild.adapters.kit import edits
from agtaild.adapters.kit.jsondoc import JsonDocAdapter, RecordBook
from agtaild.adapters.kit.resume_ids import safe_id
from agtaild.adapters.kit.stamps import any_time, from_epoch, widen
from agtaild.adapters.kit.vscode_hosts import global_storage
from agtaild.model import Event, Session, Usage, UsageRecord, project_of

THREAD_ID = re.compile(r"T-[0-9A-Za-z-]{8,64}")
_ENDINGS = {"cancelled": "interrupted", "canceled": "interrupted", "error": "error"}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def amp_usage(raw: Any) -> Usage | None:
    """An assistant message's usage (Anthropic convention: input excludes cache)."""
    if not isinstance(raw, dict):
        return None
    usage = Usage(
        input_tokens=_int(raw.get("inputTokens")),
        output_tokens=_int(raw.get("outputTokens")),
        cache_read_tokens=_int(raw.get("cacheReadInputTokens")),
        cache_write_tokens=_int(raw.get("cacheCreationInputTokens")),
    ).fix_total()
    return None if usage.is_zero() else usage


def block_text(content: Any) -> Any:
    if isinstance(content, list):
        texts = [str(b["text"]) for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else content
    return content


class AmpAdapter(JsonDocAdapter):
    id: ClassVar[str] = "amp"
    name: ClassVar[str] = "Amp"
    env_vars: ClassVar[tuple[str, ...]] = ("XDG_DATA_HOME",)
    root_help: ClassVar[str] = "the threads folder (~/.local/share/amp/threads; ~/.local/share/amp works too)"
    formats_tested: ClassVar[tuple[str, ...]] = (
        "thread JSON (two real threads of CLI 0.0.1772237000, and hand-made ones from the documented schema)",
    )
    sample_roots: ClassVar[tuple[str, ...]] = (
        "amp/git-ai/.local/share/amp/threads",
        "amp/synthetic-agtail/.local/share/amp/threads",
    )

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        data = env_path(env, "XDG_DATA_HOME") or home / ".local" / "share"
        legacy = [g / "threads3" for g in global_storage(env, home, "sourcegraph.amp")]
        return [data / "amp" / "threads", *legacy]

    def discover(self, root: Path) -> Iterator[Unit]:
        folder = root / "threads" if (root / "threads").is_dir() else root
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.name.startswith("T-"))
        except OSError:
            return
        for path in files:
            if path.is_file():
                yield Unit(agent=self.id, path=str(path), files=[str(path)], root=str(root))

    def parse(self, doc: Any, book: RecordBook, unit: Unit) -> None:
        s = book.session
        if not isinstance(doc, dict):
            book.emit(Event(seq=-1, kind="unknown", raw=doc))
            book.count("events")
            return
        book.count("metadata")  # the thread's own fields
        s.id = _str(doc.get("id")) or s.id
        s.title = _str(doc.get("title"))
        s.started = from_epoch(doc.get("created"), unit="ms")
        if _str(doc.get("agentMode")):
            s.extra["agent_mode"] = doc["agentMode"]
        _environment(s, doc.get("env"))
        pending: dict[str, Event] = {}
        messages = doc.get("messages")
        for i, msg in enumerate(messages if isinstance(messages, list) else []):
            book.count(self._message(book, msg, i, pending))
        meta = doc.get("meta")
        traces = meta.get("traces") if isinstance(meta, dict) else None
        for trace in traces if isinstance(traces, list) else []:
            if isinstance(trace, dict):
                s.started, s.ended = widen(s.started, s.ended, any_time(trace.get("endTime")))

    def _message(self, book: RecordBook, msg: Any, index: int, pending: dict[str, Event]) -> Any:
        s = book.session
        if not isinstance(msg, dict):
            book.emit(Event(seq=-1, kind="unknown", source={"message": index}, raw=msg))
            return "events"
        role = _str(msg.get("role"))
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            book.emit(Event(seq=-1, kind="unknown", role=role, source={"message": index}, raw=msg))
            return "events"
        usage = amp_usage(msg.get("usage"))
        raw_usage = msg.get("usage") if isinstance(msg.get("usage"), dict) else {}
        model = _str(raw_usage.get("model")) if isinstance(raw_usage, dict) else None
        ts = any_time(raw_usage.get("timestamp")) if isinstance(raw_usage, dict) else None
        meta = msg.get("meta")
        ts = ts or (from_epoch(meta.get("sentAt"), unit="ms") if isinstance(meta, dict) else None)
        s.started, s.ended = widen(s.started, s.ended, ts)
        emitted: list[Event] = []
        merged = 0
        for block in blocks:
            ev, was_merged = self._block(book, block, role, model, ts, index, pending)
            merged += was_merged
            if ev is not None:
                emitted.append(ev)
        if model and model not in s.models:
            s.models.append(model)
        if usage is not None:
            key = f"message:{msg.get('messageId', index)}"
            book.add_usage(UsageRecord(key=key, ts=ts, model=model, usage=usage))
            if emitted:
                emitted[0].usage = usage
        state = msg.get("state")
        if role == "assistant" and isinstance(state, dict):
            s.ending = _ENDINGS.get(str(state.get("type")))
            if state.get("stopReason") == "max_tokens":
                s.ending = "limit"
        elif role == "user" and emitted:
            s.ending = None
            if s.first_prompt is None and emitted[0].kind == "text":
                s.first_prompt = emitted[0].text
        if emitted:
            if role in ("user", "assistant"):
                s.messages += 1
            return "events"
        return "merged" if merged else "skipped"

    def _block(
        self,
        book: RecordBook,
        block: Any,
        role: str | None,
        model: str | None,
        ts: str | None,
        index: int,
        pending: dict[str, Event],
    ) -> tuple[Event | None, int]:
        src = {"message": index}
        if not isinstance(block, dict):
            return book.emit(Event(seq=-1, kind="unknown", role=role, ts=ts, source=src, raw=block)), 0
        btype = block.get("type")
        if btype == "text":
            text = _str(block.get("text"))
            if text is None:
                return None, 0
            return book.emit(
                Event(seq=-1, kind="text", role=role, ts=ts, text=text, model=model, source=src)
            ), 0
        if btype in ("thinking", "redacted_thinking"):
            ev = Event(
                seq=-1,
                kind="thinking",
                role=role,
                ts=ts,
                text=_str(block.get("thinking")),
                model=model,
                source=src,
            )
            if btype == "redacted_thinking":
                ev.extra["redacted"] = True
            return book.emit(ev), 0
        if btype == "tool_use":
            call_id = _str(block.get("id"))
            ev = book.emit(
                Event(
                    seq=-1,
                    kind="tool_use",
                    role=role,
                    ts=ts,
                    tool=_str(block.get("name")),
                    input=block.get("input"),
                    tool_use_id=call_id,
                    model=model,
                    source=src,
                )
            )
            if call_id:
                pending[call_id] = ev
            return ev, 0
        if btype == "tool_result":
            call_id = _str(block.get("tool_use_id")) or _str(block.get("toolUseID"))
            result, is_error = _tool_outcome(block)
            call = pending.pop(call_id, None) if call_id else None
            if call is not None:
                call.result, call.is_error = result, is_error
                change = _edit_of(call.tool, call.input, block)
                if change is not None:
                    call.extra["edit"] = change
                book.emit(call)
                return None, 1
            ev = Event(
                seq=-1,
                kind="tool_result",
                role="tool",
                ts=ts,
                result=result,
                is_error=is_error,
                tool_use_id=call_id,
                source=src,
            )
            return book.emit(ev), 0
        return book.emit(Event(seq=-1, kind="unknown", role=role, ts=ts, source=src, raw=block)), 0

    def finish(self, book: RecordBook, unit: Unit, *, settled: bool) -> Session:
        s = book.session
        if not s.title and s.first_prompt:
            s.title = s.first_prompt.strip().splitlines()[0][:200]
        return s

    def resume(self, session: Session) -> ResumeCommand | None:
        sid = safe_id(session.id, THREAD_ID)
        if sid is None:
            return None
        return ResumeCommand(argv=["amp", "threads", "continue", sid], cwd=session.cwd)


def _tool_outcome(block: dict[str, Any]) -> tuple[Any, bool]:
    """A tool_result's text and error flag: Anthropic-style ``content``/``is_error``, or a
    ``run{status, result, error}`` object where a build writes one."""
    run = block.get("run")
    if isinstance(run, dict):
        result = run.get("result")
        if isinstance(result, dict):
            # the text a person reads: a command's output, a file's content, an edit's diff
            text = next(
                (result[k] for k in ("output", "content", "diff") if isinstance(result.get(k), str)), None
            )
            result = text if text is not None else result.get("output", result)
        error = run.get("error")
        if result is None and isinstance(error, dict):
            result = error.get("message")
        return block_text(result), run.get("status") in ("error", "cancelled", "rejected-by-user")
    return block_text(block.get("content")), bool(block.get("is_error"))


def _edit_of(tool: Any, inp: Any, block: dict[str, Any]) -> dict[str, Any] | None:
    """``edit_file``'s change: the recorded diff (the file's own line numbers), else its input's
    ``old_str``/``new_str``."""
    if tool != "edit_file" or not isinstance(inp, dict):
        return None
    path = inp.get("path")
    run = block.get("run")
    result = run.get("result") if isinstance(run, dict) else None
    diff = result.get("diff") if isinstance(result, dict) else None
    files = edits.from_unified(diff, path=path) if isinstance(diff, str) else []
    if files:
        return edits.edit_doc(list(files))
    if isinstance(inp.get("old_str"), str) and isinstance(inp.get("new_str"), str):
        return edits.edit_doc([edits.from_texts(path, inp["old_str"], inp["new_str"])])
    return None


def _environment(s: Session, env: Any) -> None:
    initial = env.get("initial") if isinstance(env, dict) else None
    trees = initial.get("trees") if isinstance(initial, dict) else None
    tree = trees[0] if isinstance(trees, list) and trees and isinstance(trees[0], dict) else None
    if tree is not None:
        uri = _str(tree.get("uri"))
        if uri and uri.startswith("file://"):
            s.cwd = unquote(urlparse(uri).path) or None
        s.project = _str(tree.get("displayName")) or project_of(s.cwd)
        repo = tree.get("repository")
        if (
            isinstance(repo, dict)
            and isinstance(repo.get("ref"), str)
            and repo["ref"].startswith("refs/heads/")
        ):
            s.git_branch = repo["ref"].removeprefix("refs/heads/")
    platform = initial.get("platform") if isinstance(initial, dict) else None
    if isinstance(platform, dict):
        client = _str(platform.get("clientType")) or _str(platform.get("client"))
        s.origin = client.lower() if client else None
        if _str(platform.get("client")):
            s.extra["client"] = platform["client"]  # "CLI", "CLI Execute Mode" (headless), …
        if _str(platform.get("clientVersion")):
            s.version = platform["clientVersion"]
