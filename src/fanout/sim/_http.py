"""A small HTTP/1.1 server on asyncio streams, loopback only.

The simulator needs things an ASGI stack hides on purpose: resetting the TCP
connection in mid-request, sending a body shorter than its ``Content-Length``,
hanging until the client gives up, and noticing at once that a client went
away. A few dozen lines of asyncio give all of that, keep-alive included, and
serve thousands of small requests per second on one core.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus

__all__ = ["HTTPServer", "Request", "Responder"]

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Responder:
    """Writes one response, in one of the ways the simulator needs."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._eof: asyncio.Task[bytes] | None = None
        self.keep_open = True
        self.status: int | None = None

    # --- watching the client -------------------------------------------------------
    def disconnected(self) -> asyncio.Task[bytes]:
        """A task that finishes when the client closes its side of the connection."""
        if self._eof is None:
            self._eof = asyncio.get_running_loop().create_task(self._reader.read(1))
        return self._eof

    def _stop_watching(self) -> None:
        if self._eof is not None:
            if not self._eof.done():
                self._eof.cancel()
            elif not self._eof.cancelled():
                self._eof.exception()  # a reset connection: seen, not logged as unretrieved
        self._eof = None

    async def stop_watching(self) -> None:
        """Stop watching and let the reader go, so the next request can be read."""
        task, self._eof = self._eof, None
        if task is not None:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # --- responses -------------------------------------------------------------
    def _head(self, status: int, headers: Mapping[str, str]) -> bytes:
        self.status = status
        reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        await self.stop_watching()
        all_headers = {**headers, "content-length": str(len(body))}
        self._writer.write(self._head(status, all_headers) + body)
        await self._writer.drain()

    async def send_json(self, status: int, headers: Mapping[str, str], payload: object) -> None:
        body = json.dumps(payload, separators=(",", ":")).encode()
        await self.send(status, {**headers, "content-type": "application/json"}, body)

    async def send_truncated(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Promise the whole body, send half of it, and close the connection."""
        self._stop_watching()
        all_headers = {**headers, "content-length": str(len(body))}
        self._writer.write(self._head(status, all_headers) + body[: len(body) // 2])
        await self._writer.drain()
        self.keep_open = False
        self._writer.close()

    async def start_stream(self, status: int, headers: Mapping[str, str]) -> None:
        all_headers = {**headers, "transfer-encoding": "chunked"}
        self._writer.write(self._head(status, all_headers))
        await self._writer.drain()

    async def write_chunk(self, data: bytes) -> None:
        if data:
            self._writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await self._writer.drain()

    async def end_stream(self) -> None:
        await self.stop_watching()
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()

    def cut(self) -> None:
        """Close the connection without finishing the response."""
        self._stop_watching()
        self.keep_open = False
        self._writer.close()

    def reset(self) -> None:
        """Reset the TCP connection (RST, not FIN)."""
        self._stop_watching()
        self.keep_open = False
        transport = self._writer.transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            import socket
            import struct

            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()


Handler = Callable[[Request, Responder], Awaitable[None]]


class HTTPServer:
    """Serves ``handler`` on 127.0.0.1."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self._server = await asyncio.start_server(
            self._serve_connection, host=host, port=port, backlog=4096, limit=_MAX_HEAD
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            for task in list(self._connections):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), timeout=2)
            self._server = None

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                request = self._parse_head(head)
                if request is None:
                    writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                    return
                length = int(request.headers.get("content-length", "0") or 0)
                if length > _MAX_BODY:
                    writer.write(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n")
                    return
                try:
                    request.body = await reader.readexactly(length) if length else b""
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                responder = Responder(reader, writer)
                await self._handler(request, responder)
                await responder.stop_watching()
                if not responder.keep_open or writer.is_closing():
                    return
                if request.headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    @staticmethod
    def _parse_head(head: bytes) -> Request | None:
        try:
            text = head.decode("latin-1")
            request_line, *header_lines = text.split("\r\n")
            method, target, _version = request_line.split(" ", 2)
        except ValueError:
            return None
        headers: dict[str, str] = {}
        for line in header_lines:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                return None
            headers[name.strip().lower()] = value.strip()
        path = target.split("?", 1)[0]
        return Request(method=method.upper(), path=path, headers=headers, body=b"")
