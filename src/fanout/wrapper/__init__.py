"""The client ``fanout.wrap`` returns, its streams, and the report of a wrapped call."""

from __future__ import annotations

from ._client import FanoutClient as FanoutClient
from ._client import FanoutStream as FanoutStream
from ._client import report_of as report_of
from ._client import wrap as wrap

__all__ = ["FanoutClient", "FanoutStream", "report_of", "wrap"]
