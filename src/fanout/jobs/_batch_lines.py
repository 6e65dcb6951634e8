"""What a batch's output and error files hold: their lines by ``custom_id`` (a line that
cannot be read is reported and left out: its request is one that brought no answer),
and what one line holds: the answers of its request's questions, and the usage billed
for the questions it brought no answer (so that a job's spend, kept in its records,
counts every request it paid for)."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from ..core.models import Answer, Question, Usage
from ..engine.codec import read_merged
from ..engine.merging import apportion, build_merged
from ._output import log

__all__ = ["read_file", "read_line"]

_CUSTOM_ID = re.compile(r'"custom_id"\s*:\s*("(?:[^"\\]|\\.)*")')
"""A line's custom_id, to name it in the warning when the line is no JSON."""


def read_file(text: str, batch_id: str, kind: str, file_id: str) -> dict[str, dict[str, Any]]:
    """The lines of a batch's output or error file (``kind``), by ``custom_id``. A line
    that is not a JSON object with a string ``custom_id`` and an object (or null)
    ``response`` is left out, with a warning naming the file, the line and, when it can
    be read, its custom_id: its request then brought no answer, as a missing line."""
    lines: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError as exc:
            found = _CUSTOM_ID.search(raw)
            custom_id = _loads(found.group(1)) if found else None
            _bad(batch_id, kind, file_id, number, custom_id, f"not JSON ({exc})")
            continue
        if not isinstance(entry, dict):
            _bad(batch_id, kind, file_id, number, None, f"not a JSON object but {raw.strip()[:40]}")
            continue
        custom_id = entry.get("custom_id")
        if not isinstance(custom_id, str):
            _bad(batch_id, kind, file_id, number, None, f"no string custom_id ({custom_id!r})")
            continue
        response = entry.get("response")
        if response is not None and not isinstance(response, dict):
            _bad(batch_id, kind, file_id, number, custom_id, "its response is not an object")
            continue
        if custom_id in lines:
            _bad(
                batch_id,
                kind,
                file_id,
                number,
                custom_id,
                "its custom_id is on an earlier line too; the first is kept",
            )
            continue
        lines[custom_id] = entry
    return lines


def _loads(text: str) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _bad(
    batch_id: str, kind: str, file_id: str, number: int, custom_id: str | None, reason: str
) -> None:
    named = f" (custom_id {custom_id!r})" if custom_id is not None else ""
    log.warning(
        "batch %s: line %d of its %s file %s is unusable%s: %s; left out, the "
        "questions of its request count as unanswered and are asked again",
        batch_id,
        number,
        kind,
        file_id,
        named,
        reason,
    )


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
        return {}, _billed_without_answers(response.get("body"), ids)
    usage = completion.usage
    total = Usage(
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
    )
    rid = [str(response.get("request_id") or entry.get("id") or "")]
    content = choice.message.content
    if meta["merged"] is None:
        if not content:
            return {}, {ids[0]: total}
        q = questions[0]
        return {
            ids[0]: Answer(
                index=0,
                question=q.text,
                id=q.id,
                text=content,
                choices=[c.message.content or "" for c in completion.choices],
                mode="batch",
                finish_reason=choice.finish_reason,
                usage=total,
                attempts=1,
                request_ids=rid,
            )
        }, {}
    request = build_merged(
        [q.text for q in questions], meta["merged"]["format"], nonce=meta["merged"]["nonce"]
    )
    reply = read_merged(request, completion, None, total)
    # The completion goes to the answers found, by length; with none, evenly to all.
    shares = reply.shares(len(ids))
    out: dict[str, Answer] = {}
    lost: dict[str, Usage] = {}
    for i, (q, tag) in enumerate(zip(questions, request.tags, strict=True)):
        text = reply.found.get(tag)
        if text is None:
            lost[ids[i]] = shares[i]
            continue
        out[ids[i]] = Answer(
            index=0,
            question=q.text,
            id=q.id,
            text=text,
            choices=[text],
            mode="batch",
            finish_reason="stop",
            usage=shares[i],
            attempts=1,
            request_ids=rid,
        )
    return out, lost


def _billed_without_answers(body: Any, ids: list[str]) -> dict[str, Usage]:
    """A 200 line whose body is no chat completion with a choice: what its usage says
    it was billed, shared evenly over its ids (none if it says nothing readable)."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return {}
    prompt_tokens, completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int):
        return {}
    if prompt_tokens < 0 or completion_tokens < 0:
        return {}
    total = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    prompt = apportion(total.prompt_tokens, [1] * len(ids))
    completion = apportion(total.completion_tokens, [1] * len(ids))
    return {
        qid: Usage(prompt_tokens=p, completion_tokens=c)
        for qid, p, c in zip(ids, prompt, completion, strict=True)
    }
