"""Plots for ``fanout bench --plot`` (matplotlib, imported only when asked for)."""

from __future__ import annotations

from typing import Any


def pyplot(command: str) -> Any:
    """matplotlib's pyplot (drawing to files), or an exit with an install hint that
    works as written, from the package index or from a checkout."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit(
            f"fanout {command} --plot needs matplotlib: pip install matplotlib "
            "(in a checkout of fanout: pip install -e '.[plot]')"
        ) from None
    return plt


def plot_timeline(
    plt: Any, spans: dict[str, list[dict[str, Any]]], path: str, scale: float
) -> None:
    fig, axes = plt.subplots(
        len(spans),
        1,
        sharex=True,
        figsize=(9, 1.2 + 0.5 * sum(len(v) for v in spans.values())),
        squeeze=False,
    )
    for ax, (mode, requests) in zip(axes[:, 0], spans.items(), strict=True):
        t0 = min((r["arrival"] for r in requests), default=0.0)
        for i, r in enumerate(requests):
            phases = [
                ("network / queue", r["arrival"], r["admitted"], "#bbbbbb"),
                ("prefill", r["admitted"], r["first"], "#f0a030"),
                ("decode", r["first"], r["finished"], "#3070c0"),
            ]
            for _name, a, b, color in phases:
                if a is not None and b is not None and b >= a:
                    ax.barh(i, (b - a) * scale, left=(a - t0) * scale, color=color, height=0.6)
        ax.set_title(mode, loc="left")
        ax.set_yticks([])
        ax.set_xlabel("model seconds")
    from matplotlib.patches import Patch

    fig.legend(
        handles=[
            Patch(color=c, label=n)
            for n, c in (
                ("network / queue", "#bbbbbb"),
                ("prefill", "#f0a030"),
                ("decode", "#3070c0"),
            )
        ],
        loc="upper right",
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
