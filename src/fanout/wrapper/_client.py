"""``fanout.wrap(client)``: a drop-in client that splits multi-question prompts for you.

The wrapper composes, it never mutates: it keeps the user's client as ``.client``,
forwards every attribute it does not define to it, and answers
``chat.completions.create(...)`` itself. When the last user message holds several
independent questions (``fanout.detect``), it fans them out (or merges them, as the
policy decides) and returns one ordinary ``ChatCompletion`` whose single choice
holds the answers in the user's own numbering. Anything else — one question, a
conversation that ends with the assistant, tools, ``n > 1``, a caller's own
``response_format`` — goes straight through to the wrapped client: one call, the
original response.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar, cast

import openai

from .. import telemetry as telemetry
from ..core.config import Policy
from ..core.exceptions import ConfigError
from ..core.models import Answer, Answers, Question, Usage
from ..detection._detector import Detection
from ..detection._llm import MODEL_BAND_HIGH, choose_detection
from ..engine.caching import CallCache, call_cache
from ..engine.call import CallStats
from ..engine.facade import Fanout
from ..engine.intake import Job, messages_for
from ..engine.spending import reserve_stream, settle_stream
from ._failures import first_answer, first_failed, raise_for_parts
from ._parts import (
    REPORT_FIELD,
    FanoutStream,
    Passed,
    RawResponse,
    StreamEnd,
    finish_of,
    pop_policy,
    raise_failures,
    report_of,
)
from ._responses import Responses

if TYPE_CHECKING:
    # The SDK's response types are built only when a call is fanned out: imported then,
    # not with fanout (an SDK that loads its types lazily keeps ``import fanout`` light).
    from openai import AsyncOpenAI
    from openai.types import CompletionUsage
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["FanoutClient", "FanoutStream", "report_of", "wrap"]

ClientT = TypeVar("ClientT", bound="AsyncOpenAI")

_PASS_THROUGH_PARAMS = frozenset(
    {"n", "tools", "functions", "tool_choice", "function_call", "response_format", "logprobs",
     "top_logprobs", "audio", "modalities", "prediction"}
)  # fmt: skip


def _text_of(message: Mapping[str, Any]) -> str | None:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") == "text" for p in content
    ):
        return "\n".join(str(p.get("text", "")) for p in content)
    return None  # images, audio, ...: not ours to take apart


class _RawCompletions:
    def __init__(self, owner: FanoutClient) -> None:
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.chat.completions.with_raw_response, name)

    async def create(self, **kwargs: Any) -> Any:
        """``chat.completions.with_raw_response.create`` with fan-out (LangChain calls this)."""
        return await self._owner._create(kwargs, raw=True)


class _Completions:
    def __init__(self, owner: FanoutClient) -> None:
        self._owner = owner
        self.with_raw_response = _RawCompletions(owner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.chat.completions, name)

    async def create(self, **kwargs: Any) -> Any:
        """``chat.completions.create`` with fan-out. Takes the SDK's arguments, plus
        ``fanout=`` (a ``Policy`` or mode string, or ``extra_body={"fanout": ...}``),
        which is consumed here and never sent to the API."""
        return await self._owner._create(kwargs)


class _Chat:
    def __init__(self, owner: FanoutClient) -> None:
        self._owner = owner
        self.completions = _Completions(owner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.chat, name)


class _Beta:
    """``wrapped.beta``: the client's own, but for ``chat``, which is fanout's (the SDK's
    ``beta.chat`` is its ``chat``; LangChain streams structured output through it)."""

    def __init__(self, owner: FanoutClient) -> None:
        self._owner = owner

    @property
    def chat(self) -> _Chat:
        return self._owner._fanout_chat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.beta, name)


class FanoutClient:
    """What :func:`wrap` returns: a copy of the user's client — an instance of its own
    class (``AsyncOpenAI``, ``AsyncAzureOpenAI``, ...) and of this one — whose
    ``chat.completions`` is fanout's.

    Being a real instance of the client's class, it passes the ``isinstance``
    checks of the libraries people put on their client (instructor, LangChain's
    ``ChatOpenAI(async_client=wrapped.chat.completions)``). ``.client`` is the
    user's client, never changed; every call fanout does not take apart goes to it.
    ``with_options()`` / ``copy()`` return a wrapped copy that shares this one's
    limits and what it learned of the endpoint.
    """

    client: AsyncOpenAI
    fanout: Fanout
    detector: str
    min_confidence: float
    llm_below: float
    _fanout_config: dict[str, Any]

    def _fanout_setup(
        self,
        client: AsyncOpenAI,
        *,
        detector: str = "rules",
        min_confidence: float = 0.6,
        llm_below: float = MODEL_BAND_HIGH,
        **config: Any,
    ) -> None:
        if detector not in ("rules", "llm"):
            raise ConfigError(f"detector must be 'rules' or 'llm', got {detector!r}")
        self._fanout_config = {
            "detector": detector,
            "min_confidence": min_confidence,
            "llm_below": llm_below,
            **config,
        }
        self.client = client
        # With endpoints=[...], the prompts fanned out go to them; a call passed through
        # (one question, another API) goes to ``client`` as it would unwrapped.
        self.fanout = Fanout(**config) if config.get("endpoints") else Fanout(client, **config)
        self.detector = detector
        self.min_confidence = min_confidence
        self.llm_below = llm_below
        self._fanout_chat = _Chat(self)

    @property
    def chat(self) -> Any:
        return self._fanout_chat

    @property
    def beta(self) -> Any:
        return _Beta(self)

    @property
    def responses(self) -> Any:
        return Responses(self)

    def copy(self, **options: Any) -> Any:
        """A wrapped copy of ``.client.copy(**options)``, sharing this wrapper's limits
        and endpoint model."""
        if self.fanout.endpoints:  # several endpoints: the copy shares this Fanout
            config = {k: v for k, v in self._fanout_config.items() if k != "endpoints"}
            copied: Any = wrap(self.client.copy(**options), **config)
            copied.fanout = self.fanout
            return copied
        config = {
            **self._fanout_config,
            "limiter": self.fanout.limiter,
            "endpoint": self.fanout.endpoint,
        }
        return wrap(self.client.copy(**options), **config)

    with_options = copy

    def __repr__(self) -> str:
        return f"<fanout-wrapped {self.client!r}>"

    # --- deciding ---------------------------------------------------------------------
    async def _plan_split(self, kwargs: Mapping[str, Any]) -> tuple[Detection, list[Any]] | None:
        """The detection and the conversation before the last message, or None to
        pass the call straight through."""
        if _PASS_THROUGH_PARAMS & kwargs.keys() or (kwargs.get("n") or 1) != 1:
            return None
        if not kwargs.get("model"):
            return None  # the SDK says what is missing, split or not (it was a KeyError)
        messages = list(kwargs.get("messages") or [])
        if (
            not messages
            or not isinstance(messages[-1], Mapping)
            or messages[-1].get("role") != "user"
        ):
            return None
        text = _text_of(messages[-1])
        if text is None:
            return None
        detection = await choose_detection(
            text,
            self.fanout,
            detector=self.detector,
            model=kwargs.get("model"),
            llm_below=self.llm_below,
        )
        if not detection.independent or detection.confidence < self.min_confidence:
            return None
        return detection, messages[:-1]

    # --- the call -----------------------------------------------------------------------
    async def _create(self, kwargs: dict[str, Any], *, raw: bool = False) -> Any:
        with telemetry.call_span("wrap", kwargs.get("model")):
            result = await self._answer(dict(kwargs), raw=raw)
        if isinstance(result, Passed):
            return result.value
        return RawResponse(result) if raw else result

    async def _answer(self, kwargs: dict[str, Any], *, raw: bool) -> Any:
        policy = pop_policy(kwargs)
        split = await self._plan_split(kwargs)
        if split is None:
            completions = self.client.chat.completions
            send = completions.with_raw_response.create if raw else completions.create
            return Passed(await send(**kwargs))
        detection, context = split
        model = kwargs.pop("model")
        kwargs.pop("messages")
        stream = bool(kwargs.pop("stream", False))
        stream_options = kwargs.pop("stream_options", None)
        questions = [
            Question(text=detection.group_prompt(group), context=tuple(dict(m) for m in context))
            for group in detection.groups
        ]
        telemetry.note_parts(len(questions))
        if stream:
            include_usage = bool(
                isinstance(stream_options, Mapping) and stream_options.get("include_usage")
            )
            return self._stream(detection, questions, model, policy, include_usage, kwargs)
        answers = await self.fanout.ask_many(
            questions, model=model, policy=policy, on_error="return", **kwargs
        )
        raise_failures(answers)
        return _completion(detection, answers, model)

    def _stream(
        self,
        detection: Detection,
        questions: list[Question],
        model: str,
        policy: Policy | None,
        include_usage: bool,
        kwargs: dict[str, Any],
    ) -> FanoutStream:
        from openai.types import CompletionUsage
        from openai.types.chat import ChatCompletionChunk
        from openai.types.chat.chat_completion_chunk import Choice as ChunkChoice
        from openai.types.chat.chat_completion_chunk import ChoiceDelta

        completion_id = f"chatcmpl-fanout-{uuid.uuid4().hex[:20]}"
        created = int(time.time())

        def chunk(
            content: str | None, finish: str | None = None, usage: CompletionUsage | None = None
        ) -> ChatCompletionChunk:
            choices = (
                []
                if usage is not None
                else [
                    ChunkChoice(
                        index=0,
                        delta=ChoiceDelta(role="assistant", content=content),
                        finish_reason=cast("Any", finish),
                    )
                ]
            )
            return ChatCompletionChunk(
                id=completion_id,
                object="chat.completion.chunk",
                created=created,
                model=model,
                choices=choices,
                usage=usage,
            )

        async def chunks(
            parts: AsyncIterator[str | StreamEnd],
        ) -> AsyncIterator[ChatCompletionChunk]:
            async for part in parts:
                if not isinstance(part, StreamEnd):
                    yield chunk(part)
                    continue
                yield chunk(None, part.finish)
                if include_usage:
                    yield chunk(
                        None,
                        usage=CompletionUsage(
                            prompt_tokens=part.prompt_tokens,
                            completion_tokens=part.completion_tokens,
                            total_tokens=part.prompt_tokens + part.completion_tokens,
                        ),
                    )

        return self.stream_parts(detection, questions, model, policy, kwargs, chunks)

    def stream_parts(
        self,
        detection: Detection,
        questions: list[Question],
        model: str,
        policy: Policy | None,
        kwargs: dict[str, Any],
        render: Callable[[AsyncIterator[str | StreamEnd]], AsyncIterator[Any]],
        *,
        api: str = "chat",
    ) -> FanoutStream:
        """The parts' answers as one stream, whatever the API: ``render`` turns the text
        pieces (the first part's live, then each next part whole, under the user's own
        markers) and the closing :class:`StreamEnd` into the API's chunks or events."""
        parts = _PartStream(self.fanout, detection, questions, model, policy, kwargs, api)
        pieces = parts.pieces()

        async def rendered() -> AsyncIterator[Any]:
            async with contextlib.aclosing(pieces):
                async for item in render(pieces):
                    yield item

        iterator = telemetry.follow(rendered())

        async def close() -> None:
            with contextlib.suppress(Exception):
                await iterator.aclose()  # type: ignore[attr-defined]
            await parts.stop()

        return FanoutStream(iterator, close)


