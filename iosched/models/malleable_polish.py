"""Polish a malleable schedule in continuous time: the same sizes at the same checks, the same order of the
jobs' blocks, every start, stall and reconfiguration as early and as short as the rules allow (one LP).

**Why.** The grid models (``cpsat``, ``milp``, ``rigid-optimal``) round every time to their grid: a start
waits for the next grid step after its arrival, a reconfiguration of 0.42 s lasts a whole 1 s step, a run
time is rounded up. Their schedules are feasible but leave time on the table that no grid can see.

**The LP.** Read each job's skeleton off the schedule (:mod:`iosched.models.malleable_skeleton`: its run sizes
p_0..p_m and the checks k_1..k_m where its actions begin; the schedule's actions must begin at its checks
S + k P, as the evaluator requires). Given the skeleton, the job's blocks (the nodes it holds, step by step)
and its completion are affine in its start S and its stalls (:func:`~iosched.models.malleable_skeleton.shape`,
reconfigurations at exactly their cost: dominance rule 2 there). Take the schedule's own start and stalls as
the reference point: by rule 2 it holds, at every instant, no more nodes than the schedule did, so it meets
capacity. For every pair of blocks of different jobs that are disjoint at the reference (one ends by the
other's start), keep that order: a row ``end <= start``. Minimise the sum of completions subject to those rows,
S >= the arrival, each stall in [0, its bound] and the work row.

**Capacity holds at the LP's optimum.** Take any instant and the blocks holding it there: they pairwise
overlap, so no pair of them is disjoint at the reference (the rows keep every disjoint pair disjoint); blocks
that pairwise overlap on the line share a point (Helly), so at the reference they all held one instant, where
the reference met capacity: their demands sum to at most N. The reference is a feasible point of the LP, so the
optimum is no worse than the schedule: the polish never loses (and the evaluator checks the result anyway:
the schedule is kept where the polished one does not score better).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.instances.malleable import MalleableInstance
from iosched.models.malleable_skeleton import Affine, JobData, Skeleton, job_data, realize, shape
from iosched.solvers import Deadline
from iosched.solvers.lp import LP

CHECK_TOLERANCE = 1e-6  # s: an action this close to a check begins at it (the evaluator's own time tolerance)


def read_skeleton(data: JobData, intervals: tuple[Interval, ...]) -> tuple[Skeleton, list[Fraction]] | None:
    """The skeleton of one job's intervals and its reference values (start, then the stalls of the
    expansions that :func:`~iosched.models.malleable_skeleton.shape` gives a variable), or None where the
    intervals are not of that form (an action off the job's checks, a size outside ``data.sizes``)."""
    start = Fraction(intervals[0].start)
    sizes: list[int] = []
    checks: list[int] = []
    stalls: dict[int, Fraction] = {}
    pending: Interval | None = None  # the action (stall or reconfiguration) that began at the last check
    for iv in intervals:
        if iv.kind == "run":
            if sizes and iv.nodes == sizes[-1] and pending is None:
                continue  # one run split in two (or an abandoned expansion): rule 1 of the skeleton module
            if sizes and iv.nodes == sizes[-1]:
                pending = None  # an abandoned expansion, run through (rule 1)
                continue
            if iv.nodes not in data.sizes:
                return None
            if sizes:
                if pending is None:
                    return None  # a size change without an action: only a cost of 0 allows it
                k = round(float((Fraction(pending.start) - start) / data.period))
                if k < 1 or abs(float(start + k * data.period) - pending.start) > CHECK_TOLERANCE or \
                        (checks and k <= checks[-1]):
                    return None
                checks.append(k)
            sizes.append(iv.nodes)
            pending = None
        elif pending is None:
            pending = iv
            if iv.kind == "stall":
                stalls[len(sizes)] = Fraction(iv.end) - Fraction(iv.start)
    if not sizes:
        return None
    sk = Skeleton(tuple(sizes), tuple(checks), Fraction(0))  # own minimum unused here
    sh = shape(data, sk)
    values = [start] + [min(stalls.get(i, Fraction(0)), bound) for i, bound in zip(sh.stalls, sh.stall_max)]
    return sk, values


def _at(expr: Affine, x: np.ndarray, offset: int) -> float:
    return float(expr[0]) + sum(float(c) * x[offset + v] for v, c in expr[1])


def polish(instance: MalleableInstance, schedule: Schedule, solver: str = "highs",
           deadline: Deadline | None = None) -> Schedule:
    """``schedule`` polished by the LP of the module docstring where that scores better by the evaluator's
    mean completion, else ``schedule`` itself (also where a job's intervals do not read as a skeleton, the
    LP fails or ``deadline`` leaves no time)."""
    before = evaluate(instance, schedule)
    if not before.feasible:
        return schedule
    jobs, shapes, refs = [], [], []
    for job in instance.jobs:
        data = job_data(job)
        read = read_skeleton(data, schedule.jobs[job.id])
        if read is None:
            return schedule
        jobs.append(data)
        shapes.append(shape(data, read[0]))
        refs.append(read[1])
    offsets = np.cumsum([0] + [sh.variables for sh in shapes])
    x0 = np.array([float(v) for ref in refs for v in ref])
    lo = np.zeros(len(x0))
    hi = np.full(len(x0), np.inf)
    cost = np.zeros(len(x0))
    blocks = []  # (job, its first variable, start, end): each block's ends as affine expressions
    rows: list[tuple[dict[int, float], float, float]] = []  # entries, lo, hi
    for j, (data, sh) in enumerate(zip(jobs, shapes)):
        off = int(offsets[j])
        lo[off] = float(data.arrival)
        hi[off + 1: off + sh.variables] = [float(b) for b in sh.stall_max]
        for v, c in sh.points[-1][1]:
            cost[off + v] += float(c)
        if sh.work is not None:
            coefs, rhs = sh.work
            rows.append(({off + v: float(c) for v, c in coefs}, float(rhs), np.inf))
        for i in range(len(sh.demand)):
            blocks.append((j, off, sh.points[i], sh.points[i + 1]))
    ends = [(_at(s, x0, off), _at(e, x0, off)) for _, off, s, e in blocks]
    for a, (ja, offa, _, ea) in enumerate(blocks):
        if deadline is not None and deadline.expired():  # (quadratic in the blocks: hundreds of jobs take seconds)
            return schedule
        for b, (jb, offb, sb, _) in enumerate(blocks):
            if ja != jb and ends[a][1] <= ends[b][0] + CHECK_TOLERANCE:
                # end_a - start_b <= what the reference has (0, or an overlap within the evaluator's tolerance)
                entries: dict[int, float] = {}
                for v, c in ea[1]:
                    entries[offa + v] = entries.get(offa + v, 0.0) + float(c)
                for v, c in sb[1]:
                    entries[offb + v] = entries.get(offb + v, 0.0) - float(c)
                slack = max(ends[a][1] - ends[b][0], 0.0)
                rows.append((entries, -np.inf, float(sb[0]) - float(ea[0]) + slack))
    if deadline is not None and deadline.remaining() <= 0:
        return schedule
    import scipy.sparse as sp  # (here: import iosched loads no SciPy)

    lp = LP(solver)
    lp.add_rows([r[1] for r in rows], [r[2] for r in rows])
    r_idx, c_idx, vals = [], [], []
    for n, (entries, _, _) in enumerate(rows):
        for v, coef in entries.items():
            r_idx.append(n)
            c_idx.append(v)
            vals.append(coef)
    lp.add_cols(cost, lo, hi, sp.csc_matrix((vals, (r_idx, c_idx)), shape=(len(rows), len(x0))))
    res = lp.solve(deadline.remaining() if deadline is not None else 60.0)
    if res.x is None:
        return schedule
    out = {}
    for j, (data, sh) in enumerate(zip(jobs, shapes)):
        off = int(offsets[j])
        values = [Fraction(float(v)) for v in res.x[off: off + sh.variables]]
        values[0] = max(values[0], data.arrival)
        made = realize(data, sh, values)
        if made is None:
            return schedule
        out[data.id] = tuple(Interval(float(s), float(e), p, kind) for s, e, p, kind in made[0])
    polished = Schedule(out)
    after = evaluate(instance, polished)
    if after.feasible and after.mean_completion < before.mean_completion:
        return polished
    return schedule
