"""Draw a periodic pattern: compute and I/O per application, and bandwidth use against B."""

from __future__ import annotations

from bisect import bisect_right

from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from iosched.errors import ParameterError
from iosched.evaluate.periodic import Pattern, Trace
from iosched.fluid import Segment, cyclic_load
from iosched.instances.periodic import PeriodicInstance
from iosched.plots import figure, finish


def _wrapped(start: float, length: float, T: float) -> list[tuple[float, float]]:
    s = start % T
    if s + length <= T:
        return [(s, length)]
    return [(s, T - s), (0.0, s + length - T)]


MAX_SEGMENTS = 200_000  # I/O segments drawn; beyond, the figure would take minutes and say nothing


def plot(instance: PeriodicInstance, pattern: Pattern | Trace, path=None, title: str = "") -> Figure:
    """Save a two-panel figure of ``pattern`` to ``path`` (PNG, SVG or PDF by extension).

    A :class:`Trace` (the online baselines) is drawn on its timeline [0, horizon].
    """
    if isinstance(pattern, Trace):
        T = pattern.horizon
        title = title or f"{instance.name}: timeline of {T:.6g} s (grey: compute, colour: I/O)"
    elif isinstance(pattern, Pattern):
        T = pattern.period
    else:
        raise ParameterError(f"plot takes a periodic pattern or a trace, got {type(pattern).__name__}")
    segments_in_all = sum(len(i.io) for insts in pattern.applications for i in insts)
    if segments_in_all > MAX_SEGMENTS:
        raise ParameterError(f"the solution has {segments_in_all} I/O segments, more than the {MAX_SEGMENTS} a plot "
                             f"draws")
    apps = instance.applications
    fig, (gantt, bw) = figure(2, 1, sharex=True, figsize=(11, 2.2 + 0.35 * len(apps) + 2.5),
                                    gridspec_kw={"height_ratios": [max(len(apps), 2), 3]})
    cmap = colormaps["tab20"]
    colors = [cmap(i) for i in range(cmap.N)]
    segments = []
    for k, (app, insts) in enumerate(zip(apps, pattern.applications)):
        color = colors[k % len(colors)]
        bars = [b for i in insts for b in _wrapped(i.compute_start, app.work, T)]
        gantt.broken_barh(bars, (k - 0.4, 0.8), facecolors="0.8", edgecolors="0.5", linewidth=0.3)
        io = [b for i in insts for s, e, r in i.io for b in _wrapped(s, e - s, T)]
        gantt.broken_barh(io, (k - 0.4, 0.8), facecolors=color)
        segments.append([Segment(s, e, r) for i in insts for s, e, r in i.io])
    gantt.set_yticks(range(len(apps)), [a.name for a in apps])
    gantt.invert_yaxis()
    gantt.set_title(title or f"{instance.name}: period {T:.6g} s (grey: compute, colour: I/O)")
    loads = [cyclic_load(segs, T) for segs in segments]
    edges = sorted({0.0, T} | {p[0] for pieces in loads for p in pieces})
    bottom = [0.0] * (len(edges) - 1)
    for k, pieces in enumerate(loads):
        starts = [p[0] for p in pieces]
        top = [b + pieces[bisect_right(starts, x) - 1][2] for b, x in zip(bottom, edges)]
        bw.stairs(top, edges, baseline=bottom, fill=True, color=colors[k % len(colors)])
        bottom = top
    bw.axhline(instance.platform.bandwidth, color="tab:red", linestyle="--", label="B")
    bw.set_xlim(0, T)
    bw.set_xlabel("time (s)" if isinstance(pattern, Trace) else "time in the period (s)")
    bw.set_ylabel("I/O bandwidth (GB/s)")  # the instance's volume unit per second: GB/s in the paper's
    bw.legend(loc="upper right")
    return finish(fig, path)


def plot_figure6(curves: dict, path=None) -> Figure:
    """The paper's Figure 6 for each set: SysEfficiency and Dilation against the period T.
    ``curves``: set -> [(T s, SysEfficiency, Dilation), ...] (the seed gives no values to draw beside)."""
    sets = sorted(curves)
    cols = min(5, len(sets))
    rows = -(-len(sets) // cols)
    fig, axes = figure(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, k in zip(axes.flat, sets):
        T = [p[0] for p in curves[k]]
        ax.plot(T, [p[1] for p in curves[k]], color="#000099", lw=1)
        ax.set_title(f"set {k}", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(3))
        twin = ax.twinx()
        twin.plot(T, [p[2] for p in curves[k]], color="#cc6666", lw=1)
        twin.tick_params(labelsize=7, colors="#cc6666")
    for ax in list(axes.flat)[len(sets):]:
        ax.axis("off")
    fig.suptitle("Figure 6: SysEfficiency (blue, left) and Dilation (red, right) against the period T (s); "
                 "the seed gives no values", fontsize=9)
    return finish(fig, path, dpi=110)


def plot_figure7(points: list, paper: dict, path=None) -> Figure:
    """The paper's Figure 7: SysEfficiency(K') / SysEfficiency(100) and Dilation(K') / Dilation(100),
    means over the sets with standard errors; ``paper``: K' -> (the two ratios the seed's text gives)."""
    kp = [p[0] for p in points]
    fig, axes = figure(1, 2, figsize=(9, 3.4))
    for ax, (mean, err), what, j in ((axes[0], (1, 2), "SysEfficiency(K') / SysEfficiency(100)", 0),
                                     (axes[1], (3, 4), "Dilation(K') / Dilation(100)", 1)):
        ax.errorbar(kp, [p[mean] for p in points], yerr=[p[err] for p in points], fmt="o-", ms=3, lw=1,
                    capsize=2, label="ours (PerSched, mean over sets 1-10)")
        ax.plot(list(paper), [v[j] for v in paper.values()], "s", color="#cc3333", label="the paper's text")
        ax.set_xscale("log")
        ax.set_xlabel("K'")
        ax.set_title(what, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Figure 7: normalised SysEfficiency and Dilation against K' (eps = 0.01)", fontsize=9)
    return finish(fig, path, dpi=110)