def _completion(detection: Detection, answers: Answers, model: str) -> ChatCompletion:
    from openai.types import CompletionUsage
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice
    from openai.types.completion_usage import PromptTokensDetails

    texts = [a.text or "" for a in answers]
    finish = finish_of(a.finish_reason for a in answers)
    report = answers.report
    completion = ChatCompletion(
        id=f"chatcmpl-fanout-{uuid.uuid4().hex[:20]}",
        object="chat.completion",
        created=int(time.time()),
        model=model,
        choices=[
            Choice(
                index=0,
                finish_reason=cast("Any", finish),
                message=ChatCompletionMessage(role="assistant", content=detection.layout(texts)),
            )
        ],
        usage=CompletionUsage(
            prompt_tokens=report.prompt_tokens,
            completion_tokens=report.completion_tokens,
            total_tokens=report.total_tokens,
            prompt_tokens_details=PromptTokensDetails(cached_tokens=report.cached_prompt_tokens),
        ),
    )
    # The SDK's models keep extra fields: the report travels with the completion.
    setattr(completion, REPORT_FIELD, report)
    return completion


_WRAPPED_CLASSES: dict[type, type] = {}
_OVERRIDES = ("chat", "beta", "responses", "copy", "with_options", "__repr__")


def _wrapped_class(base: type) -> type:
    """``base`` with :class:`FanoutClient` in front (one class per client class)."""
    if issubclass(base, FanoutClient):
        return base
    cls = _WRAPPED_CLASSES.get(base)
    if cls is None:
        # The client's class first (an instance can only take on a class of its own
        # layout), with fanout's members put in front of the client's by name.
        members = {name: FanoutClient.__dict__[name] for name in _OVERRIDES}
        cls = type(
            f"Fanout{base.__name__}",
            (base, FanoutClient),
            {"__module__": __name__, "__slots__": (), **members},
        )
        _WRAPPED_CLASSES[base] = cls
    return cls


