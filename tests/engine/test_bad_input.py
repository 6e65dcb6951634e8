"""Bad input is refused before anything is sent, with an error that names what is wrong."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import fanout
from fanout.jobs import run_jsonl
from fanout.sim import answer_for

from .._virtual import on_virtual_time

if TYPE_CHECKING:
    from pathlib import Path

    from ..conftest import SimFactory


class TestContainers:
    @on_virtual_time
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


class TestCreateParameters:
    @on_virtual_time
    async def test_stream_in_question_params_is_refused(self, sim: SimFactory) -> None:
        """Question(params={"stream": True}) is refused when it is made: streaming is
        fanout.wrap's job, and the answer would be lost."""
        for reserved in ("stream", "messages"):
            with pytest.raises(ValueError, match=reserved):
                fanout.Question(text="q", params={reserved: True})
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(fanout.ConfigError, match="stream"):
                await fanout.ask_many(["q"], client=client, model="m", stream=True)
            assert server.stats.requests == []

    @on_virtual_time
    async def test_a_jsonl_line_asking_to_stream_is_a_bad_line(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A JSONL line with "stream": true is reported as a bad line and not sent; the
        other lines are answered."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        lines = [{"id": "a", "question": "fine?"}, {"id": "b", "question": "live?", "stream": True}]
        src.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
            assert len(server.stats.requests) == 1
        assert summary.answered == 1
        assert summary.failed == 0
        (bad,) = summary.bad_lines
        assert bad.line == 2
        assert "stream" in bad.reason
        (record,) = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
        assert record["answer"] == answer_for("fine?", 3)

    @on_virtual_time
    async def test_an_unknown_keyword_is_one_error_naming_it(self, sim: SimFactory) -> None:
        """A typo (on_eror=) is refused before sending, naming the keyword and the likely
        meant one; the SDK's own extras (extra_body, timeout, ...) are accepted."""
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            with pytest.raises(fanout.ConfigError, match=r"'on_eror'.*on_error"):
                await fanout.ask_many(["a", "b"], client=client, model="m", on_eror="return")
            with pytest.raises(fanout.ConfigError, match="on_eror"):
                fanout.Fanout(client, model="m", on_eror="return")
            fo = fanout.Fanout(client, model="m")
            with pytest.raises(fanout.ConfigError, match=r"temprature.*temperature"):
                async for _ in fo.as_completed(["a"], temprature=0.5):
                    pass
            with pytest.raises(fanout.ConfigError, match="temprature"):
                fo.plan(["a"], temprature=0.5)
            with pytest.raises(ValueError, match="temprature"):
                fanout.Question(text="q", params={"temprature": 0.5})
            assert server.stats.requests == []
            answers = await fo.ask_many(
                ["a"], extra_body={"ignore_eos": False}, extra_headers={"X-Y": "z"}, extra_query={"q": "1"},
                timeout=30, temperature=0.2, seed=1,
            )  # fmt: skip
            assert answers.report.answered == 1

    @pytest.mark.parametrize(
        ("kwargs", "named"),
        [
            ({"model": 123}, "model"),
            ({"max_tokens": -5}, "max_tokens"),
            ({"max_completion_tokens": 0}, "max_completion_tokens"),
            ({"n": "3"}, "n"),
            ({"temperature": "hot"}, "temperature"),
            ({"temperature": -1}, "temperature"),
            ({"system": 5}, "system"),
            ({"on_answer": 5}, "on_answer"),
        ],
    )
    @on_virtual_time
    async def test_values_checkable_locally_are_refused_before_sending(
        self, sim: SimFactory, kwargs: dict[str, Any], named: str
    ) -> None:
        """A value the server would reject for its type or range is a ConfigError naming it."""
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(fanout.ConfigError, match=named):
                await fanout.ask_many(["a"], client=client, **{"model": "m", **kwargs})
            assert server.stats.requests == []
        if named not in ("model", "system", "on_answer"):
            with pytest.raises(ValueError, match=named):
                fanout.Question(text="q", params=kwargs)


class TestConfigTypes:
    def test_wrongly_typed_limits_and_timeout_are_config_errors(self) -> None:
        """Limits(headroom="0.5") and a string timeout raise ConfigError, not TypeError."""
        with pytest.raises(fanout.ConfigError, match="headroom"):
            fanout.Limits(headroom="0.5")  # type: ignore[arg-type]
        with pytest.raises(fanout.ConfigError, match="namespace"):
            fanout.Limits(namespace=5)  # type: ignore[arg-type]
        with pytest.raises(fanout.ConfigError, match="latency_slack"):
            fanout.Policy(latency_slack="1")  # type: ignore[arg-type]

    @on_virtual_time
    async def test_a_string_timeout_is_a_config_error(self, sim: SimFactory) -> None:
        """timeout="5" is refused with ConfigError before anything is sent."""
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(fanout.ConfigError, match="timeout"):
                await fanout.ask_many(["a"], client=client, model="m", timeout="5")  # type: ignore[arg-type]
            assert server.stats.requests == []
