"""The façade: ``Fanout``, ``ask_many`` and ``plan``.

A ``Fanout`` holds what its calls share (the client, the limits and the transport
that enforces them, what it learned of the endpoint, the defaults) and hands each
call to the runner (``dispatch.drive``), which reads the questions through intake, has
the call's ``Replanner`` plan them, and sends each group through execution and the
transport; the answers come back here and ``results.assemble`` puts them in order
(see docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Awaitable,
    Callable,
    Iterable,
    Sequence,
)
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import openai

from .. import telemetry as telemetry
from ..cache import Cache, CacheSetting, coerce_cache
from ..core import clock
from ..core.config import Limits, Policy, Retry
from ..core.endpoints import Endpoint
from ..core.exceptions import ConfigError
from ..core.logs import register_secret
from ..core.models import Answer, Answers, Question
from ..core.money import PricingSetting
from ..core.notgiven import NOT_GIVEN, NotGiven
from ..core.plans import Plan
from ..endpoint.memory import EndpointMemory, MemorySetting
from ..endpoint.model import EndpointModel
from ..limits._local import RateLimiter
from .caching import call_cache
from .call import (
    CALL_OPTIONS,
    CallOptions,
    CallStats,
    OnAnswer,
    OnError,
    check_api,
    check_create_kwargs,
    check_on_error,
    resolve_options,
)
from .dispatch import drive
from .estimates import estimate_costs
from .intake import (
    Job,
    QuestionLike,
    check_container,
    dedupe_key,
    params_for,
    to_question,
)
from .learning import Learner
from .pool import Pool, PoolCall, RunChunk, Seat
from .replanning import commit_plan, open_plan, plan_to_price
from .responses import chat_names, check_responses_kwargs
from .results import aborted, assemble
from .spending import (
    Pricer,
    SpendCap,
    call_caps,
    check_max_cost,
    check_pricing,
)
from .transport import Transport

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["Fanout", "ask_many", "plan"]

T = TypeVar("T")


class Fanout:
    """Fans questions out over one ``AsyncOpenAI`` client, sharing limits across calls.

    ::

        fo = fanout.Fanout(client, model="gpt-4o-mini", limits=fanout.Limits(rpm=500))
        answers = await fo.ask_many(["What is X?", "Explain Y."])

    Every call on one ``Fanout`` shares its concurrency cap and its rate limits,
    however many tasks use it at once. The user's client is never changed: fanout
    works on ``client.with_options(max_retries=0)`` (a copy sharing its connection
    pool), because fanout's retry layer is the only one.

    What it learns of the endpoint is saved for the next ``Fanout`` of the same base
    URL and model, in this process or another (``memory``: see docs/policy.md).

    Several endpoints of one model (replicas, a fallback, two providers)::

        fo = fanout.Fanout(endpoints=[fanout.Endpoint(base_url=A), fanout.Endpoint(base_url=B)],
                           model="llama-3.1-8b")

    each learned and limited on its own (``fo.member(name)``), a call's questions placed
    where they are answered soonest, an endpoint that fails cooled down and its questions
    sent elsewhere (see docs/endpoints.md); ``limits`` and ``pricing`` are then the
    defaults of the endpoints that give none. ``await fo.aclose()`` closes the clients
    made for ``base_url=`` endpoints.
    """

    def __init__(
        self,
        client: AsyncOpenAI | None = None,
        *,
        endpoints: Sequence[Endpoint] | None = None,
        model: str | None = None,
        system: str | None = None,
        limits: Limits | None = None,
        retry: Retry | None = None,
        policy: Policy | str = "auto",
        on_error: OnError = "raise",
        limiter: RateLimiter | None = None,
        endpoint: EndpointModel | None = None,
        memory: MemorySetting = None,
        api: str = "chat",
        pricing: PricingSetting = None,
        max_cost: float | Decimal | None = None,
        cache: CacheSetting = None,
        **create_kwargs: Any,
    ) -> None:
        self._pool: Pool | None = None
        self._own_clients: list[AsyncOpenAI] = []  # made for an Endpoint(base_url=...)
        self._members: tuple[Fanout, ...] = tuple[Fanout, ...]()
        self.endpoints: tuple[Endpoint, ...] = ()
        """The endpoints of a ``Fanout(endpoints=[...])``, as given (empty with one client)."""
        if endpoints is not None:
            if client is not None:
                raise ConfigError("Fanout takes a client or endpoints=[...], not both")
            if limiter is not None or endpoint is not None:
                raise ConfigError(
                    "limiter= and endpoint= belong to one endpoint: with endpoints=[...], "
                    "give each Endpoint its limits"
                )
            client = self._open_pool(
                _check_endpoints(endpoints),
                model=model,
                system=system,
                limits=limits,
                retry=retry,
                policy=policy,
                on_error=on_error,
                memory=memory,
                api=api,
                pricing=pricing,
                cache=cache,
                create_kwargs=create_kwargs,
            )
        elif client is None:
            raise ConfigError("Fanout needs a client (an openai.AsyncOpenAI) or endpoints=[...]")
        _check_client(client)
        check_api(api)
        _check_settings(limits=(limits, Limits), retry=(retry, Retry))
        check_on_error(on_error)
        create_kwargs = chat_names(create_kwargs, api)
        check_create_kwargs(create_kwargs)
        self.client = client
        register_secret(getattr(client, "api_key", None))
        self.limits = limits or Limits()
        self.retry = retry or Retry()
        self.model = model
        self.system = system
        self.policy = Policy.coerce(policy)
        self.on_error: OnError = on_error
        self.create_kwargs = dict(create_kwargs)
        self.api = api
        """The API every call's requests go through unless it says otherwise: ``"chat"``
        (Chat Completions, the default) or ``"responses"`` (``client.responses.create``)."""
        if api == "responses":
            check_responses_kwargs(self.create_kwargs)
        self._learner = Learner(endpoint)
        self._transport = Transport(client, self.limits, limiter=limiter, learner=self._learner)
        self._memory = EndpointMemory(memory, str(client.base_url))
        self.pricer = Pricer(check_pricing(pricing), str(client.base_url))
        """Prices this ``Fanout``'s answers: ``pricing``, then the price library."""
        cap = check_max_cost(max_cost)
        self.spend_cap = None if cap is None else SpendCap(cap)
        """The spend cap of every call on this ``Fanout`` together (``max_cost``): its
        ``spent`` is what their requests cost so far, in US dollars."""
        for member in self._members:
            member.spend_cap = self.spend_cap  # one cap over every endpoint
        self.cache: Cache | None = coerce_cache(cache)
        """The response cache of the calls that do not say otherwise (None: none; see
        docs/cache.md)."""

    def __repr__(self) -> str:
        if self._members:
            names = ", ".join(e.label for e in self.endpoints)
            return f"<Fanout model={self.model!r} endpoints=[{names}]>"
        return f"<Fanout model={self.model!r} limits={self.limits!r}>"

    def _open_pool(
        self,
        endpoints: Sequence[Endpoint],
        *,
        limits: Limits | None,
        pricing: PricingSetting,
        create_kwargs: dict[str, Any],
        **settings: Any,
    ) -> AsyncOpenAI:
        """Several endpoints: one ``Fanout`` of its own for each (its transport, limits,
        learner and memory), and the pool that places questions on them
        (``engine/pool.py``). Returns the first endpoint's client (what ``client``
        says of this ``Fanout``)."""
        members = []
        seats = []
        for config in endpoints:
            client = _client_of(config)
            if client is not config.client:
                self._own_clients.append(client)
            member = Fanout(
                client,
                limits=_limits_of(config, limits),
                pricing=pricing if config.price is None else config.price,
                **settings,
                **create_kwargs,
            )
            members.append(member)
            seats.append(Seat(config=config, transport=member._transport, name=config.label))
        self._members = tuple(members)
        self.endpoints = tuple(endpoints)
        self._pool = Pool(seats)
        return members[0].client

    def _stream_transport(self) -> Transport:
        """The transport one streamed request goes through: this ``Fanout``'s, or on
        several endpoints the one a question would be placed on now (the wrapper)."""
        if self._pool is None:
            return self._transport
        return self._pool.pick().transport

    async def aclose(self) -> None:
        """Close the clients this ``Fanout`` made (for ``Endpoint(base_url=...)``); the
        clients you gave are yours to close."""
        clients, self._own_clients = self._own_clients, []
        for client in clients:
            await client.close()

    def member(self, name: str) -> Fanout:
        """The ``Fanout`` that talks to one endpoint of this one (by its ``label``): what
        it learned (``.endpoint``), its limiter."""
        for config, member in zip(self.endpoints, self._members, strict=True):
            if config.label == name:
                return member
        raise KeyError(name)

    @property
    def limiter(self) -> RateLimiter:
        self._one_endpoint("limiter")
        return self._transport.limiter

    @property
    def endpoint(self) -> EndpointModel:
        """What this ``Fanout`` has learned about the endpoint's timing."""
        self._one_endpoint("endpoint")
        return self._learner.endpoint

    @endpoint.setter
    def endpoint(self, model: EndpointModel) -> None:
        self._learner.endpoint = model

    def _one_endpoint(self, what: str) -> None:
        if self._members:
            raise ConfigError(
                f"a Fanout of several endpoints has a {what} per endpoint: fo.member(name).{what}"
            )

    @property
    def peak_in_flight(self) -> int:
        """Most requests in flight at once on this ``Fanout``, across all calls (on
        several endpoints: the sum of each one's)."""
        if self._members:
            return sum(m.peak_in_flight for m in self._members)
        return self._transport.peak_in_flight

    def plan(
        self,
        questions: Iterable[QuestionLike],
        *,
        model: str | None = None,
        system: str | NotGiven | None = NOT_GIVEN,
        policy: Policy | str | None = None,
        **create_kwargs: Any,
    ) -> Plan:
        """What would ``ask_many`` do with these questions, and why? Sends nothing.

        On several endpoints: how the questions would be placed at first (on what is
        known of each endpoint now), and the plan of the first endpoint given any."""
        check_container(questions)
        if self._pool is not None:
            items = list(questions)
            placed = self._pool.placement([to_question(q, i) for i, q in enumerate(items)])
            share = next((k for k in placed.counts if k), 0)
            first = self._members[placed.counts.index(share)] if share else self._members[0]
            inner = first.plan(
                items[:share] or items, model=model, system=system, policy=policy, **create_kwargs
            )
            return dataclasses.replace(
                inner, reason=f"Placement: {placed.reason}. On the first: {inner.reason}"
            )
        opts = self._options(
            model=model or self.model or "dry-run",
            system=system,
            policy=policy,
            create_kwargs=create_kwargs,
        )
        self._memory.recall_now(self._transport, model or self.model)
        distinct: dict[str, Job] = {}  # one job per request, as a call asks them
        for job in _dry_jobs(questions, opts):
            distinct.setdefault(job.key, job)
        jobs = list(distinct.values())
        opening = open_plan(self._transport, jobs, opts)
        plan = commit_plan(opening)
        if opening.wave:  # the call would first send a wave: say so, plan them all
            plan = dataclasses.replace(
                plan,
                reason=(
                    f"A call would start with a {opening.plan.reason} Until the wave tells: "
                    f"{plan.reason}"
                ),
            )
        priced = plan_to_price(self._transport, jobs, opts, plan)
        estimates = estimate_costs(priced, self.pricer, opts.model, opts.create_kwargs)
        return dataclasses.replace(plan, estimates=estimates)

    async def ask_many(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        *,
        model: str | None = None,
        system: str | NotGiven | None = NOT_GIVEN,
        retry: Retry | None = None,
        policy: Policy | str | None = None,
        on_error: OnError | None = None,
        timeout: float | None = None,
        progress: bool = False,
        on_answer: OnAnswer | None = None,
        dedupe: bool = True,
        api: str | None = None,
        max_cost: float | Decimal | None = None,
        cache: CacheSetting = None,
        **create_kwargs: Any,
    ) -> Answers:
        """Answer every question; the answers come back in input order.

        Raises :class:`PartialFailureError` (carrying every answer) if any
        question failed, unless ``on_error="return"``. ``timeout`` bounds the
        whole call: questions not answered by then fail with
        :class:`QuestionTimeoutError`, and the finished answers are kept (an
        iterator not read to its end by then: see ``Report.input_exhausted``).
        If the input iterator or ``on_answer`` raises, the call stops and raises
        :class:`CallAbortedError` with the answers finished so far.

        ``api="responses"`` sends the requests through the Responses API
        (``client.responses.create``) instead of Chat Completions; the keyword
        arguments keep their Chat Completions names (``max_tokens``,
        ``response_format``, ``tools``), translated (see docs/engine.md).

        ``cache``: this call's response cache instead of the ``Fanout``'s (``False``:
        none); see docs/cache.md.

        An option left out is the ``Fanout``'s; ``system=None`` sends no system prompt
        where the ``Fanout`` has one (see :data:`fanout.NOT_GIVEN`).
        """
        given = dict(
            model=model,
            system=system,
            retry=retry,
            policy=policy,
            on_error=on_error,
            timeout=timeout,
            progress=progress,
            on_answer=on_answer,
            dedupe=dedupe,
            api=api,
        )
        if self._pool is not None:
            if max_cost is not None:
                raise ConfigError(_POOL_MAX_COST)
            return await self._ask_pool(questions, given, cache, create_kwargs)
        opts = self._options(**given, max_cost=max_cost, cache=cache, create_kwargs=create_kwargs)
        check_container(questions)
        known: list[Question] | None = None
        if isinstance(questions, (list, tuple)):
            known = [to_question(item, i) for i, item in enumerate(questions)]
            questions = known
        results: dict[int, Answer] = {}

        async def collect(answer: Answer) -> None:
            results[answer.index] = answer

        start = clock.now()
        stats = CallStats()
        return await self._call(
            "ask_many",
            questions,
            opts,
            stats,
            collect,
            keep_finished=True,
            then=lambda: assemble(results, known, stats, clock.now() - start, opts),
        )

    async def _ask_pool(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        given: dict[str, Any],
        cache: CacheSetting,
        create_kwargs: dict[str, Any],
    ) -> Answers:
        """``ask_many`` on several endpoints (see ``_run_pool``)."""
        opts = self._options(**given, cache=cache, create_kwargs=dict(create_kwargs))
        stats = CallStats()
        start = clock.now()

        async def nothing(answer: Answer) -> None:
            pass

        results, known = await self._run_pool(
            questions, given, cache, create_kwargs, nothing, stats
        )
        return assemble(results, known, stats, clock.now() - start, opts)

    async def _run_pool(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        given: dict[str, Any],
        cache: CacheSetting,
        create_kwargs: dict[str, Any],
        emit: Callable[[Answer], Awaitable[None]],
        stats: CallStats,
    ) -> tuple[dict[int, Answer], list[Question]]:
        """One call on several endpoints: the pool places the questions, each endpoint's
        own ``Fanout`` answers its share (``engine/pool.py``); each answer goes to
        ``emit``, then to the call's ``on_answer``. The input is read whole first."""
        assert self._pool is not None
        opts = self._options(**given, cache=cache, create_kwargs=dict(create_kwargs))
        check_container(questions)
        if isinstance(questions, AsyncIterable):
            items: list[QuestionLike] = [item async for item in questions]
        else:
            items = list(questions)
        known = [to_question(item, i) for i, item in enumerate(items)]
        inner = {**given, "on_error": "return", "on_answer": None, "timeout": None}
        inner["progress"] = False
        runs = [member._chunk_runner(inner, cache, create_kwargs) for member in self._members]
        on_answer = opts.on_answer

        async def deliver(answer: Answer) -> None:
            await emit(answer)
            if on_answer is None:
                return
            try:
                result = on_answer(answer)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                if stats.aborted is None:
                    stats.aborted, stats.aborted_by = exc, "on_answer"

        call = PoolCall(known, runs, deliver, opts.policy.objective, opts.timeout)
        with telemetry.call_span("ask_many", opts.model, opts.policy.mode):
            async with contextlib.AsyncExitStack() as held:
                for member in self._members:  # each endpoint's call, and its memory
                    await held.enter_async_context(member._transport.open_call())
                    await held.enter_async_context(
                        member._memory.around(member._transport, opts.model)
                    )
                results = await self._pool.run(call, stats)
        return results, known

    def _chunk_runner(
        self, given: dict[str, Any], cache: CacheSetting, create_kwargs: dict[str, Any]
    ) -> RunChunk:
        """How the pool asks this ``Fanout`` a chunk of a call (options resolved once)."""
        opts = self._options(**given, cache=cache, create_kwargs=dict(create_kwargs))

        async def run(
            questions: list[Question],
            stats: CallStats,
            deliver: Callable[[Answer], Awaitable[None]],
        ) -> None:
            # The transport's call and the endpoint memory are held around the whole
            # call on several endpoints (``_run_pool``), not around each share.
            with telemetry.call_span("endpoint_share", opts.model, opts.policy.mode) as span:
                async with call_cache(self._transport, opts, stats, opts.cache) as in_cache:
                    await drive(
                        self._transport,
                        questions,
                        opts,
                        stats,
                        span.observe(deliver),
                        keep_finished=True,
                        cache=in_cache,
                    )

        return run

    async def as_completed(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        **overrides: Any,
    ) -> AsyncGenerator[Answer, None]:
        """Yield answers as they finish (each carries its ``.index``).

        Failed questions are yielded too, with ``.error`` set. Memory stays
        bounded by the in-flight window whatever the size of the input.
        Takes the same keyword arguments as :meth:`ask_many`. If the input
        iterator or ``on_answer`` raises, the answers finished before are
        yielded, then :class:`CallAbortedError` is raised.
        """
        check_container(questions)
        given = {k: overrides.pop(k) for k in CALL_OPTIONS if k in overrides}
        stats = CallStats()
        if self._pool is not None:
            cache = given.pop("cache", None)
            if given.pop("max_cost", None) is not None:
                raise ConfigError(_POOL_MAX_COST)
            opts = self._options(**given, cache=cache, create_kwargs=dict(overrides))
        else:
            opts = self._options(**given, create_kwargs=overrides)
        send, receive = anyio.create_memory_object_stream[Answer](max_buffer_size=64)
        if self._pool is not None:

            async def produce() -> None:
                async with send:
                    await self._run_pool(questions, given, cache, overrides, send.send, stats)

        else:

            async def produce() -> None:
                async with send:
                    await self._call(
                        "as_completed",
                        questions,
                        opts,
                        stats,
                        send.send,
                        keep_finished=False,
                        then=lambda: None,
                    )

        start = clock.now()
        task = asyncio.get_running_loop().create_task(produce())
        drained = False
        try:
            async for answer in receive:
                yield answer
            drained = True
            await task  # re-raise a failure of the producer
            if stats.aborted is not None:
                raise aborted({}, stats, clock.now() - start, opts, yielded=True)
        finally:
            if not drained:
                # The consumer left early (break, an exception, aclose): stop the
                # requests before closing the stream they deliver to, and let the
                # consumer's own exception be the one that propagates.
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            receive.close()

    async def _call(
        self,
        kind: str,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        opts: CallOptions,
        stats: CallStats,
        deliver: Callable[[Answer], Awaitable[None]],
        *,
        keep_finished: bool,
        then: Callable[[], T],
    ) -> T:
        """One call's run, whichever way its answers are handed back (``ask_many`` in
        input order, ``as_completed`` as they finish): its span, the transport's call,
        the endpoint memory around it, the response cache, and the engine's ``drive``;
        each answer goes to ``deliver`` as it is finished, and ``then`` (in the span: a
        call whose questions failed is an error span) makes the call's result."""
        with telemetry.call_span(kind, opts.model, opts.policy.mode) as call:
            async with (
                self._transport.open_call(),
                self._memory.around(self._transport, opts.model),
                call_cache(self._transport, opts, stats, opts.cache) as in_cache,
            ):
                emit = call.observe(deliver)
                await drive(
                    self._transport,
                    questions,
                    opts,
                    stats,
                    emit,
                    keep_finished=keep_finished,
                    cache=in_cache,
                )
            return then()

    def _options(
        self,
        *,
        create_kwargs: dict[str, Any],
        max_cost: object = None,
        cache: CacheSetting = None,
        **given: Any,
    ) -> CallOptions:
        """The call's options: those ``given`` (see ``call.resolve_options``) on top of
        this ``Fanout``'s settings, with the spend caps and the response cache."""
        defaults = CallOptions(
            model=self.model or "",
            system=self.system,
            retry=self.retry,
            policy=self.policy,
            on_error=self.on_error,
            timeout=None,
            progress=False,
            on_answer=None,
            dedupe=True,
            create_kwargs=self.create_kwargs,
            api=self.api,
        )
        opts = resolve_options(defaults, given, create_kwargs)
        caps = call_caps(self.spend_cap, max_cost, self.pricer, opts.model)
        cache_used = self.cache if cache is None else coerce_cache(cache)
        return dataclasses.replace(opts, pricer=self.pricer, caps=caps, cache=cache_used)


