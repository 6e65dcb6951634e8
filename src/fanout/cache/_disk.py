"""The response cache on disk: one sqlite file.

Why sqlite (the standard library's ``sqlite3``) and not ``diskcache``: the entries
are small JSON documents looked up by key, a batch at a time, which is one indexed
``SELECT ... IN (...)``; sqlite's locking makes the file safe for concurrent
processes (write-ahead logging: readers never wait for a writer, writers wait for
each other up to ``BUSY_TIMEOUT_S``); and ``diskcache`` would add a dependency that
pickles its values by default (a cache file someone else wrote could run code
here). The calls run on a worker thread, one at a time per store.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import anyio
import anyio.to_thread

__all__ = ["BUSY_TIMEOUT_S", "DiskStore"]

BUSY_TIMEOUT_S = 30.0
_TABLE = "responses_v1"
_CHUNK = 500  # keys per SELECT (sqlite's limit on a statement's variables is higher)


class DiskStore:
    """Cache entries in the sqlite file ``path`` (made, with its directory, on first use)."""

    def __init__(self, path: Path, *, ttl_s: float | None = None) -> None:
        self.path = path
        self.where = str(path)
        self._ttl_s = ttl_s
        self._db: sqlite3.Connection | None = None
        self._lock = anyio.Lock()

    def _open(self) -> sqlite3.Connection:
        """The connection, made on first use. Processes opening a new file at the same
        moment can get "database is locked" at once, whatever the busy timeout (the
        switch to write-ahead logging does not wait for the others): tried again then,
        with a growing pause, for up to ``BUSY_TIMEOUT_S``."""
        if self._db is not None:
            return self._db
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline, pause = time.monotonic() + BUSY_TIMEOUT_S, 0.01
        while True:
            try:
                self._db = self._connect()
                return self._db
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)  # on the store's worker thread, not the loop
            pause = min(pause * 2, 0.5)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} (key TEXT PRIMARY KEY, "
                "value BLOB NOT NULL, stored_at REAL NOT NULL) WITHOUT ROWID"
            )
            if self._ttl_s is not None:
                db.execute(
                    f"DELETE FROM {_TABLE} WHERE stored_at < ?", (time.time() - self._ttl_s,)
                )
        except BaseException:
            db.close()
            raise
        return db

    def _get(self, keys: list[str]) -> dict[str, bytes]:
        db = self._open()
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(f"SELECT key, value FROM {_TABLE} WHERE key IN ({marks})", chunk)
            for key, value in rows:
                found[key] = value if isinstance(value, bytes) else str(value).encode()
        return found

    def _put(self, items: dict[str, bytes]) -> None:
        db = self._open()
        now = time.time()
        with db:  # one transaction
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                f"INSERT OR REPLACE INTO {_TABLE} (key, value, stored_at) VALUES (?, ?, ?)",
                [(k, v, now) for k, v in items.items()],
            )

    async def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The stored values of those of ``keys`` that have one."""
        async with self._lock:
            return await anyio.to_thread.run_sync(self._get, keys)

    async def put_many(self, items: dict[str, bytes]) -> None:
        """Store every value under its key, replacing what was there."""
        if items:
            async with self._lock:
                await anyio.to_thread.run_sync(self._put, items)

    async def aclose(self) -> None:
        async with self._lock:
            if self._db is not None:
                db, self._db = self._db, None
                await anyio.to_thread.run_sync(db.close)
