"""The client ``fanout.wrap`` returns, its streams, and the report of a wrapped call."""

from __future__ import annotations

from ._wrap import FanoutClient as FanoutClient
from ._wrap import FanoutStream as FanoutStream
from ._wrap import report_of as report_of
from ._wrap import wrap as wrap

__all__ = ["FanoutClient", "FanoutStream", "report_of", "wrap"]
