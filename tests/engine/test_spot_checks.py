"""Auto's spot checks (engine/spotting.py): what merged groups do after the first merge
check, on endpoints whose merged answers go wrong, or are right only four times in five.

Written as an adversarial review of the first version of the thinning (checks in flight
counted as agreeing, a two-group gate after a disagreement); each failed on it."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
import pytest
from openai import AsyncOpenAI

import fanout
from fanout.core.config import SPOT_CHECK_EVERY
from fanout.engine.spotting import decide
from fanout.sim import answer_for

from .._scripted import response, scripted_server
from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory
from ._merged_prompts import _faithful, _listed, _policy, _shifting


@dataclass
class _Slow:
    """A scripted endpoint that answers after ``delay_s`` and counts what is in flight."""

    base_url: str = ""
    in_flight: int = 0
    merged: int = 0
    # For every request: (merged?, requests in flight when it arrived, itself included)
    arrivals: list[tuple[bool, int]] = field(default_factory=list)


@asynccontextmanager
async def _slow_server(delay_s: float, reply: Any = _shifting) -> AsyncIterator[_Slow]:
    state = _Slow()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        lines = head.split("\r\n")
        fields = {k.lower(): v for k, v in (ln.split(": ", 1) for ln in lines[1:] if ": " in ln)}
        body = json.loads(await reader.readexactly(int(fields.get("content-length", 0))) or b"{}")
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        is_merged = "Answer each of the following" in user
        state.in_flight += 1
        state.arrivals.append((is_merged, state.in_flight))
        try:
            await asyncio.sleep(delay_s)
            content = reply(body)
        except BaseException:
            writer.close()  # cancelled at the server's close: nothing left open
            raise
        finally:
            state.in_flight -= 1
        writer.write(response(content, streamed=bool(body.get("stream"))))
        try:
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    state.base_url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    try:
        yield state
    finally:
        server.close()
        await server.wait_closed()


async def _ask_after_four_agreed(
    questions: list[str], reply: Any, **options: Any
) -> tuple[fanout.Answers, _Slow]:
    """``ask_many`` in groups of 6 (600 rpm, 16 in flight) against a ``_slow_server``
    answering in 3 s with ``reply``, on a Fanout whose endpoint has seen 4 of 4 merged
    answers agree: five more agreeing checks would establish agreement."""
    async with _slow_server(3.0, reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        limits = fanout.Limits(rpm=600, max_concurrency=16)
        fo = fanout.Fanout(client, model="m", limits=limits, memory=False)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        try:
            answers = await fo.ask_many(questions, policy=_policy(max_group_size=6), **options)
        finally:
            await client.close()
    return answers, server


@on_virtual_time
async def test_questions_asked_alone_after_merging_stopped_go_as_the_limits_allow() -> None:
    """A group that starts after the agreement fell under merge_agreement asks its
    questions alone, as the next plan would: as many at once as the limits allow, not
    held back with the merged groups that wait for checks to come back."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(48)]
    async with _slow_server(1.0) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        limits = fanout.Limits(rpm=600, max_concurrency=16)
        fo = fanout.Fanout(client, model="m", limits=limits, memory=False)
        # 4 of 4 agreed: five more would establish agreement, so five checked groups go
        # and the others wait for them. (Groups of 6: smaller ones with a check's request
        # each save too few requests, and the plan, costing the checks, would split.)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=6))
        await client.close()
    assert answers.texts == [answer_for(q, 2) for q in questions]
    checks = answers.report.merge_checks
    alone = [c for c in checks if c.startswith("a group of ") and "asked alone, not merged" in c]
    assert alone, checks  # merging stopped once the first checked pairs came back
    last_merged = max(i for i, (m, _) in enumerate(server.arrivals) if m)
    after = [n for m, n in server.arrivals[last_merged + 1 :] if not m]
    assert max(after) > 4, (
        f"{len(after)} questions asked alone after merging stopped, at most {max(after)} "
        f"in flight (max_concurrency 16, rpm 600 allows 10/s for 1 s answers)"
    )


