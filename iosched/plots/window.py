"""Draw a window selection: the exact front, the method's front and the chosen point."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from iosched.evaluate.window import Selection, evaluate, utilisations
from iosched.instances.window import WindowInstance
from iosched.models.window import pareto_front
from iosched.plots import figure, finish


def plot(instance: WindowInstance, selection: Selection, path=None, title: str = "") -> Figure:
    """The exact front, the method's front and the chosen point in (node, burst buffer) utilisation,
    the axes zoomed on the points; saved to ``path`` when given."""
    exact = utilisations(instance, [(p.nodes, p.burst_buffer) for p in pareto_front(instance)])
    fig, ax = figure(figsize=(6, 5))
    order = exact[:, 0].argsort()
    ax.plot(exact[order, 0], exact[order, 1], color="0.6", zorder=1)
    ax.scatter(exact[:, 0], exact[:, 1], s=60, facecolors="none", edgecolors="k", label="exact front", zorder=2)
    if selection.front:
        found = utilisations(instance, [(p.nodes, p.burst_buffer) for p in selection.front])
        ax.scatter(found[:, 0], found[:, 1], s=18, color="tab:blue", label="method's front", zorder=3)
    ev = evaluate(instance, selection)
    ax.scatter([ev.node_utilization], [ev.bb_utilization], marker="*", s=220, color="tab:red",
               label=f"chosen: {len(selection.selected)} jobs", zorder=4)
    ax.set_xlabel("node utilisation")
    ax.set_ylabel("burst buffer utilisation")
    shown = [exact, np.array([[ev.node_utilization, ev.bb_utilization]])] + ([found] if selection.front else [])
    points = np.vstack(shown)
    for axis, lo, hi in ((ax.set_xlim, points[:, 0].min(), points[:, 0].max()),
                         (ax.set_ylim, points[:, 1].min(), points[:, 1].max())):
        pad = max(0.02, 0.1 * (hi - lo))  # zoomed on the points: fronts are often a corner of [0, 1]^2
        axis(max(-0.02, lo - pad), min(1.02, hi + pad))
    ax.set_title(title or f"{instance.name}: {len(instance.jobs)} jobs")
    ax.legend(loc="lower left")
    return finish(fig, path)
