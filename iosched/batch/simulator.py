"""An event-driven batch scheduler: FCFS or WFP, EASY backfilling, and the window plug-in.

Events are submissions and completions; the scheduler runs once per distinct event time,
after every completion and submission at that time. A pass:

1. Order the queue: ``fcfs`` (submit time, then trace order) or ``wfp``, Argonne's
   utility (wait / requested time)^3 x nodes, recomputed at each pass, largest first
   (Allcock et al., JSSPP 2017).
2. Without a window method: start jobs in that order until the first that does not fit
   (nodes or burst buffer). With one (``window``): the first ``window_size`` queued jobs
   and the free nodes and burst buffer form a ``WindowInstance``; the registered method
   is called with ``params`` (``normalise="machine"`` unless given: gains as shares of the whole
   machine, as the authors' code measures them in a running system) and its selection, checked
   feasible by the window
   evaluator, starts. The method is not called when no window job fits alone (every
   method must then select nothing). A job that stayed unselected through ``starvation``
   calls must start: such jobs start first, in order; the first that does not fit becomes
   the head of the queue and the window waits. While jobs wait with nothing running or
   arriving (a method declined them all), passes repeat every ``IDLE_PASS_S`` seconds.
3. EASY backfilling (``backfill="easy"``): the first job left is the head; its
   reservation is the earliest time at which, running jobs ending at start + requested
   time, both its nodes and its burst buffer are free. One of the next ``backfill_depth``
   queued jobs (Slurm's ``bf_max_job_test``, 100 by default) starts now if it fits and
   either ends (by its requested time) before the reservation or leaves the head's nodes and
   burst buffer free at the reservation. A pass touches the head of the queue only (FCFS):
   a queue that grows without bound costs no more per pass.

Local SSD (the paper's Section 6): with ``ssd_classes`` (or a trace that requests SSD) the
nodes come in classes by SSD size, and a job needing s GB per node may only use nodes of a
class of at least s GB. A job takes its nodes from the smallest such classes first (the
paper: "nodes with 128GB SSD are preferred" for requests of 128 GB or less); a window's
selection starts by decreasing SSD need, the placement the window evaluator checked. EASY's
reservation counts the head job's nodes per class, and a job backfilled past it must leave
the head room in the classes it may use. The SSD a job's nodes have beyond its request is
wasted (:attr:`SimResult.wasted_ssd`).

Run times above the requested time are cut to it (the wall-time limit kills the job), so
reservations hold. ``persistent_bb`` (a share of the burst buffer) is held for the whole
run, as Cori's persistent reservations (a third); jobs asking for more than the rest are
left out and listed. Starting a job without its nodes or burst buffer raises
:class:`SchedulerFault`.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from iosched import validate
from iosched.batch.workload import Trace
from iosched.core import MethodOutput, get_method
from iosched.errors import ParameterError
from iosched.evaluate.window import evaluate
from iosched.instances.window import Capacity, Job, Machine, SSDClass, WindowInstance
from iosched.validate import check_params

POLICIES = ("fcfs", "wfp")
BACKFILLS = ("easy", "none")
BACKFILL_DEPTH = 100  # jobs after the head tried for backfilling per pass: Slurm's bf_max_job_test default
IDLE_PASS_S = 10  # s between scheduling passes while jobs wait on an idle machine (a declining window method)
PAPER_SSD = (128, 256)  # GB per node: the paper's two classes (Section 6), half of the nodes each


class SchedulerFault(RuntimeError):
    """The simulator was about to start a job without its resources, or a method's selection was infeasible."""