def _dry_jobs(questions: Iterable[QuestionLike], opts: CallOptions) -> list[Job]:
    """The questions of a dry run (``Fanout.plan``), as the planner sees them."""
    jobs = []
    for index, item in enumerate(questions):
        q = to_question(item, index)
        params = params_for(q, opts)
        key = dedupe_key(q, params, opts, index)
        jobs.append(Job(index=index, question=q, params=params, key=key))
    return jobs


_POOL_MAX_COST = (
    "a call's max_cost= on several endpoints: set max_cost on the Fanout (one cap over "
    "every endpoint)"
)


def _check_endpoints(endpoints: object) -> list[Endpoint]:
    if isinstance(endpoints, (str, bytes)) or not isinstance(endpoints, Iterable):
        raise ConfigError("endpoints= takes a list of fanout.Endpoint")
    given = list(endpoints)
    if not given:
        raise ConfigError("endpoints= is empty: give at least one fanout.Endpoint")
    for item in given:
        if not isinstance(item, Endpoint):
            raise ConfigError(f"endpoints= takes fanout.Endpoint items, not {type(item).__name__}")
    names = [e.label for e in given]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"two endpoints are called {twice[0]!r}: give each its own Endpoint(name=...)"
        )
    return given


def _client_of(config: Endpoint) -> AsyncOpenAI:
    """The endpoint's client: the user's, or one made for its base URL."""
    if config.client is not None:
        return config.client  # type: ignore[no-any-return]
    return openai.AsyncOpenAI(base_url=config.base_url, api_key=config.api_key or "EMPTY")


