"""The synchronous entry point: ``ask_many_sync``, for scripts and notebooks.

It runs :func:`fanout.ask_many` to the end and returns its answers. With no event
loop running in the calling thread (a script), it runs one with ``asyncio.run``.
Inside a running loop (a Jupyter cell), where waiting on that loop would deadlock,
it runs the call on a worker thread with a loop of its own, and waits for it;
interrupting the wait cancels the call. While it waits, the calling thread's loop
stands still: an endpoint that loop serves (a cell that started
``fanout.sim.serve()``) could never answer. That case is refused at once with
:class:`~fanout.LoopDeadlockError`, before anything is sent: the loop's listening
sockets are compared with the client's base URL (on asyncio's selector loops, the
default on Linux and macOS and in Jupyter; an endpoint served by another thread or
process is fine).

It takes a sync ``openai.OpenAI`` or an ``openai.AsyncOpenAI`` client, and always
works on an ``AsyncOpenAI`` of its own, made for the call and closed after it: from
an ``OpenAI``, one with the same settings (API key, base URL, organization, project,
timeout, retries, default headers and query); from an ``AsyncOpenAI``, its copy
(``client.copy``) with a new connection pool, because a pool belongs to the event
loop that opened it. The user's client is never changed. A custom ``http_client``
(proxies, certificates) is not carried over: for that, make an ``AsyncOpenAI`` with
an async one and ``await fanout.ask_many(...)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import AsyncIterable, Awaitable, Callable, Coroutine, Iterable, Sequence
from decimal import Decimal
from typing import Any, TypeVar
from urllib.parse import urlsplit

import openai

from ..cache import CacheSetting
from ..core.config import Limits, Policy, Retry
from ..core.endpoints import Endpoint
from ..core.exceptions import ConfigError, LoopDeadlockError
from ..core.models import Answers
from ..core.money import PricingSetting
from ..endpoint.memory import MemorySetting
from .call import OnAnswer, OnError
from .facade import ask_many
from .intake import QuestionLike

__all__ = ["ask_many_sync", "async_client_for"]

T = TypeVar("T")


def ask_many_sync(
    questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
    *,
    client: openai.OpenAI | openai.AsyncOpenAI | None = None,
    endpoints: Sequence[Endpoint] | None = None,
    model: str | None = None,
    system: str | None = None,
    limits: Limits | None = None,
    retry: Retry | None = None,
    policy: Policy | str = "auto",
    on_error: OnError = "raise",
    timeout: float | None = None,
    progress: bool = False,
    on_answer: OnAnswer | None = None,
    dedupe: bool = True,
    memory: MemorySetting = None,
    api: str = "chat",
    pricing: PricingSetting = None,
    max_cost: float | Decimal | None = None,
    cache: CacheSetting = None,
    **create_kwargs: Any,
) -> Answers:
    """:func:`fanout.ask_many` for synchronous code: blocks until every question is
    answered, and works in a script and in a notebook whose event loop is running.

    ::

        answers = fanout.ask_many_sync(["What is X?", "Explain Y."],
                                       client=OpenAI(), model="gpt-4o-mini")

    ``client`` may be a sync ``openai.OpenAI`` or an ``openai.AsyncOpenAI``; the call
    uses an ``AsyncOpenAI`` of its own with the same settings (see the module
    docstring: a custom ``http_client`` is not carried over). Inside a running loop
    the call runs on a worker thread: ``on_answer`` is called there, and an async
    iterable of questions must not depend on the notebook's loop, nor may the endpoint
    be served by it (:class:`~fanout.LoopDeadlockError`, at once)."""
    if client is not None:
        refuse_own_loop_endpoint(client)
    for each in endpoints if isinstance(endpoints, (list, tuple)) else ():
        if isinstance(each, Endpoint) and each.client is not None:
            refuse_own_loop_endpoint(each.client)

    async def call() -> Answers:
        twin = None if client is None else async_client_for(client)
        try:
            return await ask_many(
                questions,
                client=twin,
                endpoints=endpoints,
                model=model,
                system=system,
                limits=limits,
                retry=retry,
                policy=policy,
                on_error=on_error,
                timeout=timeout,
                progress=progress,
                on_answer=on_answer,
                dedupe=dedupe,
                memory=memory,
                api=api,
                pricing=pricing,
                max_cost=max_cost,
                cache=cache,
                **create_kwargs,
            )
        finally:
            if twin is not None:
                await twin.close()

    return run_to_end(call)


def async_client_for(client: object) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` of fanout's own for one synchronous call (see the module
    docstring); ``client`` is left as it is."""
    if isinstance(client, openai.AsyncOpenAI):
        return client.copy(http_client=openai.DefaultAsyncHttpxClient())
    if isinstance(client, openai.AzureOpenAI):
        raise ConfigError(
            "ask_many_sync cannot rebuild an openai.AzureOpenAI client as an async one: "
            "pass an openai.AsyncAzureOpenAI made with the same arguments"
        )
    if not isinstance(client, openai.OpenAI):
        raise ConfigError(
            f"client must be an openai.OpenAI or openai.AsyncOpenAI, not {type(client).__name__}"
        )
    if getattr(client, "_provider", None) is not None or client.workload_identity is not None:
        raise ConfigError(
            "ask_many_sync cannot rebuild a client that authenticates through a provider "
            "or a workload identity: pass an openai.AsyncOpenAI made with the same arguments"
        )
    key_provider: Callable[[], str] | None = getattr(client, "_api_key_provider", None)
    api_key: str | Callable[[], Awaitable[str]] | None = client.api_key
    if key_provider is not None:

        async def refreshed_key() -> str:
            return key_provider()

        api_key = refreshed_key
    return openai.AsyncOpenAI(
        api_key=api_key,
        admin_api_key=client.admin_api_key,
        organization=client.organization,
        project=client.project,
        webhook_secret=client.webhook_secret,
        base_url=client.base_url,
        websocket_base_url=client.websocket_base_url,
        timeout=client.timeout,
        max_retries=client.max_retries,
        default_headers=client._custom_headers,
        default_query=client._custom_query,
    )


