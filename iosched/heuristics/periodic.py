"""PerSched (Aupy, Gainaru, Le Fèvre, Algorithms 1-3) and its Dilation variant.

Faithful to the authors' published code, which reproduces the paper's Table 4:

* Internally bandwidths are counted in processor cards (b = 1) and volumes in
  what one card moves in a second, as in that code; times stay in seconds.
  Dates closer than ``precision`` (2e-5 s) are one date, and an instance is
  placed once less than ``precision`` card-seconds of data are left.
* Next application: the worst current Dilation (infinite before its first
  instance), ties to the larger w_k / time_io_k; an application whose
  insertion fails is not tried again for that period.
* First instance: water-filling -- take the intervals by decreasing free
  bandwidth (ties to the earlier) and fill each from its start; fail if the
  transfer time exceeds T - w. The compute goes right before the earliest
  I/O piece (mod T).
* Later instances: the compute starts where the last inserted instance of
  that application ends its I/O, the I/O fills forward from w later, and the
  compute is pushed to end at the first interval with free bandwidth; fail
  if the next instance's compute start is reached first.
* Period search: T from t_min by T <- round(1000 T (1 + eps)) / 1000 while
  T <= K' t_min, keeping the best SysEfficiency (improvement > 1e-6); then T
  goes down from that T_opt by (T_opt - T_opt / (1 + eps)) * eps while the
  SysEfficiency scales exactly as T_opt / T. The Dilation variant takes the
  least Dilation over all patterns built by both loops, which is what gives
  the paper's min Dilation column (the upward loop alone misses sets 6 and 9
  by more than 1e-3).

One deliberate difference: a period at which some application gets no
instance is never a candidate, so a returned pattern always holds every
application.
"""

from __future__ import annotations

import math
import os
from bisect import bisect_left, bisect_right
from concurrent.futures import ProcessPoolExecutor

from iosched.core import MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern
from iosched.instances.periodic import PeriodicInstance

PRECISION = 2e-5