def _limits_of(config: Endpoint, default: Limits | None) -> Limits:
    """The endpoint's limits (the ``Fanout``'s when it has none); in a shared backend,
    under the default namespace, its budget is its own: the namespace is its name."""
    limits = config.limits or default or Limits()
    if limits.backend is not None and limits.namespace == "default":
        limits = dataclasses.replace(limits, namespace=f"endpoint:{config.label}")
    return limits


def _check_settings(**given: tuple[object, type]) -> None:
    """Each setting given is an instance of its class (``limits=(value, Limits)``)."""
    for name, (value, cls) in given.items():
        if value is not None and not isinstance(value, cls):
            raise ConfigError(f"{name} must be a fanout.{cls.__name__}, not {type(value).__name__}")


def _check_client(client: object) -> None:
    if isinstance(client, openai.OpenAI):
        raise ConfigError(
            f"fanout needs an async client (openai.AsyncOpenAI), not a synchronous "
            f"openai.{type(client).__name__}, whose requests would block the event loop: make "
            "an AsyncOpenAI with the same arguments, or call fanout.ask_many_sync(...), "
            "which takes either, from synchronous code"
        )
    if not hasattr(client, "with_options") or not hasattr(client, "chat"):
        raise ConfigError(f"client must be an openai.AsyncOpenAI, not {type(client).__name__}")


