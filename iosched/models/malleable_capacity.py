"""The nodes' capacity for one tuple of skeletons: a branch and bound over block orders, each node an LP
certified in exact arithmetic (:mod:`iosched.models.rational_lp`).

**The tuple's problem.** Given a skeleton per job (:mod:`iosched.models.malleable_skeleton`), every
job's blocks [b_i, b_(i+1)) (demand p_i) and completion are affine in its start S_j and stalls s_j; a
point is a schedule of the tuple when, besides the jobs' own rows (S_j >= a_j, 0 <= s <= its bound, the
work row), at every instant the demands of the blocks holding it sum to at most N. The blocks are
half-open intervals, so two of them are disjoint exactly when one ends by the other's start
(``e <= s'``: non-strict); a set of intervals that pairwise intersect has a common point (Helly, on the
line). Hence capacity holds exactly when every set F of blocks of different jobs (two blocks of one job
never overlap) whose demands sum to more than N holds a disjoint pair. Minimise the sum of C_j - a_j.

**Branch and bound, no big-M.** A node is the jobs' rows plus order rows ``e_b <= s_b'`` ("b before b'") and
overlap rows ``s_b <= e_b', s_b' <= e_b`` (their closure). At a node's optimum, a sweep over the blocks
(ends before starts at equal times) finds the instants where the demands exceed N, and from the blocks
holding each the fewest largest whose demands exceed N: of these sets the smallest (the first of them where
several tie), F = {f_1 .. f_r}, all pairwise overlapping; it has r (r - 1) children, so the smallest set
makes the fewest (the first overloaded instant's set instead took grid6-2 5.5 times the nodes:
benchmarks/malleable_exact.md). The children split on F's pairs (f_a, f_b) in order: child (a, b, dir) adds
the order of that pair in direction dir and the overlap rows of the pairs before it. Every point of the node
that meets capacity has a disjoint pair in F; with (a, b) the first such pair, the pairs before it overlap
(strictly, so also in the closure), so the point lies in one child: the children cover the node's feasible
points. A node whose optimum meets capacity is a leaf: its exact optimum is the node's minimum and a
schedule of the tuple (its block order as found).

**What is proven.** Each LP is solved by the profile's backend in floating point and certified: a safe lower
bound (on HiGHS first in floating point with a proven error allowance, and in exact arithmetic where that
falls short of ``cut`` while the backend's optimum comes within NEAR of it: a tie the allowance could hide),
an exact optimal vertex (where the backend's basis checks out) or infeasibility (a Farkas ray, in floating
point or exactly, or phase one). A node whose lower bound is at least ``cut`` (the incumbent's sum, or a
start's) is pruned: nothing in it is better. The tuple's ``lower`` is the least lower bound over the leaves,
the pruned and the unresolved nodes (and, past the deadline, the open ones: each inherits its parent's
bound, valid since a child is a subset), which cover the tuple's feasible set: a lower bound on the tuple's
minimum, or at least ``cut`` where nothing below ``cut`` exists. Non-strict rows relax the evaluator's
strict ones (positive lengths), so this minimum is over the closure of the tuple's schedules: a lower bound
on each of them. The order rows hold no big constants: the LPs stay as exact as their data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from iosched.models.malleable_skeleton import Affine, JobData, Shape
from iosched.models.rational_lp import RationalLP, Row, Session, prove
from iosched.solvers import Deadline

if TYPE_CHECKING:
    import numpy as np

FLOAT_OVERLAP = 1e-6  # s: without an exact point, overlaps shorter than this are not branched on
NEAR = 1e-7  # relative: a node whose floating-point optimum comes this near the cut, and whose bound proven in
#              floating point does not reach it, gets its exact safe bound (elsewhere it is branched on)


@dataclass
class Block:
    job: int
    index: int
    demand: int
    start: Affine  # in the tuple's variables
    end: Affine
    start_f: tuple = ()  # the same in floats
    end_f: tuple = ()


@dataclass
class TupleResult:
    """A tuple's outcome: ``lower`` (valid for every schedule of the tuple: its minimum, or at least the
    ``cut`` it was given), the best schedule found below ``cut`` (its exact variables and value) if any,
    and counts. ``stopped``: the deadline came first (``lower`` then counts the open nodes)."""

    lower: Fraction | float
    x: list[Fraction] | None = None
    value: Fraction | None = None
    nodes: int = 0
    lps: int = 0
    unresolved: int = 0
    stopped: bool = False
    notes: list[str] = field(default_factory=list)


def _globalise(expr: Affine, offset: int) -> Affine:
    const, coefs = expr
    return const, tuple((offset + v, c) for v, c in coefs)


def _value(expr: Affine, x) -> Fraction | float:
    const, coefs = expr
    return const + sum(c * x[v] for v, c in coefs)


def _floats(expr: Affine) -> tuple:
    return float(expr[0]), tuple((v, float(c)) for v, c in expr[1])


def _row_le(left: Affine, right: Affine) -> Row:
    """The row ``left <= right``."""
    coefs: dict[int, Fraction] = {}
    for v, c in left[1]:
        coefs[v] = coefs.get(v, Fraction(0)) + c
    for v, c in right[1]:
        coefs[v] = coefs.get(v, Fraction(0)) - c
    return {v: c for v, c in coefs.items() if c}, None, right[0] - left[0]


class TupleModel:
    """One tuple's LP data and blocks; ``offsets[j]``: job j's first variable (its start)."""

    def __init__(self, jobs: list[JobData], shapes: list[Shape], nodes: int, cut: Fraction):
        self.jobs, self.shapes, self.nodes = jobs, shapes, nodes
        self.offsets, n = [], 0
        for sh in shapes:
            self.offsets.append(n)
            n += sh.variables
        # a point below cut has every S_j - a_j < slack (each job's C - a is at least its own minimum): a
        # start bound of slack would do, a larger one keeps the LPs from going infeasible where a start later
        # than that would be needed (those points cost at least cut: the bound prunes them the same)
        slack = max(cut - sum(sh.skeleton.own for sh in shapes), Fraction(0))
        reach = slack + max(j.arrival for j in jobs) - min(j.arrival for j in jobs) + sum(
            sh.points[-1][0] + sum(c * sh.stall_max[v - 1] for v, c in sh.points[-1][1] if v) for sh in shapes)
        cost, lower, upper = [Fraction(0)] * n, [Fraction(0)] * n, [Fraction(0)] * n
        constant = Fraction(0)
        rows: list[Row] = []
        self.blocks: list[Block] = []
        self.completion: list[Affine] = []
        for j, (job, sh, off) in enumerate(zip(jobs, shapes, self.offsets)):
            lower[off], upper[off] = job.arrival, job.arrival + reach
            for k, bound in enumerate(sh.stall_max):
                upper[off + 1 + k] = bound
            done = _globalise(sh.points[-1], off)
            self.completion.append(done)
            constant += done[0] - job.arrival
            for v, c in done[1]:
                cost[v] += c
            if sh.work is not None:
                coefs, rhs = sh.work
                rows.append(({off + v: c for v, c in coefs}, rhs, None))
            points = [_globalise(p, off) for p in sh.points]
            for i, p in enumerate(sh.demand):
                self.blocks.append(Block(j, i, p, points[i], points[i + 1], _floats(points[i]), _floats(points[i + 1])))
        self.lp = RationalLP(cost, constant, lower, upper, rows)
        self._before: dict[tuple[int, int], Row] = {}  # rows made once: the LP sessions keep their float forms
        self._overlap: dict[tuple[int, int], list[Row]] = {}

    def before(self, a: int, b: int) -> Row:
        """Block a ends by block b's start."""
        if (a, b) not in self._before:
            self._before[(a, b)] = _row_le(self.blocks[a].end, self.blocks[b].start)
        return self._before[(a, b)]

    def overlap(self, a: int, b: int) -> list[Row]:
        """Blocks a and b overlap (in the closure: each starts by the other's end)."""
        if (a, b) not in self._overlap:
            self._overlap[(a, b)] = [_row_le(self.blocks[a].start, self.blocks[b].end),
                                     _row_le(self.blocks[b].start, self.blocks[a].end)]
        return self._overlap[(a, b)]

    def overload(self, x, exact: bool) -> list[int] | None:
        """The fewest largest blocks over N at the overloaded instant of point ``x`` where they are fewest
        (module docstring), or None. ``exact``: x in Fractions, compared exactly; else floats, overlaps shorter
        than FLOAT_OVERLAP ignored."""
        shrink = 0 if exact else FLOAT_OVERLAP / 2
        events = []
        for k, b in enumerate(self.blocks):
            if exact:
                s, e = _value(b.start, x), _value(b.end, x)
            else:
                s, e = _value(b.start_f, x) + shrink, _value(b.end_f, x) - shrink
            if s < e:
                events.append((e, 0, k))
                events.append((s, 1, k))
        events.sort()
        active, load, best = set(), 0, None
        for _, kind, k in events:
            if kind == 0:
                active.discard(k)
                load -= self.blocks[k].demand
                continue
            active.add(k)
            load += self.blocks[k].demand
            if load > self.nodes:
                chosen, total = [], 0
                for i in sorted(active, key=lambda i: (-self.blocks[i].demand, i)):
                    chosen.append(i)
                    total += self.blocks[i].demand
                    if total > self.nodes:
                        break
                if best is None or len(chosen) < len(best):
                    best = sorted(chosen)
                    if len(best) == 2:
                        break
        return best

    def children(self, chosen: list[int], x) -> list[list[Row]]:
        """The children's extra rows for an overloaded set (module docstring), the one whose order the
        point ``x`` comes nearest to first."""
        pairs = [(a, b) for n, a in enumerate(chosen) for b in chosen[n + 1:]]
        out: list[tuple[float, int, list[Row]]] = []
        before: list[Row] = []
        for a, b in pairs:
            for first, second in ((a, b), (b, a)):
                miss = _value(self.blocks[first].end_f, x) - _value(self.blocks[second].start_f, x)
                out.append((float(miss), len(out), before + [self.before(first, second)]))
            before = before + self.overlap(a, b)
        out.sort(key=lambda c: (c[0], c[1]))
        return [rows for _, _, rows in out]


