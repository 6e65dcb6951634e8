"""The local rate limiter: even pacing, bursts only where the server reports room,
unknown limits learned from the first response, token reservations, cool-downs."""

from __future__ import annotations

import anyio
import pytest

from fanout import Limits
from fanout.limits import LocalLimiter, parse_duration
from fanout.limits._local import current_ticket

from .._virtual import on_virtual_time
from ._fake_clock import FakeClock, _limiter, _send_times


def _most_in_any_window(times: list[float], window: float) -> int:
    return max(sum(1 for u in times if t - window < u <= t) for t in times)


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


class TestPacing:
    @pytest.mark.parametrize("window", [0.1, 0.5, 1.0, 3.0, 10.0, 60.0])
    @on_virtual_time
    async def test_no_window_of_any_length_gets_more_than_its_share(self, window: float) -> None:
        """600 rpm configured, nothing reported: sends are spaced so that no window,
        short or long, holds more than its share of 600/min (a whole number of
        requests, as a server polices)."""
        clock = FakeClock()
        times = await _send_times(_limiter(Limits(rpm=600), clock), clock, 700)
        assert _most_in_any_window(times, window) <= round(600 / 60 * window)

    @on_virtual_time
    async def test_the_rate_is_kept_within_a_few_percent(self) -> None:
        """The spacing is only 2 % wider than the rate (room for jitter)."""
        clock = FakeClock()
        times = await _send_times(_limiter(Limits(rpm=1200), clock), clock, 101)
        assert 100 / 20 <= times[-1] - times[0] <= 1.03 * 100 / 20

    @on_virtual_time
    async def test_tokens_are_paced_by_what_each_request_reserves(self) -> None:
        """6,000 tpm: a 500-token request makes the next one wait about 5 s."""
        clock = FakeClock()
        times = await _send_times(_limiter(Limits(tpm=6000), clock), clock, 3, tokens=500)
        assert times[1] - times[0] == pytest.approx(5.0 * 1.02)
        assert times[2] - times[1] == pytest.approx(5.0 * 1.02)

    @on_virtual_time
    async def test_settle_gives_back_what_a_request_did_not_use(self) -> None:
        """A reservation larger than the usage frees the schedule; a refused one frees it all."""
        clock = FakeClock()
        limiter = _limiter(Limits(tpm=6000), clock)
        await limiter.acquire(500)
        limiter.settle(500, 100)  # 400 tokens of slots given back
        start = clock.now
        await limiter.acquire(100)
        assert clock.now - start == pytest.approx(1.0 * 1.02)
        limiter.settle(100, None)
        start = clock.now
        await limiter.acquire(100)
        assert clock.now - start == pytest.approx(0.0, abs=1e-9)


