"""What ``fanout.detect`` returns: the independent questions found in one prompt."""

from __future__ import annotations

from ._detector import DetectedQuestion as DetectedQuestion
from ._detector import Detection as Detection
from ._detector import detect as detect

__all__ = ["DetectedQuestion", "Detection", "detect"]
