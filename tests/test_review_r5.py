"""Defects found in the adversarial review of round 5 (each test fails on the code as
reviewed)."""

from __future__ import annotations

from fanout.endpoint.model import EndpointModel, EndpointSnapshot


def test_send_times_kept_through_many_processes_still_load() -> None:
    """Each process restores the endpoint memory, counts its own send times from after
    the remembered ones (plus a gap of 1e6 s) and saves them: the latest send time grows
    by about 1e6 s a process, and past 1e7 (``_MAX_VALUE``) the saved snapshot no longer
    validates, so the whole endpoint memory is ignored on the next run."""
    snapshot = None
    for generation in range(15):
        model = EndpointModel()
        if snapshot is not None:
            model.restore(EndpointSnapshot.model_validate(snapshot))
        clock = 5000.0 + generation  # this process's monotonic clock
        for i in range(4):
            model.observe(prompt_tokens=20, completion_tokens=50, latency_s=0.5,
                          sent_at=clock + 0.1 * i)  # fmt: skip
        snapshot = model.snapshot()
        EndpointSnapshot.model_validate(snapshot)  # what the next process loads
