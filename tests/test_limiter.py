"""The local rate limiter: smoothing, token reservations, header learning, cool-downs."""

from __future__ import annotations

import time

import pytest

from fanout import Limits
from fanout._limiter import _TokenBucket
from fanout.limits import LocalLimiter, parse_duration


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class TestParseDuration:
    @pytest.mark.parametrize(
        ("text", "seconds"),
        [("1s", 1.0), ("6m0s", 360.0), ("12ms", 0.012), ("1m30.5s", 90.5), ("2h1m", 7260.0),
         ("0.5", 0.5), ("250us", 0.00025)],
    )  # fmt: skip
    def test_go_durations_parse(self, text: str, seconds: float) -> None:
        """Go-style durations and bare seconds give seconds."""
        assert parse_duration(text) == pytest.approx(seconds)

    @pytest.mark.parametrize("text", ["", "soon", "1x", "s1", "1s garbage"])
    def test_garbage_gives_none(self, text: str) -> None:
        """Anything else is not guessed at."""
        assert parse_duration(text) is None


class TestTokenBucket:
    def test_waits_in_proportion_to_the_shortfall(self) -> None:
        """600 tpm over a 1 s window: 5 tokens held (half the window), 10 per second."""
        clock = FakeClock()
        bucket = _TokenBucket(600, 1.0, clock)
        assert bucket.wait_for(5) == 0
        bucket.take(5)
        assert bucket.wait_for(3) == pytest.approx(0.3)
        clock.now += 0.31
        assert bucket.wait_for(3) == 0

    def test_settle_returns_unused_reservation(self) -> None:
        """A reservation larger than the usage is given back; a smaller one is charged."""
        clock = FakeClock()
        limiter = LocalLimiter(Limits(tpm=6000), clock=clock)
        bucket = limiter._tokens
        assert bucket is not None
        bucket.take(40)
        level = bucket._level
        limiter.settle(40, 10)
        assert bucket._level == pytest.approx(level + 30)
        limiter.settle(10, 25)
        assert bucket._level == pytest.approx(level + 15)
        limiter.settle(20, None)  # refused: all of it comes back
        assert bucket._level == pytest.approx(min(bucket.capacity, level + 35))


class TestHeaders:
    def test_limits_are_learned_when_not_given(self) -> None:
        """x-ratelimit-limit-* set rpm and tpm when the user gave none."""
        limiter = LocalLimiter(Limits())
        limiter.observe({"x-ratelimit-limit-requests": "500", "x-ratelimit-limit-tokens": "200000"})
        state = limiter.state()
        assert state.rpm == 500
        assert state.tpm == 200000
        assert state.rpm_learned and state.tpm_learned

    def test_given_limits_win_over_headers(self) -> None:
        """A configured rpm is not replaced by what a server says."""
        limiter = LocalLimiter(Limits(rpm=100))
        limiter.observe({"x-ratelimit-limit-requests": "500"})
        assert limiter.state().rpm == 100
        assert not limiter.state().rpm_learned

    def test_the_servers_policing_window_is_inferred(self) -> None:
        """remaining + reset x rate reveals a 0.3 s bucket behind a per-minute figure."""
        limiter = LocalLimiter(Limits(rpm=600))
        # 600/min = 10/s; 1 (+1 rounding) left and 0.1 s to full: 3 requests → 0.3 s.
        limiter.observe({"x-ratelimit-limit-requests": "600",
                         "x-ratelimit-remaining-requests": "1",
                         "x-ratelimit-reset-requests": "100ms"})  # fmt: skip
        assert limiter.state().window_s == pytest.approx(0.3)
        # A window no smaller than ours changes nothing.
        limiter.observe({"x-ratelimit-limit-requests": "600",
                         "x-ratelimit-remaining-requests": "1",
                         "x-ratelimit-reset-requests": "1s"})  # fmt: skip
        assert limiter.state().window_s == pytest.approx(0.3)

    def test_nothing_remaining_pauses_everyone(self) -> None:
        """remaining-requests 0 pauses the limiter until one request is won back."""
        clock = FakeClock()
        limiter = LocalLimiter(Limits(), clock=clock)
        limiter.observe({"x-ratelimit-limit-requests": "60",
                         "x-ratelimit-remaining-requests": "0",
                         "x-ratelimit-reset-requests": "30s"})  # fmt: skip
        assert limiter.state().paused_for_s == pytest.approx(1.0)

    def test_cool_down_only_extends(self) -> None:
        """A shorter cool-down never cuts a longer one short."""
        clock = FakeClock()
        limiter = LocalLimiter(Limits(), clock=clock)
        limiter.cool_down(5)
        limiter.cool_down(1)
        assert limiter.state().paused_for_s == pytest.approx(5)


async def test_requests_are_never_released_faster_than_the_rate() -> None:
    """30 acquisitions at 1200 rpm (20/s, burst 10) take at least (30 - 10) / 20 s."""
    limiter = LocalLimiter(Limits(rpm=1200))
    start = time.monotonic()
    for _ in range(30):
        await limiter.acquire(0)
    assert time.monotonic() - start >= 0.95 * (30 - 10) / 20


async def test_a_cool_down_holds_acquisitions_back() -> None:
    """acquire() waits out a cool-down and reports the wait."""
    limiter = LocalLimiter(Limits())
    limiter.cool_down(0.2)
    waited = await limiter.acquire(0)
    assert waited >= 0.19
