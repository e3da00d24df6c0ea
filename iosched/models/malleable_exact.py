"""``exact``: the least mean completion time over EVERY schedule the evaluator accepts (no time grid, no
segment cap), by skeleton enumeration and a continuous-time capacity model, every bound proven (exact arithmetic,
or floating point with a proven error allowance).

**The method.** With an incumbent of sum U (the best of ``cpsat``, ``rigid-list`` and ``dmr``, each
given a share of the budget, or jobs one after another at their fastest size), every schedule of sum
below U gives job j a C_j - a_j below D_j = U - sum_(i != j) Tmin_i (Tmin_i: job i's shortest run time,
a lower bound on its C_i - a_i in any schedule). Up to the dominance rules of
:mod:`iosched.models.malleable_skeleton` (each keeps, for every schedule, one no worse at every
instant for every job), every schedule is a point of one *tuple* of skeletons, one per job, whose own
minima F_j sum to at most its value; each job has finitely many skeletons with F_j <= D_j. The tuples
are enumerated depth first (jobs with fewest skeletons first) and a partial tuple is cut where the sum
of its F_j plus the other jobs' least F reaches U (every completion of it has at least that sum).
Lagrangian prices on the nodes over time (:mod:`iosched.models.malleable_prices`, a share of the budget)
give every skeleton a priced bound g >= its share of any tuple's sum, less a constant charge: each job's
skeletons are taken by g ascending, and a level ends where the sum of g (the chosen ones', this one's and
the later jobs' least) less the charge reaches U (the later skeletons of the level have larger g); a
skeleton that cannot stay below U with every other job's least g is dropped at once. On grid6-0 the own
minima leave 61,551 tuples below U, the prices 14. A partial tuple of two jobs or more is also cut where the
branch and bound below, on its jobs alone (a relaxation: the others' blocks dropped), plus the others' least
F reaches U. Each remaining tuple is solved by the branch and bound of
:mod:`iosched.models.malleable_capacity` (continuous start times and stalls, block orders, LPs on the
profile's backend, their bounds proven); a better schedule lowers U at once.

**The bound.** Every region of the search (a tuple cut by its sum, a branch and bound node pruned or
solved, and past the deadline every unexplored level's next skeleton and every open node) has a proven
lower bound on the sum of completions of the schedules in it; these regions cover every schedule that
could beat U. So the least of these bounds and U is a lower bound on the sum of completions of every
schedule (the closure's minimum is at most each schedule's value, since the models only relax the
evaluator's strict inequalities).

**Past the time limit** (checked in every loop: the starts, the listing, the price ascent and evaluation,
the enumeration, each tuple's branch and bound, whose LPs get the time left as their limit) the method
returns the best schedule found (the search's, else the start's) and the least bound of the regions above,
where the unexplored ones are: (a) at each level e of the depth-first path, the skeletons of its list not
tried yet, from index k on: every tuple completing the chosen skeletons of levels < e with one of them has a
sum at least the chosen ones' F, the least F from k on and the later levels' least F (and at least the same
in g less the charge, the list being in order of g); these sets with the regions already closed cover
every tuple, hence every schedule below the cut; (b) a tuple's open branch and bound nodes, each at its
parent's proven bound (a child is a subset). Where the time limit comes while listing the skeletons, no
region is closed: the bound is the sum of the jobs' shortest run times (each C_j - a_j is at least
job j's), capped at U; while pricing, the skeletons not yet priced keep g = F (valid: g >= F under any
prices >= 0). It is the bound of ``exact``, valid for every schedule; where the search
ends it equals the value of the schedule found up to the exact proof of the last leaves (zero where
their bases check out exactly). The schedule is built from the exact optimum in Fractions and goes
through the evaluator like every method's.

**Starts and ties.** A start's value is computed exactly from its float times; the search prunes at
U (1 + 1e-9), so that a schedule of the start's value is found again from the model, exactly (a start
that holds only within the evaluator's tolerances never improves a proven optimum): the answer is the
search's own schedule wherever it found one.

Objective: the mean completion time only (others are refused by name). Exact over every schedule;
practical on a few jobs with a few checks each (the number of skeletons grows with the checks within
reach of the incumbent): the library's grid instances of 3 to 6 jobs, ``random:S:3:grid``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate
from typing import Annotated, Any

from iosched.core import EVERY_SOLUTION, MethodOutput, RunContext, Status, register
from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.heuristics.malleable import dmr
from iosched.heuristics.malleable_list import rigid_list
from iosched.instances.malleable import MalleableInstance
from iosched.models.malleable_capacity import TupleModel, solve_tuple
from iosched.models.malleable_cpsat import cpsat
from iosched.models.malleable_prices import prices
from iosched.models.malleable_skeleton import Shape, Skeleton, job_data, realize, shape, skeletons
from iosched.solvers import Deadline, load_profile
from iosched.validate import Integer, OneOf

SCOPE = "every schedule the evaluator accepts"
TIE = Fraction(1, 10**9)  # relative: the search prunes at a start's value times (1 + TIE), to find it again itself
CERTIFIED = Fraction(1, 10**9)  # relative gap at or below which the search calls its schedule optimal
CPSAT_SHARE = 0.2  # of the budget: cpsat's start (it proves its grid scope's optimum on 3 to 6 jobs in seconds)
CPSAT_MAX_S = 10.0  # s: at most, whatever the budget (the search makes better use of the rest)
LIST_SHARE = 0.05  # of the budget: rigid-list's start
MAX_SKELETONS = 200_000  # per job: beyond, the instance is refused as too large to enumerate
PRICE_SHARE = 0.25  # of the time left once the skeletons are listed and stacked: the price ascent's, at most

Objective = Annotated[str, OneOf(("mean_completion",))]
Skeletons = Annotated[int, Integer(1, 10**7)]


@dataclass
class Start:
    name: str
    schedule: Schedule
    sum: Fraction  # exact sum of C_j - a_j of its float times
    mean: float  # the evaluator's mean completion


def serial_schedule(instance: MalleableInstance) -> Schedule:
    """Jobs in arrival order, one at a time, each at its fastest size: always feasible."""
    out: dict[str, tuple[Interval, ...]] = {}
    free = -math.inf
    for job in sorted(instance.jobs, key=lambda j: (j.arrival, j.id)):
        p = job.sizes[job.times.index(min(job.times))]
        s = max(job.arrival, free)
        free = s + job.time(p)
        out[job.id] = (Interval(s, free, p, "run"),)
    return Schedule(out)


def _starts(instance: MalleableInstance, profile: str, deadline: Deadline) -> tuple[Start, list[dict]]:
    """The best start (exact sum) of cpsat, rigid-list and dmr (each in its share of the budget, called
    without a context: counted from its first line) and the serial schedule; and what each gave."""
    tried: list[dict[str, Any]] = []
    calls = [("cpsat", lambda s: _cpsat_start(instance, profile, min(s, CPSAT_MAX_S)), CPSAT_SHARE),
             ("rigid-list", lambda s: rigid_list(instance, time_limit=s).solution, LIST_SHARE),
             ("dmr", lambda s: dmr(instance, time_limit=s).solution, LIST_SHARE),
             ("serial", lambda s: serial_schedule(instance), 0.0)]
    best = None
    for name, call, share in calls:
        began, error = time.perf_counter(), None
        try:
            schedule = call(max(min(share * deadline.seconds, deadline.remaining()), 0.01)) if share else call(0)
        except Exception as e:  # noqa: BLE001 - a start that fails (cpsat's grid refusing the instance) is skipped
            schedule, error = None, f"{type(e).__name__}: {e}"
        ev = evaluate(instance, schedule) if schedule is not None else None
        value = ev.mean_completion if ev is not None and ev.feasible else None
        tried.append({"heuristic": name, "value": value, "time_s": round(time.perf_counter() - began, 3),
                      **({"error": error} if error else {})})
        if value is None or schedule is None:
            continue
        total = sum((Fraction(schedule.jobs[j.id][-1].end) - Fraction(j.arrival) for j in instance.jobs), Fraction(0))
        if best is None or total < best.sum:
            best = Start(name, schedule, total, value)
    assert best is not None, "the serial schedule is always feasible"
    return best, tried


def _cpsat_start(instance: MalleableInstance, profile: str, seconds: float) -> Schedule | None:
    """cpsat's schedule within ``seconds``: its profile's time limit counts from its context's start, put
    back so that the limit ends ``seconds`` from now."""
    limit = load_profile(profile).time_limit
    return cpsat(instance, profile=profile, context=RunContext(time.perf_counter() + seconds - limit)).solution


class Search:
    """The enumeration of the module docstring, its incumbent and its bound."""

    def __init__(self, instance: MalleableInstance, start: Start, solver: str, deadline: Deadline, cap: int):
        self.instance, self.solver, self.deadline = instance, solver, deadline
        self.jobs = [job_data(j) for j in instance.jobs]
        self.start = start
        self.cut = start.sum * (1 + TIE)
        self.best: tuple[Schedule, Fraction] | None = None  # the search's own schedule and its exact sum
        self.lower: Fraction | float = math.inf  # least bound over the regions closed so far
        self.stopped = False
        self.counts = {"tuples": 0, "partial": 0, "nodes": 0, "lps": 0, "unresolved": 0}
        self.notes: set[str] = set()
        fastest = sum(j.fastest for j in self.jobs)
        self.lists = [skeletons(j, self.cut - (fastest - j.fastest), deadline, cap) for j in self.jobs]
        self.listed = [len(lst) for lst in self.lists]
        self.charge, self.price_steps = 0.0, 0
        self.priced_bound: float | None = None  # the Lagrangian bound on the sum, once priced
        self.g = [[float(s.own) for s in lst] for lst in self.lists]  # no prices: g = F (charge 0)
        self.shapes: dict[tuple[int, Skeleton], Shape] = {}

    def _accept(self, model: TupleModel, x: list[Fraction]) -> Fraction | None:
        """Make the schedule of point ``x`` of ``model`` (the tuple's jobs in the instance's order); keep it
        as the incumbent where the evaluator accepts it; its exact sum, or None."""
        jobs, total = {}, Fraction(0)
        for job, data, sh, off in zip(self.instance.jobs, self.jobs, model.shapes, model.offsets):
            made = realize(data, sh, x[off:off + sh.variables])
            if made is None:
                return None
            ivs, done = made
            jobs[job.id] = tuple(Interval(float(s), float(e), p, k) for s, e, p, k in ivs)
            total += done - data.arrival
        schedule = Schedule(jobs)
        if not evaluate(self.instance, schedule).feasible:  # float times too close to represent: not kept
            self.notes.add("a leaf's schedule failed the evaluator in floating point")
            return None
        if self.best is None or total < self.best[1]:
            self.best = (schedule, total)
        return total

    def shapes_of(self, chosen: Sequence[Skeleton | None]) -> tuple[list[int], list[Shape]]:
        """The jobs with a skeleton in ``chosen`` and their shapes."""
        which, shapes = [], []
        for j, sk in enumerate(chosen):
            if sk is None:
                continue
            key = (j, sk)
            if key not in self.shapes:
                self.shapes[key] = shape(self.jobs[j], sk)
            which.append(j)
            shapes.append(self.shapes[key])
        return which, shapes

    def _tuple(self, chosen: Sequence[Skeleton | None], priced: float) -> None:
        """Solve the tuple ``chosen`` (a skeleton for every job; its priced bound ``priced``: the root's of its
        branch and bound)."""
        _, shapes = self.shapes_of(chosen)
        model = TupleModel(self.jobs, shapes, self.instance.nodes, self.cut)
        res = solve_tuple(model, self.cut, self.solver, self.deadline, lambda x: self._accept(model, x), priced)
        self._count(res)
        self.counts["tuples"] += 1
        self.lower = min(self.lower, res.lower)
        if res.value is not None and res.value < self.cut:
            self.cut = res.value

    def _count(self, res) -> None:
        for key in ("nodes", "lps", "unresolved"):
            self.counts[key] += getattr(res, key)
        self.notes.update(res.notes)
        self.stopped |= res.stopped

    def _partial(self, chosen: Sequence[Skeleton | None], rest: Fraction, priced: float) -> Fraction | float:
        """A lower bound on the sum of every completion of the partial tuple ``chosen`` below the cut: the
        capacity problem of its jobs alone (a relaxation: the other jobs' blocks dropped) plus ``rest``, the
        other jobs' least own minima, solved only to the extent of telling whether it reaches the cut; at
        least ``priced``, its priced bound (its g, the other jobs' least g, less the charge)."""
        which, shapes = self.shapes_of(chosen)
        if sum(max(sh.demand) for sh in shapes) <= self.instance.nodes:  # no overload possible among them
            return _larger(sum((sh.skeleton.own for sh in shapes), Fraction(0)) + rest, priced)
        model = TupleModel([self.jobs[j] for j in which], shapes, self.instance.nodes, self.cut - rest)
        res = solve_tuple(model, self.cut - rest, self.solver, self.deadline, model.lp.objective)
        self._count(res)
        self.counts["partial"] += 1
        return _larger(res.lower + rest, priced)

    def price(self) -> None:
        """Lagrangian prices (:mod:`iosched.models.malleable_prices`), searched for in PRICE_SHARE of the time
        left and evaluated on every skeleton by the deadline (past it, the rest keep their own minimum F <= g):
        each job's skeletons get their priced bound g, the lists are sorted by it, and a skeleton whose g with
        every other job's least g reaches the cut is dropped (no tuple below the cut holds it)."""
        if not all(self.lists):
            return
        priced = prices(self.jobs, self.lists, self.instance.nodes, float(self.cut), self.deadline, PRICE_SHARE)
        if not priced.complete:
            self.notes.add("the time limit came while pricing the skeletons: the rest keep their own minimum")
        self.charge, self.priced_bound, self.price_steps = priced.charge, priced.bound, priced.iterations
        least = [float(v.min()) for v in priced.values]
        for j, (lst, values) in enumerate(zip(self.lists, priced.values)):
            others = sum(least) - least[j] - self.charge
            keep = sorted((float(v), n) for n, v in enumerate(values) if v + others < self.cut)
            self.lists[j] = [lst[n] for _, n in keep]
            self.g[j] = [v for v, _ in keep]

    def run(self) -> None:
        """Depth first over the jobs in ``order``; at each level the skeletons by priced bound g (the own
        minimum F where there are no prices). A skeleton is passed over where the sum of F (its own, the
        chosen ones' and the later jobs' least) reaches the cut, and the level ends where the sum of g less
        the charge does (the later skeletons have larger g)."""
        n, lists, g = len(self.jobs), self.lists, self.g
        order = sorted(range(n), key=lambda j: (len(lists[j]), j))
        if not all(lists):  # a job with no skeleton below the cut: no schedule beats the incumbent
            return
        rest = [sum((min(s.own for s in lists[order[e]]) for e in range(d, n)), Fraction(0)) for d in range(n + 1)]
        rest_g = [sum(g[order[e]][0] for e in range(d, n)) for d in range(n + 1)]
        least_after = []  # per level, the least F from each index on (the frontier's bound), in linear time
        for e in range(n):
            least_after.append(list(accumulate(reversed([s.own for s in lists[order[e]]]), min))[::-1])
        idx, part, part_g = [0] * n, [Fraction(0)] * (n + 1), [0.0] * (n + 1)
        chosen: list[Skeleton | None] = [None] * n
        d = 0
        while d >= 0:
            level = lists[order[d]]
            if self.stopped or self.deadline.expired():  # every level's next skeleton bounds what is left
                self.stopped = True
                for e in range(d + 1):
                    k = idx[e] + (e < d)
                    if k < len(lists[order[e]]):
                        self.lower = min(self.lower, _larger(part[e] + least_after[e][k] + rest[e + 1],
                                                             part_g[e] + g[order[e]][k] + rest_g[e + 1] - self.charge))
                return
            if idx[d] >= len(level):
                chosen[order[d]] = None
                d -= 1
                if d >= 0:
                    idx[d] += 1
                continue
            sk, value = level[idx[d]], g[order[d]][idx[d]]
            priced = part_g[d] + value + rest_g[d + 1] - self.charge  # every completion's priced bound
            if priced >= self.cut:  # this skeleton and the level's later ones (larger g) cannot beat the incumbent
                self.lower = min(self.lower, priced)
                idx[d] = len(level)
                continue
            lb: Fraction | float = part[d] + sk.own + rest[d + 1]
            if lb >= self.cut:  # nor can this one, by the own minima
                self.lower = min(self.lower, lb)
                idx[d] += 1
                continue
            chosen[order[d]] = sk
            part[d + 1], part_g[d + 1] = part[d] + sk.own, part_g[d] + value
            if d == n - 1:
                self._tuple(chosen, priced)
                idx[d] += 1
                continue
            if d >= 1:
                lb = self._partial(chosen, rest[d + 1], priced)
                if lb >= self.cut:  # no completion of this partial tuple beats the incumbent
                    self.lower = min(self.lower, lb)
                    idx[d] += 1
                    continue
            d += 1
            idx[d] = 0


def _larger(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    """max(a, b), typed: the first where they are equal, as max gives."""
    return b if b > a else a


def _float_below(x: Fraction | float) -> float:
    """The largest float at most ``x``."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


@register("malleable", "exact", objective="mean_completion", exact_over=EVERY_SOLUTION)
def exact(instance: MalleableInstance, objective: Objective = "mean_completion", profile: str = "default",
          max_skeletons: Skeletons = MAX_SKELETONS, *, context: RunContext | None = None) -> MethodOutput:
    """Exact over every schedule (no grid, no segment cap); its bound is valid for every schedule.

    Skeleton enumeration and a continuous-time capacity model, every bound proven (module docstring);
    mean completion only; refuses an instance with more than ``max_skeletons`` skeletons for a job."""
    prof = load_profile(profile)
    deadline = Deadline.for_method(prof.time_limit, context=context)
    start, tried = _starts(instance, profile, deadline)
    n = len(instance.jobs)
    info: dict[str, Any] = {"scope": SCOPE, "start": {"heuristic": start.name, "value": start.mean, "tried": tried}}
    began = time.perf_counter()
    try:
        search = Search(instance, start, prof.solver, deadline, max_skeletons)
    except TimeoutError:  # no enumeration bound: each job's shortest run time still bounds its C - a
        floor = _float_below(min(sum(Fraction(min(j.times)) for j in instance.jobs), start.sum) / n)
        info.update(model_status="time_limit", model_bound=floor,
                    error="the time limit passed while listing the skeletons")
        return MethodOutput(start.schedule, Status.TIME_LIMIT, bound=floor, info=info)
    search.price()
    info["skeletons"] = {j.id: [listed, len(lst)] for j, listed, lst in zip(instance.jobs, search.listed, search.lists)}
    lagrangian = search.priced_bound  # floating point, as found: the pruning uses it lowered by its margins
    finite = lagrangian is not None and math.isfinite(lagrangian)
    info["prices"] = {"steps": search.price_steps,
                      "lagrangian_mean": lagrangian / n if lagrangian is not None and finite else None}
    search.run()
    if search.best is not None:
        schedule, total = search.best
    else:
        schedule, total = start.schedule, start.sum
    bound = min(search.lower, total)  # the regions' least bound; capped at the answer's own value
    optimal = not search.stopped and search.counts["unresolved"] == 0 and total - bound <= CERTIFIED * total
    status = Status.OPTIMAL if optimal else Status.TIME_LIMIT if search.stopped else Status.FEASIBLE
    mean_bound = _float_below(bound / n) if math.isfinite(bound) else None
    info.update({"model_status": status.value, "model_bound": mean_bound, "solver": prof.solver,
                 "solver_time_s": time.perf_counter() - began, "found_by": "search" if search.best else start.name,
                 "exact_gap": float((total - bound) / total) if math.isfinite(bound) and total else None,
                 **search.counts})
    if search.notes:
        info["notes"] = sorted(search.notes)
    return MethodOutput(schedule, status, bound=mean_bound, info=info)