def refuse_own_loop_endpoint(client: object) -> None:
    """Raise :class:`LoopDeadlockError` if the event loop running in this thread listens
    on the address ``client``'s base URL points at: blocking it for the call would
    leave every request unanswered."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop here: asyncio.run, nothing blocked
    base_url = getattr(client, "base_url", None)
    if base_url is None:
        return
    parsed = urlsplit(str(base_url))
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:
        return
    listening = [host for host, p in _listening(loop) if p == port]
    if not listening or not _same_host(parsed.hostname or "", port, listening):
        return
    raise LoopDeadlockError(
        f"ask_many_sync was called from inside the running event loop that serves its "
        f"endpoint ({base_url}): it would block that loop until the call ends, so no "
        "request could ever be answered. In a notebook cell, use "
        "`answers = await fanout.ask_many(...)` instead, or serve the endpoint from "
        "another thread or process"
    )


def _listening(loop: asyncio.AbstractEventLoop) -> list[tuple[str, int]]:
    """The (host, port) of every listening TCP socket ``loop`` watches (a server it
    runs); empty for a loop that keeps no selector (uvloop, Windows' proactor)."""
    selector = getattr(loop, "_selector", None)
    get_map = getattr(selector, "get_map", None)
    if get_map is None:
        return []
    found = []
    for key in list(get_map().values()):
        try:
            fd = key.fileobj if isinstance(key.fileobj, int) else key.fileobj.fileno()
            # A duplicate of the descriptor, so that closing it leaves the loop's alone.
            with socket.socket(fileno=os.dup(fd)) as sock:
                if sock.type != socket.SOCK_STREAM or sock.family not in (
                    socket.AF_INET,
                    socket.AF_INET6,
                ):
                    continue
                try:
                    sock.getpeername()
                    continue  # a connection, not a server
                except OSError:
                    pass
                host, port = sock.getsockname()[:2]
                found.append((str(host), int(port)))
        except (OSError, ValueError, AttributeError):
            continue
    return found


def _same_host(host: str, port: int, listening: list[str]) -> bool:
    """Does ``host`` name one of the ``listening`` addresses (a wildcard one: any)?"""
    if any(ipaddress.ip_address(a).is_unspecified for a in listening if _is_ip(a)):
        return True
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return False
    addresses = {str(info[4][0]) for info in infos}
    return bool(addresses & set(listening))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def run_to_end(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to its end from synchronous code: on this thread
    when no loop runs here, else on a worker thread with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    return _on_worker_thread(make)


def _on_worker_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    box: dict[str, Any] = {}
    started = threading.Event()

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await make()

    def work() -> None:
        try:
            box["result"] = asyncio.run(main())
        except BaseException as exc:  # handed to the waiting thread, raised there
            box["error"] = exc
        finally:
            started.set()

    worker = threading.Thread(target=work, name="fanout-ask-many-sync", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:  # interrupted (KeyboardInterrupt): cancel the call, let it end
        started.wait()
        if "task" in box:
            with contextlib.suppress(RuntimeError):  # the loop closed: the call ended meanwhile
                box["loop"].call_soon_threadsafe(box["task"].cancel)
        worker.join()
        raise
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result