def wrap(client: ClientT, **config: Any) -> ClientT:
    """Wrap an ``AsyncOpenAI`` client so multi-question prompts are fanned out.

    ``config`` is what :class:`Fanout` takes (``limits``, ``retry``, ``policy``,
    ...), plus ``min_confidence`` (0.6): below it a detection is not trusted and the
    call passes through; and ``detector``: ``"rules"`` (default, no model call) or
    ``"llm"``: the rules decide, and a prompt they are unsure of (confidence from 0.5
    to below ``llm_below``, 0.8) costs one structured call more, asking the model for a
    JSON decomposition, used only if it validates against the prompt (docs/wrap.md
    gives what it costs and gains).

    The result is a copy of ``client`` (sharing its connection pool), an instance of
    the client's own class and of :class:`FanoutClient`: ``isinstance(wrapped,
    AsyncOpenAI)`` holds, so instructor and LangChain accept it. The user's client is
    never changed; it stays available as ``wrapped.client``.
    Per call, pass ``extra_body={"fanout": "split"}`` (type-checks) or
    ``fanout="split"``; either is removed before the request is sent.
    """
    if isinstance(client, FanoutClient):
        client = client.client  # wrapping twice wraps the user's client once
    if isinstance(client, openai.OpenAI):
        raise ConfigError(
            f"wrap needs an openai.AsyncOpenAI, not a synchronous openai.{type(client).__name__}: "
            "a wrapped client asks a prompt's questions concurrently, on an event loop, and "
            "fanout has no synchronous wrapper. Make an AsyncOpenAI with the same arguments and "
            "await its calls; or, from synchronous code, split the prompt yourself: "
            "d = fanout.detect(prompt); answers = fanout.ask_many_sync([d.group_prompt(g) for g "
            "in d.groups], client=client, model=...); text = d.layout(answers.texts)"
        )
    if not hasattr(client, "with_options") or not hasattr(client, "chat"):
        raise ConfigError(f"wrap needs an openai.AsyncOpenAI, not {type(client).__name__}")
    wrapped = client.with_options()  # a copy: same class, same settings, same pool
    wrapped.__class__ = _wrapped_class(type(client))
    cast("FanoutClient", wrapped)._fanout_setup(client, **config)
    return wrapped