class _Builder:
    """One period's pattern under construction (the authors' event list)."""

    def __init__(self, T, apps, B, P):
        self.T, self.B, self.P = T, B, P
        self.apps = apps  # (w, vol, beta, time_io) in card units
        self.dates = [0.0, T]  # sorted; the last one is the end of the period
        self.tot = [0.0, 0.0]  # bandwidth used on [dates[i], dates[i+1])
        n = len(apps)
        self.inst = [[] for _ in range(n)]  # raw compute start dates, sorted
        self.last = [None] * n  # compute start of the last inserted instance
        self.piece_ts = [[] for _ in range(n)]  # I/O pieces, sorted by start
        self.piece_te = [[] for _ in range(n)]
        self.record = [[] for _ in range(n)]  # (compute start, [(ts, te, bw)])

    def fmod(self, x):
        r = math.fmod(x, self.T)
        return 0.0 if self.T - self.P < r < self.T + self.P else r

    def find(self, x):
        i = bisect_left(self.dates, x - self.P)
        return i if i < len(self.dates) and self.dates[i] <= x + self.P else -1

    def add_date(self, x):
        x = self.fmod(x + self.T)
        i = bisect_left(self.dates, x - self.P)
        if not (i < len(self.dates) and self.dates[i] <= x + self.P):
            self.dates.insert(i, x)
            self.tot.insert(i, self.tot[i - 1])
        return i

    def length(self, i):
        if len(self.dates) == 2:
            return self.T
        return self.fmod(self.T + self.dates[i + 1] - self.dates[i])

    # -- Insert-First-Instance: water-filling over the whole period ---------
    def first_pieces(self, k):
        w, vol, beta, _ = self.apps[k]
        if self.T < w:
            return None
        free = [min(self.B - t, beta) for t in self.tot[:-1]]
        order = sorted((i for i in range(len(free)) if free[i] > 0), key=lambda i: (-free[i], i))
        chosen, left, busy = {}, vol, 0.0
        for i in order:
            if left <= self.P:
                break
            add = min(self.length(i), left / free[i])
            busy += add
            left -= free[i] * add
            chosen[i] = (self.dates[i], self.dates[i] + add, free[i])
        if left > self.P or busy > self.T - w + self.P:
            return None
        return [chosen[i] for i in sorted(chosen)]

    def end_of_transfer(self, k, end_io):
        """End of k's last I/O piece at or before date ``end_io``, going back cyclically."""
        e = self.find(self.T if end_io == 0 else end_io)
        d = self.dates[e]
        ts, te = self.piece_ts[k], self.piece_te[k]
        j = bisect_right(ts, d) - 1
        if j < 0:
            return te[-1]
        return self.dates[e + 1] if te[j] > d else te[j]

    # -- Insert-In-Pattern: after the last inserted instance ------------------
    def next_pieces(self, k):
        w, vol, beta, _ = self.apps[k]
        starts = self.inst[k]
        j = bisect_left(starts, self.last[k])
        end_io = starts[(j + 1) % len(starts)]
        begin_io = self.end_of_transfer(k, end_io)
        P, T = self.P, self.T
        if end_io > begin_io + P:
            room = end_io >= begin_io + w - P
        elif end_io + P < begin_io:
            room = end_io + T >= begin_io + w - P
        else:
            room = False
        if not room:
            return None
        i = self.add_date(self.fmod(begin_io + w))
        stop = self.find(end_io)
        pieces, left, end = [], vol, len(self.dates) - 1
        while left > P and i != stop:
            if i == end:  # the end of the period: a zero-length piece, then wrap
                pieces.append((T, T, min(self.B, beta)))
                i = 0
                continue
            free = min(self.B - self.tot[i], beta)
            if free > 0:
                add = min(self.length(i), left / free)
                left -= free * add
                pieces.append((self.dates[i], self.dates[i] + add, free))
            i += 1
        return None if left > P else pieces

    def add_instance(self, k, pieces):
        T, P, dates, tot = self.T, self.P, self.dates, self.tot
        fmod = self.fmod
        c = fmod(pieces[0][0] - self.apps[k][0] + T)
        self.add_date(c)
        starts = self.inst[k]
        j = bisect_left(starts, c)
        if j == len(starts) or starts[j] != c:
            starts.insert(j, c)
        self.last[k] = c
        for _, te, _ in pieces:  # piece starts are dates already; ends may split an interval
            self.add_date(te)
        placed = []
        end = len(dates) - 1
        for ts, te, bw in pieces:
            te = fmod(te + T)
            i = first = self.find(fmod(ts + T))
            while abs(dates[i] - te) > P:
                tot[i] += bw
                i += 1
                if i == end:
                    i = 0
            if i != first:
                placed.append((dates[first], T if i == 0 else dates[i], bw))
        run_ts, run_te = self.piece_ts[k], self.piece_te[k]
        run = None
        for ts, te, _ in placed + [(None, None, None)]:  # store maximal runs of adjacent pieces
            if run and ts == run[1]:
                run[1] = te
                continue
            if run:
                pos = bisect_left(run_ts, run[0])
                run_ts.insert(pos, run[0])
                run_te.insert(pos, run[1])
            run = [ts, te]
        self.record[k].append((c, placed))

    def fill(self):
        """Algorithm 2's inner loop with the schedulability heap of Algorithm 3."""
        T, P = self.T, self.P
        ratio = [w / tio for w, _, _, tio in self.apps]
        alive = set(range(len(self.apps)))
        while alive:
            best, best_sd, best_ratio = -1, 2.0, -1.0
            for k in sorted(alive):
                w, _, _, tio = self.apps[k]
                sd = len(self.inst[k]) * (w + tio) / T
                if sd < best_sd - P:
                    best, best_sd, best_ratio = k, sd, ratio[k]
                elif sd == best_sd and ratio[k] > best_ratio + P:
                    best, best_ratio = k, ratio[k]
            pieces = self.next_pieces(best) if self.inst[best] else self.first_pieces(best)
            if pieces:
                self.add_instance(best, pieces)
            else:
                alive.discard(best)
        return self

    def counts(self):
        return [len(s) for s in self.inst]


def _card_units(instance: PeriodicInstance):
    b = instance.platform.processor_bandwidth
    B = instance.platform.bandwidth / b
    apps = []
    for a in instance.applications:
        vol = a.io_volume / b
        apps.append((a.work, vol, float(a.processors), vol / min(a.processors, B)))
    return apps, B


def _counts_at(args):
    instance, T, P = args
    apps, B = _card_units(instance)
    return T, _Builder(T, apps, B, P).fill().counts()


def build_pattern(instance: PeriodicInstance, period: float, precision: float = PRECISION) -> Pattern:
    """The pattern PerSched's insertion builds at one period (seconds)."""
    apps, B = _card_units(instance)
    builder = _Builder(period, apps, B, precision).fill()
    b = instance.platform.processor_bandwidth
    out = []
    for rec in builder.record:
        insts = []
        for c, pieces in sorted(rec):
            start = builder.dates[builder.find(c)]
            insts.append(PatternInstance(start, tuple((s, e, bw * b) for s, e, bw in pieces)))
        out.append(tuple(insts))
    return Pattern(period, tuple(out))


