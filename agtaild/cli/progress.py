"""The progress bar of `agtail index` / `reindex` (and of the update a read command runs first).

One line on stderr, redrawn in place, and only when stderr is a terminal: a pipe or a file
gets nothing (a log should not fill with carriage returns). The line is drawn from the
``progress`` object of agtaild.index.progress — the in-process update's own, or the one a
running daemon reports in /health — so both paths look the same.

The CLI's stderr is a textsafe.SafeStream, which shows every control character instead of
obeying it; the carriage return and erase-line that redraw the bar are therefore written as
trusted tokens (textsafe.trusted), and the bar's own text (numbers, a label) passes through
the sanitiser like any other.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from agtaild.textsafe import trusted

#: Redraw at most this often (a cold index stores thousands of units a second).
REDRAW_SECONDS = 0.1
_MB = 1_000_000


def _mb(n: int) -> str:
    return f"{n / _MB:.1f}" if n < 100 * _MB else f"{n / _MB:.0f}"


def _duration(seconds: float) -> str:
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, whole = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {whole:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def line(label: str, doc: dict[str, Any], width: int) -> str:
    """The bar's text for a progress object, at most ``width`` characters."""
    phase = doc.get("phase")
    if phase == "scanning":
        text = f"{label}: scanning the agents' files…"
        return text[:width]
    files_done, files_total = int(doc.get("files_done") or 0), int(doc.get("files_total") or 0)
    bytes_done, bytes_total = int(doc.get("bytes_done") or 0), int(doc.get("bytes_total") or 0)
    # Bytes are the better measure of the work left; an update with nothing to read (only
    # removals) counts its units.
    fraction = bytes_done / bytes_total if bytes_total else (files_done / files_total if files_total else 1.0)
    fraction = min(max(fraction, 0.0), 1.0)
    parts = [f"{files_done}/{files_total} files", f"{_mb(bytes_done)}/{_mb(bytes_total)} MB"]
    rate = doc.get("rate_bytes_per_second")
    if rate:
        parts.append(f"{_mb(int(rate))} MB/s")
    eta = doc.get("eta_seconds")
    if phase == "finishing":
        parts.append("finishing…")
    elif eta is not None:
        parts.append(f"{_duration(float(eta))} left")
    tail = f" {fraction * 100:3.0f}% " + " · ".join(parts)
    bar_width = max(min(30, width - len(label) - len(tail) - 3), 0)
    filled = int(bar_width * fraction)
    bar = f" [{'#' * filled}{'.' * (bar_width - filled)}]" if bar_width >= 5 else ""
    return f"{label}{bar}{tail}"[:width]


def terminal_width() -> int:
    """$COLUMNS, else stderr's terminal's width, else 80 (a terminal may report 0)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.stderr.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class ProgressBar:
    """Called with an IndexProgress (the updater's callback) or drawn from a progress dict
    (:meth:`show`); silent unless stderr is a terminal."""

    def __init__(self, label: str) -> None:
        self.label = label
        try:
            self.enabled = sys.stderr.isatty()
        except (AttributeError, ValueError):
            self.enabled = False
        self.last = 0.0
        self.phase: str | None = None
        self.drawn = False

    def __call__(self, tracker: Any) -> None:
        if self.enabled:
            self.show(tracker.snapshot())

    def show(self, doc: dict[str, Any] | None) -> None:
        if not self.enabled or not doc:
            return
        now = time.monotonic()
        phase = doc.get("phase")
        if now - self.last < REDRAW_SECONDS and phase == self.phase:
            return
        self.last, self.phase = now, phase
        # One column short of the width: a line that fills it would wrap on some terminals,
        # and the next carriage return would redraw only the wrapped part.
        text = line(self.label, doc, max(terminal_width() - 1, 10))
        sys.stderr.write(trusted("\r\x1b[K") + text)
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        """Erase the bar (the command's own output follows on a clean line)."""
        if self.drawn:
            sys.stderr.write(trusted("\r\x1b[K"))
            sys.stderr.flush()
            self.drawn = False
