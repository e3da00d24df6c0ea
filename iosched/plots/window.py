"""Draw a window selection: the exact front, the method's front and the chosen point."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from iosched.evaluate.window import Selection, evaluate, utilisations  # noqa: E402
from iosched.instances.window import WindowInstance  # noqa: E402
from iosched.models.window import pareto_front  # noqa: E402


def plot(instance: WindowInstance, selection: Selection, path: str, title: str = "") -> None:
    """Save the fronts in (node utilisation, burst buffer utilisation) to ``path``."""
    exact = utilisations(instance, [(p.nodes, p.burst_buffer) for p in pareto_front(instance)])
    fig, ax = plt.subplots(figsize=(6, 5))
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
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title or f"{instance.name}: {len(instance.jobs)} jobs")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