def _right_first_then_shifting() -> Any:
    """A model whose first two merged replies are right and every later one shifts
    its answers by one (what the checks are there to catch)."""
    merged = 0

    def reply(body: dict[str, Any]) -> str:
        nonlocal merged
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        if "Answer each of the following" not in user:
            return answer_for(user, 2)
        merged += 1
        if merged > 2:
            return _shifting(body)
        listed = [line for line in user.split("\n\n", 1)[1].splitlines() if line.startswith("[")]
        tags = [line[1 : line.index("]")] for line in listed]
        questions = [line[line.index("]") + 2 :] for line in listed]
        answers = [answer_for(q, 2) for q in questions]
        if body.get("response_format"):
            keys = body["response_format"]["json_schema"]["schema"]["required"]
            return json.dumps(dict(zip(keys, answers, strict=True)))
        nonce = tags[0].rsplit("-", 1)[0]
        sections = "".join(
            f"[{t}] {q}\n{a}\n" for t, q, a in zip(tags, questions, answers, strict=True)
        )
        return sections + f"[{nonce}-end]"

    return reply


@on_virtual_time
async def test_no_merged_answer_goes_unchecked_before_agreement_is_established() -> None:
    """A cold call whose first merge check agrees (4 of 4: nothing established) and
    whose later merged replies shift every answer by one: checks still in flight are
    not counted as agreeing, so no group goes unchecked on their account, and every
    answer is its own."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(48)]
    async with scripted_server(_right_first_then_shifting()) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), memory=False)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
        await client.close()
    wrong = [a.index for a in answers if a.text != answer_for(questions[a.index], 2)]
    assert not wrong, (
        f"{len(wrong)} answers belong to another question: {wrong}; "
        f"checks {answers.report.merge_checks}; memory {fo.endpoint.merge_agreement('json')}"
    )


def _four_in_five(body: dict[str, Any]) -> str:
    """A model whose merged answers agree with its split ones four times in five (above
    merge_agreement=0.75): a merged answer to question ``n`` with n % 5 == 4 is wrong."""
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    if "Answer each of the following" not in user:
        return answer_for(user, 2)
    listed = [line for line in user.split("\n\n", 1)[1].splitlines() if line.startswith("[")]
    questions = [line[line.index("]") + 2 :] for line in listed]
    answers = [
        "Wrong answer" if int(q.split("colour ")[1].split("?")[0]) % 5 == 4 else answer_for(q, 2)
        for q in questions
    ]
    keys = body["response_format"]["json_schema"]["schema"]["required"]
    return json.dumps(dict(zip(keys, answers, strict=True)))


@on_virtual_time
async def test_an_endpoint_that_merges_well_enough_is_not_slower_under_auto_than_split() -> None:
    """An endpoint and model whose merged answers agree four times in five (auto keeps
    merging at merge_agreement=0.75) never gets its agreement established here: every
    merged group is checked, and none waits for the others' checks (more would be
    needed than are worth waiting for), so auto takes about split's time, not a round
    trip per two groups. (Groups of 6: with a check's request each, groups of 3 cost
    two requests for three questions, and the plan, costing the checks, splits.)"""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(60)]
    walls: dict[str, float] = {}
    for mode in ("split", "auto"):
        async with _slow_server(2.0, _four_in_five) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="k")
            limits = fanout.Limits(rpm=1200, max_concurrency=32)
            fo = fanout.Fanout(client, model="m", limits=limits, memory=False)
            fo.endpoint.observe_merge_check("json", 40, 32, 0)
            answers = await fo.ask_many(questions, policy=_policy(mode=mode, max_group_size=6))
            await client.close()
        walls[mode] = answers.report.wall_s
        if mode == "auto":
            merged = sum(1 for m, _ in server.arrivals if m)
            assert merged >= 5, (merged, answers.report.plan)  # auto did merge
    assert walls["auto"] < 1.5 * walls["split"], walls


@on_virtual_time
async def test_groups_waiting_for_the_last_checks_go_checked_when_those_disagree() -> None:
    """A record of 13 of 14 (two more agreeing answers would establish agreement): two
    checked groups go, the others wait for them; a model that now shifts its answers
    makes them disagree, and the waiting groups go checked (or alone), never unchecked:
    no answer of another question is delivered."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(24)]
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), memory=False)
        fo.endpoint.observe_merge_check("json", 14, 13, 0)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
        await client.close()
    wrong = [a.index for a in answers if a.text != answer_for(questions[a.index], 2)]
    merged = [m for m in server.user_messages() if "Answer each of the following" in m]
    assert not wrong, (
        f"{len(wrong)} answers belong to another question: {wrong}; {len(merged)} merged "
        f"requests; checks {answers.report.merge_checks}"
    )


