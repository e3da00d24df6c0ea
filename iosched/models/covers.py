"""Cover inequalities of a knapsack row, shared by the models whose capacity rows are knapsacks of binaries
(window's node and burst-buffer rows, malleable's node rows per time slot)."""

from __future__ import annotations


def cardinality_cuts(sizes, capacity: float) -> list[tuple[list[int], int]]:
    """Cover inequalities of the knapsack Σ_i s_i x_i <= C (x binary, s_i >= 0): for each size w of an item,
    Σ_{i: s_i >= w} x_i <= floor(C / w), as (items, right-hand side), where more items than that are that
    large (else the row is implied by x <= 1).

    Valid for every 0/1 point of the row: each item counted takes at least w, so more than floor(C / w) of
    them take more than C. It is the extended cover inequality of the cover made of the floor(C / w) + 1
    smallest of those items (any floor(C / w) + 1 items of size >= w overflow C). The LP relaxation may
    break it: it can take 1.6 of two items just above C / 2, where the row for that size allows 1."""
    out = []
    sizes = [float(s) for s in sizes]
    for w in sorted({s for s in sizes if s > 0}):
        items = [i for i, s in enumerate(sizes) if s >= w]
        most = int(capacity // w)
        if len(items) > most:
            out.append((items, most))
    return out
