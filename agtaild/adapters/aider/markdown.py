"""One Aider run's lines of ``.aider.chat.history.md`` → agtail events.

The grammar is Aider's own (``aider/io.py``, and ``utils.split_chat_history_markdown`` splits
the same way): a run starts with ``# aider chat started at YYYY-MM-DD HH:MM:SS``; a line
starting ``#### `` is what the person typed (multi-line input: consecutive ``####`` lines;
``#### <blank>`` is an empty input); ``> `` lines are Aider's own output (notices, the
command line, confirmations, ``Tokens: … Cost: …``, errors); everything else is the model's
reply, whose reasoning sits between ``<thinking-content-<marker>>`` tags, and whose
SEARCH/REPLACE blocks are its edits (``extra["edit"]``). Every line Aider
writes ends with two spaces. A line without ``> `` right after a ``> `` line (no blank line
between) continues that output (a multi-line shell command Aider echoes).

Accounting is per non-blank line: the first line of a block is ``events``, the lines folded
into it ``merged``, the run header ``metadata``. The parser keeps its whole state in
:class:`RunState` so a read can stop at any line and go on later (the run is appended to).
"""

from __future__ import annotations

import re

import msgspec

from agtaild.adapters.kit.search_replace import edit_of_text
from agtaild.model import Accounting, Event, Session, Usage, UsageRecord

HEADER_PREFIX = "# aider chat started at "
_THINK_OPEN = re.compile(r"^<thinking-content-[0-9a-f]+>\s*$")
_THINK_CLOSE = re.compile(r"^</thinking-content-[0-9a-f]+>\s*$")
_TOKENS = re.compile(r"^Tokens:\s")
_COUNT = re.compile(r"([\d.]+)([kKmM]?)\s+(sent|received|cache write|cache hit)")
_COST = re.compile(r"Cost:\s*\$([\d.]+)\s+message,\s*\$([\d.]+)\s+session")
_MODEL = re.compile(r"^(?:Main model|Model):\s+(\S+)")
_VERSION = re.compile(r"^Aider v(\S+)")
_ERROR = re.compile(r"(?:^litellm\.\w+|Error:|Exception\b|^Unable to|^Error\b|^API\b.*error)", re.IGNORECASE)
_INTERRUPT = ("^C again to exit", "^C KeyboardInterrupt")
#: Output lines starting so may say more than their text (RunParser.feed's fast path).
_OUTPUT_SPECIAL = ("Model:", "Main model:", "Aider v", "Tokens:", "^C", "Unable", "API", "Error")
TITLE_MAX = 200


class RunState(msgspec.Struct):
    """The parser's memory within one run (saved between incremental reads)."""

    session: Session
    next_seq: int = 0
    #: The block being built: "user", "assistant", "thinking", "output" (or None), its event.
    block: str | None = None
    current: Event | None = None
    blank_before: bool = True
    models: list[str] = msgspec.field(default_factory=list)
    usage_total: Usage = msgspec.field(default_factory=Usage)
    agent_cost: float | None = None
    prompts: int = 0
    replies: int = 0
    error: bool = False
    interrupted: bool = False
    first_command: str | None = None
    #: The kind of the last block started ("user", "assistant", "thinking", "output").
    last: str | None = None
    quit: bool = False
    #: The model's latest reply since the last prompt (its Tokens line gives it usage).
    reply: Event | None = None
    #: How far the prompts were matched against ``.aider.input.history`` (its entry index).
    input_pos: int = 0


def _looks_like_error(text: str) -> bool:
    """A cheap test before the error pattern (most output lines are notices)."""
    return "rror" in text or "xception" in text or text.startswith(("Unable", "API", "Error"))


def _strip(line: str) -> str:
    """Aider ends each line with two spaces (a Markdown line break)."""
    return line[:-2] if line.endswith("  ") else line.rstrip()


def _count(number: str, unit: str) -> int:
    try:
        value = float(number)
    except ValueError:
        return 0
    scale = {"k": 1_000, "m": 1_000_000}.get(unit.lower(), 1)
    return round(value * scale)