def solve_tuple(model: TupleModel, cut: Fraction, solver: str, deadline: Deadline,
                accept: Callable[[list[Fraction]], Fraction | None], floor: Fraction | float = 0) -> TupleResult:
    """The branch and bound of the module docstring: the best schedule of the tuple below ``cut`` (which
    falls as better ones are found) and a lower bound on the tuple's minimum (at least ``cut`` where none
    is below it). Depth first; each LP on backend ``solver`` within what ``deadline`` leaves. A leaf's
    exact point becomes the incumbent where ``accept`` makes a schedule of it (its value, which may be
    below the point's: a job whose last run is empty ends before its last action); where it cannot (a
    run of length 0 between two actions, in the closure only) the leaf's bound still counts. ``floor``: a
    bound known beforehand on every point of the tuple below ``cut`` (the prices'), the root's bound that
    every node inherits (past the deadline, the open nodes count at least that)."""
    out = TupleResult(math.inf)
    root = max(sum(sh.skeleton.own for sh in model.shapes), floor)  # own minima: the root LP's optimum
    stack: list[tuple[list[Row], Fraction | float]] = [([], root)]
    session = Session(model.lp, solver)
    while stack:
        if deadline.expired():
            out.stopped = True
            out.lower = min([out.lower] + [inherited for _, inherited in stack])
            break
        extra, inherited = stack.pop()
        out.nodes += 1
        if inherited >= cut:
            out.lower = min(out.lower, inherited)
            continue
        cert, lp = session.solve(extra, max(deadline.remaining(), 0.01))
        out.lps += 1
        if cert.status == "infeasible":
            continue
        if cert.status != "optimal":
            out.unresolved += 1
            out.lower = min(out.lower, inherited)
            out.notes.append(cert.message)
            continue
        # (an optimal outcome has the backend's optimum and point)
        assert cert.estimate is not None and cert.point is not None
        lower = inherited
        if cert.lower is not None:  # proven exactly (a backend other than HiGHS)
            lower = max(lower, cert.lower)
        elif cert.floor > lower:  # proven in floating point: exact as a Fraction
            lower = Fraction(cert.floor)
        if lower < cut and cert.estimate >= float(cut) * (1 - NEAR) - NEAR:  # not proven in floats: exactly
            prove(lp, cert)
            assert cert.lower is not None  # (prove gives it its bound)
            lower = max(lower, cert.lower)
        if lower >= cut:
            out.lower = min(out.lower, lower)
            continue
        x: list[Fraction] | np.ndarray = cert.point
        chosen = model.overload(x, False)
        if chosen is None:  # capacity holds at the backend's point: find the exact one
            lp.certify_vertex(cert)  # proves the node's bound too
            assert cert.lower is not None
            lower = max(lower, cert.lower)
            if lower >= cut:
                out.lower = min(out.lower, lower)
                continue
            if cert.x is None:
                rounded = [Fraction(v) for v in x]
                if lp.feasible(rounded):
                    cert.x, cert.value = rounded, lp.objective(rounded)
            if cert.x is None:
                out.unresolved += 1
                out.lower = min(out.lower, lower)
                out.notes.append("an LP optimum meeting capacity in floating point, not exactly")
                continue
            x = cert.x
            chosen = model.overload(x, True)
        if chosen is None:  # a leaf: the node's minimum (within its proof) at a point of the closure
            out.lower = min(out.lower, lower)
            assert cert.x is not None and cert.value is not None  # a leaf is reached only with x = cert.x
            if cert.value < cut:
                value = accept(cert.x)
                if value is None:
                    out.notes.append("a leaf's optimum has a run of length 0 between two actions")
                elif value < cut:
                    cut, out.x, out.value = value, cert.x, value
            continue
        for rows in reversed(model.children(chosen, x)):
            stack.append((extra + rows, lower))
    return out
