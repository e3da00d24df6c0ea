"""Draw a forwarding allocation: compute-node groups -> forwarding nodes, and each job's I/O time."""

from __future__ import annotations

from matplotlib import colormaps
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from iosched.evaluate.forwarding import Allocation, evaluate
from iosched.instances.forwarding import ForwardingInstance
from iosched.plots import figure, finish


def plot(instance: ForwardingInstance, allocation: Allocation, path=None, title: str = "") -> Figure:
    """Save to ``path``: top, the machine's compute nodes (jobs placed in colour, running jobs grey) joined to the
    forwarding nodes serving them (default service, then the pool; anomalous ones marked x); bottom, each
    placed job's I/O time beside its time on its own links (log scale)."""
    ev = evaluate(instance, allocation)
    fig, (top, bottom) = figure(2, 1, figsize=(11, 7), gridspec_kw={"height_ratios": [3, 2]})
    order = sorted(instance.forwarding_nodes, key=lambda f: (f.service != "default", f.id))
    xf = {f.id: (i + 0.5) / len(order) for i, f in enumerate(order)}
    colours = colormaps["tab20"]
    colour = {j.id: colours(i % 20) for i, j in enumerate(instance.jobs)}

    def links(job, groups, c, width, alpha):
        pos, segs = job.start, []
        for f, n in groups:
            if f in xf:
                segs.append([((pos + n / 2) / instance.compute_nodes, 1.0), (xf[f], 0.0)])
            pos += n
        top.add_collection(LineCollection(segs, colors=[c], linewidths=width, alpha=alpha))
        top.plot([job.start / instance.compute_nodes, job.end / instance.compute_nodes], [1.02, 1.02],
                 color=c, lw=6, solid_capstyle="butt")

    for r in instance.running:
        links(r, instance.groups(r), "0.75", 0.4, 0.4)
    if ev.feasible:  # a malformed allocation is not drawn, its violations are listed below
        for j in instance.jobs:
            links(j, allocation.mapping[j.id], colour[j.id], 1.2, 0.9)
    for f in order:
        face = "white" if f.service == "default" else "#cfe3f5"
        top.scatter([xf[f.id]], [-0.03], marker="s", s=14, facecolor=face, edgecolor="0.3", lw=0.4, zorder=3)
        if f.anomalous:
            top.scatter([xf[f.id]], [-0.09], marker="x", s=40, color="red", zorder=4)
    split = sum(f.service == "default" for f in order) / len(order)
    top.axvline(split, ymax=0.12, color="0.4", ls=":")
    top.text(split / 2, -0.16, "forwarding nodes in service", ha="center", fontsize=8)
    top.text((1 + split) / 2, -0.16, "idle pool (x: anomalous)", ha="center", fontsize=8)
    top.text(0.5, 1.06, f"compute nodes 0..{instance.compute_nodes - 1} (colour: jobs placed, grey: running)",
             ha="center", fontsize=8)
    top.set_xlim(0, 1)
    top.set_ylim(-0.2, 1.12)
    top.axis("off")
    top.set_title(title or f"{instance.name}: {len(instance.jobs)} jobs placed, {len(instance.running)} running")
    if ev.feasible:
        jobs = list(instance.jobs)[:40]
        own = [j.volume / (j.io_nodes * j.node_bandwidth) for j in jobs]
        x = range(len(jobs))
        bottom.bar(x, [ev.job_times[j.id] for j in jobs], color=[colour[j.id] for j in jobs], label="I/O time")
        bottom.scatter(x, own, marker="_", s=120, color="k", label="on its own links alone", zorder=3)
        bottom.set_yscale("log")
        bottom.set_xticks(list(x), [j.id for j in jobs], rotation=90, fontsize=7)
        bottom.set_ylabel("I/O time (s)")
        bottom.legend(loc="upper right", fontsize=8)
        pool = f"{ev.pool_nodes_used} pool node{'' if ev.pool_nodes_used == 1 else 's'} used"
        bottom.set_title(f"total {ev.total_io_time:.4g} s, max {ev.max_io_time:.4g} s, {pool}"
                         + (" (first 40 jobs)" if len(instance.jobs) > 40 else ""), fontsize=9)
    else:
        bottom.axis("off")
        bottom.text(0.5, 0.5, "infeasible: " + "; ".join(str(v) for v in ev.violations[:3]), ha="center",
                    wrap=True)
    return finish(fig, path)
