"""Endpoint memory: what a ``Fanout`` learned of an endpoint, kept for the next process.

A ``Fanout`` starts knowing nothing of its endpoint and plans with generic priors
until responses teach it. What it learned of one endpoint and model — the endpoint
model's observations (its speed), the typical answer length, whether the endpoint
caches prefixes, the limits its headers reported (and the most requests they said it had
room for at once, and whether its ``x-ratelimit-reset-*`` can be trusted: see
``fanout.limits._resets``), whether it refused
``response_format`` — is saved at the end of each call that learned something, and
loaded before the first plan of the next ``Fanout`` for the same endpoint and model:
a second process (another ``fanout run``, another one-shot ``fanout.ask_many``)
starts warm.

Where: one small versioned JSON document per endpoint and model, in
``<the user cache directory>/endpoints/<sha256 of the key>.json`` (``platformdirs``
finds the directory: ``~/.cache/fanout`` on Linux), written atomically (a temporary
file renamed over the old one); with a redis limits backend, in that redis beside
the limits, shared by every process using it. The key is the client's base URL
without credentials, query or fragment, and the model name. Never stored: the API
key, headers, prompts, answers.

A document that cannot be read, of another format or version, for another key,
saved more than ``STALE_AFTER_S`` (7 days) ago, or with any value out of place (it is
validated whole, as a pydantic model, before any of it is used: a remembered limit
outside ``RPM_RANGE`` / ``TPM_RANGE``, ``true`` for a number, ``1e308`` tokens) is
ignored with one warning on the
``fanout`` logger — a log record, not a Python warning, so that a cache file raises
nothing even under ``-W error``; a memory that cannot be saved warns once per
``Fanout``. Neither fails a call. Two processes saving at once: the last one wins.

The switch, ``Fanout(memory=...)``: None (the default) lets the environment decide
(``FANOUT_MEMORY=0`` / ``off`` / ``false`` / ``no`` turns it off, ``FANOUT_MEMORY_DIR``
puts the files in another directory); False is off; True is on whatever
``FANOUT_MEMORY`` says; a path is the directory to keep the files in.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import stat
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypeAlias
from urllib.parse import urlsplit

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.exceptions import ConfigError
from ..limits._local import RPM_RANGE, TPM_RANGE
from .model import EndpointSnapshot

if TYPE_CHECKING:
    from ..limits._local import RateLimiter
    from .model import EndpointModel


class Learned(Protocol):
    """What the memory reads and sets of what the engine learned of the endpoint."""

    endpoint: EndpointModel
    json_ok: bool


class Transport(Protocol):
    """What the memory reads and sets on the engine's transport: a protocol, so that
    this package needs nothing from the engine above it."""

    limiter: RateLimiter

    @property
    def learner(self) -> Learned: ...

    async def check_limiter(self) -> None: ...


__all__ = [
    "ENV_DIR",
    "ENV_SWITCH",
    "FORMAT_VERSION",
    "STALE_AFTER_S",
    "EndpointMemory",
    "MemorySetting",
    "endpoint_key",
]

log = logging.getLogger("fanout")

FORMAT = "fanout.endpoint-memory"
FORMAT_VERSION = 1
STALE_AFTER_S = 7 * 24 * 3600.0
"""A document saved longer ago than this is ignored (the endpoint may have changed)."""
ENV_SWITCH = "FANOUT_MEMORY"
ENV_DIR = "FANOUT_MEMORY_DIR"
_OFF = frozenset({"0", "off", "false", "no"})
_MAX_BYTES = 1 << 20  # a document is a few kB; anything this big is not one
_TMP_SUFFIX = ".tmp"
_OURS = re.compile(r"\.?[0-9a-f]{64}(\.json|\..*\.tmp)")  # what _prune may delete

MemorySetting: TypeAlias = "bool | str | os.PathLike[str] | None"
"""What ``Fanout(memory=...)`` takes (see the module docstring)."""


_Rpm = Annotated[float, Field(ge=RPM_RANGE[0], le=RPM_RANGE[1], allow_inf_nan=False)]
_Tpm = Annotated[float, Field(ge=TPM_RANGE[0], le=TPM_RANGE[1], allow_inf_nan=False)]


class _Limits(BaseModel):
    model_config = ConfigDict(strict=True)

    rpm: _Rpm | None = None
    tpm: _Tpm | None = None
    burst_requests: _Rpm | None = None
    resets: Literal["trusted", "distrusted"] | None = None  # absent in older documents


class _Document(BaseModel):
    """An endpoint memory document, whole: nothing of it is used unless all of it fits."""

    model_config = ConfigDict(strict=True)

    format: Literal["fanout.endpoint-memory"]
    version: Literal[1]
    key: str
    saved_at: Annotated[float, Field(allow_inf_nan=False)]
    endpoint: EndpointSnapshot
    limits: _Limits
    json_schema_refused: bool


def _errors(exc: ValidationError) -> str:
    """A pydantic error in one line: where, and what is wrong (the first three)."""
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'document'}: {e['msg']}"
        for e in exc.errors(include_url=False)[:3]
    ]
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def endpoint_key(base_url: str, model: str) -> str:
    """What a memory is for: the base URL without credentials, query or fragment (and
    without a trailing slash), and the model name."""
    parts = urlsplit(str(base_url))
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme.lower()}://{host}{port}{parts.path.rstrip('/')} {model}"


def _directory(setting: object) -> Path | None:
    """The directory for the files, or None when the memory is off."""
    if setting is False:
        return None
    if setting is None:
        if os.environ.get(ENV_SWITCH, "").strip().lower() in _OFF:
            return None
        setting = True
    if setting is True:
        chosen = os.environ.get(ENV_DIR, "").strip()
        if chosen:
            return Path(chosen).expanduser()
        import platformdirs

        return Path(platformdirs.user_cache_dir("fanout")) / "endpoints"
    if isinstance(setting, (str, os.PathLike)) and str(setting).strip():
        return Path(setting).expanduser()
    raise ConfigError(
        f"memory must be True, False, None or a directory, not {type(setting).__name__}"
        + (" ''" if setting == "" else "")
    )


def _fanout_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("llm-fanout")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree, not installed
        return "0.0.0"


class EndpointMemory:
    """One ``Fanout``'s memory of its endpoint (see the module docstring).

    It is bound to the first model the ``Fanout`` is used with: the ``Fanout`` keeps
    one endpoint model for all, so calls naming another model neither load nor save."""

    def __init__(self, setting: object, base_url: str) -> None:
        self.directory = _directory(setting)
        self._base_url = str(base_url)
        self._model: str | None = None
        self._loading: anyio.Event | None = None
        self._last = ""  # the document (less its time) last loaded or saved
        self._warned_save = False

    def _name(self) -> str:
        key = endpoint_key(self._base_url, self._model or "")
        return hashlib.sha256(key.encode()).hexdigest()

    def path(self, model: str) -> Path | None:
        """The file that holds the memory of ``model`` on this endpoint (None: off)."""
        if self.directory is None:
            return None
        key = endpoint_key(self._base_url, model)
        return self.directory / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    # --- loading ---------------------------------------------------------------------------
    def recall_now(self, transport: Transport, model: str | None) -> None:
        """Load from the file, synchronously (for a dry run); not from redis."""
        if self.directory is None or self._model is not None or not model:
            return
        if getattr(transport.limiter, "load_memory", None) is not None:
            return  # redis is asked on the first call
        self._model = model
        path = self.path(model)
        assert path is not None
        self._apply(transport, _read(path), str(path))

    async def recall(self, transport: Transport, model: str) -> None:
        """Before a call's first plan: load what an earlier process saved, once."""
        if self.directory is None:
            return
        await transport.check_limiter()  # redis, or the local limits it fell back to
        if self._model is not None:
            if self._loading is not None:
                await self._loading.wait()  # a concurrent call is loading it
            return
        self._model = model
        self._loading = done = anyio.Event()
        try:
            load = getattr(transport.limiter, "load_memory", None)
            if load is not None:
                where = f"redis ({self._name()})"
                try:
                    data = await load(self._name())
                except Exception as exc:
                    log.warning("endpoint memory not loaded from redis: %s", exc)
                    data = None
            else:
                path = self.path(model)
                assert path is not None
                where = str(path)
                data = await anyio.to_thread.run_sync(_read, path)
            self._apply(transport, data, where)
        finally:
            self._loading = None
            done.set()

    def _apply(self, transport: Transport, data: bytes | None, where: str) -> None:
        if data is not None:
            doc, problem = self._validate(data)
            if doc is None:
                log.warning("endpoint memory %s ignored: %s", where, problem)
            else:
                if transport.learner.endpoint.estimate().observations == 0:
                    transport.learner.endpoint.restore(doc.endpoint)
                seed = getattr(transport.limiter, "seed_limits", None)
                if seed is not None:
                    seed(
                        rpm=doc.limits.rpm,
                        tpm=doc.limits.tpm,
                        burst_requests=doc.limits.burst_requests,
                    )
                trust = getattr(transport.limiter, "reset_trust", None)
                if trust is not None:
                    trust.seed(doc.limits.resets)
                if doc.json_schema_refused:
                    transport.learner.json_ok = False
                log.debug("endpoint memory loaded from %s", where)
        self._last = json.dumps(self._document(transport), sort_keys=True)

    def _validate(self, data: bytes) -> tuple[_Document | None, str]:
        """The document in ``data``, validated whole; or None and why it is not one to
        load here."""
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError) as exc:
            return None, f"not a readable endpoint memory ({exc})"
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            return None, "not a fanout endpoint memory"
        if raw.get("version") != FORMAT_VERSION:
            return None, f"format version {raw.get('version')!r}, not {FORMAT_VERSION}"
        key = endpoint_key(self._base_url, self._model or "")
        if raw.get("key") != key:
            return None, f"it is for {raw.get('key')!r}, not {key!r}"
        try:
            doc = _Document.model_validate(raw)
        except ValidationError as exc:
            return None, f"bad values: {_errors(exc)}"
        age = time.time() - doc.saved_at
        if age < -86400:
            return None, "saved in the future (a clock more than a day ahead)"
        if age > STALE_AFTER_S:
            return None, (
                f"stale: saved {age / 86400:.0f} days ago (kept {STALE_AFTER_S / 86400:.0f})"
            )
        return doc, ""

    # --- saving ----------------------------------------------------------------------------
    def _document(self, transport: Transport) -> dict[str, Any]:
        reported = getattr(transport.limiter, "reported_limits", None)
        limits = reported() if reported is not None else {}
        trust = getattr(transport.limiter, "reset_trust", None)
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "key": endpoint_key(self._base_url, self._model or ""),
            "endpoint": transport.learner.endpoint.snapshot(),
            "limits": {
                "rpm": limits.get("rpm"),
                "tpm": limits.get("tpm"),
                "burst_requests": limits.get("burst_requests"),
                "resets": trust.learned() if trust is not None else None,
            },
            "json_schema_refused": not transport.learner.json_ok,
        }

    async def keep(self, transport: Transport, model: str) -> None:
        """After a call: save what was learned, if anything was and this memory is
        for ``model``. Never raises: a failure is a warning, once."""
        if self.directory is None or model != self._model:
            return
        settled = getattr(transport.limiter, "writes_done", None)
        if settled is not None:  # what the call learned may still be on its way to redis
            await settled()
        doc = self._document(transport)
        body = json.dumps(doc, sort_keys=True)
        if body == self._last:
            return  # nothing new
        data = json.dumps(
            {**doc, "fanout": _fanout_version(), "saved_at": time.time()}, sort_keys=True
        ).encode()
        save = getattr(transport.limiter, "save_memory", None)
        try:
            if save is not None:
                await save(self._name(), data, STALE_AFTER_S)
            else:
                path = self.path(model)
                assert path is not None
                await anyio.to_thread.run_sync(_write, path, data)
        except Exception as exc:
            if not self._warned_save:
                self._warned_save = True
                where = "redis" if save is not None else str(self.directory)
                log.warning(
                    "endpoint memory not saved to %s (the next process starts cold; "
                    "FANOUT_MEMORY=0 turns it off): %s",
                    where,
                    exc,
                )
            return
        self._last = body

    @contextlib.asynccontextmanager
    async def around(self, transport: Transport, model: str) -> AsyncIterator[None]:
        """Load before a call, save after it (unless it was cancelled)."""
        await self.recall(transport, model)
        try:
            yield
        except Exception:
            await self.keep(transport, model)
            raise
        await self.keep(transport, model)