@dataclass
class SimResult:
    """Per job (trace order) start and end (s; -1 for jobs left out), and how the run went."""

    trace: Trace
    start: np.ndarray
    end: np.ndarray
    config: dict
    left_out: tuple[int, ...] = ()  # job numbers asking for more burst buffer than the persistent reservation
    #                                  leaves, or for more nodes with a large enough SSD than the machine has
    clipped: int = 0  # jobs whose run time was cut to the requested time
    forced: int = 0  # jobs started by the starvation bound
    plugin_calls: int = 0
    plugin_time_s: float = 0.0  # in the window method and the evaluator
    wall_time_s: float = 0.0
    selections: int = 0  # plug-in calls that started at least one job
    info: dict = field(default_factory=dict)
    ssd_classes: tuple[tuple[int, int], ...] = ()  # (SSD GB per node, nodes) per class, smallest first; () without
    wasted_ssd: np.ndarray | None = None  # per job, GB of SSD on its nodes beyond its request (with ssd_classes)

    def __post_init__(self) -> None:
        if bool(self.ssd_classes) != (self.wasted_ssd is not None):
            raise ValueError("SimResult: wasted_ssd is given exactly when ssd_classes are")


@dataclass
class _Stats:
    """The counts a run keeps for its :class:`SimResult`."""

    forced: int = 0
    calls: int = 0
    plugin_time: float = 0.0
    selections: int = 0
    generations: int = 0


