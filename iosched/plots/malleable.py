"""Draw a malleable schedule: nodes held over time, stacked per job (or per application when
there are many jobs), with resizes marked (and, per job, the time without progress hatched);
below, the jobs queued and running (as the seed's Figure 6)."""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from iosched.evaluate.malleable import Schedule
from iosched.instances.malleable import MalleableInstance
from iosched.plots import figure, finish

PER_JOB = 40  # up to this many jobs, one layer each; beyond, one layer per application


def _layers(instance: MalleableInstance, schedule: Schedule):
    """Breakpoints, the nodes each layer holds after each breakpoint, layer labels, and per-job rows."""
    jobs = sorted(instance.jobs, key=lambda j: (schedule.jobs[j.id][0].start, j.id))
    times = np.unique([t for j in jobs for iv in schedule.jobs[j.id] for t in (iv.start, iv.end)])
    held = np.zeros((len(jobs), len(times)), dtype=float)
    for row, j in enumerate(jobs):
        for iv in schedule.jobs[j.id]:
            held[row, np.searchsorted(times, iv.start):np.searchsorted(times, iv.end)] = iv.nodes
    if len(jobs) <= PER_JOB:
        return times, held, [j.id for j in jobs], jobs, held
    apps = sorted({j.app for j in jobs})
    grouped = np.array([held[[r for r, j in enumerate(jobs) if j.app == a]].sum(axis=0) for a in apps])
    return times, grouped, apps, jobs, held


def plot(instance: MalleableInstance, schedule: Schedule, path=None, title: str = "") -> Figure:
    """Save the picture of ``schedule`` to ``path`` (png, svg or pdf)."""
    times, layers, labels, jobs, held = _layers(instance, schedule)
    fig, (ax, bx) = figure(2, 1, figsize=(11, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    colours = colormaps["tab20" if len(labels) > 10 else "tab10"]
    bottom = np.zeros(len(times))
    for k, (row, label) in enumerate(zip(layers, labels)):
        ax.fill_between(times, bottom, bottom + row, step="post", color=colours(k % colours.N), linewidth=0,
                        label=label if len(labels) <= 12 else None)
        bottom = bottom + row
    below = np.vstack([np.zeros(len(times)), np.cumsum(held, axis=0)])
    marks: dict[str, tuple[list[float], list[float], str, str]] = {  # kind -> times, heights, marker, colour
        "expand": ([], [], "^", "tab:green"), "shrink": ([], [], "v", "tab:red"), "stall": ([], [], "x", "tab:orange")}
    for row, j in enumerate(jobs):
        ivs = schedule.jobs[j.id]
        for k, iv in enumerate(ivs):
            if iv.kind == "run":
                continue
            kind = "stall" if iv.kind == "stall" else (
                "expand" if ivs[min(k + 1, len(ivs) - 1)].nodes > ivs[k - 1].nodes else "shrink")
            xs, ys, _, _ = marks[kind]
            xs.append(iv.start)
            ys.append(below[row + 1, np.searchsorted(times, iv.start, side="right") - 1])
            if len(labels) == len(jobs):  # one layer per job: hatch the time without progress
                i0, i1 = np.searchsorted(times, iv.start), np.searchsorted(times, iv.end)
                ax.fill_between(times[i0:i1 + 1], below[row, i0:i1 + 1], below[row + 1, i0:i1 + 1], step="post",
                                facecolor="none", edgecolor="k", hatch="///", linewidth=0)
    for kind, (xs, ys, marker, colour) in marks.items():
        if xs:
            ax.scatter(xs, ys, marker=marker, color=colour, s=28, zorder=5, label=f"{kind} ({len(xs)})",
                       edgecolors="k", linewidths=0.4)
    ax.axhline(instance.nodes, color="k", linewidth=0.8, linestyle="--")
    ax.set_ylim(0, instance.nodes * 1.08)
    ax.set_ylabel("nodes held")
    if len(labels) <= 12 or any(m[0] for m in marks.values()):
        ax.legend(loc="upper right", fontsize=7, ncol=2)
    starts = np.array([schedule.jobs[j.id][0].start for j in jobs])
    ends = np.array([schedule.jobs[j.id][-1].end for j in jobs])
    arrivals = np.array([j.arrival for j in jobs])
    grid = np.unique(np.concatenate([times, arrivals]))
    queued = ((arrivals[None, :] <= grid[:, None]) & (starts[None, :] > grid[:, None])).sum(axis=1)
    running = ((starts[None, :] <= grid[:, None]) & (ends[None, :] > grid[:, None])).sum(axis=1)
    bx.step(grid, queued, where="post", label="queued", color="tab:purple")
    bx.step(grid, running, where="post", label="running", color="tab:blue")
    bx.set_ylabel("jobs")
    bx.set_xlabel("time (s)")
    bx.legend(loc="upper right", fontsize=7)
    ax.set_title(title or f"{instance.name}: {len(jobs)} jobs on {instance.nodes} nodes")
    return finish(fig, path, dpi=110)
