"""Jobs past one process: a stable split of the input by id, and combining the outputs.

``Shard(index=K, count=N)`` (``fanout run --shard K/N``, K counting from 1) owns the
input lines whose id hashes to it: ``sha256(id as JSON text) mod N``. The split does
not depend on Python's hash seed, the machine, the order of the lines or how many
there are, so every run of shard K, on any host, takes the same ids, and the N shards
together take every id exactly once. Each shard writes (and resumes) its own output.

:func:`combine_jsonl` reads the shards' outputs back into one file: each id once (the
last whole record an output holds for it, an answer rather than a failure if two
outputs disagree), in the input's order when the input is given, and says which
input ids have no record at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, NamedTuple

from ..core.exceptions import ConfigError, JobError
from ._output import BOM, _done, fcntl, id_key

__all__ = ["CombineSummary", "Shard", "combine_jsonl", "shard_of"]

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def shard_of(key: str, count: int) -> int:
    """The shard (counting from 1) of the id whose JSON text is ``key``
    (:func:`~fanout.jobs._output.id_key`), among ``count``."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True, kw_only=True)
class Shard:
    """Shard ``index`` of ``count`` (1 ≤ index ≤ count): the input lines whose id
    hashes to it (see the module docstring)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        for name in ("index", "count"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"Shard.{name} must be an int, got {value!r}")
        if self.count < 1:
            raise ConfigError(f"a job has at least 1 shard, got {self.count}")
        if not 1 <= self.index <= self.count:
            raise ConfigError(
                f"shard {self.index}/{self.count}: shards count from 1, so K "
                f"must be 1 to {self.count}"
            )

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """``"K/N"`` (K counting from 1) as a :class:`Shard`; :class:`ConfigError`
        saying what is wrong otherwise."""
        match = _SPEC.fullmatch(spec)
        if match is None:
            raise ConfigError(
                f"expected K/N, shard K of N counting from 1 (e.g. 1/4), got {spec!r}"
            )
        return cls(index=int(match[1]), count=int(match[2]))

    def owns(self, key: str) -> bool:
        """Whether the id whose JSON text is ``key`` belongs to this shard."""
        return self.count == 1 or shard_of(key, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class CombineSummary:
    """What a :func:`combine_jsonl` call wrote."""

    written: int = 0
    """Records written: one per id."""
    answered: int = 0
    failed: int = 0
    """Ids whose record is a failure (its ``error`` names it)."""
    missing: list[str] = field(default_factory=list)
    """Ids of the input (as JSON text) with no record in any output: never asked, or
    their shard has not run (only known when the input is given)."""
    not_in_input: int = 0
    """Ids of the outputs that are not in the input: left out."""
    duplicates: int = 0
    """Ids with records in more than one output (shards run with different counts
    into the same files); the answer, else the last, was kept."""
    skipped_lines: int = 0
    """Output lines that are not whole records (see :mod:`fanout.jobs._output`)."""


class _Where(NamedTuple):
    file: int
    offset: int
    ok: bool


_UNREADABLE = object()  # a line that is not JSON


def _json_lines(f: IO[bytes]) -> Iterator[tuple[int, bytes, object]]:
    """(offset, line, parsed JSON or ``_UNREADABLE``) for each non-blank line of a
    JSONL file (a first line's BOM left out)."""
    offset = 0
    for lineno, raw in enumerate(f, 1):
        start, offset = offset, offset + len(raw)
        line = raw.removeprefix(BOM) if lineno == 1 else raw
        if not line.strip():
            continue
        try:
            yield start, line, json.loads(line)
        except (ValueError, RecursionError):
            yield start, line, _UNREADABLE


def _records(f: IO[bytes]) -> Iterator[tuple[int, bytes, str | None, bool]]:
    """(offset, line, id key or None, ok) for each non-blank line of an output."""
    for start, line, record in _json_lines(f):
        done = None if record is _UNREADABLE else _done(record)
        if done is None:
            yield start, line, None, False
        else:
            yield start, line, id_key(record["id"]), done.ok  # type: ignore[index]


def _input_ids(path: Path) -> Iterator[str]:
    """The ids of a job's input, in order, once each (lines without one are passed
    over: ``fanout run`` reported them)."""
    seen: set[str] = set()
    with _open(path, "the questions") as f:
        for _start, _line, record in _json_lines(f):
            if not isinstance(record, dict) or record.get("id") is None:
                continue
            if isinstance(record["id"], (dict, list)):
                continue
            key = id_key(record["id"])
            if key not in seen:
                seen.add(key)
                yield key


def _open(path: Path, what: str) -> IO[bytes]:
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise JobError(f"cannot read {what}: {path}: no such file") from None
    except OSError as exc:
        raise JobError(f"cannot read {what} from {path}: {exc.strerror}") from exc


def _not_being_written(f: IO[bytes], path: Path) -> None:
    """Refuse an output a job still writes (it holds its lock)."""
    if fcntl is None:
        return
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JobError(
            f"{path} is being written by a run (it is locked): combine it once that run has ended"
        ) from None
    except OSError:
        pass  # a file system without locks: nothing to learn


def combine_jsonl(
    outputs: Iterable[str | os.PathLike[str]],
    combined: str | os.PathLike[str],
    *,
    input_path: str | os.PathLike[str] | None = None,
) -> CombineSummary:
    """Write one record per id of the job outputs ``outputs`` (the shards') into
    ``combined``: the last whole record an output holds for the id; if several outputs
    hold the id, an answer rather than a failure, else the one of the output given
    last. With ``input_path``, the records follow the input's order, ids not in the
    input are left out, and input ids with no record are listed in ``missing``;
    without it, they follow the outputs' order. ``combined`` is written whole or not
    at all (a temporary file renamed over it). Raises :class:`JobError` if an output
    cannot be read, is being written by a run, or ``combined`` is an output or the
    input."""
    paths = [Path(p) for p in outputs]
    if not paths:
        raise JobError("nothing to combine: give the outputs of the shards")
    dst = Path(combined)
    given = Path(input_path) if input_path is not None else None
    if given is not None and dst.exists() and given.exists() and os.path.samefile(dst, given):
        raise JobError(f"{dst} is the input {given}: write the combined output to another file")
    summary = CombineSummary()
    files: list[IO[bytes]] = []
    try:
        chosen: dict[str, _Where] = {}
        holders: dict[str, int] = {}  # id -> the file that last held it
        for index, path in enumerate(paths):
            f = _open(path, "a job's output")
            files.append(f)
            _not_being_written(f, path)
            if dst.exists() and os.path.samestat(os.fstat(f.fileno()), dst.stat()):
                raise JobError(f"{dst} is one of the outputs to combine: write to another file")
            for offset, _line, key, ok in _records(f):
                if key is None:
                    summary.skipped_lines += 1
                    continue
                before = chosen.get(key)
                if before is not None and holders[key] != index:
                    summary.duplicates += 1
                    if before.ok and not ok:
                        continue  # an answer beats a failure held by another output
                chosen[key], holders[key] = _Where(index, offset, ok), index
        order = _input_order(input_path, chosen, summary) if input_path is not None else None
        _write(dst, files, chosen, order, summary)
    finally:
        for f in files:
            f.close()
    return summary


def _input_order(
    input_path: str | os.PathLike[str], chosen: dict[str, _Where], summary: CombineSummary
) -> list[str]:
    order: list[str] = []
    for key in _input_ids(Path(input_path)):
        if key in chosen:
            order.append(key)
        else:
            summary.missing.append(key)
    summary.not_in_input = len(chosen) - len(order)
    return order


def _line_at(f: IO[bytes], offset: int) -> bytes:
    f.seek(offset)
    line = f.readline()
    return line.removeprefix(BOM) if offset == 0 else line


def _write(
    dst: Path,
    files: list[IO[bytes]],
    chosen: dict[str, _Where],
    order: list[str] | None,
    summary: CombineSummary,
) -> None:
    folder = dst.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise JobError(f"cannot write {dst}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as out:
            for where, line in _in_order(files, chosen, order):
                out.write(line if line.endswith(b"\n") else line + b"\n")
                summary.written += 1
                if where.ok:
                    summary.answered += 1
                else:
                    summary.failed += 1
        mode = dst.stat().st_mode if dst.exists() else 0o644
        os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, dst)
    except OSError as exc:
        os.unlink(tmp)
        raise JobError(f"cannot write {dst}: {exc.strerror}") from exc
    except BaseException:
        os.unlink(tmp)
        raise


def _in_order(
    files: list[IO[bytes]], chosen: dict[str, _Where], order: list[str] | None
) -> Iterator[tuple[_Where, bytes]]:
    """(where, line) of each chosen record: in ``order`` (ids), else the outputs'."""
    if order is not None:
        for key in order:
            where = chosen[key]
            yield where, _line_at(files[where.file], where.offset)
        return
    for index, f in enumerate(files):  # each id where it was chosen
        f.seek(0)
        for offset, line, found, _ok in _records(f):
            if found is None:
                continue
            where = chosen[found]
            if where.file == index and where.offset == offset:
                yield where, line
