"""Measure an endpoint: round trip, decode speed, parallel slots and scaling, prefix
caching (``fanout profile`` on the command line)::

    from fanout.profile import profile_endpoint

    result = await profile_endpoint(fo, max_requests=40)  # fo now plans from it
    result.save("endpoint.json")
"""

from __future__ import annotations

from .endpoint.profile import EndpointProfile as EndpointProfile
from .endpoint.profile import profile_endpoint as profile_endpoint

__all__ = ["EndpointProfile", "profile_endpoint"]
