"""An event simulator of a resource manager running rigid or malleable jobs (DMR's policy).

A running job checks at start + k period (k >= 1); checks that fall during one of its
actions (a resize or a wait), up to and including its end, are skipped. Events sit in one
heap (time, kind, sequence): completions, ends of reconfigurations, ends of
requested-expansion waits, arrivals, then the jobs' checks, in that order at
equal times; the scheduler runs once a batch of same-time events has changed something,
and again after each check. Nothing advances by ticks.

Scheduler (``scheduler``):

* ``fcfs``: start queued jobs in priority order while the first one fits;
* ``easy``: FCFS, then EASY backfilling -- the first blocked job gets a reservation at the
  earliest time enough nodes come free (from the running jobs' projected ends at their
  current sizes, and the releases of shrinks in progress); a later job among the first
  ``depth`` queued starts now if it fits and either ends by then (its run time at its
  submitted size: estimates are exact) or uses only nodes the reservation leaves over.

Priority: arrival order, except that a job a shrink was made for goes before every job
not so favoured (the seed: "the queued job that has triggered the shrinking event will be
assigned the maximum priority"), and a requested expansion waiting for nodes goes first of
all (the seed's resizer job has the maximum priority).

Policy at a check of a running job of size p, with F free nodes (``policy="dmr"``), the
first mode that applies:

1. ``request`` (the job sets ``request``; the seed's "strongly suggest", made by raising
   the job's minimum): at it, nothing; above it, shrink to it; below, expand to it if F
   suffices, or else wait for the nodes at top priority, holding p without progress, up to
   the job's ``timeout``, then abandon the expansion;
2. ``preferred`` (the job sets ``preferred``): with no job queued, expand to the largest
   ladder size up to the maximum that F allows; else at the preferred size, nothing;
   above it, shrink to it; below it, expand to the largest ladder size up to it that F
   allows;
3. ``wide`` optimisation: expand one factor step (up to the maximum) if F suffices and no
   queued job fits in F; else, take the first queued job (in priority order) that does not
   fit in F but would with some shrink of this job (down to its minimum): shrink by the
   fewest factor steps that let it start, and give it the top priority; else nothing.

``policy="rigid"``: no checks; every job runs at its submitted size.

Asynchronous mode (the seed's ``dmr_icheck_status``, its Section 7.4): at each check the job
carries out the action decided at its previous check, then decides the next one on the state
it sees now (the favoured queued job of a wide shrink gets its priority at once); a late
expansion whose nodes were taken in between waits for them at top priority up to the job's
``timeout``, then is abandoned, as a requested one does.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field

from iosched.evaluate.malleable import Interval, Schedule
from iosched.instances.malleable import Job, MalleableInstance
from iosched.solvers import Deadline

CHECK_EVERY = 4096  # events between two looks at the deadline (about 50 ms of simulation)
COMPLETE, RECONF_END, WAIT_END, ARRIVAL, CHECK = range(5)
QUEUED, RUNNING, DONE = 1, 2, 3
RUN, RECONF, WAIT = "run", "reconfig", "stall"


@dataclass
class Decision:
    """One action the policy took: when, which job, the rule, sizes, and what the rule looked at."""

    time: float
    job: str
    rule: str
    old: int
    new: int
    free: int  # free nodes when the rule was applied
    queued: int  # jobs queued then
    smallest_queued: int | None  # the smallest submitted size among them
    favoured: str | None = None  # the queued job a wide shrink was made for


@dataclass
class SimResult:
    schedule: Schedule | None
    decisions: list[Decision] = field(default_factory=list)
    checks: int = 0  # checks made (with or without an action)
    rules: dict[str, int] = field(default_factory=dict)  # rule -> times it fired (no-action outcomes too)
    events: int = 0
    stopped: bool = False  # the deadline passed first: ``schedule`` is None, ``events`` how far it got


def _submitted(job: Job) -> int:
    """The nodes ``job`` is submitted at (Job's own check sets a ``submit`` of None to its ladder's top)."""
    assert job.submit is not None
    return job.submit


class _Sim:
    def __init__(self, inst: MalleableInstance, policy: str, scheduler: str, depth: int, modes: str,
                 asynchronous: bool = False):
        self.inst, self.policy, self.scheduler, self.depth, self.modes = inst, policy, scheduler, depth, modes
        self.asynchronous = asynchronous
        self.jobs = inst.jobs
        self.submit = [_submitted(job) for job in self.jobs]  # nodes each job is submitted at
        n = len(self.jobs)
        self.free = inst.nodes
        self.state = [0] * n
        self.size = [0] * n  # current size (the new size during a reconfiguration)
        self.held = [0] * n
        self.phase = [RUN] * n
        self.rem = [1.0] * n  # fraction of the work left at ``t0``
        self.t0 = [0.0] * n
        self.version = [0] * n
        self.action_at = [0.0] * n
        self.target = [0] * n  # a waiting expansion's size
        self.then = [""] * n  # a waiting expansion's rule
        self.pending: list[tuple | None] = [None] * n  # asynchronous: the action decided at the last check
        self.busy_until = [0.0] * n  # end of the reconfiguration in progress
        self.started = [0.0] * n
        self.checks = [0] * n  # k of the job's last check, at started + k period
        self.ivs: list[list[list]] = [[] for _ in range(n)]  # [start, end, nodes, kind]
        self.heap: list = []
        self.seq = 0
        self.key: list[tuple] = [()] * n
        self.queue: list[tuple] = []  # sorted (priority keys) of queued jobs: (class, order, job)
        self.by_size: dict[int, list[tuple]] = {}  # submitted size -> sorted keys of queued jobs of that size
        self.live: list[int] = []  # sorted sizes with queued jobs
        self.waiting: list[int] = []  # jobs waiting for a requested expansion, in order
        self.running: set[int] = set()
        self.favour = 0
        self.res = SimResult(Schedule({}))

    # --- events ---------------------------------------------------------------------------------------
    def push(self, t: float, kind: int, j: int, version: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, kind, self.seq, j, version))

    def run(self, deadline: Deadline | None = None) -> SimResult:
        for j, job in enumerate(self.jobs):
            self.push(job.arrival, ARRIVAL, j)
        now, dirty = 0.0, False
        heap = self.heap
        while heap or dirty:
            if dirty and (not heap or heap[0][0] > now or heap[0][1] == CHECK):
                self.schedule(now)  # before the next event: it may start jobs that end earlier
                dirty = False
                continue
            t, kind, _, j, version = heapq.heappop(heap)
            self.res.events += 1
            if deadline is not None and not self.res.events % CHECK_EVERY and deadline.expired():
                self.res.stopped, self.res.schedule = True, None
                return self.res
            now = t
            if kind == ARRIVAL:
                self.enqueue(j, (2, j))
                dirty = True
            elif self.state[j] != RUNNING or (kind != CHECK and version != self.version[j]):
                continue  # a stale event (a job has one check pending at most: checks carry no version)
            elif kind == COMPLETE:
                self.complete(j, t)
                dirty = True
            elif kind == RECONF_END:
                self.reconf_end(j, t)
                dirty = True
            elif kind == WAIT_END:
                self.abandon(j, t)
                dirty = True
            elif kind == CHECK and self.check(j, t):
                self.schedule(t)
        self.res.schedule = Schedule({job.id: tuple(Interval(*iv) for iv in self.ivs[j])
                                      for j, job in enumerate(self.jobs)})
        return self.res

    # --- the queue ------------------------------------------------------------------------------------
    def enqueue(self, j: int, key: tuple) -> None:
        self.state[j] = QUEUED
        key = (*key, j)
        self.key[j] = key
        bisect.insort(self.queue, key)
        size = self.submit[j]
        lst = self.by_size.setdefault(size, [])
        if not lst:
            bisect.insort(self.live, size)
        bisect.insort(lst, key)

    def dequeue(self, j: int) -> None:
        key = self.key[j]
        q = self.queue
        del q[bisect.bisect_left(q, key)]
        size = self.submit[j]
        lst = self.by_size[size]
        del lst[bisect.bisect_left(lst, key)]
        if not lst:
            del self.live[bisect.bisect_left(self.live, size)]

    def first_fitting(self, lo: int, hi: int):
        """The first queued job (priority order) whose submitted size is in (lo, hi], or None."""
        live = self.live
        heads = [self.by_size[live[i]][0] for i in range(bisect.bisect_right(live, lo), bisect.bisect_right(live, hi))]
        return min(heads) if heads else None

    def smallest_queued(self) -> int | None:
        return self.live[0] if self.live else None

    # --- job state changes ------------------------------------------------------------------------------
    def progress_to(self, j: int, t: float) -> None:
        if self.phase[j] == RUN:
            self.rem[j] -= (t - self.t0[j]) / self.jobs[j].time(self.size[j])
        self.t0[j] = t

    def open(self, j: int, t: float, nodes: int, kind: str) -> None:
        ivs = self.ivs[j]
        if ivs and ivs[-1][1] is None:
            ivs[-1][1] = t
        ivs.append([t, None, nodes, kind])

    def plan_end(self, j: int, t: float) -> None:
        """Schedule the completion at the current size (invalidating earlier plans)."""
        self.version[j] += 1
        end = t + max(self.rem[j], 0.0) * self.jobs[j].time(self.size[j])
        self.push(round(end, 9), COMPLETE, j, self.version[j])

    def start(self, j: int, t: float) -> None:
        self.dequeue(j)
        self.state[j] = RUNNING
        self.running.add(j)
        self.size[j] = self.held[j] = self.submit[j]
        self.free -= self.submit[j]
        self.phase[j] = RUN
        self.t0[j] = t
        self.open(j, t, self.submit[j], RUN)
        self.plan_end(j, t)
        self.started[j] = t
        if self.policy == "dmr":
            self.next_check(j, t)

    def complete(self, j: int, t: float) -> None:
        self.ivs[j][-1][1] = t
        self.state[j] = DONE
        self.running.discard(j)
        self.free += self.held[j]
        self.held[j] = 0

    def resize(self, j: int, t: float, q: int, rule: str, favoured: str | None = None) -> None:
        job, p = self.jobs[j], self.size[j]
        self.res.decisions.append(Decision(t, job.id, rule, p, q, self.free, len(self.queue),
                                           self.smallest_queued(), favoured))
        self.progress_to(j, t)
        if self.phase[j] == RUN:
            self.action_at[j] = t
        cost = job.cost(p, q)
        self.size[j] = q
        self.version[j] += 1
        if t + cost > t:  # a cost too small to move the clock (1e-300 s, or 1e-6 s at 1e11 s) is paid as none,
            #                 as the evaluator accepts up to its tolerance: a reconfiguration of length 0 it rejects
            self.phase[j] = RECONF
            self.free -= max(q, p) - self.held[j]
            self.held[j] = max(p, q)
            self.open(j, t, max(p, q), RECONF)
            self.busy_until[j] = t + cost
            self.push(t + cost, RECONF_END, j, self.version[j])
        else:
            self.free += self.held[j] - q
            self.held[j] = q
            self.resume(j, t)

    def next_check(self, j: int, after: float) -> None:
        """Schedule the job's first check (started + k period) strictly after ``after``."""
        period, first, start, limit = self.jobs[j].period, self.checks[j] + 1, self.started[j], after + 1e-9
        k = max(first, math.floor((limit - start) / period) + 1)  # closed form: a long action skips many checks
        while start + k * period <= limit:  # rounding in the division: at most a step either way
            k += 1
        while k > first and start + (k - 1) * period > limit:
            k -= 1
        self.checks[j] = k
        self.push(self.started[j] + k * period, CHECK, j)

    def resume(self, j: int, t: float) -> None:
        """Back to running at the current size at ``t``; the checks during the action are skipped."""
        self.phase[j] = RUN
        self.t0[j] = t
        self.open(j, t, self.size[j], RUN)
        self.plan_end(j, t)
        self.next_check(j, t)

    def reconf_end(self, j: int, t: float) -> None:
        q = self.size[j]
        self.free += self.held[j] - q
        self.held[j] = q
        self.resume(j, t)

    def wait(self, j: int, t: float, q: int, rule: str, then: str) -> None:
        """Hold the nodes without progress, waiting at top priority for q - p more; ``then``: the
        expansion's rule when they come."""
        job, p = self.jobs[j], self.size[j]
        self.res.decisions.append(Decision(t, job.id, rule, p, q, self.free, len(self.queue),
                                           self.smallest_queued()))
        self.then[j] = then
        self.progress_to(j, t)
        self.action_at[j] = t
        self.phase[j] = WAIT
        self.target[j] = q
        self.version[j] += 1
        self.open(j, t, p, WAIT)
        self.waiting.append(j)
        self.push(t + job.timeout, WAIT_END, j, self.version[j])

    def abandon(self, j: int, t: float) -> None:
        self.waiting.remove(j)
        self.res.decisions.append(Decision(t, self.jobs[j].id, "request: abandoned", self.size[j], self.size[j],
                                           self.free, len(self.queue), self.smallest_queued()))
        self.resume(j, t)

    # --- the scheduler ----------------------------------------------------------------------------------
    def schedule(self, t: float) -> None:
        while self.waiting and self.target[self.waiting[0]] - self.size[self.waiting[0]] <= self.free:
            j = self.waiting.pop(0)
            self.note(self.then[j])
            self.resize(j, t, self.target[j], self.then[j])
        if self.waiting:
            head_need = self.target[self.waiting[0]] - self.size[self.waiting[0]]
        else:
            while self.queue and self.submit[self.queue[0][-1]] <= self.free:
                self.start(self.queue[0][-1], t)
            if not self.queue:
                return
            head_need = self.submit[self.queue[0][-1]]
        if self.scheduler != "easy" or not self.queue:
            return
        smallest = self.smallest_queued()
        if smallest is None or smallest > self.free:
            return
        shadow, extra = self.reservation(t, head_need)
        skip = 0 if self.waiting else 1
        for key in list(self.queue[skip:skip + self.depth]):
            j = key[-1]
            submit = self.submit[j]
            if submit > self.free:
                continue
            ends_in_time = t + self.jobs[j].time(submit) <= shadow
            if ends_in_time or submit <= extra:
                if not ends_in_time:
                    extra -= submit
                self.start(j, t)
                if self.free < smallest:
                    break

    def reservation(self, t: float, need: int) -> tuple[float, int]:
        """(shadow time, nodes left over then) for a blocked head needing ``need`` nodes."""
        releases = []
        for j in self.running:
            job = self.jobs[j]
            if self.phase[j] == RUN:
                releases.append((t + self.rem[j] * job.time(self.size[j]), self.held[j]))
            elif self.phase[j] == RECONF:
                end = self.busy_until[j]
                releases.append((end, self.held[j] - self.size[j]))
                releases.append((end + self.rem[j] * job.time(self.size[j]), self.size[j]))
            else:  # waiting: pessimistically, the whole wait then the rest at the old size
                releases.append((self.action_at[j] + job.timeout + self.rem[j] * job.time(self.size[j]),
                                 self.held[j]))
        releases.sort()
        free = self.free
        for when, nodes in releases:
            free += nodes
            if free >= need:
                return when, free - need
        return float("inf"), 0

    # --- the policy -------------------------------------------------------------------------------------
    def note(self, rule: str) -> None:
        self.res.rules[rule] = self.res.rules.get(rule, 0) + 1

    def check(self, j: int, t: float) -> bool:
        """Apply the policy at job j's check; True when it acted (the scheduler should look again).
        Asynchronous: the action decided at the previous check is carried out now, and the next
        one decided (module docstring)."""
        job, p = self.jobs[j], self.size[j]
        if (self.rem[j] - (t - self.t0[j]) / job.time(p)) * job.time(p) <= 1e-9:
            return False  # the job ends now: its completion is due
        self.res.checks += 1
        if not self.asynchronous:
            return self.carry(j, t, self.decide(j, t))
        pending, self.pending[j] = self.pending[j], None
        acted = pending is not None and self.carry_late(j, t, *pending)
        if self.phase[j] == RUN:  # not in an action: decide the next check's action now
            kind, q, rule, favoured = self.decide(j, t)
            self.note(rule)
            if kind != "idle":  # a request's wait is its expansion, late (it waits then if it must)
                self.pending[j] = (q, "request: expand" if kind == "wait" else rule, favoured)
            if not acted:
                self.next_check(j, t)
        return acted

    def decide(self, j: int, t: float) -> tuple[str, int, str, str | None]:
        """The policy's action at a check of job j: (``idle``, ``act`` or ``wait``, the size, the
        rule, the queued job favoured). A wide shrink gives that job the top priority now."""
        job, p, free = self.jobs[j], self.size[j], self.free
        if self.modes == "all" and job.request is not None:
            q = job.request
            if q == p:
                return "idle", p, "request: at the requested size", None
            if q < p:
                return "act", q, "request: shrink", None
            if q - p <= free:
                return "act", q, "request: expand", None
            return "wait", q, "request: wait", None
        if self.modes == "all" and job.preferred is not None:
            pref = job.preferred
            if not self.queue:
                q = self.largest_fitting(job, p, job.sizes[-1], free)
                if q > p:
                    return "act", q, "preferred: expand, queue empty", None
                return "idle", p, "preferred: no room to expand", None
            if p == pref:
                return "idle", p, "preferred: at the preferred size", None
            if p > pref:
                return "act", pref, "preferred: shrink to it", None
            q = self.largest_fitting(job, p, pref, free)
            if q > p:
                return "act", q, "preferred: expand towards it", None
            return "idle", p, "preferred: no room to expand", None
        # wide optimisation
        sizes = job.sizes
        k = sizes.index(p)
        if k + 1 < len(sizes) and sizes[k + 1] - p <= free:
            smallest = self.smallest_queued()
            if smallest is None or smallest > free:
                return "act", sizes[k + 1], "wide: expand", None
        if k > 0:
            key = self.first_fitting(free, free + p - sizes[0])
            if key is not None:
                need = self.submit[key[-1]]
                q = next(sizes[i] for i in range(k - 1, -1, -1) if free + p - sizes[i] >= need)
                self.dequeue(key[-1])
                self.favour += 1
                self.enqueue(key[-1], (1, self.favour))
                return "act", q, "wide: shrink", self.jobs[key[-1]].id
        return "idle", p, "wide: no action", None

    def carry(self, j: int, t: float, decision: tuple[str, int, str, str | None]) -> bool:
        """Carry out ``decision`` at once (synchronous); True when the job acted."""
        kind, q, rule, favoured = decision
        self.note(rule)
        if kind == "idle":
            self.next_check(j, t)
            return False
        if kind == "wait":
            self.wait(j, t, q, rule, "request: expand")
        else:
            self.resize(j, t, q, rule, favoured)
        return True

    def carry_late(self, j: int, t: float, q: int, rule: str, favoured: str | None) -> bool:
        """Carry out an action decided at the previous check: a shrink at once, an expansion if
        the nodes are still free, else a wait for them at top priority up to the job's timeout."""
        p = self.size[j]
        if q == p:
            return False
        if q < p or q - p <= self.free:
            self.resize(j, t, q, f"{rule} (late)", favoured)
        else:
            self.wait(j, t, q, f"{rule}: wait (late)", f"{rule} (late, after waiting)")
        return True

    @staticmethod
    def largest_fitting(job, p: int, cap: int, free: int) -> int:
        """The largest ladder size in (p, cap] whose extra nodes fit in ``free`` (p if none)."""
        best = p
        for s in job.sizes:
            if p < s <= cap and s - p <= free:
                best = s
        return best


def simulate(instance: MalleableInstance, policy: str = "dmr", scheduler: str = "easy", depth: int = 100,
             modes: str = "all", deadline: Deadline | None = None, asynchronous: bool = False) -> SimResult:
    """Run the workload (module docstring): ``policy`` dmr or rigid, ``scheduler`` easy or fcfs,
    ``depth`` queued jobs tried for backfilling, ``modes`` all (request, preferred, wide) or
    wide (every job by the wide optimisation), ``asynchronous`` DMR's asynchronous mode; past
    ``deadline`` (checked every :data:`CHECK_EVERY` events) it stops with ``stopped`` set and no
    schedule. Parameters are trusted: methods check them."""
    return _Sim(instance, policy, scheduler, depth, modes, asynchronous).run(deadline)
