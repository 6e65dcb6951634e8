"""The OpenAI-compatible face of the simulator."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import json
import random
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import clock
from ._api import CHAT, RESPONSES, Api, Parsed
from ._batches import BatchStore
from ._config import SimConfig
from ._engine import Engine, Sequence
from ._http import HTTPServer, Request, Responder
from ._limits import Bucket, SlidingWindow, go_duration
from ._prompt import Prompt, definition_tokens, read_prompt
from ._reply import Reply, token_ends
from ._stats import RequestRecord, SimStats
from ._text import count_tokens

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["SimServer", "serve"]

KNOWN_PARAMS = CHAT.known
"""The parameters ``POST /v1/chat/completions`` takes."""


class _KeyLimits:
    def __init__(self, cfg: SimConfig) -> None:
        period = cfg.limit_period_s
        scale = cfg.time_scale
        kind: type[Bucket] | type[SlidingWindow] = (
            SlidingWindow if cfg.limit_policing == "sliding" else Bucket
        )
        reset = cfg.reset_header
        self.requests = (
            kind(cfg.rpm, period_s=period, time_scale=scale, reset=reset)
            if cfg.rpm is not None
            else None
        )
        self.tokens = (
            kind(cfg.tpm, period_s=period, time_scale=scale, reset=reset)
            if cfg.tpm is not None
            else None
        )
        self.spent = 0

    def headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, bucket in (("requests", self.requests), ("tokens", self.tokens)):
            if bucket is not None:
                out[f"x-ratelimit-limit-{name}"] = str(bucket.wall_limit)
                out[f"x-ratelimit-remaining-{name}"] = str(bucket.remaining)
                out[f"x-ratelimit-reset-{name}"] = go_duration(bucket.reset_s)
        return out


def _error(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _bearer(request: Request) -> str:
    """The API key a request carries (``Authorization: Bearer KEY``), or ""."""
    auth = request.headers.get("authorization", "")
    return auth[7:] if auth.lower().startswith("bearer ") else auth


def _auth_error(api_key: str, required: str | None) -> dict[str, Any] | None:
    """The hosted API's 401 body for a key other than ``required``, else None."""
    if required is None or hmac.compare_digest(api_key.encode(), required.encode()):
        return None
    if not api_key:
        return _error(
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            "invalid_request_error",
            None,
        )
    shown = f"{api_key[:3]}{'*' * (len(api_key) - 7)}{api_key[-4:]}" if len(api_key) > 10 else "***"
    return _error(
        f"Incorrect API key provided: {shown}. This simulator accepts only the key it "
        "was started with (SimConfig.api_key, fanout sim --api-key).",
        "invalid_request_error",
        "invalid_api_key",
    )


class _Refused(Exception):
    """A request the simulator answers with an error: its status, body and headers
    (beside the request id)."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


@dataclass(frozen=True)
class _Incoming:
    """A chat or Responses request as read: what its later steps need."""

    payload: dict[str, Any]
    parsed: Parsed
    prompt: Prompt
    """The conversation, as the engine's prefix cache reads it."""
    question: str
    prompt_tokens: int
    keys: _KeyLimits

    @property
    def charge(self) -> int:
        """The tokens the key's limit is charged at admission (the prompt, and the
        most the answers may take)."""
        return self.prompt_tokens + (self.parsed.max_tokens or 0) * self.parsed.n

    @property
    def flex(self) -> bool:
        return self.payload.get("service_tier") == "flex"


