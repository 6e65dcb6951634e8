"""The pipeline, one room per module, in the order a question goes through them:
``facade`` (``Fanout``, ``ask_many``, ``plan``; ``sync`` for synchronous callers) →
``intake`` → ``planning`` (with ``opening`` for first contact) → ``dispatch`` →
``execution`` (with ``merging``) → ``transport`` (with ``retrying``) → ``results``;
``call`` holds one call's options and counters. It builds on ``core``, ``endpoint``,
``limits`` and ``telemetry``, and never imports ``detection``, ``jobs``, ``wrapper``
or ``cli``. Internal: the public names are re-exported from :mod:`fanout`."""
