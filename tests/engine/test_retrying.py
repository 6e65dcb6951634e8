"""Which failures are retried, and how long the retry layer waits."""

from __future__ import annotations

import email.utils
import time

import anyio
import httpx
import httpx2
import openai
import pytest
from tenacity import AsyncRetrying, RetryCallState

from fanout import Retry
from fanout.engine.retrying import (
    RetryBudget,
    _wait_server_or_backoff,
    build_retrying,
    is_quota_error,
    is_retryable,
    retried,
    server_retry_after,
)

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status_error(
    status: int, code: str | None = None, headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers or {}, request=REQUEST)
    body = {"message": "x", "type": "t", "code": code}
    classes: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
        404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
    }  # fmt: skip
    cls = classes.get(
        status, openai.InternalServerError if status >= 500 else openai.APIStatusError
    )
    return cls("x", response=response, body=body)  # type: ignore[arg-type]


class TestClassification:
    @pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
    def test_transient_statuses_are_retried(self, status: int) -> None:
        """408, 409, 429 and 5xx are worth another attempt."""
        assert is_retryable(status_error(status))

    @pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
    def test_client_errors_are_not(self, status: int) -> None:
        """400/401/403/404/422 would fail the same way again."""
        assert not is_retryable(status_error(status))

    def test_insufficient_quota_is_not_a_rate_limit(self) -> None:
        """429 insufficient_quota is never retried."""
        err = status_error(429, code="insufficient_quota")
        assert is_quota_error(err)
        assert not is_retryable(err)
        assert is_retryable(status_error(429, code="rate_limit_exceeded"))

    def test_connection_errors_and_timeouts_are_retried(self) -> None:
        """Resets and timeouts are transient."""
        assert is_retryable(openai.APIConnectionError(request=REQUEST))  # type: ignore[arg-type]
        assert is_retryable(openai.APITimeoutError(request=REQUEST))  # type: ignore[arg-type]

    def test_x_should_retry_header_wins(self) -> None:
        """The server's x-should-retry overrides the status rule."""
        assert not is_retryable(status_error(503, headers={"x-should-retry": "false"}))
        assert is_retryable(status_error(400, headers={"x-should-retry": "true"}))

    def test_programming_errors_are_not_retried(self) -> None:
        """A TypeError is a bug, not a transient failure."""
        assert not is_retryable(TypeError("bad kwarg"))


