"""The full screen of `agtail top` (curses): a fresh answer as soon as there is one, and keys.

Answers come from a thread: the daemon's ``/usage/live/stream`` (SSE) when a daemon runs —
the screen changes when the index does, and every few seconds for the clock — else the
index in-process, brought up to date and asked again every ``interval`` seconds (nobody else
keeps it current). Keys: ``s`` the next sort, ``a`` the next agent (then all), ``↑``/``↓``
(``k``/``j``) select, ``Enter`` show the selected session (through ``$PAGER``, else less),
``r`` ask again now, ``q`` quit. A failed read is shown on the last line; the last good
answer stays on screen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the read path does not import typing (tests/test_cli_startup.py)
    from typing import Any

#: Seconds between the stream's answers when nothing changes (the clock still moves).
STREAM_INTERVAL = 5


class Feed:
    """The newest answer (and the newest problem), written by the reader thread."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] | None = None
        self.error: str | None = None
        self.version = 0
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def put(self, doc: dict[str, Any] | None, error: str | None = None) -> None:
        with self.lock:
            if doc is not None:
                self.doc = doc
            self.error = error
            self.version += 1


def _poll(feed: Feed, backend: Any, params: dict[str, Any], interval: float, update: bool) -> None:
    service = getattr(backend, "service", None)
    while not feed.stop.is_set():
        try:
            if service is not None and update:
                service.update_index()
            feed.put(backend.call("usage.live", params))
        except Exception as err:  # shown on the screen; the next round tries again
            feed.put(None, f"{type(err).__name__}: {err}")
        feed.wake.wait(interval)
        feed.wake.clear()


def _stream(feed: Feed, backend: Any, params: dict[str, Any], interval: float) -> None:
    client = backend.client
    while not feed.stop.is_set():
        try:
            with client.stream("/usage/live/stream", {**params, "interval": STREAM_INTERVAL}) as events:
                for ev in events:
                    if feed.stop.is_set():
                        return
                    if ev.event == "usage" and isinstance(ev.data, dict):
                        feed.put(ev.data)
        except Exception as err:  # the daemon went away: say so, ask directly until it is back
            feed.put(None, f"stream lost ({type(err).__name__}); retrying")
            try:
                feed.put(backend.call("usage.live", params), f"stream lost ({type(err).__name__}); retrying")
            except Exception:
                pass
        feed.wake.wait(interval)
        feed.wake.clear()


def _show_command(ctx: Any, ref: str) -> list[str]:
    """`agtail show REF` as a new process, with this command's global options."""
    argv = [sys.executable, "-c", "import sys; from agtaild.cli import main; sys.exit(main())"]
    if ctx.data_dir:
        argv += ["--data-dir", ctx.data_dir]
    for root in ctx.root_options:
        argv += ["--root", root]
    if ctx.only_roots:
        argv.append("--only-roots")
    if ctx.no_daemon:
        argv.append("--no-daemon")
    return [*argv, "show", ref, "--no-update"] if ctx.no_daemon else [*argv, "show", ref]


def _open_session(ctx: Any, session: dict[str, Any]) -> None:
    import curses

    curses.def_prog_mode()
    curses.endwin()
    try:
        show = _show_command(ctx, f"{session['agent']}:{session['id']}")
        pager = os.environ.get("PAGER") or ("less -R" if shutil.which("less") else "")
        if pager:
            producer = subprocess.Popen(show, stdout=subprocess.PIPE)
            subprocess.run(pager, shell=True, stdin=producer.stdout, check=False)
            if producer.stdout is not None:
                producer.stdout.close()
            producer.wait()
        else:
            subprocess.run(show, check=False)
            input("-- Enter: back to top --")
    finally:
        curses.reset_prog_mode()


def run(ctx: Any, backend: Any, params: dict[str, Any], interval: float) -> int:
    import curses

    feed = Feed()
    update = not getattr(ctx.args, "no_update", False)
    if hasattr(backend, "client"):
        reader = threading.Thread(target=_stream, args=(feed, backend, params, interval), daemon=True)
    else:
        reader = threading.Thread(target=_poll, args=(feed, backend, params, interval, update), daemon=True)
    reader.start()
    try:
        curses.wrapper(lambda screen: _loop(ctx, screen, feed))
    finally:
        feed.stop.set()
        feed.wake.set()
    return 0


def _loop(ctx: Any, screen: Any, feed: Feed) -> None:
    import curses

    from agtaild.cli.top_view import SORTS, screen_lines, sort_sessions

    curses.curs_set(0)
    screen.timeout(200)
    order, agent, selected = "burn", None, 0
    shown = -1
    dirty = True
    while True:
        if feed.version != shown or dirty:
            with feed.lock:
                doc, error, shown = feed.doc, feed.error, feed.version
            screen.erase()
            height, width = screen.getmaxyx()
            if doc is None:
                lines = ["agtail top — reading…"]
                rows: list[dict[str, Any]] = []
            else:
                rows = sort_sessions(doc["sessions"], order, agent)
                selected = min(selected, max(0, len(rows) - 1))
                lines = screen_lines(doc, width=width - 1, order=order, agent=agent, selected=selected)
            footer = "s sort  a agent  ↑↓ select  Enter show  r refresh  q quit" + (f"  | {error}" if error else "")
            for y, line in enumerate(lines[: max(0, height - 1)]):
                screen.addnstr(y, 0, line, max(0, width - 1))
            screen.addnstr(height - 1, 0, footer, max(0, width - 1), curses.A_REVERSE)
            screen.refresh()
            dirty = False
        key = screen.getch()
        if key == -1:
            continue
        dirty = True
        if key in (ord("q"), 27):
            return
        if key == ord("s"):
            order = SORTS[(SORTS.index(order) + 1) % len(SORTS)]
        elif key == ord("a") and doc is not None:
            agents = sorted({s["agent"] for s in doc["sessions"]})
            chain = [None, *agents]
            agent = chain[(chain.index(agent) + 1) % len(chain)] if agent in chain else None
            selected = 0
        elif key in (curses.KEY_DOWN, ord("j")):
            selected += 1
        elif key in (curses.KEY_UP, ord("k")):
            selected = max(0, selected - 1)
        elif key == ord("r"):
            feed.wake.set()
        elif key in (curses.KEY_ENTER, 10, 13) and doc is not None and rows:
            _open_session(ctx, rows[min(selected, len(rows) - 1)])
        if key == curses.KEY_RESIZE:
            time.sleep(0.01)
