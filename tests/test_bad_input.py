"""Bad input is refused before anything is sent, with an error that names what is wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import fanout

if TYPE_CHECKING:
    from .conftest import SimFactory


class TestContainers:
    async def test_a_dict_or_a_set_of_questions_is_refused(self, sim: SimFactory) -> None:
        """A dict (whose keys would be asked) and a set (no order) are refused up front."""
        async with sim(time_scale=100) as (server, client):
            fo = fanout.Fanout(client, model="m")
            for bad in ({"a": "What is X?"}, {"What is X?", "What is Y?"}, frozenset({"Z?"})):
                with pytest.raises(fanout.InvalidQuestionError, match=type(bad).__name__):
                    await fo.ask_many(bad)
                with pytest.raises(fanout.InvalidQuestionError):
                    fo.plan(bad)
                with pytest.raises(fanout.InvalidQuestionError):
                    async for _ in fo.as_completed(bad):
                        pass
            assert server.stats.requests == []
            answers = await fo.ask_many({"What is X?": 1}.keys())  # ordered: still fine
            assert answers.texts[0] is not None
