"""What one line of a batch's output file holds: the answers of its request's questions,
and the usage billed for the questions it brought no answer (so that a job's spend,
kept in its records, counts every request it paid for)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..core.models import Answer, Question, Usage
from ..engine.merging import apportion, build_merged, cut_by_filter, parse_merged

__all__ = ["read_line"]


def read_line(
    entry: dict[str, Any], meta: dict[str, Any], ids: list[str], questions: list[Question]
) -> tuple[dict[str, Answer], dict[str, Usage]]:
    """The answers an output line holds, by id (none for an error line), and, by id, the
    share of the request's usage of each question left without one: a merged reply that
    left it out (its share of the prompt; all of the reply's usage if it answered none:
    one the content filter cut answers none, see ``merging.cut_by_filter``), or a reply
    with no text."""
    response = entry.get("response") or {}
    if entry.get("error") or response.get("status_code") != 200:
        return {}, {}  # an error is not billed
    from openai.types.chat import ChatCompletion  # when a batch is read, not at import

    try:
        completion = ChatCompletion.model_validate(response.get("body"))
        choice = completion.choices[0]
    except (ValidationError, IndexError):
        return {}, {}
    usage = completion.usage
    total = Usage(prompt_tokens=usage.prompt_tokens if usage else 0,
                  completion_tokens=usage.completion_tokens if usage else 0)  # fmt: skip
    rid = [str(response.get("request_id") or entry.get("id") or "")]
    content = choice.message.content
    if meta["merged"] is None:
        if not content:
            return {}, {ids[0]: total}
        q = questions[0]
        return {ids[0]: Answer(index=0, question=q.text, id=q.id, text=content,
                               choices=[c.message.content or "" for c in completion.choices],
                               mode="batch", finish_reason=choice.finish_reason, usage=total,
                               attempts=1, request_ids=rid)}, {}  # fmt: skip
    request = build_merged([q.text for q in questions], meta["merged"]["format"],
                           nonce=meta["merged"]["nonce"])  # fmt: skip
    found = (
        {}
        if cut_by_filter(choice.finish_reason)
        else parse_merged(content, request, truncated=choice.finish_reason == "length")
    )
    prompt = apportion(total.prompt_tokens, [1] * len(ids))
    lengths = [len(found.get(t, "")) for t in request.tags]
    # The completion goes to the answers found, by length; with none, evenly to all.
    answer_tokens = apportion(total.completion_tokens, lengths)  # all zero: evenly
    out: dict[str, Answer] = {}
    lost: dict[str, Usage] = {}
    for i, (q, tag) in enumerate(zip(questions, request.tags, strict=True)):
        share = Usage(prompt_tokens=prompt[i], completion_tokens=answer_tokens[i])
        text = found.get(tag)
        if text is None:
            lost[ids[i]] = share
            continue
        out[ids[i]] = Answer(index=0, question=q.text, id=q.id, text=text, choices=[text],
                             mode="batch", finish_reason="stop", usage=share, attempts=1,
                             request_ids=rid)  # fmt: skip
    return out, lost
