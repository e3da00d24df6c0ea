"""Draw a periodic pattern: compute and I/O per application, and bandwidth use against B."""

from __future__ import annotations

from bisect import bisect_right

from matplotlib import colormaps
from matplotlib.figure import Figure

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
    colors = colormaps["tab20"].colors
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
