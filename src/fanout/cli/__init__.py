"""The ``fanout`` command (``main``) and its demo (``demo``). Nothing imports it."""
