"""What a wrapped reply is made of, whatever the API (chat completions in ``_client``,
the Responses API in ``_responses``): the stream it is read from, the raw response
around it, how its parts' finish reasons and usage add up, the report it carries, the
``fanout=`` policy taken out of a call's arguments, and the error a failed part raises.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.config import Policy
from ..core.exceptions import PartialFailureError
from ..core.models import Answers, Report

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.responses import Response

__all__ = [
    "REPORT_FIELD",
    "FanoutStream",
    "Passed",
    "RawResponse",
    "StreamEnd",
    "finish_of",
    "pop_policy",
    "raise_failures",
    "report_of",
]


REPORT_FIELD = "fanout_report"


def report_of(completion: ChatCompletion | Response) -> Report | None:
    """The fanout report attached to a completion (or a Responses API response) the
    wrapper built (None if it passed straight through)."""
    report = getattr(completion, REPORT_FIELD, None)
    return report if isinstance(report, Report) else None


class FanoutStream:
    """An async iterator of ``ChatCompletionChunk``: what ``create(stream=True)`` returns.

    The first answer's tokens arrive as the model writes them; each following answer
    is sent as soon as it and all before it are ready. Usable with ``async for`` and
    ``async with``, like the SDK's ``AsyncStream``.
    """

    def __init__(self, chunks: AsyncIterator[ChatCompletionChunk], on_close: Any) -> None:
        self._chunks = chunks
        self._on_close = on_close

    def __aiter__(self) -> AsyncIterator[ChatCompletionChunk]:
        return self._chunks

    async def __anext__(self) -> ChatCompletionChunk:
        return await self._chunks.__anext__()

    async def close(self) -> None:
        await self._on_close()

    async def __aenter__(self) -> FanoutStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RawResponse:
    """What ``with_raw_response.create(...)`` returns for a call fanout answered: the
    completion (or stream) from ``parse()``; no HTTP response of its own, so no
    headers (each part had its own request)."""

    def __init__(self, result: Any) -> None:
        self._result = result
        self.headers: dict[str, str] = {}

    def parse(self) -> Any:
        return self._result


def finish_of(reasons: Iterable[str | None]) -> str:
    """The ``finish_reason`` of a reply made of parts that finished for ``reasons``:
    ``"content_filter"`` if the filter cut any, else ``"length"`` if any was cut at
    ``max_tokens``, else ``"stop"``."""
    seen = set(reasons)
    return next((cut for cut in ("content_filter", "length") if cut in seen), "stop")


@dataclass
class StreamEnd:
    """The end of a wrapped stream: why it finished, and the usage of every part."""

    finish: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, answer: Any, prompt_tokens: int, completion_tokens: int) -> None:
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.finish = finish_of((self.finish, answer.finish_reason))


def pop_policy(kwargs: dict[str, Any]) -> Policy | None:
    """The call's ``fanout=`` (or ``extra_body={"fanout": ...}``), taken out of ``kwargs``."""
    policy: Policy | str | None = kwargs.pop("fanout", None)
    extra_body = kwargs.get("extra_body")
    if isinstance(extra_body, Mapping) and "fanout" in extra_body:
        extra_body = dict(extra_body)
        policy = extra_body.pop("fanout")
        if extra_body:
            kwargs["extra_body"] = extra_body
        else:
            del kwargs["extra_body"]
    return None if policy is None else Policy.coerce(policy)


def raise_failures(answers: Answers) -> None:
    """Raise if a part failed."""
    failed = [a for a in answers if a.error is not None]
    if failed:
        first = failed[0]
        error = PartialFailureError(
            f"{len(failed)} of {len(answers)} parts failed; first: part {first.index}: "
            f"{first.error}",
            answers=answers,
        )
        raise error from first.error


class Passed:
    """A call that went straight through to the user's client, and its result."""

    def __init__(self, value: Any) -> None:
        self.value = value
