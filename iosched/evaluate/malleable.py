"""The one checker of malleable-job schedules, and their scores.

A :class:`Schedule` gives each job a list of contiguous intervals ``(start, end, nodes,
kind)`` (s, s, nodes held, kind). Kinds:

* ``run``: the job holds ``nodes`` (a size on its ladder) and progresses at
  1 / runtime(nodes) of its work per second;
* ``reconfig``: a resize from the run before (p nodes) to the run after (q nodes); no
  progress; it holds max(p, q) (an expansion takes its new nodes when it begins, a shrink
  releases its old ones when it ends) and lasts at least the job's cost(p, q);
* ``stall``: a requested expansion waiting for nodes; no progress; it holds the old size,
  lasts at most the job's ``timeout``, and is followed by the expansion's ``reconfig`` or,
  if abandoned, by a run at the old size.

A size may change between two runs (or after a stall) without a ``reconfig`` only when its
cost is 0.

Reconfiguration points (the job's checks): start + k period, k >= 1; a check that falls
during an action, up to and including its end, is skipped (so a run follows every action).
Every action (a resize, or a stall and what follows it) begins at a check.

Feasibility: every job scheduled once, its first interval a run no earlier than its
arrival, intervals contiguous with positive lengths, the kinds in the order above, sizes
on the ladder, actions at checks and paid for, the job's work done exactly (relative
tolerance 1e-6, plus two ulps of each run's end over its run time, the rounding of times
in floating point, which counts only beyond about 10^9 s: a job holding nodes after its
work is done is an overrun), and at every
instant the nodes held by all jobs at most the cluster's. Every number must be finite.
Times are compared with a tolerance of 1e-6 s + 1e-9 of the largest time.

Scores (s unless said): for job j with arrival a, start S (its first interval) and
completion C (its last interval's end): wait S - a, execution C - S, completion C - a
(the seed's "completion time": waiting plus execution), their means; makespan max C;
utilization = node-seconds held / (nodes x makespan) (the seed's "resource utilization
rate": time nodes are allocated over the workload's completion time, time 0 to the last
completion); expands, shrinks, stalls and abandoned expansions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.instances.fields import Field, Fields
from iosched.instances.malleable import MalleableInstance
from iosched.validate import finite, real

KINDS = ("run", "reconfig", "stall")
WORK_TOL = 1e-6
OBJECTIVES = ("mean_completion", "makespan", "mean_wait", "mean_execution", "utilization")


@dataclass(frozen=True)
class Interval:
    """[start, end) seconds holding ``nodes`` nodes, of ``kind`` run, reconfig or stall."""

    start: float
    end: float
    nodes: int
    kind: str = "run"


@dataclass
class Schedule:
    """Per job id, its intervals in time order."""

    jobs: dict[str, tuple[Interval, ...]]

    def to_dict(self, instance: MalleableInstance | None = None) -> dict:
        return {"jobs": {j: [[iv.start, iv.end, iv.nodes, iv.kind] for iv in ivs] for j, ivs in self.jobs.items()}}

    @classmethod
    def from_dict(cls, d) -> Schedule:
        """From ``{"jobs": {id: [[start, end, nodes, kind], ...]}}``; values are checked by the evaluator."""
        if not isinstance(d, dict) or not isinstance(d.get("jobs"), dict):
            raise InstanceError(f"a malleable schedule is {{'jobs': {{id: [[start, end, nodes, kind], ...]}}}}, "
                                f"got {str(d)[:80]!r}")
        SOLUTION_FIELDS.check(d)
        jobs = {}
        for j, ivs in d["jobs"].items():
            if not isinstance(ivs, list) or not all(isinstance(iv, list) and len(iv) == 4 for iv in ivs):
                raise InstanceError(f"jobs[{j}] must be a list of [start, end, nodes, kind], got {str(ivs)[:80]!r}")
            jobs[j] = tuple(Interval(*iv) for iv in ivs)
        return cls(jobs)



# The JSON of a malleable solution; Schedule.from_dict checks its keys against it (the evaluator the values).
SOLUTION_FIELDS = Fields(
    "malleable schedule",
    Field("jobs", "object", "", "per job id, its intervals in time order (every job of the instance)"),
    Field("jobs{}", "list", "", "each interval [start, end, nodes, kind]: from start to end (s) the job holds "
          "nodes nodes, running (run), resizing (reconfig, no progress) or waiting (stall, no progress)"),
)

@dataclass
class Evaluation:
    feasible: bool
    violations: list[Violation] = field(default_factory=list)
    makespan: float = math.inf
    mean_wait: float = math.inf
    mean_execution: float = math.inf
    mean_completion: float = math.inf
    utilization: float = 0.0
    node_seconds: float = 0.0
    expands: int = 0
    shrinks: int = 0
    stalls: int = 0
    abandoned: int = 0

    def to_dict(self) -> dict:
        return {"feasible": self.feasible, "violations": [v.__dict__ for v in self.violations],
                "makespan": self.makespan, "mean_wait": self.mean_wait, "mean_execution": self.mean_execution,
                "mean_completion": self.mean_completion, "utilization": self.utilization,
                "node_seconds": self.node_seconds, "expands": self.expands, "shrinks": self.shrinks,
                "stalls": self.stalls, "abandoned": self.abandoned}


def _well_formed(iv) -> bool:
    return (isinstance(iv, Interval) and all(real(x) and finite(x) for x in (iv.start, iv.end)) and iv.kind in KINDS
            and not isinstance(iv.nodes, bool) and isinstance(iv.nodes, (int, np.integer)) and 1 <= iv.nodes <= 2**53)


class _Job:
    """One job's walk through its intervals: violations, counts and its progress."""

    def __init__(self, job, ivs, tol: float, bad: list[Violation]):
        self.job, self.ivs, self.tol, self.bad = job, ivs, tol, bad
        self.expands = self.shrinks = self.stalls = self.abandoned = 0

    def fail(self, constraint: str, where: str, amount: float) -> None:
        self.bad.append(Violation(constraint, f"job {self.job.id}: {where}", float(amount)))

    def check(self) -> None:
        job, ivs, tol = self.job, self.ivs, self.tol
        if ivs[0].start < job.arrival - tol:
            self.fail("arrival", f"starts at {ivs[0].start:.6g} s before its arrival {job.arrival:.6g} s",
                      job.arrival - ivs[0].start)
        for k, iv in enumerate(ivs):
            if iv.end - iv.start <= 0:
                self.fail("interval", f"interval {k} has length {iv.end - iv.start:.6g} s", 1)
            if k and abs(iv.start - ivs[k - 1].end) > tol:
                self.fail("contiguity", f"interval {k} starts at {iv.start:.6g} s, the previous ends at "
                          f"{ivs[k - 1].end:.6g} s", abs(iv.start - ivs[k - 1].end))
            if iv.kind == "run" and iv.nodes not in job.sizes:
                self.fail("ladder", f"interval {k} runs on {iv.nodes} nodes, off the ladder {list(job.sizes)}", 1)
        if ivs[0].kind != "run" or ivs[-1].kind != "run":
            self.fail("kinds", "the first and last intervals must be runs", 1)
            return
        self.actions()

    def actions(self) -> None:
        """Split the intervals into runs and actions; check each action's shape, cost and check point."""
        job, ivs, tol = self.job, self.ivs, self.tol
        k = 0
        while k < len(ivs) - 1:
            before = ivs[k]
            m = k + 1
            while ivs[m].kind != "run":
                m += 1
            after = ivs[m]
            between = ivs[k + 1:m]
            k = m
            if not between and after.nodes == before.nodes:
                continue  # a check that changed nothing (or just a split)
            start = between[0].start if between else after.start
            self.at_check(start)
            p, q = before.nodes, after.nodes
            shape = tuple(iv.kind for iv in between)
            if shape == ():
                self.unpaid(start, p, q)
            elif shape == ("reconfig",):
                self.resize(between[0], p, q)
            elif shape in (("stall",), ("stall", "reconfig")):
                stall = between[0]
                self.stalls += 1
                if stall.nodes != p:
                    self.fail("stall", f"stall at {stall.start:.6g} s holds {stall.nodes} nodes, not its {p}",
                              abs(stall.nodes - p))
                if stall.end - stall.start > job.timeout + tol:
                    self.fail("timeout", f"stall at {stall.start:.6g} s lasts {stall.end - stall.start:.6g} s, "
                              f"beyond the timeout {job.timeout:.6g} s", stall.end - stall.start - job.timeout)
                if len(shape) == 1 and q == p:
                    self.abandoned += 1
                elif len(shape) == 1:  # granted at no cost
                    if q < p:
                        self.fail("stall", f"only an expansion waits for nodes; {p} -> {q} at {stall.start:.6g} s",
                                  p - q)
                    self.expands += 1
                    self.unpaid(stall.end, p, q)
                else:
                    if q <= p:
                        self.fail("stall", f"only an expansion waits for nodes; {p} -> {q} at {stall.start:.6g} s",
                                  p - q + 1)
                    self.resize(between[1], p, q)
            else:
                self.fail("kinds", f"between runs at {start:.6g} s: {list(shape)} (expected reconfig, stall, or "
                          f"stall then reconfig)", 1)

    def resize(self, iv: Interval, p: int, q: int) -> None:
        job, tol = self.job, self.tol
        if q == p:
            self.fail("reconfig", f"reconfig at {iv.start:.6g} s keeps {p} nodes", 1)
            return
        if q > p:
            self.expands += 1
        else:
            self.shrinks += 1
        if iv.nodes != max(p, q):
            self.fail("reconfig", f"reconfig {p} -> {q} at {iv.start:.6g} s holds {iv.nodes} nodes, not "
                      f"{max(p, q)}", abs(iv.nodes - max(p, q)))
        cost = job.cost(p, q) if p in job.sizes and q in job.sizes else 0.0
        if iv.end - iv.start < cost - tol:
            self.fail("reconfig_cost", f"reconfig {p} -> {q} at {iv.start:.6g} s lasts {iv.end - iv.start:.6g} s, "
                      f"less than its cost {cost:.6g} s", cost - (iv.end - iv.start))

    def unpaid(self, t: float, p: int, q: int) -> None:
        """A resize p -> q at t with no reconfig interval: only when it costs nothing."""
        if self.job.cost(p, q) > self.tol:
            self.fail("reconfig_cost", f"resizes {p} -> {q} at {t:.6g} s without paying {self.job.cost(p, q):.6g} s",
                      self.job.cost(p, q))

    def at_check(self, t: float) -> None:
        start, period = self.ivs[0].start, self.job.period
        k = max(1, round((t - start) / period))
        off = abs(t - (start + k * period))
        if off > self.tol:
            self.fail("check_point", f"action at {t:.6g} s is not a check (start {start:.6g} s + k x {period:.6g} s, "
                      f"k >= 1)", off)

    def progress(self) -> float:
        """Fraction of the work done (runs on the ladder only)."""
        job = self.job
        return sum((iv.end - iv.start) / job.time(iv.nodes) for iv in self.ivs
                   if iv.kind == "run" and iv.nodes in job.sizes)

    def rounding(self) -> float:
        """The share of the work that the floating-point rounding of the runs' times may hide: two ulps
        of each run's end over its run time (a run of 1,000 s ending near 4.5e12 s: 2e-6)."""
        job = self.job
        return sum(2 * math.ulp(max(abs(iv.start), abs(iv.end))) / job.time(iv.nodes) for iv in self.ivs
                   if iv.kind == "run" and iv.nodes in job.sizes)


