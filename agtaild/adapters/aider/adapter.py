"""Aider (Aider-AI/aider): ``.aider.chat.history.md`` in each repository, many runs per file.

Aider keeps no session store: every run appends to ``<git root>/.aider.chat.history.md``
(``--chat-history-file`` / ``$AIDER_CHAT_HISTORY_FILE`` move it) a block that starts with
``# aider chat started at <local time>``. Each block is one agtail session; its unit is
``<file>#<run id>`` and shares the file with the file's other runs. The run id is stable:
``<8 hex of the file's path hash>-<YYYYmmddTHHMMSS>`` (``-2``, ``-3`` … for a second header
in the same second). ``.aider.input.history`` beside it (what was typed, with microsecond
times) gives the prompts their timestamps.

Where the files are: ``--root aider=PATH`` (a repository, a history file, or a folder searched
a few levels deep — never a whole-disk crawl), ``$AGTAIL_AIDER_ROOTS`` (extra search roots,
``os.pathsep``-separated), ``$AIDER_CHAT_HISTORY_FILE``, — through :meth:`roots_for_cwds` —
the working directories other agents' sessions name (and their git roots), which the index
offers to adapters that ask, and — through :meth:`roots_nearby` — a bounded search of the
shell history and the usual project folders (:mod:`agtaild.adapters.aider.nearby`).

Reads are incremental: a run's state remembers where it stopped; a run followed by another
header is closed and costs nothing to re-read. :mod:`agtaild.adapters.aider.markdown` holds the grammar.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agtaild.adapters.aider import nearby
from agtaild.adapters.aider.markdown import HEADER_PREFIX, RunParser, RunState, header_time
from agtaild.adapters.base import Adapter, ReadResult, ResumeCommand, Unit, env_path
from agtaild.adapters.kit.files import open_regular, read_regular_text
from agtaild.adapters.kit.gc_pause import paused_read
from agtaild.adapters.kit.jsonl import SETTLE_SECONDS, same_file_continues
from agtaild.adapters.kit.stamps import norm_iso
from agtaild.model import Session, project_of

HISTORY = ".aider.chat.history.md"
INPUT_HISTORY = ".aider.input.history"
#: How deep a search root is searched for history files (a folder of repositories).
SEARCH_DEPTH = 3
#: How far up from a known cwd the git root is looked for.
UP_LEVELS = 8
#: How many input-history entries past the last match a prompt is looked for in.
MAX_INPUT_LOOKAHEAD = 200
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv", "target", "dist", "build"})
_HEADER = HEADER_PREFIX.encode()
_DIGEST = re.compile(r"[0-9a-f]{8}")
_INPUT_TS = re.compile(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\s*$")


class _Continuation(msgspec.Struct):
    dev: int
    ino: int
    start: int
    header: bytes
    offset: int
    line_no: int
    closed: bool
    run: bytes


def local_iso(text: str | None) -> str | None:
    """Aider's local wall-clock time (no zone) → UTC ISO, read in this machine's zone."""
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return norm_iso(dt.astimezone().isoformat())


def file_digest(path: str) -> str:
    """8 hex characters naming a history file: a hash of its real path — or, for a copy in
    agtail's archive/import mirror (``<digest>/.aider.chat.history.md``, see
    :meth:`AiderAdapter.relative_path`), the folder name it was mirrored under, so a mirrored
    run keeps the id it had."""
    parent = Path(path).parent
    if _DIGEST.fullmatch(parent.name) and not (parent / ".git").exists():
        return parent.name
    return hashlib.blake2b(os.path.realpath(path).encode(), digest_size=4).hexdigest()


def run_ids(path: str, data: bytes) -> list[tuple[str, int, str]]:
    """(run id, byte offset of its header line, header time) for every run in ``data``."""
    digest = file_digest(path)
    out: list[tuple[str, int, str]] = []
    seen: dict[str, int] = {}
    at = 0 if data.startswith(_HEADER) else data.find(b"\n" + _HEADER)
    while at >= 0:
        start = at if data[at : at + 1] != b"\n" else at + 1
        end = data.find(b"\n", start)
        line = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
        when = header_time(line) or ""
        stamp = re.sub(r"[^0-9]", "", when)
        base = f"{digest}-{stamp[:8]}T{stamp[8:14]}" if len(stamp) >= 14 else f"{digest}-run"
        seen[base] = seen.get(base, 0) + 1
        out.append((base if seen[base] == 1 else f"{base}-{seen[base]}", start, when))
        at = data.find(b"\n" + _HEADER, start)
    return out


class AiderAdapter(Adapter):
    id: ClassVar[str] = "aider"
    name: ClassVar[str] = "Aider"
    env_vars: ClassVar[tuple[str, ...]] = ("AIDER_CHAT_HISTORY_FILE", "AGTAIL_AIDER_ROOTS")
    root_help: ClassVar[str] = (
        "a repository holding .aider.chat.history.md, the history file itself, "
        f"or a folder of repositories (searched {SEARCH_DEPTH} levels deep)"
    )
    formats_tested: ClassVar[tuple[str, ...]] = ("aider 0.86.2 (real)", "aider 0.86.1 (synthetic)")
    incremental: ClassVar[bool] = True
    uses_known_cwds: ClassVar[bool] = True
    sample_roots: ClassVar[tuple[str, ...]] = ("real/aider-0.86.2", "aider/synthetic-agtail")

    def __init__(self) -> None:
        self._inputs: dict[str, tuple[float, list[tuple[str, str, str]]]] = {}
        self._digests: dict[str, str] = {}
        self._runs: dict[
            str, tuple[tuple[int, int, int, int], list[tuple[str, int, str, int]], dict[str, int]]
        ] = {}
        self._nearby = nearby.NearbyCache()

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        roots = [Path(p).expanduser() for p in (env.get("AGTAIL_AIDER_ROOTS") or "").split(os.pathsep) if p]
        history = env_path(env, "AIDER_CHAT_HISTORY_FILE")
        if history is not None and history.is_absolute():
            roots.append(history)
        return roots

    def roots_for_cwds(self, cwds: Iterable[str]) -> list[Path]:
        """The history files in (or above, up to the git root) the given working directories."""
        found: dict[str, Path] = {}
        for cwd in cwds:
            folder = Path(cwd)
            for _ in range(UP_LEVELS):
                candidate = folder / HISTORY
                if candidate.is_file():
                    found.setdefault(str(candidate), candidate)
                if (folder / ".git").exists() or folder.parent == folder:
                    break
                folder = folder.parent
        return list(found.values())

    def roots_nearby(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """History files of repositories the shell history names (``cd DIR && aider``,
        ``--chat-history-file``, atuin's working directories) and those below the usual project
        folders; bounded (:func:`agtaild.adapters.aider.nearby.limits`) and kept a few minutes."""
        return self._nearby.get(str(home), lambda: self._search_nearby(env, home))

    def _search_nearby(self, env: Mapping[str, str], home: Path) -> list[Path]:
        places = nearby.from_shell_history(env, home)
        files = [p for p in places if p.is_file()]
        folders = [str(p) for p in places if p.is_dir()]
        found: dict[str, Path] = {}
        for path in [*files, *self.roots_for_cwds(folders), *nearby.in_project_folders(home, HISTORY)]:
            found.setdefault(str(path), path)
        return list(found.values())

    # -- discovery ------------------------------------------------------------------------
    def discover(self, root: Path) -> Iterator[Unit]:
        for history in self._histories(root):
            try:
                st = history.stat()
                with open_regular(history) as fh:
                    runs, _ = self._run_index(str(history), st, fh)  # cached while unchanged
            except OSError:
                continue
            base = root if root.is_dir() else history.parent
            files = [str(history)]
            if (history.parent / INPUT_HISTORY).is_file():
                files.append(str(history.parent / INPUT_HISTORY))
            for run_id, _, _, _ in runs:
                yield Unit(
                    agent=self.id,
                    path=f"{history}#{run_id}",
                    files=files,
                    root=str(base),
                    hints={"file": str(history), "run": run_id},
                )

    def _histories(self, root: Path) -> Iterator[Path]:
        if root.is_file():
            yield root
            return
        yield from _search(root, SEARCH_DEPTH)

    def native_files(self, unit: Unit) -> list[str]:
        return [f for f in unit.files if os.path.exists(f)]

    # -- reading ----------------------------------------------------------------------------
    @paused_read
    def read(self, unit: Unit, state: bytes | None = None, *, now: float | None = None) -> ReadResult:
        path = str(unit.hints.get("file") or unit.path.rsplit("#", 1)[0])
        run_id = str(unit.hints.get("run") or unit.path.rsplit("#", 1)[-1])
        st = os.stat(path)
        now = time.time() if now is None else now
        settled = now - st.st_mtime >= SETTLE_SECONDS
        cont = _decode(state)
        with open_regular(path) as fh:
            if cont is not None and not _continues(fh, st, cont):
                cont = None
            if cont is not None and cont.closed:
                run = msgspec.msgpack.decode(cont.run, type=RunState)
                return ReadResult(session=run.session, events=[], usage=[], state=state, reset=False)
            if cont is not None:
                fh.seek(cont.offset)
                data = fh.read()
                run = msgspec.msgpack.decode(cont.run, type=RunState)
                start, header, offset, line_no = cont.start, cont.header, cont.offset, cont.line_no
            else:
                runs, where = self._run_index(path, st, fh)
                at = where.get(run_id)
                session = Session(agent=self.id, id=run_id, path=unit.path)
                run = RunState(session=session)
                if at is None:  # the run is gone from the file (rewritten): nothing to show
                    return ReadResult(session=session, events=[], usage=[], state=None, reset=True)
                _, start, when, line_no = runs[at]
                fh.seek(start)
                # only this run's bytes (and the next header, which says the run is closed)
                chunk = fh.read() if at + 1 == len(runs) else fh.read(runs[at + 1][1] + len(_HEADER) - start)
                header_end = chunk.find(b"\n")
                header_end = len(chunk) if header_end < 0 else header_end + 1
                header = chunk[:header_end]
                session.started = local_iso(when)
                session.accounting.count("metadata")
                offset = start + header_end
                data = chunk[header_end:]
        return self._parse(unit, path, st, settled, run, data, (start, header, offset, line_no), cont is None)

    def _digest(self, path: str) -> str:
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def _run_index(
        self, path: str, st: os.stat_result, fh: Any
    ) -> tuple[list[tuple[str, int, str, int]], dict[str, int]]:
        """(run id, header offset, header time, header line number) of every run of the file,
        kept while the file stays the same: a full read of one run then costs that run only."""
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        cached = self._runs.get(path)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        fh.seek(0)
        data = fh.read()
        runs: list[tuple[str, int, str, int]] = []
        line, counted = 1, 0
        for run_id, start, when in run_ids(path, data):
            line += data.count(b"\n", counted, start)
            counted = start
            runs.append((run_id, start, when, line))
        where = {r[0]: i for i, r in enumerate(runs)}
        self._runs[path] = (key, runs, where)
        return runs, where

    def _parse(
        self,
        unit: Unit,
        path: str,
        st: os.stat_result,
        settled: bool,
        run: RunState,
        data: bytes,
        where: tuple[int, bytes, int, int],
        reset: bool,
    ) -> ReadResult:
        start, header, offset, line_no = where
        nxt = data.find(b"\n" + _HEADER)
        closed = nxt >= 0 or data.startswith(_HEADER)
        segment = data[: nxt + 1] if nxt >= 0 else (b"" if data.startswith(_HEADER) else data)
        parser = RunParser(run)
        pos = segment.rfind(b"\n") + 1  # complete lines end here
        lines = segment[:pos].decode("utf-8", "replace").split("\n")[:-1]
        line_no = parser.feed(lines, line_no, run.session.accounting)
        committed = offset + pos
        saved_line = line_no
        tail = segment[pos:]
        self._prompt_times(parser, path, run)
        # before a torn last line: the next read redoes it (a closed run saves its final state)
        saved = b"" if closed else msgspec.msgpack.encode(run)
        if tail.strip() and settled and not closed:
            # Aider writes whole lines: a settled line without its newline was cut short. It is
            # counted, not parsed (half a line could open a block the whole line would not),
            # and read again once it is complete.
            run.session.accounting.count("skipped")
            run.session.truncated = True
        parser.finish(settled=settled, closed=closed)
        s = run.session
        s.path = unit.path
        s.mtime = st.st_mtime
        folder = os.path.dirname(path)
        # a copy in agtail's mirror sits in a digest folder, which is no working directory
        s.cwd = None if self._digest(path) == os.path.basename(folder) else folder
        s.project = project_of(s.cwd)
        s.resumable = not closed
        if unit.archived:
            s.archived = True
        events, usage = parser.output()
        cont = _Continuation(
            dev=st.st_dev,
            ino=st.st_ino,
            start=start,
            header=header,
            offset=committed,
            line_no=saved_line,
            closed=closed,
            run=msgspec.msgpack.encode(run) if closed else saved,
        )
        return ReadResult(
            session=s, events=events, usage=usage, state=msgspec.msgpack.encode(cont), reset=reset
        )

    def _prompt_times(self, parser: RunParser, path: str, run: RunState) -> None:
        """Give new prompts the time ``.aider.input.history`` recorded for the same input."""
        entries = self._input_entries(os.path.join(os.path.dirname(path), INPUT_HISTORY))
        s = run.session
        if s.started:  # entries are in time order: start at the run's own
            first = bisect.bisect_left(entries, s.started, key=lambda e: e[0])
            run.input_pos = max(run.input_pos, first)
        # (without entries no prompt gets a time: the loop below would change nothing)
        for ev in sorted(parser.events.values(), key=lambda e: e.seq) if entries else ():
            if ev.kind != "text" or ev.role != "user" or ev.ts is not None:
                continue
            head = (ev.text or "").split("\n", 1)[0]
            for i in range(run.input_pos, min(len(entries), run.input_pos + MAX_INPUT_LOOKAHEAD)):
                ts, _, first_line = entries[i]
                if first_line == head:
                    ev.ts = ts
                    run.input_pos = i + 1
                    break
            if ev.ts and (s.ended is None or ev.ts > s.ended):
                s.ended = ev.ts
        if s.ended is None:
            s.ended = s.started

    def _input_entries(self, path: str) -> list[tuple[str, str, str]]:
        """``.aider.input.history``: ``# <local time>`` then ``+``-prefixed input lines, as
        (UTC ISO time, text, first line), in file (= time) order."""
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return []
        cached = self._inputs.get(path)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            text = read_regular_text(Path(path), errors="replace")
        except OSError:
            return []
        entries: list[tuple[str, str, str]] = []
        when: str | None = None
        lines: list[str] = []
        for line in [*text.splitlines(), "# end"]:
            match = _INPUT_TS.match(line)
            if match or line == "# end":
                ts = local_iso(when)
                if ts is not None:
                    body = "\n".join(lines)
                    entries.append((ts, body, body.split("\n", 1)[0]))
                when, lines = (match.group(1) if match else None), []
            elif line.startswith("+") and when is not None:
                lines.append(line[1:])
        self._inputs[path] = (mtime, entries)
        return entries

    def resume(self, session: Session) -> ResumeCommand | None:
        """Aider cannot pick a run: ``--restore-chat-history`` reloads the whole file, so only
        the file's latest run is resumable (its cwd is the repository)."""
        if not session.resumable or session.imported or not session.cwd or not session.path:
            return None
        history = session.path.rsplit("#", 1)[0]
        argv = ["aider", "--restore-chat-history"]
        if os.path.basename(history) != HISTORY:
            argv += ["--chat-history-file", os.path.abspath(history)]
        return ResumeCommand(argv=argv, cwd=session.cwd)

    def relative_path(self, unit: Unit, file: str) -> str:
        """``<digest>/<file name>``: history files of many repositories share one name, so the
        mirror keeps each under its file digest (which also keeps the run ids)."""
        history = str(unit.hints.get("file") or unit.path.rsplit("#", 1)[0])
        # the unit's own key keeps its run: "<digest>/<name>#<run>" (one per run, as natives)
        return f"{file_digest(history)}/{os.path.basename(file)}"


def _search(root: Path, depth: int) -> Iterator[Path]:
    """History files in ``root`` and in folders below it, ``depth`` levels at most."""
    candidate = root / HISTORY
    if candidate.is_file():
        yield candidate
    if depth <= 0:
        return
    try:
        children = sorted(
            (e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)), key=lambda e: e.name
        )
    except OSError:
        return
    for entry in children:
        if entry.name in _SKIP_DIRS or (entry.name.startswith(".") and entry.name != ".aider"):
            continue
        yield from _search(Path(entry.path), depth - 1)


def _decode(state: bytes | None) -> _Continuation | None:
    if state is None:
        return None
    try:
        return msgspec.msgpack.decode(state, type=_Continuation)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _continues(fh: object, st: os.stat_result, cont: _Continuation) -> bool:
    """The same file, still holding this run's header where it was, not cut before ``offset``."""
    if not same_file_continues(fh, st, cont.dev, cont.ino, cont.offset):
        return False
    fh.seek(cont.start)  # type: ignore[attr-defined]
    return bool(fh.read(len(cont.header)) == cont.header)  # type: ignore[attr-defined]