class TestWaits:
    def test_retry_after_ms_then_seconds_then_date(self) -> None:
        """retry-after-ms wins over retry-after; an HTTP date works too."""
        assert server_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
        assert server_retry_after({"retry-after": "2"}) == 2.0
        future = email.utils.formatdate(time.time() + 30, usegmt=True)
        when = server_retry_after({"retry-after": future})
        assert when is not None and 25 < when <= 31
        assert server_retry_after({}) is None

    def _state(self, exc: BaseException, attempt: int) -> RetryCallState:
        state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
        state.attempt_number = attempt
        state.set_exception((type(exc), exc, None))
        return state

    def test_server_wait_is_honoured_and_capped(self) -> None:
        """A 503 with retry-after: 3 waits 3 s; max_wait caps a larger ask."""
        wait = _wait_server_or_backoff(Retry(max_wait=10), rng=lambda: 1.0)
        assert wait(self._state(status_error(503, headers={"retry-after": "3"}), 1)) == 3.0
        assert wait(self._state(status_error(503, headers={"retry-after": "300"}), 1)) == 10.0

    def test_backoff_grows_exponentially_with_full_jitter(self) -> None:
        """No server wait: the ceiling doubles per attempt, jitter scales it down."""
        wait = _wait_server_or_backoff(Retry(initial_wait=0.5, max_wait=4), rng=lambda: 1.0)
        ceilings = [wait(self._state(status_error(500), n)) for n in (1, 2, 3, 4, 5)]
        assert ceilings == [0.5, 1.0, 2.0, 4.0, 4.0]
        half = _wait_server_or_backoff(Retry(initial_wait=0.5), rng=lambda: 0.5)
        assert half(self._state(status_error(500), 2)) == 0.5

    def test_rate_limited_attempts_wait_on_the_shared_cool_down_instead(self) -> None:
        """429: the retry layer adds no wait; the limiter's cool-down holds everyone."""
        wait = _wait_server_or_backoff(Retry(), rng=lambda: 1.0)
        assert wait(self._state(status_error(429, headers={"retry-after": "5"}), 1)) == 0.0

    def test_each_call_s_retry_budget_holds_for_its_own_requests_on_a_shared_budget(
        self,
    ) -> None:
        """Every call of a ``Fanout`` records its attempts in one budget, but the share of
        prompt retries is each call's own ``Retry.budget``: a call with ``budget=0`` backs
        off beside one that retries at once (the last call to send set the ratio for
        all of them, so one call's setting overwrote the other's)."""
        shared = RetryBudget()
        eager = _wait_server_or_backoff(Retry(initial_wait=1.0), rng=lambda: 1.0, budget=shared)
        careful = _wait_server_or_backoff(
            Retry(initial_wait=1.0, budget=0), rng=lambda: 1.0, budget=shared
        )
        failed = self._state(status_error(500), 1)
        assert eager(failed) == 0.05  # a sporadic failure: again at once (with jitter)
        assert careful(failed) == 1.0  # no prompt retries for this call: backoff
        assert eager(failed) == 0.05


@pytest.mark.parametrize(
    "exc",
    [httpx2.ReadError("connection reset mid-body"), httpx2.RemoteProtocolError("peer closed"),
     httpx2.DecodingError("Error -3 while decompressing data")],
)  # fmt: skip
def test_an_error_while_reading_a_body_is_retried(exc: Exception) -> None:
    """The SDK wraps errors of sending a request, not of reading its body: a reset
    mid-body or a body that does not decompress is a connection error all the same."""
    assert is_retryable(exc)


def test_an_error_of_the_request_itself_is_not_retried() -> None:
    """An invalid URL (a bug of the caller's) is no connection error."""
    assert not is_retryable(httpx2.UnsupportedProtocol("no scheme"))