async def ask_many(
    questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
    *,
    client: AsyncOpenAI | None = None,
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
    """Answer many independent questions concurrently; see :meth:`Fanout.ask_many`.

    ::

        answers = await fanout.ask_many(["What is X?", "Explain Y."],
                                        client=AsyncOpenAI(), model="gpt-4o-mini")
        answers.texts

    Each call is a new ``Fanout``: what the last one learned of the endpoint comes
    from its memory (``memory``: see :class:`Fanout`).
    """
    fo = Fanout(
        client,
        endpoints=endpoints,
        model=model,
        system=system,
        limits=limits,
        retry=retry,
        policy=policy,
        on_error=on_error,
        memory=memory,
        api=api,
        pricing=pricing,
        max_cost=max_cost,
        cache=cache,
    )
    try:
        return await fo.ask_many(
            questions,
            timeout=timeout,
            progress=progress,
            on_answer=on_answer,
            dedupe=dedupe,
            **create_kwargs,
        )
    finally:
        await fo.aclose()


def plan(
    questions: Iterable[QuestionLike],
    *,
    model: str = "dry-run",
    system: str | NotGiven | None = NOT_GIVEN,
    policy: Policy | str = "auto",
    limits: Limits | None = None,
    fanout: Fanout | None = None,
    **create_kwargs: Any,
) -> Plan:
    """A dry run: the plan ``ask_many`` would follow for these questions, with every
    candidate's estimated time and tokens and the reason for the choice. Sends
    nothing. Pass ``fanout=`` to plan with what an existing ``Fanout`` has learned
    about its endpoint; otherwise the priors and ``limits`` are used."""
    if fanout is None:
        from openai import AsyncOpenAI

        fanout = Fanout(
            AsyncOpenAI(api_key="dry-run", base_url="http://127.0.0.1:9/v1"),
            model=model,
            limits=limits,
            memory=False,
        )
    return fanout.plan(questions, model=model, system=system, policy=policy, **create_kwargs)
