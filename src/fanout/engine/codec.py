"""The merged codec: a merged group as a request, and its reply as answers, one way
for every path that sends one (a merged group online, a merge check, a canary check, a
Batch API line).

``merged_params`` builds the request's ``create()`` parameters: the system prompt, the
questions' shared context, the merged user message (``merging.build_merged``), a
``max_tokens`` for ``k`` answers with their framing and anchors, and the JSON format's
``response_format``. ``read_merged`` reads the reply once: the answers found by tag
(``merging.parse_merged``; repeated free-text answers left out, and kept apart for a
canary), their values under a structured format (``structured.checked_values``: an
answer that does not fit is left out), and whether the content filter cut it (then it
answers none). ``MergedReply.shares`` shares the request's usage over its questions:
the prompt evenly, the completion by the length of the answers found.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.models import Usage
from ..endpoint.tokens import estimate_text_tokens
from .merging import MergedRequest, apportion, cut_by_filter, parse_merged, without_repeats
from .planning import ANCHOR_TOKENS, MERGE_ANSWER_OVERHEAD
from .structured import Structured, checked_values

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

__all__ = ["MergedReply", "merged_params", "read_merged"]


def merged_params(
    request: MergedRequest,
    *,
    model: str,
    system: str | None,
    create_kwargs: Mapping[str, Any],
    context: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The ``create()`` parameters of ``request`` (its ``k`` questions: its tags): the
    caller's parameters, the system prompt and the questions' shared context before the
    merged message; a ``max_tokens`` (or ``max_completion_tokens``) given per answer is
    scaled to ``k`` answers, each with its tag and framing and its question's words (the
    anchor)."""
    messages: list[Any] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend(dict(m) for m in context)
    messages.append({"role": "user", "content": request.user_message})
    params: dict[str, Any] = {"model": model, **create_kwargs, "messages": messages}
    k = len(request.tags)
    carried = sum(min(estimate_text_tokens(key), ANCHOR_TOKENS) for key in request.keys)
    for name in ("max_tokens", "max_completion_tokens"):
        if isinstance(params.get(name), int):
            params[name] = params[name] * k + MERGE_ANSWER_OVERHEAD * k + carried
    if request.response_format is not None:
        params["response_format"] = request.response_format
    return params


@dataclass(frozen=True)
class MergedReply:
    """A merged request's reply, read once (``read_merged``)."""

    request: MergedRequest
    found: Mapping[str, str] = field(default_factory=dict)
    """The answers by tag: clean, not the question echoed, not given to two questions."""
    with_repeats: Mapping[str, str] = field(default_factory=dict)
    """The same with repeated answers kept (a canary's is compared with its known one)."""
    values: Mapping[str, Any] = field(default_factory=dict)
    """Under a structured format, each answer's checked value, by tag."""
    filtered: bool = False
    """The content filter cut the reply: it answers none of its questions."""
    usage: Usage = field(default_factory=Usage)
    """The request's usage (its retries included)."""
    replied: bool = False
    """A reply came (False: the request failed, and the group is asked alone)."""
    reply_usage: Usage | None = None
    """The usage the reply itself reported (None if it reported none)."""

    @property
    def complete(self) -> bool:
        """Every question of the request has its answer."""
        return len(self.found) == len(self.request.tags)

    def shares(self, members: int) -> list[Usage]:
        """The usage of the request's first ``members`` questions (the group's; a
        canary rides after them): the prompt (and its cached part) evenly over them, the
        completion over them by the length of the answers found (evenly if none was)."""
        prompt = apportion(self.usage.prompt_tokens, [1] * members)
        cached = apportion(self.usage.cached_prompt_tokens, [1] * members)
        lengths = [len(self.found.get(tag, "")) for tag in self.request.tags[:members]]
        completion = apportion(self.usage.completion_tokens, lengths)
        return [
            Usage(prompt_tokens=p, completion_tokens=c, cached_prompt_tokens=h)
            for p, c, h in zip(prompt, completion, cached, strict=True)
        ]

    def own_completion_tokens(self) -> list[int]:
        """The completion tokens of each of the request's answers, riders' included, by
        their length (what each answer teaches of answer lengths here)."""
        lengths = [len(self.found.get(tag, "")) for tag in self.request.tags]
        return apportion(self.usage.completion_tokens, lengths)


def read_merged(
    request: MergedRequest,
    completion: ChatCompletion | None,
    structured: Structured | None,
    usage: Usage | None = None,
) -> MergedReply:
    """``completion`` (None: the request failed) read as the answers of ``request``.
    ``usage``: what the request cost, its retries included (else the reply's)."""
    reported = completion.usage if completion is not None else None
    reply_usage = None
    if reported is not None:
        reply_usage = Usage(
            prompt_tokens=reported.prompt_tokens, completion_tokens=reported.completion_tokens
        )
    if usage is None:
        usage = reply_usage or Usage()
    if completion is None or not completion.choices:
        return MergedReply(request=request, usage=usage)
    choice = completion.choices[0]
    if cut_by_filter(choice.finish_reason):
        return MergedReply(
            request=request, filtered=True, usage=usage, replied=True, reply_usage=reply_usage
        )
    truncated = choice.finish_reason == "length"
    every = parse_merged(choice.message.content, request, truncated=truncated, drop_repeats=False)
    values: dict[str, Any] = {}
    if structured is not None:
        every, values = checked_values(every, structured)
    found = every if request.structured else without_repeats(every)
    return MergedReply(
        request=request,
        found=found,
        with_repeats=every,
        values=values,
        usage=usage,
        replied=True,
        reply_usage=reply_usage,
    )