class TestTheRule:
    """``spotting.decide``: what one merged group does, from the agreement counted so far
    (compared, agreed, misattributed), with nothing sent (the call's ``Replanner`` applies
    it as each group can be sent)."""

    def test_agreement_under_the_threshold_asks_the_group_alone(self) -> None:
        assert decide((8, 5, 0), 0.75, merged=0, checking=0) == "alone"
        assert decide((3, 0, 0), 0.75, merged=0, checking=0) != "alone"  # too few compared

    def test_established_agreement_checks_one_group_in_four(self) -> None:
        said = [decide((9, 9, 0), 0.75, merged=n, checking=0) for n in range(8)]
        assert said == ["check", "merge", "merge", "merge"] * 2

    def test_a_few_checks_short_the_group_waits_for_those_in_flight(self) -> None:
        """4 of 4 agreed: five more establish it; with five checks out, the next group
        waits for them; with fewer, it is checked too."""
        assert decide((4, 4, 0), 0.75, merged=0, checking=5) == "wait"
        assert decide((4, 4, 0), 0.75, merged=0, checking=4) == "check"

    def test_after_a_misattribution_every_group_is_checked_and_none_waits(self) -> None:
        assert decide((40, 39, 1), 0.75, merged=0, checking=30) == "check"
        assert decide(None, 0.75, merged=0, checking=0) == "check"