def _read(path: Path) -> bytes | None:
    """The file's bytes; None if there is none (or, with a warning, if it cannot be read)."""
    try:
        # Opened without blocking: a FIFO (or a device) put there would block the open,
        # and with it the call, until someone wrote to it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):  # nothing saved there yet
        return None
    except OSError as exc:
        log.warning("endpoint memory %s ignored: cannot read it: %s", path, exc)
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            log.warning("endpoint memory %s ignored: not a regular file", path)
            return None
        try:
            data = f.read(_MAX_BYTES + 1)
        except OSError as exc:
            log.warning("endpoint memory %s ignored: cannot read it: %s", path, exc)
            return None
    return data if len(data) <= _MAX_BYTES else b"(too large)"


def _write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _prune(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=_TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_pruned: set[Path] = set()


def _prune(directory: Path) -> None:
    """Once per process and directory: delete the stale documents (an endpoint not used
    for a week; a simulator's port of a test run) and temporary files left by a crash;
    only files named as this module names them (the directory may be the user's)."""
    if directory in _pruned:
        return
    _pruned.add(directory)
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if not _OURS.fullmatch(entry.name):
                continue
            stale = entry.name.endswith(".json") and now - entry.stat().st_mtime > STALE_AFTER_S
            left = entry.name.endswith(_TMP_SUFFIX) and now - entry.stat().st_mtime > 3600
            if entry.is_file() and (stale or left):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
