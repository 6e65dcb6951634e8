"""A call's options are defined once (``engine/call.py``) and taken alike by every entry
point: ``Fanout(...)``, ``Fanout.ask_many``, ``Fanout.as_completed``, ``fanout.ask_many``
and ``fanout.ask_many_sync``; a call's ``system=None`` clears the ``Fanout``'s."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio
import openai
import pytest

import fanout
from fanout.engine import facade, sync
from fanout.engine.call import CALL_OPTIONS, FANOUT_OPTIONS, ONE_SHOT_OPTIONS, OPTIONS
from fanout.sim import answer_for

from .._scripted import scripted_server

LOOPBACK = "http://127.0.0.1:9/v1"  # nothing is sent to it


def _keywords(function: Callable[..., Any]) -> set[str]:
    """The keyword-only parameters of ``function``, its ``**kwargs`` left out."""
    return {
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def test_every_entry_point_takes_the_options_of_its_kind() -> None:
    """The signatures are written out for type checkers and readers; each holds exactly
    the names of the one table of its kind. (``ask_many_sync`` lacked ``api``,
    ``pricing`` and ``max_cost``: given, they were refused as unknown ``create()``
    parameters.)"""
    assert _keywords(fanout.Fanout.__init__) == set(FANOUT_OPTIONS)
    assert _keywords(fanout.Fanout.ask_many) == set(CALL_OPTIONS)
    assert _keywords(fanout.ask_many) == set(ONE_SHOT_OPTIONS)
    assert _keywords(fanout.ask_many_sync) == set(ONE_SHOT_OPTIONS)
    assert _keywords(fanout.Fanout.plan) <= set(CALL_OPTIONS)
    assert set(OPTIONS) == {*FANOUT_OPTIONS, *CALL_OPTIONS, "client"}


class _Given:
    """A distinct value for an option: handed on as it is, or the test fails."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def test_ask_many_sync_hands_every_option_to_ask_many(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each option given to ``ask_many_sync`` reaches ``ask_many`` as it was given."""
    seen: dict[str, Any] = {}

    async def recording(questions: Any, **kwargs: Any) -> None:
        seen.update(kwargs)

    monkeypatch.setattr(sync, "ask_many", recording)
    given: dict[str, Any] = {name: _Given(name) for name in ONE_SHOT_OPTIONS if name != "client"}
    client = openai.OpenAI(api_key="k", base_url=LOOPBACK)
    sync.ask_many_sync(["Q?"], client=client, **given)
    assert {name: seen.get(name) for name in given} == given


def test_ask_many_hands_every_option_to_its_fanout_or_its_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each option given to ``fanout.ask_many`` reaches the ``Fanout`` it makes or that
    ``Fanout``'s call, as it was given."""
    seen: dict[str, Any] = {}

    class Recording:
        def __init__(self, client: Any, **kwargs: Any) -> None:
            seen.update(kwargs, client=client)

        async def ask_many(self, questions: Any, **kwargs: Any) -> None:
            seen.update(kwargs)

        async def aclose(self) -> None:
            pass

    monkeypatch.setattr(facade, "Fanout", Recording)
    given = {name: _Given(name) for name in ONE_SHOT_OPTIONS}
    facade_ask_many: Any = facade.ask_many
    anyio.run(lambda: facade_ask_many(["Q?"], **given))
    assert {name: seen.get(name) for name in given} == given


def _system_prompts(requests: list[dict[str, Any]]) -> list[str | None]:
    """The system prompt of each request taken (None: it had none)."""
    return [
        next((m["content"] for m in body["messages"] if m["role"] == "system"), None)
        for body in requests
    ]


def _user_answer(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return answer_for(user, 2)


@pytest.mark.asyncio
async def test_a_call_s_system_none_sends_no_system_prompt_where_the_fanout_has_one() -> None:
    """``system`` left out: the ``Fanout``'s; ``system=None``: none; a string: that one.
    The same for ``as_completed``. (``None`` meant "the ``Fanout``'s" at call level, so
    a call could not clear it.)"""
    async with scripted_server(_user_answer) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", system="Be brief.", policy="split", memory=False)
        await fo.ask_many(["Q1?"])
        await fo.ask_many(["Q2?"], system=None)
        await fo.ask_many(["Q3?"], system="Be kind.")
        async for answer in fo.as_completed(["Q4?"], system=None):
            assert answer.ok
        await client.close()
    assert _system_prompts(server.requests) == ["Be brief.", None, "Be kind.", None]
    assert fo.system == "Be brief."  # the Fanout's own is kept


def test_not_given_is_one_marker_that_survives_a_pickle() -> None:
    """``fanout.NOT_GIVEN`` is falsy, prints as itself, and is the same object after a
    round trip through pickle (a job's settings cross processes that way)."""
    import pickle

    assert not fanout.NOT_GIVEN
    assert repr(fanout.NOT_GIVEN) == "NOT_GIVEN"
    assert pickle.loads(pickle.dumps(fanout.NOT_GIVEN)) is fanout.NOT_GIVEN
    assert type(fanout.NOT_GIVEN)() is fanout.NOT_GIVEN
