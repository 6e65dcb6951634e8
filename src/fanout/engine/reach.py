"""Whether the endpoint can be reached at all, before it has ever answered.

A call sent to an address where nothing listens (a wrong port, a server not started)
fails to connect on every request. Each question retrying on its own makes a dead URL
cost every question's retries: 40 questions, 240 attempts and 12 s, where a 401 stops
the call after its first answer. So, while the endpoint has never answered (no HTTP
response of any status, in this process's ``Fanout``): the first request that fails to
connect becomes the call's *probe*, and the others hold their next attempt until it is
settled. The probe's retries answered (any status): the others go. The probe gave up
still unable to connect: the others are not sent, and fail with
:class:`UnreachableError` naming it. A probe that ends otherwise (a timeout, another
error, cancelled) lets the others try again, and the next to fail to connect probes.

Only a refused or unresolvable connection counts (the HTTP client's ``ConnectError``),
never a timeout, and only before the endpoint's first answer: a server that answered
and then went away is retried question by question, as any transient failure is.
"""

from __future__ import annotations

import anyio
import openai

from ..core.exceptions import FanoutError

__all__ = ["ReachGate", "UnreachableError", "is_connect_failure"]


class UnreachableError(FanoutError):
    """Not sent: an earlier request of the same call could not connect to the endpoint,
    which has never answered, in all its attempts."""


def is_connect_failure(exc: BaseException) -> bool:
    """``exc`` is the SDK's connection error for a connection that could not be made
    (refused, or the host unknown): not a timeout, not a connection lost mid-reply."""
    if not isinstance(exc, openai.APIConnectionError) or isinstance(exc, openai.APITimeoutError):
        return False
    cause = type(exc.__cause__)
    return cause.__module__.split(".")[0] in ("httpx", "httpx2") and any(
        base.__name__ == "ConnectError" for base in cause.__mro__
    )


class ReachGate:
    """One call's probe of an endpoint that has never answered (see the module
    docstring). ``who`` is any object that stands for one request and its retries."""

    def __init__(self) -> None:
        self._prober: object | None = None
        self._settled: anyio.Event | None = None
        self._failure: BaseException | None = None

    async def enter(self, who: object) -> None:
        """Before an attempt of ``who``: wait while another request probes; raise
        :class:`UnreachableError` if the probe found nothing listening."""
        if self._settled is not None and self._prober is not who:
            await self._settled.wait()
        if self._failure is not None:
            raise UnreachableError(
                "not sent: an earlier request of this call could not connect to the "
                "endpoint in any of its attempts, and it has never answered"
            ) from self._failure

    def failed(self, exc: BaseException, who: object, *, reached: bool) -> None:
        """An attempt of ``who`` failed with ``exc``; ``reached``: the endpoint has
        answered before. The first to fail to connect to an endpoint never reached
        probes it."""
        if not reached and self._prober is None and is_connect_failure(exc):
            self._prober = who
            self._settled = anyio.Event()

    def answered(self) -> None:
        """A response came (any status): nobody needs to wait."""
        self._release()

    def gave_up(self, who: object, exc: BaseException | None) -> None:
        """``who``'s retries ended: with ``exc`` (None: it was cancelled or answered).
        The probe ending in a connection failure fails the call's waiting requests."""
        if self._prober is not who:
            return
        if exc is not None and is_connect_failure(exc):
            self._failure = exc
        self._release()

    def _release(self) -> None:
        if self._settled is not None:
            self._settled.set()
        self._prober = None
        self._settled = None
