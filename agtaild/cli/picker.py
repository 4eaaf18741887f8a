"""`agtail pick` without fzf: a small full-screen picker on the standard library's curses.

A line editor on top (arrows, Home/End, Backspace, Ctrl-U, Ctrl-W; Ctrl-A/E too), the
sessions that match below it, one row each, cut to the width (never wrapped), the chosen one
in reverse video; ↑/↓, PgUp/PgDn, Ctrl-P/N move, Enter picks, Esc or Ctrl-C quits. The status
line says how many match and how many of them are not on the screen, and when the sessions
offered were cut at ``--limit``. Matching: every word typed appears in the row (any order,
any case) — the row shows the agent, the id, the project and the title, so all of them match.
"""

from __future__ import annotations

import os

from agtaild.cli.width import cells, fit

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

#: The rows above the list: the line editor and the status line.
HEAD_ROWS = 2


def matches(rows: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
    """The rows whose text holds every word of ``query`` (case-insensitive)."""
    words = query.lower().split()
    return [r for r in rows if all(w in r[1].lower() for w in words)]


def status(shown: int, found: int, total: int, top: int, more_offered: bool) -> str:
    """The status line: what matches, and what of it is not on the screen."""
    from agtaild.words import count

    text = f"{found} of {count(total, 'session')} match"
    above, below = top, max(found - top - shown, 0)
    hidden = [f"{below} more below" if below else "", f"{above} above" if above else ""]
    if any(hidden):
        text += " · " + ", ".join(h for h in hidden if h) + " (↑↓ PgUp PgDn)"
    if more_offered:
        text += f" · only the {total} most recent (--limit N for more)"
    return text


class _Editor:
    """The query line: its text and cursor."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = len(text)

    def key(self, key: Any) -> bool:
        """Apply an editing key; False when it is not one."""
        import curses

        if isinstance(key, str) and key.isprintable():
            self.text = self.text[: self.at] + key + self.text[self.at :]
            self.at += 1
        elif key in (curses.KEY_BACKSPACE, "\x7f", "\b") and self.at:
            self.text = self.text[: self.at - 1] + self.text[self.at :]
            self.at -= 1
        elif key == curses.KEY_DC:
            self.text = self.text[: self.at] + self.text[self.at + 1 :]
        elif key == curses.KEY_LEFT:
            self.at = max(self.at - 1, 0)
        elif key == curses.KEY_RIGHT:
            self.at = min(self.at + 1, len(self.text))
        elif key in (curses.KEY_HOME, "\x01"):
            self.at = 0
        elif key in (curses.KEY_END, "\x05"):
            self.at = len(self.text)
        elif key == "\x15":  # Ctrl-U
            self.text, self.at = self.text[self.at :], 0
        elif key == "\x17":  # Ctrl-W: the word before the cursor
            head = self.text[: self.at].rstrip()
            cut = head.rfind(" ") + 1
            self.text, self.at = self.text[:cut] + self.text[self.at :], cut
        else:
            return False
        return True


def pick(rows: list[tuple[str, str]], query: str = "", *, more_offered: bool = False) -> str | None:
    """Let the person choose one of ``rows`` (ref, text shown); the chosen ref, or None."""
    import curses
    import locale

    locale.setlocale(locale.LC_ALL, "")  # wide characters drawn as such
    os.environ.setdefault("ESCDELAY", "25")  # Esc quits at once, not after curses' 1 s

    def run(screen: Any) -> str | None:
        try:
            return _loop(screen, rows, query, more_offered)
        except KeyboardInterrupt:
            return None

    result: str | None = curses.wrapper(run)
    return result


def _loop(screen: Any, rows: list[tuple[str, str]], query: str, more_offered: bool) -> str | None:
    import curses

    curses.curs_set(1)
    screen.keypad(True)
    editor = _Editor(query)
    chosen = top = 0
    while True:
        height, width = screen.getmaxyx()
        room = max(height - HEAD_ROWS, 1)
        found = matches(rows, editor.text)
        chosen = min(chosen, max(len(found) - 1, 0))
        top = min(max(top, chosen - room + 1), chosen)
        screen.erase()
        prompt = "session> "
        _put(screen, 0, prompt + editor.text, width)
        _put(screen, 1, status(min(room, len(found) - top), len(found), len(rows), top, more_offered), width,
             curses.A_DIM)
        for i, (_, text) in enumerate(found[top : top + room]):
            _put(screen, HEAD_ROWS + i, text, width, curses.A_REVERSE if top + i == chosen else 0)
        screen.move(0, min(cells(prompt + editor.text[: editor.at]), width - 1))
        screen.refresh()
        key = screen.get_wch()
        if key in ("\n", "\r", curses.KEY_ENTER):
            return found[chosen][0] if found else None
        if key in ("\x1b", "\x07", "\x03"):  # Esc, Ctrl-G, Ctrl-C
            return None
        if key in (curses.KEY_UP, "\x10"):
            chosen = max(chosen - 1, 0)
        elif key in (curses.KEY_DOWN, "\x0e"):
            chosen = min(chosen + 1, max(len(found) - 1, 0))
        elif key == curses.KEY_PPAGE:
            chosen = max(chosen - room, 0)
        elif key == curses.KEY_NPAGE:
            chosen = min(chosen + room, max(len(found) - 1, 0))
        elif key == curses.KEY_RESIZE:
            continue
        elif editor.key(key):
            chosen = top = 0


def _put(screen: Any, row: int, text: str, width: int, attr: int = 0) -> None:
    """One screen row: ``text`` cut to the width (the last column is left free: curses cannot
    write into the bottom-right corner), padded when highlighted so the bar spans the row."""
    import curses

    shown = fit(text, width - 1)
    if attr & curses.A_REVERSE:
        shown += " " * max(width - 1 - cells(shown), 0)
    try:
        screen.addstr(row, 0, shown, attr)
    except curses.error:  # a terminal too small for the row: what fits is drawn
        pass