def tokens_usage(text: str) -> tuple[Usage | None, float | None, float | None]:
    """``Tokens: 2.4k sent, 1.1k cache hit, 166 received. Cost: $0.01 message, $0.03 session.``
    → (usage, message cost, session cost). Aider rounds to 0.1k, so these are approximate."""
    counts: dict[str, int] = {}
    for number, unit, kind in _COUNT.findall(text):
        counts[kind] = _count(number, unit)
    usage = None
    if counts:
        hit, write = counts.get("cache hit", 0), counts.get("cache write", 0)
        usage = Usage(
            input_tokens=max(counts.get("sent", 0) - hit - write, 0),
            output_tokens=counts.get("received", 0),
            cache_read_tokens=hit,
            cache_write_tokens=write,
        ).fix_total()
    cost = _COST.search(text)
    if cost is None:
        return usage, None, None
    return usage, float(cost.group(1)), float(cost.group(2))


class RunParser:
    """Feeds one run's lines (after its header) into events; see the module docstring."""

    def __init__(self, st: RunState) -> None:
        self.st = st
        self.events: dict[int, Event] = {}
        self.usage: dict[str, UsageRecord] = {}

    def _emit(self, ev: Event) -> None:
        if ev.seq < 0:
            ev.seq = self.st.next_seq
            self.st.next_seq += 1
        self.events[ev.seq] = ev

    def _sync_reply(self) -> None:
        """After a saved state is loaded, ``current`` and ``reply`` are two copies of one
        event; the current block's copy is the up-to-date one."""
        st = self.st
        if st.reply is not None and st.current is not None and st.current.seq == st.reply.seq:
            st.reply = st.current

    def _start(self, block: str, ev: Event) -> str:
        st = self.st
        self._flush()
        self._sync_reply()
        st.block = st.last = block
        st.current = ev
        self._emit(ev)
        return "events"

    def _flush(self) -> None:
        """Trim the finished block's text (blank lines inside a reply are kept)."""
        ev = self.st.current
        if ev is not None and ev.text is not None:
            trimmed = ev.text.strip("\n")
            if trimmed != ev.text:
                ev.text = trimmed
                self._emit(ev)

    def _append(self, text: str) -> str:
        ev = self.st.current
        assert ev is not None
        ev.text = f"{ev.text}\n{text}" if ev.text else text
        self._emit(ev)
        return "merged"

    def feed(self, lines: list[str], number: int, acct: Accounting) -> int:
        """Feed physical lines (without their newline; the first is line ``number + 1``),
        booking each in ``acct``; returns the last line's number.

        The common lines are decided here, inline, exactly as :meth:`line` decides them:
        inside a reply (or its reasoning) a line starting with none of ``#``, ``>``, ``<`` can
        only be more reply text; inside Aider's output a ``> `` line that cannot be a notice,
        the Tokens line, an error or an interrupt is more output; a blank line ends an output
        block. Gathered text is joined once when its block ends (the text :meth:`_append`
        builds line by line, without copying the growing text per line). Every other line
        goes through :meth:`line`."""
        st = self.st
        pieces: list[str] = []  # text gathered for st.current, joined by _join_pieces
        merged = 0
        grown = False  # a non-blank line was gathered (the event must be emitted again)
        filled = False  # the current block's text so far (its own and the pieces) is not empty
        for raw in lines:
            number += 1
            raw = raw.rstrip("\r")
            cur = st.current
            block = st.block
            if cur is not None:
                if block == "assistant" or block == "thinking":
                    first = raw[:1]
                    if first == "" or first not in "#><":
                        if not pieces:
                            filled = bool(cur.text)
                        if raw.strip():
                            text = raw[:-2] if raw.endswith("  ") else raw.rstrip()
                            pieces.append(f"\n{text}" if filled else text)
                            merged += 1
                            grown = True
                            st.blank_before = False
                        else:
                            pieces.append("\n")
                            st.blank_before = True
                        filled = True  # (a reply line is never empty, a blank one adds "\n")
                        continue
                elif block == "output" and not cur.is_error:
                    if raw.startswith("> "):
                        text = (raw[:-2] if raw.endswith("  ") else raw.rstrip())[1:].lstrip(" ")
                        if not (
                            text.startswith(_OUTPUT_SPECIAL)
                            or "rror" in text
                            or "xception" in text
                            or "aider" in text.partition(" ")[0]
                        ):
                            if not pieces:
                                filled = bool(cur.text)
                            pieces.append(f"\n{text}" if filled else text)
                            filled = filled or bool(text)  # ("> " and spaces: an empty text)
                            merged += 1
                            grown = True
                            st.blank_before = False
                            continue
                    elif not raw.strip():
                        if pieces:
                            self._join_pieces(pieces, grown)
                            pieces, grown = [], False
                        self._flush()
                        st.block, st.current = None, None
                        st.blank_before = True
                        continue
            elif block is None and not raw.strip():
                st.blank_before = True
                continue
            if pieces:
                self._join_pieces(pieces, grown)
                pieces, grown = [], False
            category = self.line(raw, number)
            if category is not None:
                acct.count(category)
        if pieces:
            self._join_pieces(pieces, grown)
        acct.lines += merged
        acct.merged += merged
        return number

    def _join_pieces(self, pieces: list[str], grown: bool) -> None:
        ev = self.st.current
        assert ev is not None
        ev.text = (ev.text or "") + "".join(pieces)
        if grown:
            self._emit(ev)

    def line(self, raw: str, number: int) -> str | None:
        """One physical line (without its newline) → its accounting category (None: blank)."""
        st = self.st
        if not raw.strip():
            if st.block in ("assistant", "thinking") and st.current is not None:
                st.current.text = (st.current.text or "") + "\n"
            elif st.block in ("user", "output"):
                self._flush()
                st.block, st.current = None, None
            st.blank_before = True
            return None
        blank_before, st.blank_before = st.blank_before, False
        text = _strip(raw)
        if raw.startswith("####"):
            return self._user(text[4:].lstrip(" "), number)
        if raw.startswith("> ") or raw.rstrip() == ">":  # not ">>>>>>> REPLACE" of an edit block
            return self._output(text[1:].lstrip(" "), number)
        if st.block == "output" and not blank_before:
            return self._append(text)
        if _THINK_OPEN.match(text):
            return self._start(
                "thinking", Event(seq=-1, kind="thinking", role="assistant", text="", source={"line": number})
            )
        if _THINK_CLOSE.match(text) and st.block == "thinking":
            self._flush()
            st.block, st.current = None, None
            return "merged"
        if st.block in ("assistant", "thinking"):
            return self._append(text)
        st.replies += 1
        model = st.models[-1] if st.models else None
        st.reply = Event(
            seq=-1, kind="text", role="assistant", text=text, model=model, source={"line": number}
        )
        return self._start("assistant", st.reply)

    def _user(self, text: str, number: int) -> str:
        st = self.st
        if text == "<blank>":
            text = ""
        if st.block == "user" and st.current is not None:
            return self._append(text)
        st.prompts += 1
        st.reply = None
        s = st.session
        command = text.startswith("/")
        st.quit = text.strip() in ("/exit", "/quit")
        if command and st.first_command is None:
            st.first_command = text
        if not command and s.first_prompt is None and text.strip():
            s.first_prompt = text
            s.title = text.strip()[:TITLE_MAX]
        ev = Event(seq=-1, kind="text", role="user", text=text, source={"line": number})
        if command:
            ev.subtype = "command"
        return self._start("user", ev)

    def _output(self, text: str, number: int) -> str:
        st = self.st
        self._notice(text, number)
        if _TOKENS.match(text):
            return self._tokens(text, number)
        if _looks_like_error(text) and _ERROR.search(text) and not text.endswith(("[Yes]: y", "[Yes]: n")):
            st.error = True
            self._flush()
            st.block, st.current = None, None
            ev = Event(
                seq=-1,
                kind="system",
                role="system",
                subtype="error",
                text=text,
                is_error=True,
                source={"line": number},
            )
            return self._start("output", ev)
        if text.startswith(_INTERRUPT):
            st.interrupted = True
        if st.block == "output" and st.current is not None and not st.current.is_error:
            return self._append(text)
        ev = Event(seq=-1, kind="system", role="system", subtype="output", text=text, source={"line": number})
        return self._start("output", ev)

    def _notice(self, text: str, number: int) -> None:
        """What the startup notices say about the run (model, version, headless)."""
        st, s = self.st, self.st.session
        if text.startswith(("Model:", "Main model:")):
            model = _MODEL.match(text)
            if model and model.group(1) not in st.models:
                st.models.append(model.group(1))
        elif text.startswith("Aider v"):
            version = _VERSION.match(text)
            if version:
                s.version = version.group(1)
        elif "aider" in text.split(" ", 1)[0] and (
            " --message" in text or " -m " in text or " --message-file" in text
        ):
            s.programmatic = True
            s.origin = "cli"

    def _tokens(self, text: str, number: int) -> str:
        st = self.st
        usage, message_cost, session_cost = tokens_usage(text)
        if usage is not None:
            model = st.models[-1] if st.models else None
            self.usage[f"line:{number}"] = UsageRecord(
                key=f"line:{number}", ts=None, model=model, usage=usage
            )
            st.usage_total.add(usage)
            self._sync_reply()
            reply = st.reply
            if reply is not None and reply.usage is None:
                reply.usage = usage
                if message_cost is not None:
                    reply.extra["agent_cost_usd"] = message_cost
                self._emit(reply)
        if session_cost is not None:
            st.agent_cost = session_cost
        # The Tokens line ends the reply; it is shown with Aider's other output.
        if st.block == "output" and st.current is not None and not st.current.is_error:
            return self._append(text)
        ev = Event(seq=-1, kind="system", role="system", subtype="output", text=text, source={"line": number})
        return self._start("output", ev)

    def finish(self, *, settled: bool, closed: bool) -> None:
        st, s = self.st, self.st.session
        if s.title is None and st.first_command:
            s.title = st.first_command[:TITLE_MAX]
        s.models = list(st.models)
        s.usage = Usage(
            input_tokens=st.usage_total.input_tokens,
            output_tokens=st.usage_total.output_tokens,
            cache_read_tokens=st.usage_total.cache_read_tokens,
            cache_write_tokens=st.usage_total.cache_write_tokens,
        ).fix_total()
        s.messages = st.prompts + st.replies
        if st.agent_cost is not None:
            s.extra["agent_cost_usd"] = st.agent_cost
        s.ending = None
        if st.error:
            s.ending = "error"
        elif st.interrupted or (st.last == "user" and not st.quit and (settled or closed)):
            s.ending = "interrupted"  # ^C, or the input was never answered (killed)

    def output(self) -> tuple[list[Event], list[UsageRecord]]:
        """The events of this read; text of a block still open loses its trailing blank lines
        here (the state keeps them: the block may go on). A reply's SEARCH/REPLACE blocks
        become its ``extra["edit"]`` (agtaild.adapters.kit.search_replace), from its whole
        text as it stands: a reply that grows is read again whole."""
        out = []
        for k in sorted(self.events):
            ev = self.events[k]
            if ev.text and ev.text != ev.text.strip("\n"):
                ev = msgspec.structs.replace(ev, text=ev.text.strip("\n"))
            if ev.kind == "text" and ev.role == "assistant":
                edit = edit_of_text(ev.text)
                if edit is not None or "edit" in ev.extra:
                    extra = {k: v for k, v in ev.extra.items() if k != "edit"}
                    ev = msgspec.structs.replace(ev, extra={**extra, **({"edit": edit} if edit else {})})
            out.append(ev)
        return out, list(self.usage.values())


def header_time(line: str) -> str | None:
    """``# aider chat started at 2026-11-30 16:04:28`` → the local time as written."""
    if not line.startswith(HEADER_PREFIX):
        return None
    return line[len(HEADER_PREFIX) :].strip() or None
