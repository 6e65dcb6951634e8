"""The shared vocabulary every other package speaks: configuration (``Limits``,
``Retry``, ``Policy``), the data models (``Question``, ``Answer``, ``Report``), the
error tree, the plan's data types, ``create()`` parameters, redaction, logging and
progress. It imports nothing else from fanout. Internal: the public names are
re-exported from :mod:`fanout` and its public submodules."""