class SimServer:
    """A running simulator. Build it with :func:`serve` (in-process) or ``fanout sim``."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config or SimConfig()
        self.stats = SimStats()
        self._engine = Engine(self.config)
        self._http = HTTPServer(self._handle)
        self._keys: dict[str, _KeyLimits] = {}
        self._dice = random.Random(self.config.seed)
        self._count = 0
        self._t0 = clock.now()
        self._hung: set[asyncio.Future[None]] = set()
        self.batches = BatchStore(self.config, self._now)
        """The Files and Batch APIs' state: files, batches, ``submitted`` custom ids."""
        self._flex_dice = random.Random(self.config.seed + 2)

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def base_url(self) -> str:
        """What to give ``AsyncOpenAI(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, port: int = 0) -> None:
        self._t0 = clock.now()
        self._engine.start()
        await self._http.start(port)

    async def stop(self) -> None:
        await self._http.stop()
        await self._engine.stop()

    def reset_stats(self) -> None:
        """Forget what was seen so far (limits and quota keep their state)."""
        self.stats = SimStats()

    # --- plumbing ---------------------------------------------------------------
    def _now(self) -> float:
        return clock.now() - self._t0

    async def _sleep_model(self, seconds: float) -> None:
        if seconds > 0:
            await asyncio.sleep(self.config.scaled(seconds))

    async def _handle(self, request: Request, out: Responder) -> None:
        if request.method == "GET" and request.path == "/v1/models":
            denied = _auth_error(_bearer(request), self.config.api_key)
            await out.send_json(401 if denied else 200, {}, denied or self._models())
            return
        if request.method == "GET" and request.path == "/sim/stats":
            self._sync_engine_stats()
            await out.send_json(200, {}, self.stats.to_dict())
            return
        if request.method == "POST" and request.path == "/v1/chat/completions":
            await self._chat(request, out, CHAT)
            return
        if request.method == "POST" and request.path == "/v1/responses":
            await self._chat(request, out, RESPONSES)
            return
        if request.path.startswith(("/v1/files", "/v1/batches")):
            denied = _auth_error(_bearer(request), self.config.api_key)
            if denied is not None:
                await out.send_json(401, {}, denied)
                return
            await self.batches.handle(request, out)
            return
        # As OpenAI-compatible servers do (vLLM, Ollama, the hosted APIs): the API is
        # under /v1, and a base URL without it is a 404, here as there.
        hint = ""
        if request.path in ("/chat/completions", "/responses", "/models"):
            hint = f": the API is under /v1 (a base URL ending in /v1: {self.base_url})"
        await out.send_json(
            404, {}, _error(f"no route {request.path}{hint}", "invalid_request_error", None)
        )

    def _models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": self.config.model, "object": "model", "created": 0, "owned_by": "fanout-sim"}
            ],
        }

    def _sync_engine_stats(self) -> None:
        self.stats.peak_running = self._engine.peak_running
        self.stats.peak_kv_tokens = self._engine.peak_kv_reserved

    def _pick_fault(self, number: int) -> str | None:
        scheduled = self.config.fault_schedule.get(number)
        if scheduled is not None:
            return scheduled
        roll = self._dice.random()
        acc = 0.0
        for kind, rate in self.config.fault_rates.items():
            acc += rate
            if roll < acc:
                return kind
        return None

    # --- chat completions -------------------------------------------------------------
    async def _chat(self, request: Request, out: Responder, api: Api) -> None:
        self._count += 1
        record = RequestRecord(number=self._count, arrival=self._now(), api=api.name)
        self.stats.requests.append(record)
        self.stats.in_flight += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
        try:
            await self._chat_inner(request, out, record, api)
        finally:
            self.stats.in_flight -= 1
            self._sync_engine_stats()
            if record.status is None:
                record.status = out.status
            if record.finished is None:
                record.finished = self._now()

    async def _chat_inner(
        self, request: Request, out: Responder, record: RequestRecord, api: Api
    ) -> None:
        """A chat or Responses request through its steps: read it, admit it under the
        key's quota and limits, the refusals and faults it may meet, then its answer.
        A step that refuses the request raises :class:`_Refused`, answered here."""
        cfg = self.config
        base_headers = {"x-request-id": f"req_{uuid.uuid4().hex[:16]}"}
        api_key = _bearer(request)
        record.api_key = api_key[:4] + "…" if api_key else ""
        await self._sleep_model(cfg.rtt_s / 2)
        try:
            incoming = self._read(request, api, api_key, record)
            limit_headers = {**base_headers, **self._admit(incoming)}
            fault = await self._before_the_work(incoming, record, limit_headers)
            if fault == "reset":
                record.status = 0
                out.reset()
            elif fault == "hang":
                record.status = 0
                await out.disconnected()  # until the client gives up
                record.disconnected = True
            else:
                await self._answer(out, record, api, incoming, limit_headers, fault)
        except _Refused as refused:
            record.status = refused.status
            record.error_code = refused.body["error"].get("code")
            await self._sleep_model(cfg.rtt_s / 2)
            await out.send_json(refused.status, {**base_headers, **refused.headers}, refused.body)

    def _read(self, request: Request, api: Api, api_key: str, record: RequestRecord) -> _Incoming:
        """The request's key, body and parameters, checked as the API checks them."""
        cfg = self.config
        denied = _auth_error(api_key, cfg.api_key)
        if denied is not None:
            raise _Refused(401, denied)
        try:
            payload = json.loads(request.body or b"null")
        except ValueError:
            raise _Refused(
                400, _error("request body is not valid JSON", "invalid_request_error", None)
            ) from None
        if not isinstance(payload, dict):
            raise _Refused(
                400, _error("request body must be a JSON object", "invalid_request_error", None)
            )
        unknown = sorted(set(payload) - api.known)
        for name in unknown:
            self.stats.unknown_params[name] += 1
        if unknown:
            raise _Refused(
                400,
                _error(
                    f"Unrecognized request argument supplied: {unknown[0]}",
                    "invalid_request_error",
                    "unknown_parameter",
                    unknown[0],
                ),
            )
        parsed = api.read(payload, cfg.supports_response_format)
        if not isinstance(parsed, Parsed):
            raise _Refused(400, parsed)
        record.stream = parsed.stream
        prompt, question, prompt_tokens = read_prompt(parsed.messages)
        prompt_tokens += definition_tokens(payload)
        record.prompt_tokens = prompt_tokens
        keys = self._keys.get(api_key)
        if keys is None:
            keys = self._keys[api_key] = _KeyLimits(cfg)
        return _Incoming(payload, parsed, prompt, question, prompt_tokens, keys)

    def _admit(self, incoming: _Incoming) -> dict[str, str]:
        """Charge the key's quota and rate limits (at admission, as the hosted APIs do);
        return its rate-limit headers."""
        keys = incoming.keys
        # Quota first: a key with no money left gets no rate-limit budget either.
        if self.config.quota_tokens is not None and keys.spent >= self.config.quota_tokens:
            self.stats.quota_exceeded += 1
            raise _Refused(
                429,
                _error(
                    "You exceeded your current quota, please check your plan and billing details.",
                    "insufficient_quota",
                    "insufficient_quota",
                ),
                keys.headers(),
            )
        wait = keys.requests.try_take(1) if keys.requests is not None else 0.0
        if wait == 0 and keys.tokens is not None:
            wait = keys.tokens.try_take(incoming.charge)
            if wait > 0 and keys.requests is not None:
                keys.requests.give_back(1)
            kind = "tokens"
        else:
            kind = "requests"
        if wait > 0:
            self.stats.rate_limited += 1
            retry_headers = {
                "retry-after": str(max(1, round(wait + 0.4999))),
                "retry-after-ms": str(max(1, round(wait * 1000))),
            }
            raise _Refused(
                429,
                _error(
                    f"Rate limit reached for {kind} per min. Please try again in "
                    f"{go_duration(wait)}.",
                    "requests" if kind == "requests" else "tokens",
                    "rate_limit_exceeded",
                ),
                {**keys.headers(), **retry_headers},
            )
        return keys.headers()

    async def _before_the_work(
        self, incoming: _Incoming, record: RequestRecord, limit_headers: dict[str, str]
    ) -> str | None:
        """What may still stop an admitted request before the model works on it: its
        length, a flex refusal, a fault of the schedule. Returns the fault that shapes
        the reply instead ("reset", "hang", "malformed", "stream_cut"; None)."""
        cfg, keys = self.config, incoming.keys
        if incoming.prompt_tokens > cfg.max_context_tokens:
            raise _Refused(
                400,
                _error(
                    f"This model's maximum context length is {cfg.max_context_tokens} "
                    f"tokens; your messages resulted in {incoming.prompt_tokens} tokens.",
                    "invalid_request_error",
                    "context_length_exceeded",
                    "messages",
                ),
            )
        tier = incoming.payload.get("service_tier")
        record.service_tier = tier if isinstance(tier, str) else None
        if incoming.flex and self._flex_dice.random() < cfg.flex_refusal_rate:
            if keys.requests is not None:  # not charged, as a hosted flex refusal is not
                keys.requests.give_back(1)
            if keys.tokens is not None:
                keys.tokens.give_back(incoming.charge)
            raise _Refused(
                429,
                _error(
                    "Flex processing has no capacity now; try again later or "
                    "use the default service tier.",
                    "resource_unavailable",
                    "resource_unavailable",
                ),
                limit_headers,
            )
        if incoming.flex:
            await self._sleep_model(cfg.flex_extra_latency_s)
        fault = self._pick_fault(record.number)
        if fault is not None:
            record.fault = fault
            self.stats.faults[fault] += 1
        if fault == "429":
            wait = 1.0 / cfg.time_scale
            raise _Refused(
                429,
                _error("Rate limit reached (simulated).", "requests", "rate_limit_exceeded"),
                {
                    **limit_headers,
                    "retry-after": str(max(1, round(wait))),
                    "retry-after-ms": str(max(1, round(wait * 1000))),
                },
            )
        if fault in ("500", "502", "503", "408"):
            raise _Refused(
                int(fault), _error(f"simulated fault {fault}", "server_error", None), limit_headers
            )
        return fault

    async def _answer(
        self,
        out: Responder,
        record: RequestRecord,
        api: Api,
        incoming: _Incoming,
        limit_headers: dict[str, str],
        fault: str | None,
    ) -> None:
        """The model's answer, decoded by the engine beside the other requests, sent
        whole or streamed (or cut, or malformed, as ``fault`` says)."""
        parsed, n = incoming.parsed, incoming.parsed.n
        reply = api.compose(parsed, incoming.prompt, incoming.question, self.config.answer_tokens)
        completion_tokens = count_tokens(reply.text)
        record.questions = reply.parts
        seq = Sequence(
            prompt_tokens=incoming.prompt_tokens,
            target_tokens=completion_tokens,
            prompt=incoming.prompt,
        )
        if not self._engine.fits_ever(seq):
            raise _Refused(
                400,
                _error(
                    "request does not fit in the KV cache",
                    "invalid_request_error",
                    "context_length_exceeded",
                ),
            )
        incoming.keys.spent += incoming.prompt_tokens + completion_tokens * n
        usage: dict[str, Any] = {
            "prompt_tokens": incoming.prompt_tokens,
            "completion_tokens": completion_tokens * n,
            "total_tokens": incoming.prompt_tokens + completion_tokens * n,
            # Known once the engine has admitted the request.
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        if parsed.stream:
            await self._stream(
                out,
                record,
                seq,
                api,
                parsed,
                reply,
                usage,
                limit_headers,
                cut=fault == "stream_cut",
            )
            return
        self._engine.submit(seq)
        if not await self._wait_done(seq, out):
            record.disconnected = True
            record.status = 499
            return
        self._mark(record, seq, completion_tokens * n)
        usage["prompt_tokens_details"]["cached_tokens"] = seq.cached_tokens
        await self._sleep_model(self.config.rtt_s / 2)
        body = api.body(parsed, reply, usage)
        if api is CHAT:
            body["service_tier"] = "flex" if incoming.flex else "default"
        record.status = 200
        headers = {**limit_headers, "content-type": "application/json"}
        if fault == "malformed":
            await out.send(
                200, headers, b'{"id": "' + parsed.id.encode() + b'", "choices": [{"mess'
            )
        elif fault == "stream_cut":
            await out.send_truncated(200, headers, json.dumps(body).encode())
        else:
            await out.send_json(200, limit_headers, body)

    async def _wait_done(self, seq: Sequence, out: Responder) -> bool:
        """Wait for the sequence; False (and the sequence dropped) if the client left."""
        gone = out.disconnected()
        done = asyncio.ensure_future(seq.done.wait())
        try:
            await asyncio.wait({gone, done}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self._engine.cancel(seq)
            raise
        finally:
            if not done.done():
                done.cancel()
        if seq.done.is_set() and not seq.cancelled:
            return True
        self._engine.cancel(seq)
        return False

    def _mark(self, record: RequestRecord, seq: Sequence, completion_tokens: int) -> None:
        record.admitted = seq.admitted_at - self._t0 if seq.admitted_at is not None else None
        record.first_token = (
            seq.first_token_at - self._t0 if seq.first_token_at is not None else None
        )
        record.finished = self._now()
        record.completion_tokens = completion_tokens

    async def _stream(
        self,
        out: Responder,
        record: RequestRecord,
        seq: Sequence,
        api: Api,
        parsed: Parsed,
        reply: Reply,
        usage: dict[str, Any],
        headers: dict[str, str],
        *,
        cut: bool,
    ) -> None:
        content = reply.text
        ends = token_ends(content)
        # (tokens written so far, when): each chunk reaches the client half a round trip
        # after its last token was written, as over a network, the first one as much as
        # the rest.
        loop = asyncio.get_running_loop()
        ready: collections.deque[tuple[int, float]] = collections.deque()
        arrived = asyncio.Event()

        def on_tokens(tokens: int) -> None:
            ready.append((tokens, loop.time()))
            arrived.set()

        seq.on_tokens = on_tokens
        way_back = self.config.scaled(self.config.rtt_s / 2)
        self._engine.submit(seq)

        gone = out.disconnected()
        await out.start_stream(200, {**headers, "content-type": "text/event-stream"})
        record.status = 200
        for event in api.opening(parsed, reply):
            await out.write_chunk(event)
        sent_chars = 0
        sent_tokens = 0
        first = True
        cut_at = max(1, len(ends) // 2)
        try:
            while sent_tokens < len(ends):
                if not ready:
                    arrived.clear()
                    got = asyncio.ensure_future(arrived.wait())
                    await asyncio.wait({got, gone}, return_when=asyncio.FIRST_COMPLETED)
                    if not got.done():
                        got.cancel()
                if ready and not gone.done():
                    generated, written = ready.popleft()
                    delay = written + way_back - loop.time()
                    if delay > 0:
                        await asyncio.wait({gone}, timeout=delay)
                if gone.done():
                    self._engine.cancel(seq)
                    record.disconnected = True
                    record.status = 499
                    return
                if cut and generated >= cut_at:
                    self._engine.cancel(seq)  # the connection is gone: so is its work
                    out.cut()
                    return
                end = ends[min(generated, len(ends)) - 1]
                piece = api.piece(parsed, reply, content[sent_chars:end], first=first)
                first = False
                sent_chars, sent_tokens = end, generated
                await out.write_chunk(piece)
            if first and api is CHAT:  # a chat stream starts with the role, even if empty
                await out.write_chunk(api.piece(parsed, reply, "", first=True))
            self._mark(record, seq, usage["completion_tokens"])
            usage["prompt_tokens_details"]["cached_tokens"] = seq.cached_tokens
            if first:  # nothing written: the end takes the way back instead
                await self._sleep_model(self.config.rtt_s / 2)
            for event in api.closing(parsed, reply, usage):
                await out.write_chunk(event)
            await out.end_stream()
        except (ConnectionError, asyncio.CancelledError):
            self._engine.cancel(seq)
            record.disconnected = True
            raise


@contextlib.asynccontextmanager
async def serve(config: SimConfig | None = None, *, port: int = 0) -> AsyncIterator[SimServer]:
    """Run a simulator in this event loop for the duration of the block.

    ::

        async with fanout.sim.serve(SimConfig(slots=1)) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="sim")
    """
    server = SimServer(config)
    await server.start(port)
    try:
        yield server
    finally:
        await server.stop()
