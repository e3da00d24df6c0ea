"""The fluid bandwidth model: piecewise-constant rates on a timeline or a cycle.

A :class:`Segment` is a transfer at a constant ``rate`` (data/s) over
[start, end) seconds. On a cycle of period T a segment may run past T and wraps.
"""

from __future__ import annotations

from typing import NamedTuple


class Segment(NamedTuple):
    start: float
    end: float
    rate: float


def overlap(a: Segment, b: Segment, period: float) -> float:
    """Length (s) of time in both ``a`` and ``b`` on a cycle of ``period`` (each at most one period long)."""
    a0 = a.start % period
    a1 = a0 + (a.end - a.start)
    b0 = b.start % period
    b1 = b0 + (b.end - b.start)
    return sum(max(0.0, min(a1, b1 + s) - max(a0, b0 + s)) for s in (-period, 0.0, period))


def cyclic_load(segments: list[Segment], period: float) -> list[tuple[float, float, float]]:
    """The summed rate over [0, period): pieces (start, end, total rate).

    Each segment is at most one period long (longer ones are counted once more
    only over the wrapped tail).
    """
    events: list[tuple[float, float]] = []
    for s, e, r in segments:
        if e <= s or r == 0:
            continue
        s0 = s % period
        e0 = s0 + (e - s)
        events += [(s0, r), (min(e0, period), -r)]
        if e0 > period:  # the tail wraps to the start of the cycle
            events += [(0.0, r), (e0 - period, -r)]
    events.sort()
    pieces, load, t = [], 0.0, 0.0
    for time, delta in events:
        if time > t:
            pieces.append((t, time, load))
            t = time
        load += delta
    if t < period:
        pieces.append((t, period, load))
    return pieces


def max_min_fair(caps: list[float], capacity: float) -> list[float]:
    """Max-min fair rates: share ``capacity`` equally, each consumer capped at its own cap.

    Progressive filling: consumers whose cap is below the equal share get their cap,
    the rest split what remains.
    """
    rates = [0.0] * len(caps)
    left = capacity
    todo = sorted(range(len(caps)), key=lambda i: caps[i])
    while todo:
        share = left / len(todo)
        i = todo[0]
        if caps[i] <= share:
            rates[i] = caps[i]
            left -= caps[i]
            todo.pop(0)
        else:
            for j in todo:
                rates[j] = share
            break
    return rates


def priority_fill(caps: list[float], order: list[int], capacity: float) -> list[float]:
    """Greedy rates: in ``order``, each consumer takes min(its cap, what is left of ``capacity``)."""
    rates = [0.0] * len(caps)
    left = capacity
    for i in order:
        rates[i] = min(caps[i], left)
        left -= rates[i]
    return rates