class TestThePlannedChecks:
    """``planning.check_layout``: how each merged group of a plan is checked, laid out
    when the plan is made (``Plan.checks``), the same layout the cost model counts."""

    @staticmethod
    def _groups(merged: int) -> list[list[int]]:
        groups = [list(range(6 * g, 6 * g + 6)) for g in range(merged)]
        return [*groups, [6 * merged]]  # and one question alone

    def test_a_cold_call_checks_its_first_group_then_spots_until_established(self) -> None:
        """Nothing known, 0.75: the first group's sample of 4 agreeing leaves 5 more to
        establish agreement (9 at 0.75), so five spot checks, then one group in four is
        a sentinel; the question alone is not checked."""
        from fanout.core.plans import GroupCheck, MergeChecks
        from fanout.engine.planning import check_layout

        checks = MergeChecks(first=True, counts=(0, 0, 0), threshold=0.75)
        layout = check_layout(self._groups(12), checks)
        assert layout == [
            GroupCheck("first", alone=4),
            *[GroupCheck("spot", alone=1)] * 5,
            GroupCheck("sentinel"), GroupCheck("none"), GroupCheck("none"), GroupCheck("none"),
            GroupCheck("sentinel"), GroupCheck("none"),
            None,
        ]  # fmt: skip

    def test_established_agreement_plans_sentinels_only_and_no_checks_plans_none(self) -> None:
        from fanout.core.plans import GroupCheck, MergeChecks
        from fanout.engine.planning import check_layout

        known = MergeChecks(first=False, counts=(9, 9, 0), threshold=0.75)
        kinds = [c.kind if c else None for c in check_layout(self._groups(5), known)]
        assert kinds == ["sentinel", "none", "none", "none", "sentinel", None]
        assert check_layout(self._groups(2), None) == [GroupCheck("none")] * 2 + [None]
        # A call that is one merged group checks about half of it.
        first = MergeChecks(first=True, counts=(0, 0, 0), threshold=0.75)
        assert check_layout([[0, 1, 2, 3, 4]], first) == [GroupCheck("first", alone=3)]

    def test_the_cost_model_counts_the_requests_the_layout_plans(self) -> None:
        """The requests a plan is costed with are its groups plus the questions its
        checks ask alone, the first check's group and sample first."""
        from fanout.core.plans import MergeChecks
        from fanout.engine.planning import _with_checks, check_layout

        groups = self._groups(12)
        checks = MergeChecks(first=True, counts=(0, 0, 0), threshold=0.75)
        requests = _with_checks(groups, checks)
        alone = sum(c.alone for c in check_layout(groups, checks) if c is not None)
        assert len(requests) == len(groups) + alone == 13 + 9
        assert requests[:5] == [groups[0], [2], [3], [4], [5]]  # the first check, its sample
        assert requests[5:8] == [groups[1], [11], groups[2]]  # a spot check's last question

    def test_each_candidate_counts_the_requests_its_checks_add(self) -> None:
        """Cold, three questions: merging them is one request and the first check asks
        two of them alone (``1+2`` in ``fanout plan``); split adds none. The plan's
        ``requests`` counted only the merged request, so merge looked like a third of
        split's requests at the same estimated time."""
        plan = fanout.plan(["a?", "b?", "c?"], limits=fanout.Limits(rpm=3))
        by_label = {c.label: c for c in plan.candidates}
        assert (by_label["merge"].requests, by_label["merge"].check_requests) == (1, 2)
        assert by_label["split"].check_requests == 0
        assert by_label["merge"].as_dict()["check_requests"] == 2

    @on_virtual_time
    async def test_a_cold_call_s_report_says_how_its_groups_are_checked(
        self, sim: SimFactory
    ) -> None:
        """The first plan of a cold auto call lays out its first check, and the runner
        sends that group as the first check: its sample asked alone as the layout says."""
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            qs = [f"Short question {i}?" for i in range(60)]
            limits = fanout.Limits(rpm=600)
            answers = await fanout.ask_many(qs, client=client, model="m", limits=limits,
                                            memory=False)  # fmt: skip
        planned = [r for r in answers.report.revisions if r.plan.checks_planned().get("first")]
        assert planned, [r.as_dict() for r in answers.report.revisions]
        first = next(c for c in planned[0].plan.checks if c is not None and c.kind == "first")
        assert planned[0].as_dict()["checks"]["first"] == 1
        assert answers.report.merge_checks[0].startswith(f"{first.alone} of {first.alone} ")


@on_virtual_time
async def test_groups_that_wait_for_checks_are_sent_meanwhile_and_delivered_after() -> None:
    """4 of 4 agreed: five more agreeing checks would establish agreement, so five
    checked groups go and the others wait for them; what waits is their answers, not
    their requests: the other five groups are sent beside the checks (the rate limit's
    room used, not left idle), and delivered once the checks are back and agree."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(60)]
    answers, server = await _ask_after_four_agreed(questions, _faithful)
    assert answers.texts == [answer_for(q, 2) for q in questions]
    # The five checked groups, their five questions alone, and the five others at once.
    assert max(n for _, n in server.arrivals) == 15, server.arrivals
    # A first wave (3 s), then one round of merged requests: 7.4 s (10.3 s when the five
    # other groups waited for the checks before they were sent).
    assert answers.report.wall_s < 8.5, answers.report.wall_s


@on_virtual_time
async def test_groups_sent_while_their_checks_were_out_are_not_taken_when_those_disagree() -> None:
    """The same, on a model that shifts every merged answer: the five checks disagree,
    and the groups sent beside them deliver none of their merged answers (agreement
    is now too low: their questions are asked alone), as if they had waited."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(60)]
    answers, server = await _ask_after_four_agreed(questions, _shifting)
    assert sum(m for m, _ in server.arrivals) == 10  # all ten groups went merged
    assert answers.texts == [answer_for(q, 2) for q in questions]
    assert all(a.mode == "split" for a in answers)
    alone = [c for c in answers.report.merge_checks if "asked alone, not merged" in c]
    assert len(alone) == 5, answers.report.merge_checks