def default_ssd_classes(nodes: int) -> tuple[tuple[int, int], ...]:
    """The paper's machine (Section 6): half of the nodes with 128 GB of SSD, the rest with 256 GB."""
    return (PAPER_SSD[0], nodes // 2), (PAPER_SSD[1], nodes - nodes // 2)


def _ssd_classes(trace: Trace, classes: Iterable[tuple[int, int]] | None) -> tuple[tuple[int, int], ...]:
    """The classes checked (sorted by size), the paper's split when the trace requests SSD, or ()."""
    if classes is None:
        return default_ssd_classes(trace.nodes) if trace.ssd_per_node.any() else ()
    try:
        pairs = sorted((int(a), int(b)) for a, b in classes)
    except (TypeError, ValueError):
        raise ParameterError(f"ssd_classes: expected (SSD GB per node, nodes) pairs, got {classes!r}") from None
    if not pairs or any(a <= 0 or b < 0 for a, b in pairs) or len({a for a, _ in pairs}) < len(pairs):
        raise ParameterError(f"ssd_classes: distinct positive SSD sizes and node counts >= 0, got {classes!r}")
    if sum(b for _, b in pairs) != trace.nodes:
        raise ParameterError(f"ssd_classes hold {sum(b for _, b in pairs)} nodes, the machine has {trace.nodes}")
    return tuple(pairs)


def _plugin(window: str, params: dict) -> tuple[Callable[..., MethodOutput], dict]:
    """The registered window method's function and its parameters, checked once."""
    import iosched.problems  # noqa: F401  (registers the window methods)

    m = get_method("window", window)
    if m.randomized and "seed" not in params:
        params = {**params, "seed": 0}
    if "normalise" in inspect.signature(m.run).parameters and "normalise" not in params:
        params = {**params, "normalise": "machine"}  # gains as shares of the whole machine, as the authors' code
    try:
        inspect.signature(m.run).bind(None, **params)
    except TypeError as e:
        raise ParameterError(f"window/{window}: {e}") from None
    check_params(m.run, params, f"window/{window}")
    return m.run, params


def simulate(trace: Trace, policy: str = "fcfs", backfill: str = "easy", window: str | None = None,
             params: dict | None = None, window_size: int = 20, starvation: int = 50, persistent_bb: float = 0.0,
             progress: Callable[[int], None] | None = None, backfill_depth: int = BACKFILL_DEPTH,
             ssd_classes: tuple[tuple[int, int], ...] | None = None) -> SimResult:
    """Simulate ``trace``; ``window`` names a ``window`` method (None: the base scheduler alone);
    ``backfill_depth`` queued jobs after the head are tried for backfilling in a pass;
    ``ssd_classes``: (SSD GB per node, nodes) per class, summing to the machine's nodes (None: the
    paper's half 128 GB, half 256 GB when the trace requests SSD, else no classes).

    ``progress(k)`` is called with the number of jobs finished since its last call.
    """
    validate.choice("policy", policy, POLICIES, error=ParameterError)
    validate.choice("backfill", backfill, BACKFILLS, error=ParameterError)
    validate.integer("window_size", window_size, 1, 100_000, error=ParameterError)
    validate.integer("starvation", starvation, 1, error=ParameterError)
    validate.integer("backfill_depth", backfill_depth, 1, error=ParameterError)
    validate.number("persistent_bb", persistent_bb, 0, 1, error=ParameterError)
    params = dict(params or {})
    if params and window is None:
        raise ParameterError("params are for a window method; give window=...")
    classes = _ssd_classes(trace, ssd_classes)
    plugin = _plugin(window, params) if window is not None else None
    if plugin is not None:
        params = plugin[1]
    t0 = time.perf_counter()
    n = len(trace)
    ids = trace.ids.tolist()
    sub = trace.submit.tolist()
    req = trace.requested_time.tolist()
    run_raw = trace.run
    run = np.minimum(run_raw, trace.requested_time).tolist()
    nodes = trace.job_nodes.tolist()
    bb = trace.burst_buffer.tolist()
    cap_n = trace.nodes
    cap_b = trace.bb_capacity - int(persistent_bb * trace.bb_capacity)
    start, end = [-1] * n, [-1] * n
    skip = [b > cap_b for b in bb]
    if classes:
        sizes = [a for a, _ in classes]
        need = trace.ssd_per_node.tolist()
        cat = np.searchsorted(sizes, trace.ssd_per_node, side="left").tolist()  # the smallest class a job may use
        reach_n = np.concatenate([np.cumsum([b for _, b in classes][::-1])[::-1], [0]])  # nodes of class k or larger
        skip = [s or nodes[j] > reach_n[cat[j]] for j, s in enumerate(skip)]
        free_c = [b for _, b in classes]
        held: dict[int, list[int]] = {}  # running job -> nodes it holds per class
        wasted = np.zeros(n, dtype=np.int64)
    left_out = tuple(ids[j] for j in range(n) if skip[j])
    min_nodes = min(nodes)
    n_arr, b_arr, req_arr = trace.job_nodes, trace.burst_buffer, trace.requested_time

    free = [cap_n, cap_b]
    running: list[tuple[int, int]] = []  # heap of (end, job)
    queue: list[int] = []
    stats = _Stats()
    seen = [0] * n  # plug-in calls a job stayed unselected through
    starving: set[int] = set()  # queued jobs unselected through ``starvation`` calls
    cache: dict[int, Job] = {}

    def begin(j: int, now: int) -> None:
        if not fits(j):
            raise SchedulerFault(f"job {ids[j]} would start at {now} with {nodes[j]} nodes and {bb[j]} GB of "
                                 f"burst buffer, {free[0]} nodes and {free[1]} GB free"
                                 + (f" ({free_c} per SSD class, {need[j]} GB per node needed)" if classes else ""))
        free[0] -= nodes[j]
        free[1] -= bb[j]
        if classes:
            held[j] = take = placement(j, free_c)
            for k, m in enumerate(take):
                free_c[k] -= m
                wasted[j] += m * (sizes[k] - need[j])
        start[j], end[j] = now, now + run[j]
        heapq.heappush(running, (end[j], j))

    def placement(j: int, avail: list[int]) -> list[int]:
        """Nodes job j takes per class from ``avail``: the smallest classes it may use first."""
        take, left = [0] * len(avail), nodes[j]
        for k in range(cat[j], len(avail)):
            take[k] = min(left, avail[k])
            left -= take[k]
        return take

    def fits(j: int) -> bool:
        return (nodes[j] <= free[0] and bb[j] <= free[1]
                and (not classes or nodes[j] <= sum(free_c[cat[j]:])))

    def choose(win: list[int]) -> list[int]:
        """The window method's selection (trace indices), checked by the evaluator."""
        assert plugin is not None  # choose runs only with a window method
        fn, prm = plugin
        jobs = []
        for j in win:
            if j not in cache:
                cache[j] = Job(str(ids[j]), nodes[j], bb[j], need[j] if classes else 0)
            jobs.append(cache[j])
        ssd = tuple(SSDClass(a, m) for a, m in zip(sizes, free_c)) if classes else ()
        inst = WindowInstance(Capacity(free[0], free[1], ssd), tuple(jobs), name="window",
                              machine=Machine(cap_n, trace.bb_capacity))
        tick = time.perf_counter()
        out = fn(inst, **prm)
        if out.solution is None:
            raise SchedulerFault(f"window/{window} gave no selection ({out.status}: {out.info})")
        ev = evaluate(inst, out.solution)
        stats.plugin_time += time.perf_counter() - tick
        stats.calls += 1
        stats.generations += out.info.get("generations", 0)
        if not ev.feasible:
            raise SchedulerFault(f"window/{window} selected an infeasible set: {ev.violations[:3]}")
        chosen = set(out.solution.selected)
        picked = [j for j in win if str(ids[j]) in chosen]
        return sorted(picked, key=lambda j: -need[j]) if classes else picked  # the evaluator's placement order

    def order(now: int) -> list[int]:
        if policy == "fcfs":
            return queue
        return sorted(queue, key=lambda j: (-((now - sub[j]) / req[j]) ** 3 * nodes[j], j))

    def schedule(now: int) -> None:
        nonlocal queue
        pending = order(now)  # fcfs: the queue itself, edited in place below
        started: set[int] = set()
        blocked = reach = None  # reach: the position in ``later`` of the last job backfilled
        if plugin is None:
            k = 0
            while k < len(pending) and fits(pending[k]):
                begin(pending[k], now)
                started.add(pending[k])
                k += 1
        else:
            left = len(starving)
            for j in pending if left else ():  # the starvation bound, in queue order
                if j in starving:
                    if not fits(j):
                        blocked = j
                        break
                    begin(j, now)
                    started.add(j)
                    stats.forced += 1
                    left -= 1
                    if not left:
                        break
            starving.difference_update(started)
            if blocked is None:
                win = list(itertools.islice((j for j in pending if j not in started), window_size))
                if any(fits(j) for j in win):
                    chosen = choose(win)
                    stats.selections += bool(chosen)
                    for j in chosen:
                        begin(j, now)
                        started.add(j)
                    for j in win:
                        if j not in started:
                            seen[j] += 1
                            if seen[j] >= starvation:
                                starving.add(j)
        if backfill == "easy" and free[0] >= min_nodes:  # the head, then the next backfill_depth jobs only
            if plugin is None:  # the jobs started are the first k
                head = pending[k] if k < len(pending) else None
                later = pending[k + 1:k + 1 + backfill_depth]
            else:
                rest = (j for j in pending if j not in started and j != blocked)
                head = blocked if blocked is not None else next(rest, None)
                later = list(itertools.islice(rest, backfill_depth))
            if head is not None and later:
                shadow, spare_n, spare_b, at_shadow = reservation(head, now)
                idx = np.fromiter(later, dtype=np.int64, count=len(later))
                fit = (n_arr[idx] <= free[0]) & (b_arr[idx] <= free[1])  # free only shrinks in this scan
                fit &= (req_arr[idx] <= shadow - now) | ((n_arr[idx] <= spare_n) & (b_arr[idx] <= spare_b))
                for i in np.flatnonzero(fit).tolist():
                    j = int(idx[i])
                    if free[0] < min_nodes:
                        break
                    if not fits(j):
                        continue
                    if now + req[j] <= shadow or (nodes[j] <= spare_n and bb[j] <= spare_b
                                                  and (not classes or leaves_room(j, head, at_shadow))):
                        if now + req[j] > shadow:
                            spare_n -= nodes[j]
                            spare_b -= bb[j]
                            if classes:  # (not k: the count of jobs started in order, used below)
                                at_shadow[:] = [a - m for a, m in zip(at_shadow, placement(j, free_c))]
                        begin(j, now)
                        started.add(j)
                        reach = i
        if not started and blocked is None:
            if pending is not queue:
                queue = pending
            return
        front = [blocked] if blocked is not None else []
        if pending is queue:  # edit only the prefix that holds every job started (and the blocked one)
            if plugin is None:  # the first k, then backfilled ones up to later[reach]
                k = k + 2 + reach if reach is not None else k
            else:
                touched, k = len(started) + (blocked is not None), 0
                while touched:
                    touched -= queue[k] in started or queue[k] == blocked
                    k += 1
            queue[:k] = front + [j for j in queue[:k] if j not in started and j != blocked]
        else:
            queue = front + [j for j in pending if j not in started and j != blocked]

    def reservation(head: int, now: int) -> tuple[int, int, int, list[int]]:
        """The head job's reservation: (time, nodes and burst buffer left over for backfilled jobs
        then, and with SSD classes the nodes free per class then, else [])."""
        have_n, have_b = free
        have_c = list(free_c) if classes else []
        ahead: Iterator[tuple[int, int]] | None = None
        when = now
        while not (nodes[head] <= have_n and bb[head] <= have_b
                   and (not classes or nodes[head] <= sum(have_c[cat[head]:]))):
            ahead = ahead or iter(sorted((start[j] + req[j], j) for _, j in running))
            ends = next(ahead, None)
            if ends is None:
                raise SchedulerFault(f"job {ids[head]} can never start")  # excluded by the capacity checks
            when, j = ends
            have_n += nodes[j]
            have_b += bb[j]
            if classes:
                have_c = [a + b for a, b in zip(have_c, held[j])]
        return when, have_n - nodes[head], have_b - bb[head], have_c

    def leaves_room(j: int, head: int, at_shadow: list[int]) -> bool:
        """Whether the head still finds its nodes at its reservation when j, started now, holds its nodes then."""
        left = [a - m for a, m in zip(at_shadow, placement(j, free_c))]
        return nodes[head] <= sum(left[cat[head]:])

    arrivals = [j for j in range(n) if not skip[j]]
    a = finished = idle = 0
    now = 0
    while a < len(arrivals) or running or queue:
        if a < len(arrivals) or running:
            idle = 0
            now = min(sub[arrivals[a]] if a < len(arrivals) else running[0][0],
                      running[0][0] if running else sub[arrivals[a]])
        else:  # jobs queued, nothing running or arriving: the scheduler's periodic pass
            idle += 1
            if plugin is None or idle > starvation + 1:
                raise SchedulerFault(f"{len(queue)} jobs queued and nothing running or arriving: the scheduler "
                                     f"stalled")
            now += IDLE_PASS_S
        done = 0
        while running and running[0][0] == now:
            _, j = heapq.heappop(running)
            free[0] += nodes[j]
            free[1] += bb[j]
            if classes:
                for k, m in enumerate(held.pop(j)):
                    free_c[k] += m
            done += 1
        while a < len(arrivals) and sub[arrivals[a]] == now:
            queue.append(arrivals[a])
            a += 1
        schedule(now)
        if progress is not None and done:
            finished += done
            if finished >= 200:
                progress(finished)
                finished = 0
    if progress is not None and finished:
        progress(finished)
    config = {"policy": policy, "backfill": backfill, "window": window, "params": params,
              "window_size": window_size, "starvation": starvation, "persistent_bb": persistent_bb,
              "backfill_depth": backfill_depth, "ssd_classes": [list(c) for c in classes]}
    return SimResult(trace, np.array(start, dtype=np.int64), np.array(end, dtype=np.int64), config, left_out,
                     clipped=int(np.sum(run_raw > trace.requested_time)), forced=stats.forced,
                     plugin_calls=stats.calls, plugin_time_s=stats.plugin_time, wall_time_s=time.perf_counter() - t0,
                     selections=stats.selections,
                     info={"plugin_generations": stats.generations} if stats.calls else {},
                     ssd_classes=classes, wasted_ssd=wasted if classes else None)
