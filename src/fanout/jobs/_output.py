"""The output file of a JSONL job: opened once, locked for the job's life, its torn
tail cut, its records read back, new records appended.

Locking: ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the open file, held until the job
ends (the kernel drops it when the process dies, SIGKILL included), so a second job
on the same output stops at once with :class:`~fanout.JobError` instead of asking
and billing the same ids again. Where ``fcntl`` is missing (Windows) or the file
system refuses locks, the job runs unlocked and a warning says so.

A record is what the job wrote for one id: every key fanout writes, ``answer`` a
string and ``error`` null (an answer) or the other way round (a failure), and a
``fingerprint`` of 32 hexadecimal digits (or none, in records of fanout 0.1). Any
other line (not JSON, edited by hand: ``{"id": 1}`` alone, ``"answer": null,
"error": null``, a fingerprint that is not one) says nothing about its id.

A torn line is one the process was killed while writing: each record goes out in
one ``write`` ending with its newline, so only a last line *without* a newline can
be torn. It is cut off if it is not JSON, and kept (its newline added) if it is.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.exceptions import JobError
from ..core.logs import get_logger

__all__ = ["BOM", "Done", "JobOutput", "id_key", "repair_tail"]

log: logging.Logger = get_logger("fanout.jobs")

BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors put at the start of a file."""


def _load_fcntl() -> ModuleType | None:
    try:
        return importlib.import_module("fcntl")
    except ImportError:  # pragma: no cover - Windows
        return None


fcntl = _load_fcntl()


def id_key(value: object) -> str:
    """An id as its JSON text: 1 and "1" are different ids, and the output echoes
    the id with its input type."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Done:
    """What the output says about one id: its last record. One per id of the output
    is held in memory while a job runs (about 100 bytes each)."""

    ok: bool
    """The last record is an answer (``error`` is null)."""
    fingerprint: bytes | None
    """The fingerprint of the request it answered, as bytes (None in records written
    before fingerprints existed)."""
    unsent: bool = False
    """A failure of a question never sent (the spend cap was reached): asked again
    by the next run, even with ``retry_failed=False``."""


_Count = Annotated[int, Field(ge=0)]


class _Usage(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")

    prompt_tokens: _Count
    completion_tokens: _Count


class _Record(BaseModel):
    """A whole record, as a job writes it (see the module docstring)."""

    model_config = ConfigDict(strict=True, extra="allow")

    id: str | int | float | bool
    answer: str | None
    error: str | None
    usage: _Usage
    attempts: _Count
    mode: str | None
    finish_reason: str | None
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] | None = None

    @model_validator(mode="after")
    def _one_outcome(self) -> _Record:
        if (self.answer is None) == (self.error is None):
            raise ValueError("a record holds an answer or an error, not both nor neither")
        if self.fingerprint is None and "fingerprint" in self.model_fields_set:
            raise ValueError("a null fingerprint")  # fanout writes one, or (0.1) none
        return self


def _done(record: Any) -> Done | None:
    """What a parsed output line says about its id; None if it is not a whole record."""
    try:
        valid = _Record.model_validate(record)
    except ValidationError:
        return None
    fp = valid.fingerprint
    unsent = valid.error is not None and valid.error.startswith("BudgetExceededError:")
    return Done(
        ok=valid.error is None, fingerprint=None if fp is None else bytes.fromhex(fp), unsent=unsent
    )


class JobOutput:
    """The output file of a running job. Use :meth:`open`; close (or leave the
    ``with`` block) to release the lock."""

    def __init__(self, path: Path, fd: int, *, repaired: bool) -> None:
        self.path = path
        self._fd = fd
        self.repaired = repaired
        """A torn last line was cut off when the file was opened."""

    @classmethod
    def open(
        cls, path: Path, *, overwrite: bool, input_file: tuple[Path, os.stat_result] | None = None
    ) -> JobOutput:
        """Open (creating it) and lock ``path``; empty it if ``overwrite``, else cut
        a torn last line. ``input_file``: the job's input (its path and ``fstat``),
        which ``path`` must not be, by any name (a link). Raises :class:`JobError` with
        a one-line reason, before changing anything."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise JobError(f"cannot write the answers to {path}: {exc.strerror}") from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise JobError(f"cannot write the answers to {path}: not a regular file")
            if input_file is not None and os.path.samestat(st, input_file[1]):
                raise JobError(
                    f"{path} is the same file as the input {input_file[0]}: the answers "
                    "would be mixed into the questions; write them to another file"
                )
            _lock(fd, path)
            if overwrite:
                os.ftruncate(fd, 0)
            repaired = _repair_tail(fd)
        except OSError as exc:
            os.close(fd)
            raise JobError(f"cannot prepare {path} for the answers: {exc.strerror}") from exc
        except BaseException:
            os.close(fd)
            raise
        if repaired:
            log.warning("cut a torn last line off %s before resuming", path)
        return cls(path, fd, repaired=repaired)

    def read_done(self) -> dict[str, Done]:
        """The last record of every id in the file. Lines that are not whole records
        (not JSON, no id, incomplete; see the module docstring) are ignored."""
        done: dict[str, Done] = {}
        os.lseek(self._fd, 0, os.SEEK_SET)
        with open(self._fd, "rb", closefd=False) as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    record = json.loads(raw.removeprefix(BOM) if lineno == 1 else raw)
                except (ValueError, RecursionError):  # UnicodeDecodeError included
                    continue
                what = _done(record)
                if what is not None:
                    done[id_key(record["id"])] = what
        return done

    def append(self, data: bytes) -> None:
        """Append ``data`` (whole records) in one ``write`` where the OS allows."""
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            raise JobError(
                f"cannot write to {self.path}: {exc.strerror}; the answers written so far "
                "are kept: run the job again to resume"
            ) from exc

    def close(self) -> None:
        """Close the file, which releases the lock."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JobOutput:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:
        log.warning(
            "cannot lock %s on this platform (no fcntl): make sure no other job "
            "writes to it at the same time",
            path,
        )
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise JobError(
            f"{path} is being written by another run (it is locked): wait for that run "
            "to end, or write the answers to another file"
        ) from exc
    except OSError as exc:
        log.warning(
            "cannot lock %s (%s): make sure no other job writes to it at the same time",
            path,
            exc.strerror,
        )


def _repair_tail(fd: int) -> bool:
    """Cut a torn last line (no newline, not JSON) off the file; True if cut. A last
    line without its newline that is JSON is kept, and its newline added."""
    size = os.fstat(fd).st_size
    if size == 0:
        return False
    os.lseek(fd, size - 1, os.SEEK_SET)
    if os.read(fd, 1) == b"\n":
        return False  # every line is whole
    pos, tail = size, b""
    while pos > 0 and b"\n" not in tail:
        step = min(1 << 16, pos)
        pos -= step
        os.lseek(fd, pos, os.SEEK_SET)
        tail = os.read(fd, step) + tail
    newline = tail.rfind(b"\n")
    start = pos + newline + 1
    last = tail[newline + 1 :]
    try:
        json.loads(last.removeprefix(BOM) if start == 0 else last)
    except ValueError:
        os.ftruncate(fd, start)
        return True
    os.write(fd, b"\n")  # a whole record that lost only its newline
    return False


def repair_tail(path: Path) -> bool:
    """Cut a torn last line off ``path`` (see the module docstring); True if cut."""
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        return _repair_tail(fd)
    finally:
        os.close(fd)
