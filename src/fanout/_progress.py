"""Progress display for long calls: a rich bar on a terminal, log lines elsewhere."""

from __future__ import annotations

import logging
import sys
import time
from typing import Protocol

__all__ = ["ProgressSink", "make_progress"]

log = logging.getLogger("fanout")


class ProgressSink(Protocol):
    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None: ...
    def close(self) -> None: ...


class _LogProgress:
    """Plain periodic log lines (not on a terminal, or rich not installed)."""

    def __init__(self, every_s: float = 5.0) -> None:
        self._every = every_s
        self._last = 0.0
        self._start = time.monotonic()

    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None:
        now = time.monotonic()
        if now - self._last < self._every and done != total:
            return
        self._last = now
        rate = done / max(now - self._start, 1e-9)
        log.info(
            "progress done=%d total=%s rate=%.1f/s retries=%d rate_limited=%d",
            done, total if total is not None else "?", rate, retries, rate_limited,
        )  # fmt: skip

    def close(self) -> None:
        pass


class _RichProgress:
    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]fanout"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("retries {task.fields[retries]} · 429s {task.fields[limited]}"),
            transient=False,
        )
        self._task = self._progress.add_task("fanout", total=None, rate=0.0, retries=0, limited=0)
        self._start = time.monotonic()
        self._progress.start()

    def update(self, *, done: int, total: int | None, retries: int, rate_limited: int) -> None:
        rate = done / max(time.monotonic() - self._start, 1e-9)
        self._progress.update(
            self._task,
            completed=done,
            total=total,
            rate=rate,
            retries=retries,
            limited=rate_limited,
        )

    def close(self) -> None:
        self._progress.stop()


def make_progress() -> ProgressSink:
    """A rich progress bar if rich is installed and stderr is a terminal, else log lines."""
    if sys.stderr.isatty():
        try:
            return _RichProgress()
        except ImportError:
            pass
    return _LogProgress()
