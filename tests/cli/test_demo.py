"""`fanout demo`'s text says what its own rows show (it said one merged request was
as fast or faster on a server that does not batch, under a row where split won)."""

from __future__ import annotations

from fanout.cli.demo import DemoRow, format_demo

BATCHING = DemoRow("batching server (default sim)", merged_s=1.86, split_s=0.40,
                   merged_requests=1, split_requests=5, auto_s=0.40, auto_choice="split",
                   auto_requests=5)  # fmt: skip
TIGHT = DemoRow("tight limit: 3 requests/minute", merged_s=1.82, split_s=8.46,
                merged_requests=1, split_requests=5, auto_s=2.39, auto_choice="merge",
                auto_requests=4, auto_checks=1)  # fmt: skip
ONE_SLOT = DemoRow("server that does not batch (slots=1)", merged_s=1.80, split_s=1.54,
                   merged_requests=1, split_requests=5, auto_s=1.55, auto_choice="split",
                   auto_requests=5)  # fmt: skip


def test_the_closing_text_reads_each_row_s_result() -> None:
    """The rows of a run where split edged out merged on the single-slot server
    (1.17x) and auto under the tight limit took 23.9 s against 18.2 s merged."""
    text = format_demo([BATCHING, TIGHT, ONE_SLOT], time_scale=10)
    assert "batching server (default sim): split was 4.7x faster" in text
    assert "tight limit: 3 requests/minute: merged was 4.6x faster" in text
    assert "(slots=1): split and merged took about as long (1.17x)" in text
    assert "as fast or faster" not in text
    assert (
        "auto (merge) took 23.9s against 18.2s merged, in 4 requests: the extra ones "
        "checked merged answers" in text
    )
    assert text.count("auto (") == 1  # auto within 10 % of the best elsewhere: nothing to say


def test_a_single_slot_server_where_merging_wins_says_so() -> None:
    """The same scenario measured the other way round reads the other way round."""
    merged_won = DemoRow(ONE_SLOT.scenario, merged_s=1.2, split_s=1.9, merged_requests=1,
                         split_requests=5, auto_s=1.25, auto_choice="merge", auto_requests=1)  # fmt: skip
    text = format_demo([merged_won], time_scale=10)
    assert "(slots=1): merged was 1.6x faster: the five requests take turns" in text