@on_virtual_time
async def test_a_held_group_s_question_answered_alone_keeps_its_answer_when_the_call_times_out() -> (
    None
):
    """A held group checked after its reply (its last question asked alone then), and
    the call's timeout comes while the answers are being handed over (a slow
    ``on_answer``): a question whose answer alone came back before the timeout gets that
    answer, not a timeout error (as a question of a group checked beside its merged
    request does). The first merged reply is shifted, so agreement is not established
    and the held groups are checked one by one."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(60)]
    merged_seen = itertools.count()
    answered_alone_at: dict[str, float] = {}

    def model(body: dict[str, Any]) -> str:
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        if "Answer each of the following" in user:
            return _shifting(body) if next(merged_seen) == 0 else _faithful(body)
        answered_alone_at[user] = loop_time()
        return _faithful(body)

    async def slow(answer: fanout.Answer) -> None:
        await anyio.sleep(0.4)

    timeout = 10.5
    with pytest.raises(fanout.PartialFailureError) as failed:
        await _ask_after_four_agreed(questions, model, timeout=timeout, on_answer=slow)
    answers = failed.value.answers
    timed_out = [a.index for a in answers if isinstance(a.error, fanout.QuestionTimeoutError)]
    assert timed_out  # the timeout did end the call while answers were handed over
    lost = [i for i in timed_out if answered_alone_at.get(questions[i], timeout) < timeout]
    assert lost == [], f"answered alone before the timeout, yet timed out: {lost}"


class TestHeldGroupsThinning:
    """Held groups decided once agreement is established are thinned by the call's
    count of groups since then, as groups sent then are: one in SPOT_CHECK_EVERY
    checked, never more in a row unchecked, whatever order their replies come back in.
    The replanner is driven alone: a stand-in endpoint model holds the agreement counts
    (compared, agreed, misattributed) that the checks add to as they come back."""

    @staticmethod
    def _decisions(early: set[int], groups: int) -> list[tuple[bool, str]]:
        """(established when decided, how it went) of each held group, in the order
        decided: 14 of 13 agreed (two more checks needed, two in flight, so the groups
        are held); the first check back disagrees, while the replies of the groups in
        ``early`` are back; the other checks agree; the other replies come back after."""
        from types import SimpleNamespace

        from fanout.engine.agreement import established
        from fanout.engine.replanning import Replanner

        counts = [14, 13, 0]

        def known() -> tuple[int, int, int]:
            return counts[0], counts[1], counts[2]

        endpoint = SimpleNamespace(merge_agreement=lambda fmt: known())
        learner = SimpleNamespace(endpoint=endpoint, merge_format=lambda policy: "json")
        options = SimpleNamespace(policy=fanout.Policy(mode="auto"))
        replan = Replanner(cast(Any, SimpleNamespace(learner=learner)), cast(Any, options),
                           cast(Any, SimpleNamespace()))  # fmt: skip
        group: Any = [SimpleNamespace(structured=None)]
        decided: list[tuple[bool, str]] = []

        async def main() -> None:
            late = anyio.Event()
            while decide(known(), 0.75, merged=0, checking=replan._checking) == "check":
                await replan.send_for(group)

            async def held(i: int) -> None:
                send = await replan.send_for(group)
                assert send.how == "held"
                if i not in early:
                    await late.wait()
                send = await replan.after_held(send, group)
                decided.append((established(known(), 0.75), send.how))
                if send.how == "checked":
                    counts[0] += 1
                    counts[1] += 1
                    replan.spot_check_back()

            async def settle() -> None:
                for _ in range(10):
                    await anyio.lowlevel.checkpoint()

            async with anyio.create_task_group() as tg:
                for i in range(1, groups + 1):
                    tg.start_soon(held, i)
                await settle()
                counts[0] += 1  # the first check back: disagrees
                replan.spot_check_back()
                await settle()
                while replan._checking > 0:  # the others back, agreeing
                    counts[0] += 1
                    counts[1] += 1
                    replan.spot_check_back()
                    await settle()
                late.set()

        anyio.run(main)
        return decided

    @pytest.mark.parametrize(
        ("early", "groups"), [({1, 5, 9, 13, 17, 21}, 24), ({1, 2, 3, 4, 5, 9}, 12)]
    )
    def test_held_groups_decided_once_established_are_checked_one_in_four(
        self, early: set[int], groups: int
    ) -> None:
        """(Seen failing when held groups were thinned by the order they were sent: 18
        established groups in a row delivered unchecked.)"""
        after = [how for est, how in self._decisions(early, groups) if est and how != "alone"]
        assert after, "no held group was decided after agreement was established"
        assert after[0] == "checked"  # the first group since then is checked, as one sent then
        run = 0
        for how in after:
            run = run + 1 if how == "merged" else 0
            assert run < SPOT_CHECK_EVERY, after


@on_virtual_time
async def test_a_held_group_whose_riding_canary_disagrees_keeps_its_merged_answers_out() -> None:
    """4 of 4 agreed; the five checks agree and establish agreement; then the model
    shifts every other merged reply. The held groups thinned out (not due a check) had
    a canary riding them: it is compared anyway, for no request, and a group whose
    canary disagrees delivers none of its merged answers (8 wrong ones were delivered
    when an unused canary's evidence was ignored). Every answer delivered is right."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(60)]
    merged = itertools.count()

    def model(body: dict[str, Any]) -> str:
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        if "Answer each of the following" not in user:
            return _faithful(body)
        n = next(merged)
        return _shifting(body) if n >= 5 and n % 2 == 0 else _faithful(body)

    answers, _ = await _ask_after_four_agreed(questions, model)
    assert answers.texts == [answer_for(q, 2) for q in questions]
    assert any(a.mode == "merged" for a in answers)  # merging went on where it was right
    vetoed = [c for c in answers.report.merge_checks if "0 of 1" in c and "canary" in c]
    assert vetoed, answers.report.merge_checks


@on_virtual_time
async def test_a_held_group_checked_alone_whose_riding_canary_disagrees_keeps_its_merged_answers_out() -> (
    None
):
    """4 of 4 agreed; one of the five checks disagrees, so agreement is not established
    and each held group is checked by its last question asked alone. The model answers
    that question rightly in a merged reply with a canary riding it, but swaps the
    group's first two answers and answers the canary wrongly: the canary's disagreement
    keeps the group's merged answers out (10 wrong ones were delivered when only the
    sample was compared)."""
    questions = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(60)]
    unridden = itertools.count()

    def model(body: dict[str, Any]) -> str:
        listed = _listed(body)
        if len(listed) <= 6:  # alone, or a group with no canary: shifted once, then right
            return _shifting(body) if listed and next(unridden) == 0 else _faithful(body)
        answers = [answer_for(q, 2) for _, q in listed]
        answers[0], answers[1] = answers[1], answers[0]
        answers[-1] = "wrong wrong"
        keys = body["response_format"]["json_schema"]["schema"]["required"]
        return json.dumps(dict(zip(keys, answers, strict=True)))

    answers, server = await _ask_after_four_agreed(questions, model)
    assert sum(m for m, _ in server.arrivals) > 5  # held groups went merged, canaries riding
    assert answers.texts == [answer_for(q, 2) for q in questions]
    vetoed = [
        c for c in answers.report.merge_checks if "the canary riding the group disagreed" in c
    ]
    assert vetoed, answers.report.merge_checks
