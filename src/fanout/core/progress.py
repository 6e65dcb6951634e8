"""Progress display for long calls: a bar on a terminal, log lines elsewhere.

On a terminal: rich's bar when rich is installed (the ``progress`` extra), else a
plain one-line bar; both show done/total, rate, ETA, retries and 429s. Elsewhere: a
line every few seconds, and a last one, on the ``fanout.progress`` logger at INFO
(the command line shows them whatever ``-v`` says).

The engine knows the total of a list; for a stream (a JSONL file) the caller that
can count it cheaply sets :data:`expected_total` around the call.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol, TextIO

__all__ = ["BatchProgress", "ProgressSink", "count_lines", "expected_total", "make_progress"]

log = logging.getLogger("fanout.progress")

Total = Callable[[], int | None]

expected_total: ContextVar[Total | None] = ContextVar("fanout_expected_total", default=None)
"""Set around a call, gives progress shown for a stream of unknown length (a JSONL
file) its total: ``total()`` is read at every update, so it may be refined as the
stream is read."""


class ProgressSink(Protocol):
    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None: ...
    def close(self) -> None: ...


def count_lines(path: str | Path) -> int:
    """Non-blank lines of a file, read in binary a line at a time (nothing kept)."""
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def _clock(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class _Meter:
    """Rate and ETA since the sink was made; the total from the call or the caller."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self._expected = expected_total.get()

    def total(self, given: int | None) -> int | None:
        if given is not None or self._expected is None:
            return given
        expected = self._expected()
        return None if expected is None else max(expected, 0)

    def rate(self, done: int) -> float:
        return done / max(time.monotonic() - self.start, 1e-9)

    def eta_s(self, done: int, total: int | None) -> float | None:
        rate = self.rate(done)
        if total is None or rate <= 0:
            return None
        return max(total - done, 0) / rate


class _LogProgress:
    """A log line every ``every_s`` seconds, and one at the end (not on a terminal)."""

    def __init__(self, every_s: float = 5.0) -> None:
        self._every = every_s
        self._last = float("-inf")
        self._meter = _Meter()
        self._state: tuple[int, int | None, int, int] | None = None
        self._logged: tuple[int, int | None, int, int] | None = None

    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None:
        self._state = (done, self._meter.total(total), retries, rate_limited)
        now = time.monotonic()
        if now - self._last >= self._every or done == self._state[1]:
            self._last = now
            self._emit()

    def _emit(self) -> None:
        if self._state is None or self._state == self._logged:
            return
        self._logged = self._state
        done, total, retries, rate_limited = self._state
        eta = self._meter.eta_s(done, total)
        log.info(
            "progress done=%d total=%s rate=%.1f/s eta=%s retries=%d rate_limited=%d",
            done,
            total if total is not None else "?",
            self._meter.rate(done),
            f"{eta:.0f}s" if eta is not None else "?",
            retries,
            rate_limited,
        )

    def close(self) -> None:
        self._emit()  # the last state, unless it was logged already


class BatchProgress:
    """While a batch job waits for its batches (which may take hours): a line on the
    progress logger for a batch whose status or counts changed, at most every
    ``every_s`` seconds, and at least every ``quiet_s`` while nothing changes."""

    def __init__(self, every_s: float = 5.0, quiet_s: float = 60.0) -> None:
        self._every, self._quiet = every_s, quiet_s
        self._said: dict[str, tuple[float, tuple[str, int, int, int]]] = {}

    def waiting(self, batch_id: str, status: str, done: int, failed: int, total: int) -> None:
        now = time.monotonic()
        state = (status, done, failed, total)
        last, said = self._said.get(batch_id, (float("-inf"), None))
        if now - last < (self._every if state != said else self._quiet):
            return
        self._said[batch_id] = (now, state)
        log.info(
            "batch %s: %s, %d of %d request(s) done, %d failed",
            batch_id,
            status,
            done,
            total,
            failed,
        )


class _LineProgress:
    """A plain one-line bar on a terminal, redrawn in place (rich not installed)."""

    def __init__(self, out: TextIO | None = None, every_s: float = 0.2) -> None:
        self._out = out or sys.stderr
        self._every = every_s
        self._last = float("-inf")
        self._meter = _Meter()
        self._shown = 0

    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None:
        total = self._meter.total(total)
        now = time.monotonic()
        if now - self._last < self._every and done != total:
            return
        self._last = now
        if total:
            filled = min(16, 16 * done // total)
            head = f"[{'#' * filled}{'.' * (16 - filled)}] {done}/{total}"
        else:
            head = f"{done}/?"
        eta = self._meter.eta_s(done, total)
        text = (
            f"fanout {head}  {self._meter.rate(done):.1f}/s"
            f"  eta {_clock(eta) if eta is not None else '?'}"
            f"  retries {retries}  429s {rate_limited}"
        )
        text = text[: max(20, shutil.get_terminal_size().columns - 1)]
        self._out.write("\r" + text.ljust(self._shown))
        self._out.flush()
        self._shown = len(text)

    def close(self) -> None:
        if self._shown:
            self._out.write("\n")
            self._out.flush()


class _RichProgress:
    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._meter = _Meter()
        self._progress = Progress(
            TextColumn("[bold]fanout"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("retries {task.fields[retries]} · 429s {task.fields[limited]}"),
            console=Console(stderr=True),  # where the terminal was found; stdout may be a file
            transient=False,
        )
        self._task = self._progress.add_task(
            "fanout", total=self._meter.total(None), rate=0.0, retries=0, limited=0
        )
        self._progress.start()

    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None:
        self._progress.update(
            self._task,
            completed=done,
            total=self._meter.total(total),
            rate=self._meter.rate(done),
            retries=retries,
            limited=rate_limited,
        )

    def close(self) -> None:
        self._progress.stop()


def make_progress() -> ProgressSink:
    """On a terminal (standard error): rich's bar if rich is installed, else a plain
    one-line bar. Elsewhere: periodic log lines."""
    if sys.stderr.isatty():
        try:
            return _RichProgress()
        except ImportError:
            return _LineProgress()
    return _LogProgress()
