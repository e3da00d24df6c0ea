"""Plots of simulations: utilisation over time, average wait by job size and by burst buffer
request, and the paper's Kiviat chart across methods (Figure 13)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iosched.batch.metrics import breakdown, utilisation_over_time
from iosched.batch.simulator import SimResult
from iosched.files import save_figure

KIVIAT_AXES = ("node usage", "BB usage", "1 / avg wait", "1 / avg slowdown")
KIVIAT_SSD_AXES = ("node usage", "BB usage", "SSD usage", "1 / wasted SSD", "1 / avg wait", "1 / avg slowdown")


def utilisation(result: SimResult, path: str | Path | None = None, ax=None):
    """Node and burst buffer utilisation over time (days from the first start)."""
    import matplotlib.pyplot as plt

    times, nodes, bb = utilisation_over_time(result)
    ax = ax or plt.subplots(figsize=(8, 3))[1]
    days = (times - times[0]) / 86_400
    ax.plot(days, nodes, label="nodes")
    ax.plot(days, bb, label="burst buffer")
    ax.set(xlabel="days", ylabel="in use (share)", ylim=(0, 1.05), title=result.config.get("window") or "base")
    ax.legend()
    return _save(ax, path)


def waits(results: dict[str, SimResult], by: str = "nodes", path: str | Path | None = None, ax=None):
    """Average wait (hours) per bin of ``by`` (``nodes``, ``burst_buffer``, ``run``), one bar group per method."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(8, 3))[1]
    width = 0.8 / max(len(results), 1)
    labels = []
    for k, (name, res) in enumerate(results.items()):
        rows = breakdown(res, by)
        labels = [r["bin"] for r in rows]
        ax.bar(np.arange(len(rows)) + k * width, [r["avg_wait_s"] / 3600 for r in rows], width, label=name)
    ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels, fontsize=7)
    ax.set(ylabel="average wait (h)", xlabel={"nodes": "nodes", "burst_buffer": "burst buffer (GB)",
                                              "run": "run time (s)"}[by])
    ax.legend(fontsize=7)
    return _save(ax, path)


def kiviat_values(summaries: dict[str, dict]) -> dict[str, list[float]]:
    """Each method's metrics scaled to [0, 1] across methods (1 best), as in the paper's Figure 13: the
    four of :data:`KIVIAT_AXES`, or with SSD usage in every summary the six of :data:`KIVIAT_SSD_AXES`
    (Figure 14)."""
    ssd = all("ssd_usage" in s for s in summaries.values())
    raw = {m: [s["node_usage"], s["bb_usage"]] + ([s["ssd_usage"], 1 / max(s["wasted_ssd"], 1e-9)] if ssd else [])
           + [1 / max(s["avg_wait_s"], 1e-9), 1 / s["avg_bounded_slowdown"]] for m, s in summaries.items()}
    cols = np.array(list(raw.values()), dtype=float)
    lo, hi = cols.min(axis=0), cols.max(axis=0)
    scaled = np.where(hi > lo, (cols - lo) / np.where(hi > lo, hi - lo, 1), 1.0)
    return {m: scaled[k].tolist() for k, m in enumerate(raw)}


def kiviat(summaries: dict[str, dict], path: str | Path | None = None, ax=None, title: str = ""):
    """The Kiviat (radar) chart of :func:`kiviat_values`: the larger the area, the better."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(4.5, 4.5), subplot_kw={"projection": "polar"})[1]
    values = kiviat_values(summaries)
    axes = KIVIAT_SSD_AXES if len(next(iter(values.values()))) == len(KIVIAT_SSD_AXES) else KIVIAT_AXES
    angles = np.linspace(0, 2 * np.pi, len(axes), endpoint=False).tolist()
    for name, v in values.items():
        ax.plot(angles + angles[:1], v + v[:1], label=name)
        ax.fill(angles + angles[:1], v + v[:1], alpha=0.08)
    ax.set_xticks(angles, axes, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="upper right", bbox_to_anchor=(1.35, 1.1))
    return _save(ax, path)


def _save(ax, path):
    if path is not None:
        ax.figure.tight_layout()
        save_figure(ax.figure, path)
    return ax