class TestRoomTheServerReports:
    @on_virtual_time
    async def test_remaining_lets_that_many_go_at_once(self) -> None:
        """After a response saying 5 more fit, 5 go without waiting; the next waits its slot."""
        clock = FakeClock()
        limiter = _limiter(Limits(rpm=60), clock)  # one a second
        await limiter.acquire(0)
        limiter.observe({"x-ratelimit-remaining-requests": "5"})
        start = clock.now
        times = await _send_times(limiter, clock, 6)
        assert times[:5] == [start] * 5
        assert times[5] > start + 5

    @on_virtual_time
    async def test_what_went_after_the_reported_request_is_counted(self) -> None:
        """Remaining 4 reported for the first of three sends: 2 more may go at once."""
        clock = FakeClock()
        limiter = _limiter(Limits(rpm=60), clock)
        await limiter.acquire(0)
        first = current_ticket.get()
        await _send_times(limiter, clock, 2)  # paced: 1 s apart
        token = current_ticket.set(first)
        limiter.observe({"x-ratelimit-remaining-requests": "4"})
        current_ticket.reset(token)
        start = clock.now
        times = await _send_times(limiter, clock, 3)
        assert times[:2] == [start, start]
        assert times[2] > start

    @on_virtual_time
    async def test_when_the_reported_reset_comes_the_full_room_is_back(self) -> None:
        """Remaining 9 at first (room for 10), then 0 with a 3 s reset: the schedule
        would send one a second, but at the reset 10 go at once."""
        clock = FakeClock()
        limiter = _limiter(Limits(rpm=60), clock)
        await limiter.acquire(0)
        limiter.observe({"x-ratelimit-remaining-requests": "9", "x-ratelimit-reset-requests": "3s"})
        limiter.attempt_done()
        await _send_times(limiter, clock, 9)  # the room reported: at once
        limiter.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "3s"})
        start = clock.now
        times = await _send_times(limiter, clock, 10)
        assert all(t == times[0] for t in times)
        assert start + 3.0 < times[0] <= start + 3.2  # the reset, and a margin for the way there

    @on_virtual_time
    async def test_a_reset_counts_from_when_its_headers_came_not_from_the_send(self) -> None:
        """The endpoint counts a reset from when it took the request: somewhere between
        the send and the headers' return. Headers back 0.4 s after the send say the
        window is empty 3 s on: the room comes back 3.4 s after the send, not 3.05 s
        (counted from the send, a request that reached the endpoint late still held
        its window and the next burst was refused)."""
        clock = FakeClock()
        limiter = _limiter(Limits(rpm=60), clock)
        await limiter.acquire(0)
        limiter.observe({"x-ratelimit-remaining-requests": "9"})
        limiter.attempt_done()
        await _send_times(limiter, clock, 9)
        sent = clock.now
        clock.now += 0.4
        limiter.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "3s"})
        times = await _send_times(limiter, clock, 10)
        assert all(t == times[0] for t in times)
        assert sent + 3.4 <= times[0] <= sent + 3.5

    @on_virtual_time
    async def test_a_429_forgets_the_room_reported_before(self) -> None:
        """After a cool-down (a 429), no send goes on earlier credit."""
        clock = FakeClock()
        limiter = _limiter(Limits(rpm=60), clock)
        await limiter.acquire(0)
        limiter.observe({"x-ratelimit-remaining-requests": "10"})
        limiter.cool_down(2.0)
        start = clock.now
        times = await _send_times(limiter, clock, 2)
        assert times[0] >= start + 2.0
        assert times[1] - times[0] >= 1.0


class TestUnknownLimits:
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

    @on_virtual_time
    async def test_the_first_request_goes_alone_until_its_headers_come(self) -> None:
        """No limits given: the second acquire waits for the first response's headers,
        then the reported room lets the rest go at once."""
        limiter = LocalLimiter(Limits())
        order: list[str] = []

        async def second() -> None:
            await limiter.acquire(0)
            order.append("second sent")

        await limiter.acquire(0)
        probe = current_ticket.get()
        assert probe is not None and probe.probe
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            await anyio.sleep(0.05)
            order.append("headers")
            limiter.observe({"x-ratelimit-limit-requests": "60",
                             "x-ratelimit-remaining-requests": "29"})  # fmt: skip
        assert order == ["headers", "second sent"]

    @on_virtual_time
    async def test_a_first_request_that_fails_without_headers_lets_the_others_go(self) -> None:
        """A connection error on the first request: attempt_done opens the way."""
        limiter = LocalLimiter(Limits())
        sent = anyio.Event()

        async def second() -> None:
            await limiter.acquire(0)
            sent.set()

        await limiter.acquire(0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            await anyio.sleep(0.05)
            assert not sent.is_set()
            limiter.attempt_done()
        assert sent.is_set()


class TestCoolDown:
    def test_cool_down_only_extends(self) -> None:
        """A shorter cool-down never cuts a longer one short."""
        clock = FakeClock()
        limiter = _limiter(Limits(), clock)
        limiter.cool_down(5)
        limiter.cool_down(1)
        assert limiter.state().paused_for_s == pytest.approx(5)

    @on_virtual_time
    async def test_a_cool_down_holds_acquisitions_back(self) -> None:
        """acquire() waits out a cool-down and reports the wait."""
        limiter = LocalLimiter(Limits(rpm=6000))
        limiter.cool_down(0.2)
        waited = await limiter.acquire(0)
        assert waited >= 0.19


class TestOrder:
    @on_virtual_time
    async def test_requests_waiting_for_room_go_in_the_order_they_came(self) -> None:
        """Twelve requests waiting on a 600 rpm schedule go one by one in the order they
        asked (the planner costs a plan's requests in its order: the longest replies
        first, a merge check's question before the groups started after it); before,
        each waiter slept until the same slot and whichever woke first went."""
        limiter = LocalLimiter(Limits(rpm=600))
        order: list[int] = []

        async def one(n: int) -> None:
            await limiter.acquire(10)
            order.append(n)

        async with anyio.create_task_group() as tg:
            for n in range(12):
                tg.start_soon(one, n)
                await anyio.sleep(0.001)  # each asks after the one before
        assert order == list(range(12))
