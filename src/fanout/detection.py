"""What ``fanout.detect`` returns: the independent questions found in one prompt."""

from __future__ import annotations

from ._detect import DetectedQuestion as DetectedQuestion
from ._detect import Detection as Detection
from ._detect import detect as detect

__all__ = ["DetectedQuestion", "Detection", "detect"]
