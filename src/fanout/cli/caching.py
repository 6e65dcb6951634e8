"""The response cache on the command line: ``fanout run --cache [PATH]``."""

from __future__ import annotations

import argparse
import sys

from ..cache import Cache

__all__ = ["add_cache_args", "cache_from_args"]


def add_cache_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("response cache (see docs/cache.md)")
    g.add_argument(
        "--cache",
        nargs="?",
        const=True,
        default=None,
        metavar="PATH",
        help="answer deterministic requests (temperature 0, or a seed) from a cache "
        "of earlier answers, and keep new ones there: a sqlite file (PATH; default "
        "the user cache directory), or the redis of --redis",
    )
    g.add_argument(
        "--cache-always",
        action="store_true",
        help="with --cache: cache every request, deterministic or not",
    )
    g.add_argument(
        "--cache-ttl",
        type=float,
        metavar="SECONDS",
        help="with --cache: serve entries no older than this",
    )


def cache_from_args(args: argparse.Namespace) -> Cache | None:
    """The :class:`Cache` the arguments ask for; None: no cache."""
    setting = getattr(args, "cache", None)
    if setting is None:
        if getattr(args, "cache_always", False) or getattr(args, "cache_ttl", None) is not None:
            print("fanout: --cache-always and --cache-ttl go with --cache", file=sys.stderr)
            raise SystemExit(2)
        return None
    return Cache(
        path=None if setting is True else setting, always=args.cache_always, ttl_s=args.cache_ttl
    )