@dataclass
class _Live:
    """What the first part's live stream brought: its text as it went out, whether it
    opened, and what broke it (None: it ended)."""

    shown: list[str] = field(default_factory=list)
    opened: bool = False
    broke: Exception | None = None

    @property
    def text(self) -> str:
        return "".join(self.shown)


async def _cached(cache: CallCache | None, job: Job) -> Answer | None:
    """``job``'s answer from the response cache, or None (no cache, or a miss)."""
    hits: list[Answer] = []

    async def take(_job: Job, answer: Answer) -> None:
        hits.append(answer)

    if cache is not None:
        await cache.take_hits([job], take)
    return hits[0] if hits else None


class _PartStream:
    """A split prompt's parts as one stream (``FanoutClient.stream_parts``): the first
    part streamed live, the others asked meanwhile and given whole, in order."""

    def __init__(
        self,
        fo: Fanout,
        detection: Detection,
        questions: list[Question],
        model: str,
        policy: Policy | None,
        kwargs: dict[str, Any],
        api: str,
    ) -> None:
        self.fo = fo
        self.detection = detection
        self.questions = questions
        self.model = model
        self.policy = policy
        self.kwargs = kwargs
        self.api = api
        self.rest: asyncio.Task[Answers] | None = None
        if len(questions) > 1:
            self.rest = asyncio.get_running_loop().create_task(self._ask(questions[1:]))

    def _ask(self, questions: list[Question]) -> Coroutine[Any, Any, Answers]:
        return self.fo.ask_many(
            questions,
            model=self.model,
            policy=self.policy,
            on_error="return",
            api=self.api,
            **self.kwargs,
        )

    def _head(self, i: int) -> str:
        heading = self.detection.heading(i)
        return f"{heading} " if heading else ""

    async def pieces(self) -> AsyncGenerator[str | StreamEnd, None]:
        """The text pieces, then the :class:`StreamEnd`; a part that failed fails the
        stream with every part's answer."""
        try:
            end = StreamEnd()
            params = {
                "model": self.model,
                **self.kwargs,
                "messages": messages_for(self.questions[0], self.fo.system),
            }
            yield self._head(0)
            async with self._cache() as cache:
                # Looked up and kept like every other part: a hit is given whole.
                job = Job(index=0, question=self.questions[0], params=params, key="0")
                first = await _cached(cache, job)
                if first is not None:
                    end.add(first, 0, 0)
                    yield (first.text or "").strip()
                else:
                    live = _Live()
                    streamed = self._stream_first(params, end, live)
                    async with contextlib.aclosing(streamed) as first_part:
                        async for text in first_part:
                            yield text
                    first = self._first_of(live, end, params)
                    if first is not None and cache is not None:
                        await cache.keep(first)
            if first is None:
                # No text came (an empty reply, a refusal, a cut before the first words):
                # the part is asked again whole, judged and retried like every other
                # part; an empty section is no answer.
                again = await self._ask(self.questions[:1])
                first = again[0]
                if first.error is None:
                    end.add(first, again.report.prompt_tokens, again.report.completion_tokens)
                    yield (first.text or "").strip()
            # Then each next answer, in order, as soon as it is there.
            answers = await self.rest if self.rest is not None else None
            raise_for_parts(first, answers)
            for i, answer in enumerate(answers or (), start=1):
                end.add(answer, answer.usage.prompt_tokens, answer.usage.completion_tokens)
                yield f"\n\n{self._head(i)}{(answer.text or '').strip()}"
            yield end
        finally:
            # Read to its end, closed, or dropped: the parts not needed any more stop.
            if self.rest is not None and not self.rest.done():
                self.rest.cancel()

    def _cache(self) -> contextlib.AbstractAsyncContextManager[CallCache | None]:
        """The response cache of the first part's request, as the others' call has it."""
        fo = self.fo
        if fo.cache is None:
            return contextlib.nullcontext(None)  # no options to resolve, no store to open
        opts = fo._options(
            create_kwargs=dict(self.kwargs), model=self.model, policy=self.policy, api=self.api
        )
        return call_cache(fo._transport, opts, CallStats(), opts.cache)

    async def _stream_first(
        self, params: dict[str, Any], end: StreamEnd, live: _Live
    ) -> AsyncGenerator[str, None]:
        """The first part's text as it comes, under the Fanout's spend cap as every
        other request (``spend_on``'s rules); ``live`` and ``end`` learn what came."""
        fo = self.fo
        # Closed with this one, whichever task closes it (its slot goes back at once).
        first_part = fo._stream_transport().stream_chunks(params, fo.retry, api=self.api)
        caps, need = (fo.spend_cap,) if fo.spend_cap else (), Decimal(0)
        try:
            need = await reserve_stream(caps, fo.pricer, params, self.model)
            async with contextlib.aclosing(first_part):
                async for piece in first_part:
                    live.opened = True
                    if piece.usage is not None:
                        end.prompt_tokens += piece.usage.prompt_tokens
                        end.completion_tokens += piece.usage.completion_tokens
                    for choice in piece.choices or ():
                        end.finish = finish_of((end.finish, choice.finish_reason))
                        if choice.delta.content:
                            live.shown.append(choice.delta.content)
                            yield choice.delta.content
        except Exception as exc:  # failed for good, cut (see _first_of), or over the cap
            live.broke = exc
        finally:
            used = Usage(prompt_tokens=end.prompt_tokens, completion_tokens=end.completion_tokens)
            settle_stream(caps, fo.pricer, params, self.model, need, used, opened=live.opened)

    def _first_of(self, live: _Live, end: StreamEnd, params: dict[str, Any]) -> Answer | None:
        """The first part's answer from what its stream brought; None: ask it again."""
        brought = bool(live.text.strip())
        if live.broke is not None and (brought or not live.opened):
            # Cut after its text began (the caller read it: it is not asked again), or
            # never opened (the transport retried it): the part failed.
            return first_failed(
                live.broke,
                self.questions[0],
                params,
                shown=len(live.text),
                base_url=str(self.fo.client.base_url),
            )
        if not brought:
            return None
        return first_answer(
            self.questions[0],
            live.text.strip(),
            end.finish,
            end.prompt_tokens,
            end.completion_tokens,
        )

    async def stop(self) -> None:
        """The stream closed before its end: the other parts stop."""
        if self.rest is not None and not self.rest.done():
            self.rest.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.rest
