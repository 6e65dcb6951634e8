"""The engine, one module for one job (docs/architecture.md draws it):

* the façade: ``facade`` (``Fanout``, ``ask_many``, ``plan``), ``sync`` for synchronous
  callers, ``call`` (one call's options, defined once, and its counters);
* the questions: ``intake`` (read, checked, deduplicated, batched), ``caching`` (the
  response cache's hits before planning);
* the decisions: ``planning`` and ``opening`` (pure: a plan from the questions, the
  policy and what is known), ``replanning`` (one ``Replanner`` per call: every
  decision as evidence comes back), ``spotting`` and ``agreement`` (how merged answers
  are checked, and compared), ``estimates`` (what a plan would cost);
* the runner: ``dispatch`` (the in-flight window, the call's timeout; carries the
  decisions out), ``execution`` (a question alone; a merged group, checked or not, and
  its re-asks), ``canaries``, ``codec`` and ``merging`` (a merged request built and its
  reply read), ``structured``, ``replies``, ``responses`` (the Responses API);
* the wire: ``transport`` (one request under the limits, retried: ``retrying``,
  ``queueing``, ``flex``, ``reach``, ``spending``), ``learning`` (what responses teach
  of the endpoint);
* the answers: ``results`` (in order, the report).

It builds on ``core``, ``endpoint``, ``limits``, ``cache`` and ``telemetry``, and never
imports ``detection``, ``jobs``, ``wrapper`` or ``cli``. Internal: the public names are
re-exported from :mod:`fanout`."""
