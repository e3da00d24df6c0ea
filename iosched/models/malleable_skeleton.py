"""Job skeletons: every schedule of one malleable job, up to a few continuous variables, in exact arithmetic.

**What a job's schedule is.** The evaluator (:mod:`iosched.evaluate.malleable`) accepts, per job, runs
R_0, ..., R_m at ladder sizes p_0, ..., p_m (consecutive sizes differ: two runs at one size with nothing
between are one run) and between R_(i-1) and R_i an *action*: a resize p_(i-1) -> p_i, that is a
reconfiguration (holding max(p_(i-1), p_i), at least cost c_i = cost(p_(i-1), p_i) long), before an
expansion possibly a stall (holding p_(i-1), at most the timeout), each action beginning at one of the
job's checks S + k period (k >= 1, S the job's start). A stall alone that ends at the old size (an
abandoned expansion) is an action too. Runs have positive lengths, so an action's check k_i satisfies
k_i > k_(i-1) and every check during an action is skipped, as the evaluator requires.

**Dominance (each rule keeps, for every schedule, one at least as good in the set that remains):
"better" means no later completion of this job and, at every instant, no more nodes held by it.**

1. *An abandoned expansion* (a stall, then a run at the old size) is replaced by running through it: the
   job holds the same p nodes, progresses sooner, ends sooner (its later actions stay at their checks,
   which depend on S alone; once its work is done it releases everything).
2. *A reconfiguration longer than its cost* is shortened to its cost, the run after it beginning
   earlier: during the difference the job holds the new size q <= max(p, q) and progresses; the rest as
   in rule 1. So a reconfiguration lasts exactly c_i.
3. *A size dominated at constant costs*: where every resize of the job costs the same
   (``redistribute_s == 0``), a size q with a smaller ladder size p of no longer run time (t(p) <= t(q))
   is replaced by p in every run: fewer nodes held in the run, in the reconfigurations around it
   (max(x, p) <= max(x, q)) and in a stall before it (unchanged: the old size), the same costs, no
   slower progress; where two runs at p become neighbours, their resize goes (rule 1's argument).

**What remains: a skeleton** (sizes p_0..p_m, checks k_1 < ... < k_m) and, given it, the job's
schedule is fixed by its start S >= a and, for each expansion i, its stall s_i in [0, timeout]
(a stall of length 0 is none; the closure of the evaluator's (0, timeout] is that interval). With
l_i the run lengths::

    l_0 = k_1 P,   l_i = (k_(i+1) - k_i) P - s_i - c_i   (0 < i < m),   l_m = t(p_m) (1 - W),
    W = sum_(i<m) l_i / t(p_i),      C = S + k_m P + s_m + c_m + l_m   (m = 0: C = S + t(p_0)),

every one affine in (S, s). The nodes held step from p_(i-1) to p_i at S + k_i P + s_i for an
expansion (the stall holds the old size, the reconfiguration the new) and at S + k_i P + c_i for a
shrink (the reconfiguration holds the old size): the job's *blocks*, m + 1 of them, each of one demand,
end points affine too. A skeleton needs (k_(i+1) - k_i) P > c_i (a positive run after each action) and
l_i >= 0, l_m >= 0 in the closure (s_i <= (k_(i+1) - k_i) P - c_i and sum_i s_i / t(p_i) >= W(0) - 1).

**Own minimum.** C - a grows with S and with every s_i (dC/ds_i = t(p_m) / t(p_i) > 0 for i < m, 1 for
i = m), so over the closure it is least at S = a and the stalls as small as the work allows: F = k_m P +
c_m + t(p_m)(1 - W(0)) where W(0) <= 1, else k_m P + c_m (the stalls absorb W(0) - 1 at rate t(p_m)
each, where they can; a skeleton whose stalls cannot is empty). F is a lower bound on the job's C - a over
every schedule of the skeleton.

**Finitely many.** A job whose C - a may be at most D (an incumbent's sum less the other jobs' shortest
runs) has skeletons of k_m P + c_min <= F <= D only: checks up to (D - c_min) / P, every run size from
the ladder. :func:`skeletons` lists them, least F first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from iosched.errors import ParameterError
from iosched.instances.malleable import Job
from iosched.solvers import Deadline

Affine = tuple[Fraction, tuple[tuple[int, Fraction], ...]]  # constant, (local variable, coefficient): 0 = S


@dataclass(frozen=True)
class JobData:
    """One job in exact arithmetic: arrival, period, timeout (s), usable sizes (rule 3), run times and costs."""

    id: str
    arrival: Fraction
    period: Fraction
    timeout: Fraction
    sizes: tuple[int, ...]
    time: dict[int, Fraction] = field(repr=False)
    cost: dict[tuple[int, int], Fraction] = field(repr=False)
    fastest: Fraction = Fraction(0)  # the shortest run time at any size: the least C - a over every schedule
    cheapest: Fraction = Fraction(0)  # the least cost of a resize between usable sizes (0 with one size)


def job_data(job: Job) -> JobData:
    """``job`` in exact arithmetic (every float's exact value), its dominated sizes dropped (rule 3)."""
    time = {p: Fraction(t) for p, t in zip(job.sizes, job.times)}
    sizes = list(job.sizes)
    if Fraction(job.redistribute_s) == 0:  # every resize costs reconfig_s: rule 3 applies
        sizes = [q for q in sizes if not any(p < q and time[p] <= time[q] for p in job.sizes)]
    cost = {(p, q): Fraction(job.reconfig_s) + Fraction(job.redistribute_s) / min(p, q)
            for p in sizes for q in sizes if p != q}
    return JobData(job.id, Fraction(job.arrival), Fraction(job.period), Fraction(job.timeout), tuple(sizes),
                   {p: time[p] for p in sizes}, cost, min(time.values()), min(cost.values(), default=Fraction(0)))


@dataclass(frozen=True)
class Skeleton:
    """Sizes p_0..p_m, checks k_1..k_m (module docstring) and the own minimum F (s) of C - a."""

    sizes: tuple[int, ...]
    checks: tuple[int, ...]
    own: Fraction


def _own(job: JobData, sizes: list[int], checks: list[int]) -> Fraction | None:
    """F of the module docstring, or None where the stalls cannot keep the last run's length >= 0."""
    t, P = job.time, job.period
    if not checks:
        return t[sizes[0]]
    m = len(checks)
    work, absorb = Fraction(0), Fraction(0)
    for i in range(m):  # runs 0 .. m-1
        c = job.cost[(sizes[i - 1], sizes[i])] if i else Fraction(0)
        gap = (checks[i] - (checks[i - 1] if i else 0)) * P
        work += (gap - c) / t[sizes[i]]
        if i and sizes[i] > sizes[i - 1]:
            absorb += min(job.timeout, gap - c) / t[sizes[i]]
    end = checks[-1] * P + job.cost[(sizes[-2], sizes[-1])]
    if work <= 1:
        return end + t[sizes[-1]] * (1 - work)
    return end if absorb >= work - 1 else None


def skeletons(job: JobData, limit: Fraction, deadline: Deadline | None = None,
              cap: int = 1_000_000) -> list[Skeleton]:
    """Every skeleton of ``job`` whose own minimum F is at most ``limit`` (s), least F first. Refuses
    (ParameterError) beyond ``cap`` skeletons; stops with TimeoutError past ``deadline``."""
    out: list[Skeleton] = []
    P = job.period
    last = (limit - job.cheapest) / P  # any action at check k gives F >= k P + c_min
    visited = 0

    def extend(sizes: list[int], checks: list[int]) -> None:
        nonlocal visited
        visited += 1
        if deadline is not None and visited % 1024 == 0 and deadline.expired():
            raise TimeoutError("skeleton enumeration")
        own = _own(job, sizes, checks)
        if own is None:  # W(0) - 1 beyond what the stalls absorb: only grows with more actions
            return
        if own <= limit:
            out.append(Skeleton(tuple(sizes), tuple(checks), own))
            if len(out) > cap:
                raise ParameterError(f"job {job.id} has more than {cap:,} skeletons within {float(limit):.6g} s of "
                                     f"its arrival: too many to enumerate (fewer jobs, or a better incumbent)")
        p = sizes[-1]
        c_before = job.cost[(sizes[-2], p)] if checks else Fraction(0)
        k = (checks[-1] if checks else 0) + 1
        while k <= last:
            if not checks or (k - checks[-1]) * P > c_before:  # a positive run before this action
                for q in job.sizes:
                    if q != p:
                        extend(sizes + [q], checks + [k])
            k += 1

    for p in job.sizes:
        extend([p], [])
    out.sort(key=lambda s: (s.own, len(s.checks)))
    return out


@dataclass(frozen=True)
class Shape:
    """A skeleton's schedule as affine functions of its local variables (0: the start S; 1..: the stalls of
    the expansions in ``stalls``, in order): block boundaries ``points`` (p_0 from points[0] to points[1],
    ..., the completion last), demands, the stalls' upper bounds, and the work row
    ``sum coef s >= rhs`` (None where it cannot bind)."""

    skeleton: Skeleton
    stalls: tuple[int, ...]  # action indices i (1..m) with a stall variable
    stall_max: tuple[Fraction, ...]
    points: tuple[Affine, ...]
    demand: tuple[int, ...]
    work: tuple[tuple[tuple[int, Fraction], ...], Fraction] | None

    @property
    def variables(self) -> int:
        return 1 + len(self.stalls)


def shape(job: JobData, sk: Skeleton) -> Shape:
    """The :class:`Shape` of ``sk`` (module docstring's formulas)."""
    t, P, sizes, checks = job.time, job.period, sk.sizes, sk.checks
    m = len(checks)
    stalls = tuple(i for i in range(1, m + 1) if sizes[i] > sizes[i - 1] and job.timeout > 0)
    var = {i: n + 1 for n, i in enumerate(stalls)}
    cost = [Fraction(0)] + [job.cost[(sizes[i - 1], sizes[i])] for i in range(1, m + 1)]
    stall_max = []
    for i in stalls:
        room = (checks[i] - checks[i - 1]) * P - cost[i] if i < m else job.timeout  # the run after stays >= 0
        stall_max.append(min(job.timeout, room))
    points: list[Affine] = [(Fraction(0), ((0, Fraction(1)),))]
    for i in range(1, m + 1):
        if i in var:  # an expansion with its stall: the new size from the stall's end
            points.append((checks[i - 1] * P, ((0, Fraction(1)), (var[i], Fraction(1)))))
        elif sizes[i] > sizes[i - 1]:  # an expansion without (timeout 0): the new size from the check
            points.append((checks[i - 1] * P, ((0, Fraction(1)),)))
        else:  # a shrink: the old size until the reconfiguration ends
            points.append((checks[i - 1] * P + cost[i], ((0, Fraction(1)),)))
    if m == 0:
        points.append((t[sizes[0]], ((0, Fraction(1)),)))
        return Shape(sk, (), (), tuple(points), sizes, None)
    # C = S + k_m P + s_m + c_m + t_m (1 - W), W = sum_(i<m) ((k_(i+1) - k_i) P - s_i - c_i) / t_i
    tm = t[sizes[m]]
    w0 = sum((((checks[i] - (checks[i - 1] if i else 0)) * P - cost[i]) / t[sizes[i]] for i in range(m)), Fraction(0))
    coefs = [(0, Fraction(1))]
    for i in stalls:
        coefs.append((var[i], tm / t[sizes[i]] if i < m else Fraction(1)))
    points.append((checks[m - 1] * P + cost[m] + tm * (1 - w0), tuple(coefs)))
    inner = tuple((var[i], 1 / t[sizes[i]]) for i in stalls if i < m)
    work = (inner, w0 - 1) if w0 > 1 else None  # l_m >= 0; with W(0) <= 1 it holds for every s >= 0
    return Shape(sk, stalls, tuple(stall_max), tuple(points), sizes, work)


def realize(data: JobData, sh: Shape, values: list[Fraction]) -> tuple[list[tuple], Fraction] | None:
    """The job's intervals (start, end, nodes, kind) in Fractions and its completion for its variables
    ``values`` (start, stalls), ending when its work is done (before its last action where the stalls
    left nothing for the last run); None where a run between two actions has length 0 (a point of the
    closure that no schedule attains)."""
    S = values[0]
    stall = {i: values[1 + n] for n, i in enumerate(sh.stalls)}
    sizes, checks, P = sh.skeleton.sizes, sh.skeleton.checks, data.period
    out, work, t = [], Fraction(0), S
    for i, p in enumerate(sizes):
        need = (1 - work) * data.time[p]
        end = S + checks[i] * P if i < len(checks) else None
        if end is None or t + need <= end:
            out.append((t, t + need, p, "run"))
            return out, t + need
        if end <= t:
            return None
        out.append((t, end, p, "run"))
        work += (end - t) / data.time[p]
        q, s = sizes[i + 1], stall.get(i + 1, Fraction(0))
        c = data.cost[(p, q)]
        if s > 0:
            out.append((end, end + s, p, "stall"))
        if c > 0:
            out.append((end + s, end + s + c, max(p, q), "reconfig"))
        t = end + s + c
    raise AssertionError("a skeleton's last run ends the job")
