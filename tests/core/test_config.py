"""Configuration objects: validation and readable, secret-free reprs."""

from __future__ import annotations

import pytest

import fanout


class TestLimits:
    @pytest.mark.parametrize(
        ("url", "shown"),
        [
            ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),
            ("rediss://app:hunter2@cache:6380/1", "rediss://app:***@cache:6380/1"),
            ("redis://cache:6379/0", "redis://cache:6379/0"),
        ],
    )
    def test_repr_masks_the_backend_password(self, url: str, shown: str) -> None:
        """A redis URL's password never shows in repr(Limits) (and so in repr(Fanout))."""
        limits = fanout.Limits(rpm=60, backend=url)
        text = repr(limits)
        assert "hunter2" not in text
        assert f"backend={shown!r}" in text
        assert limits.backend == url, "the URL itself is kept for connecting"

    def test_repr_keeps_the_dataclass_shape(self) -> None:
        """Every field, in order, as the dataclass repr shows them."""
        assert repr(fanout.Limits(rpm=60)) == (
            "Limits(rpm=60, tpm=None, max_concurrency=64, smoothing_s=None, headroom=1.0, "
            "backend=None, namespace='default', fallback_local=False)"
        )

    def test_a_rejected_backend_is_named_without_its_password(self) -> None:
        """The error for a URL that is not redis shows the URL, masked."""
        with pytest.raises(fanout.ConfigError) as raised:
            fanout.Limits(backend="http://:hunter2@cache:80/")
        assert "hunter2" not in str(raised.value)
        assert "http://:***@cache:80/" in str(raised.value)