def _sys_eff(instance, counts, T):
    N = instance.platform.processors
    return sum(a.processors * n * a.work for a, n in zip(instance.applications, counts)) / (N * T)


def _inv_dilation(instance, counts, T):
    return min(n * a.work / (instance.rho(k) * T)
               for k, (a, n) in enumerate(zip(instance.applications, counts)))


def period_grid(t_min: float, k_prime: float, eps: float) -> list[float]:
    """The periods of the upward search: t_min, then x(1+eps) rounded to 1e-3 s, up to K' t_min."""
    grid, T = [], t_min
    while T <= k_prime * t_min:
        grid.append(T)
        T = math.floor(T * (1 + eps) * 1000 + 0.5) / 1000
    return grid


def search(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
           t_min: float | None = None, objective: str = "sys_efficiency",
           precision: float = PRECISION, workers: int = 1) -> dict:
    """Algorithm 2: the period search. Returns the chosen period and the trace.

    ``objective`` "sys_efficiency" keeps the best SysEfficiency and refines the
    period downward; "dilation" then takes the least Dilation over every pattern
    both loops built (the paper's min Dilation column). ``workers`` > 1 builds
    the periods of the upward loop in parallel processes.
    """
    if k_prime < 1:
        raise ParameterError(f"k_prime must be >= 1, got {k_prime!r}")
    if not 0 < eps < 1:
        raise ParameterError(f"eps must be in (0, 1), got {eps!r}")
    if objective not in ("sys_efficiency", "dilation"):
        raise ParameterError(f"objective must be sys_efficiency or dilation, got {objective!r}")
    t_min = t_min or instance.t_min or instance.default_t_min()
    grid = period_grid(t_min, k_prime, eps)
    tasks = [(instance, T, precision) for T in grid]
    if workers > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            trace = list(pool.map(_counts_at, tasks, chunksize=max(1, len(tasks) // (4 * workers))))
    else:
        trace = [_counts_at(t) for t in tasks]
    best_se, T_se = -1.0, None
    for T, counts in trace:
        if min(counts) > 0 and _sys_eff(instance, counts, T) > best_se + 1e-6:
            best_se, T_se = _sys_eff(instance, counts, T), T
    if T_se is None:
        return {"period": None, "trace": trace, "t_min": t_min}
    T, chosen = T_se, T_se
    step = (T_se - T_se / (1 + eps)) / (1 / eps)
    while True:
        _, counts = _counts_at((instance, T, precision))
        trace.append((T, counts))
        target = best_se * T_se / T
        if min(counts) > 0 and abs(_sys_eff(instance, counts, T) - target) < precision:
            chosen = T
            T -= step
        else:
            break
    if objective == "dilation":
        best_sd = -1.0
        for T, counts in trace:
            if min(counts) > 0 and _inv_dilation(instance, counts, T) > best_sd + 1e-6:
                best_sd, chosen = _inv_dilation(instance, counts, T), T
    return {"period": chosen, "trace": trace, "t_min": t_min}


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def _run(instance, objective, k_prime, eps, t_min, precision, workers):
    found = search(instance, k_prime=k_prime, eps=eps, t_min=t_min, objective=objective,
                   precision=precision, workers=workers)
    info = {"t_min": found["t_min"], "periods_tried": len(found["trace"])}
    if found["period"] is None:
        info["error"] = "no period in [t_min, K' t_min] holds an instance of every application"
        return MethodOutput(None, Status.INFEASIBLE, info=info)
    return MethodOutput(build_pattern(instance, found["period"], precision), Status.FEASIBLE, info=info)


@register("periodic", "persched", objective="sys_efficiency")
def persched(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
             t_min: float | None = None, precision: float = PRECISION, workers: int = 1) -> MethodOutput:
    """PerSched (Algorithm 2): the pattern of best SysEfficiency over the period search."""
    return _run(instance, "sys_efficiency", k_prime, eps, t_min, precision, workers)


@register("periodic", "persched-mindil", objective="dilation")
def persched_mindil(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
                    t_min: float | None = None, precision: float = PRECISION,
                    workers: int = 1) -> MethodOutput:
    """PerSched's least-Dilation pattern over its whole search (the paper's min Dilation)."""
    return _run(instance, "dilation", k_prime, eps, t_min, precision, workers)
