"""What fanout knows of an endpoint: the timing model it learns (``model``), the
memory that keeps it across processes (``memory``), token estimates (``tokens``), and
the profiler that measures one (``profile``, above the engine; public as
:mod:`fanout.profile`). Internal: public names are re-exported from
:mod:`fanout.planning` and :mod:`fanout.profile`."""