class TestRetried:
    """``retried`` makes the first attempt before tenacity's controller exists, and
    hands a failure to it as attempt 1: the retries are tenacity's, as before."""

    @staticmethod
    def _run(
        outcomes: list[BaseException | str], retry: Retry, budget: RetryBudget | None = None
    ) -> tuple[object, list[float], int]:
        """Attempts that fail or answer in turn; the waits asked for; attempts made."""
        waits: list[float] = []
        made = 0

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        async def attempt() -> str:
            nonlocal made
            outcome = outcomes[made]
            made += 1
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

        async def main() -> object:
            try:
                return await retried(
                    attempt,
                    lambda: build_retrying(retry, sleep=sleep, rng=lambda: 1.0, budget=budget),
                )
            except Exception as exc:
                return exc

        return anyio.run(main), waits, made

    def test_an_answer_at_the_first_attempt_never_builds_the_controller(self) -> None:
        """The common case costs one call: the controller's factory is not called."""

        def no_controller() -> AsyncRetrying:
            raise AssertionError("built a retry controller for a first-attempt answer")

        async def attempt() -> str:
            return "ok"

        assert anyio.run(retried, attempt, no_controller) == "ok"

    def test_a_failed_first_attempt_is_retried_after_the_server_s_wait(self) -> None:
        """A 503 with retry-after: 3, then an answer: one wait of 3 s, two attempts."""
        busy = status_error(503, headers={"retry-after": "3"})
        result, waits, made = self._run([busy, "ok"], Retry(max_wait=10, budget=0))
        assert (result, waits, made) == ("ok", [3.0], 2)

    def test_the_failed_first_attempt_counts_toward_max_attempts(self) -> None:
        """``max_attempts=3`` makes three attempts in all, the first included, then
        raises the last failure; the waits back off from ``initial_wait``."""
        failures: list[BaseException | str] = [status_error(500) for _ in range(4)]
        result, waits, made = self._run(failures, Retry(max_attempts=3, initial_wait=0.5, budget=0))
        assert made == 3 and waits == [0.5, 1.0]
        assert result is failures[2]

    def test_a_failure_not_worth_retrying_is_raised_at_once(self) -> None:
        """A 400 at the first attempt: raised, no wait, no second attempt."""
        bad = status_error(400)
        result, waits, made = self._run([bad, "never"], Retry())
        assert (result, waits, made) == (bad, [], 1)

    def test_max_elapsed_counts_the_time_of_the_first_attempt(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``max_elapsed`` runs from the first attempt's start, though the controller is
        built after it: attempts of 2 s each, waits of 1 s, ``max_elapsed=5``: the second
        attempt ends at 5 s and nothing more is sent (timed from the controller's birth,
        a third would go). The clock is one the test moves: each attempt and each wait
        advances it by its length."""
        now = [100.0]
        monkeypatch.setattr(time, "monotonic", lambda: now[0])
        made = 0

        async def attempt() -> str:
            nonlocal made
            made += 1
            now[0] += 2.0
            raise status_error(500)

        async def sleep(seconds: float) -> None:
            now[0] += seconds

        retry = Retry(max_attempts=10, max_elapsed=5.0, initial_wait=1.0, max_wait=1.0, budget=0)

        async def main() -> object:
            try:
                return await retried(
                    attempt, lambda: build_retrying(retry, sleep=sleep, rng=lambda: 1.0)
                )
            except Exception as exc:
                return exc

        result = anyio.run(main)
        assert isinstance(result, openai.InternalServerError)
        assert made == 2
        assert now[0] == 105.0

    def test_a_call_cancelled_during_the_back_off_sends_no_further_attempt(self) -> None:
        """A 500, then the call is cancelled while its retry waits: the cancellation
        ends it there (the scope catches it), and no second attempt is made."""
        made = 0

        async def attempt() -> str:
            nonlocal made
            made += 1
            raise status_error(500)

        async def main() -> tuple[bool, int]:
            with anyio.CancelScope() as scope:

                async def sleep(seconds: float) -> None:
                    scope.cancel()
                    await anyio.sleep(seconds)

                await retried(attempt, lambda: build_retrying(Retry(budget=0), sleep=sleep))
            return scope.cancelled_caught, made

        assert anyio.run(main) == (True, 1)

    def test_a_first_attempt_cancelled_builds_no_controller(self) -> None:
        """A cancellation is no failure to retry: raised through, the controller never
        built."""

        def no_controller() -> AsyncRetrying:
            raise AssertionError("built a retry controller for a cancelled attempt")

        async def main() -> bool:
            with anyio.CancelScope() as scope:

                async def attempt() -> str:
                    scope.cancel()
                    await anyio.sleep(1)
                    return "never"

                await retried(attempt, no_controller)
            return scope.cancelled_caught

        assert anyio.run(main) is True

    def test_a_sporadic_failure_is_retried_at_once_within_the_budget(self) -> None:
        """With a retry budget and failures sporadic, the retry waits only a jitter (at
        most 0.05 s), not the back-off; once most recent attempts failed (a cluster),
        the same failure backs off from ``initial_wait``."""
        retry = Retry(initial_wait=2.0, max_wait=10.0)
        clustered = RetryBudget()
        for _ in range(10):
            clustered.record(failed=True, retry=False)
        assert self._run([status_error(500), "ok"], retry, RetryBudget()) == ("ok", [0.05], 2)
        assert self._run([status_error(500), "ok"], retry, clustered) == ("ok", [2.0], 2)