def _capacity(instance: MalleableInstance, rows: list[tuple[float, float, int]], tol: float,
              bad: list[Violation]) -> None:
    """Sweep the nodes held over time (ends before starts within ``tol``); report the worst overloads."""
    if not rows:
        return
    arr = np.array(rows, dtype=float)
    times = np.concatenate([arr[:, 0], arr[:, 1]])
    delta = np.concatenate([arr[:, 2], -arr[:, 2]])
    order = np.argsort(times, kind="stable")
    times, delta = times[order], delta[order]
    group = np.concatenate([[0], np.cumsum(np.diff(times) > tol)])
    order = np.lexsort((delta, group))  # within a group of equal times, releases first
    load = np.cumsum(delta[order])
    over = np.flatnonzero(load > instance.nodes + 0.5)
    if len(over):
        worst = over[np.argsort(-load[over], kind="stable")[:5]]
        for i in sorted(worst):
            t = times[order][i]
            bad.append(Violation("capacity", f"{t:.6g} s: {int(load[i])} nodes held of {instance.nodes}",
                                 float(load[i] - instance.nodes)))
        if len(over) > 5:
            bad.append(Violation("capacity", f"{len(over) - 5} more overloaded instants", float(len(over) - 5)))


def evaluate(instance: MalleableInstance, schedule: Schedule, *, time_tol: float = 1e-6,
             work_tol: float = WORK_TOL) -> Evaluation:
    """Check ``schedule`` (module docstring) and score it. ``time_tol`` (s, beside 1e-9 of the largest
    time) and ``work_tol`` (a share of each job's work, beside the rounding of its runs' times) are the
    tolerances; the library re-scores a claimed improvement with both 0 (its strict mode), so that a
    schedule shaved inside them cannot pass for a better one."""
    bad: list[Violation] = []
    jobs_of = getattr(schedule, "jobs", None)
    if not isinstance(jobs_of, dict):
        return Evaluation(False, [Violation("malformed", "the schedule has no jobs mapping", 1)])
    known = {j.id for j in instance.jobs}
    for extra in sorted(set(map(str, jobs_of)) - known):
        bad.append(Violation("unknown_job", f"job {extra!r}", 1))
    rows: list[tuple[float, float, int]] = []
    walks = []
    largest = 1.0
    for job in instance.jobs:
        ivs = jobs_of.get(job.id)
        if not isinstance(ivs, (list, tuple)) or not ivs:
            bad.append(Violation("missing_job", f"job {job.id}: no intervals", 1))
            continue
        if not all(_well_formed(iv) for iv in ivs):
            k = next(k for k, iv in enumerate(ivs) if not _well_formed(iv))
            bad.append(Violation("malformed", f"job {job.id}: interval {k} is {ivs[k]!r} (finite start and end, "
                                 f"integer nodes >= 1, kind in {KINDS})", 1))
            continue
        largest = max(largest, abs(ivs[-1].end), abs(ivs[0].start))
        walks.append((job, ivs))
    tol = time_tol + 1e-9 * largest
    done = []
    for job, ivs in walks:
        walk = _Job(job, ivs, tol, bad)
        walk.check()
        progress = walk.progress()
        tolerance = work_tol + walk.rounding()
        if progress < 1 - tolerance:
            walk.fail("work", f"does {progress:.6%} of its work", (1 - progress) * job.work)
        elif progress > 1 + tolerance:
            walk.fail("work_overrun", f"holds nodes for {progress:.6%} of its work", (progress - 1) * job.work)
        rows += [(float(iv.start), float(iv.end), int(iv.nodes)) for iv in ivs]
        done.append((job, ivs, walk))
    _capacity(instance, rows, tol, bad)
    ev = Evaluation(not bad, bad)
    if len(done) == len(instance.jobs):
        starts = np.array([ivs[0].start for _, ivs, _ in done], dtype=float)
        ends = np.array([ivs[-1].end for _, ivs, _ in done], dtype=float)
        arrivals = np.array([job.arrival for job, _, _ in done], dtype=float)
        ev.makespan = float(ends.max())
        ev.mean_wait = float((starts - arrivals).mean())
        ev.mean_execution = float((ends - starts).mean())
        ev.mean_completion = float((ends - arrivals).mean())
    ev.node_seconds = float(sum((e - s) * n for s, e, n in rows))
    if math.isfinite(ev.makespan) and ev.makespan > 0:
        ev.utilization = ev.node_seconds / (instance.nodes * ev.makespan)
    for _, _, walk in done:
        ev.expands += walk.expands
        ev.shrinks += walk.shrinks
        ev.stalls += walk.stalls
        ev.abandoned += walk.abandoned
    return ev
