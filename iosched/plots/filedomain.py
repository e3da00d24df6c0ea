"""Draw file domains: the stripes as a servers x rounds grid coloured by aggregator, conflicts marked.

Row s is server s's object in object order; round r is its r-th stripe (stripe k is at row
(first_server + k) mod S, column k div S). Each aggregator's data is a bar in its colour;
red ticks mark where the owner changes in lock order (per server with extent locking, in
file order with tokens), red hatching the stripes written by more than one aggregator.
Only the first ``max_rounds`` rounds of the region are drawn.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from iosched.evaluate.filedomain import (
    Domains,
    data_pieces,
    evaluate,
    server_runs,
    shared_units,
)
from iosched.instances.filedomain import FileDomainInstance
from iosched.plots import figure, finish


def draw(ax, instance: FileDomainInstance, solution: Domains, title: str = "", max_rounds: int = 64) -> None:
    """Draw the domains on ``ax`` (nothing but the title if the solution is infeasible)."""
    ev = evaluate(instance, solution)
    S, w = instance.stripe_count, instance.stripe_size
    if not ev.feasible:
        ax.set_title((title + "\n" if title else "") + f"infeasible: {ev.violations[0]}", fontsize=9)
        ax.axis("off")
        return
    starts, ends, owners = solution.owners()
    order = np.argsort(starts, kind="stable")
    starts, ends, owners = data_pieces(instance, starts[order], ends[order], owners[order])
    r0 = instance.first_stripe // S
    r1 = min((instance.region_end - 1) // w // S + 1, r0 + max_rounds)
    srv, obj_s, obj_e, own = server_runs(instance, starts, ends, owners)
    x0, x1 = obj_s / w - r0, obj_e / w - r0
    keep = x0 < r1 - r0
    cmap = colormaps["tab20" if instance.aggregators > 10 else "tab10"]
    for s, a, b, o in zip(srv[keep], x0[keep], np.minimum(x1[keep], r1 - r0), own[keep]):
        ax.add_patch(Rectangle((a, s - 0.4), b - a, 0.8, color=cmap(int(o) % cmap.N), lw=0))
    rounds = r1 - r0
    if rounds <= 64:
        for r in range(rounds + 1):
            ax.axvline(r, color="white", lw=0.8, zorder=2)
    for k in shared_units(w, starts, ends, owners)[0]:
        r = k // S - r0
        if r < rounds:
            ax.add_patch(Rectangle((r, instance.server_of(k) - 0.45), 1, 0.9, fill=False, hatch="///",
                                   edgecolor="red", lw=0.8))
    if instance.locking == "extent":
        change = np.zeros(len(srv), dtype=bool)
        change[1:] = (srv[1:] == srv[:-1]) & (own[1:] != own[:-1])
        marks = zip(srv[change], x0[change])
    else:
        at = starts[1:][owners[1:] != owners[:-1]]
        marks = zip(instance.server_of(at // w), (at // w // S) + (at % w) / w - r0)
    for s, x in marks:
        if x < rounds:
            ax.plot([x, x], [s - 0.5, s + 0.5], color="red", lw=2)
    ax.set_xlim(0, rounds)
    ax.set_ylim(S - 0.5, -0.5)
    ax.set_yticks(range(S) if S <= 16 else range(0, S, max(1, S // 8)))
    ax.set_yticklabels([f"S{s}" for s in (range(S) if S <= 16 else range(0, S, max(1, S // 8)))])
    ax.set_xlabel("round (stripe index in the server's object)" + (f", first {rounds}" if rounds == max_rounds
                                                                    else ""))
    used = sorted(set(own.tolist()))
    if len(used) <= 16:
        ax.legend(handles=[Patch(color=cmap(a % cmap.N), label=f"P{a}") for a in used], fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.0, 1.0))
    head = f"{title}: " if title else ""
    ax.set_title(f"{head}{ev.time * 1e3:.3g} ms, {ev.conflicts} conflicts, {ev.false_sharing} shared stripes",
                 fontsize=9)


def plot(instance: FileDomainInstance, solution: Domains, path=None, title: str = "") -> Figure:
    """Save the servers x rounds picture of ``solution`` to ``path``."""
    rounds = min(64, -(-instance.stripes // instance.stripe_count) + 1)
    fig, ax = figure(figsize=(max(5.0, 1.5 + 0.35 * rounds), 1.2 + 0.35 * min(instance.stripe_count, 32)))
    draw(ax, instance, solution, title or instance.name)
    return finish(fig, path)
