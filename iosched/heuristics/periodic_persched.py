"""PerSched (Aupy, Gainaru, Le Fèvre, Algorithms 1-3) and its Dilation variant.

Faithful to the authors' published code, which reproduces the paper's Table 4:

* Internally bandwidths are counted in processor cards (b = 1) and volumes in
  what one card moves in a second, as in that code; times stay in seconds.
  Dates closer than ``precision`` are one date, and an instance is placed
  once less than ``precision`` card-seconds of data are left (ours: and less
  than ``precision`` seconds of transfer at min(beta_k, B), see below). The
  authors use 2e-5 s; by default ours is min(2e-5, 1e-6 min_k time_io_k), the
  same on the paper's sets and small enough for instances on shorter time scales.
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

What is ours and changes no result: the upward loop skips a period whose bounds (at most
floor(T / (w_k + time_io_k)) instances of each application, and no more volume than B T)
show it cannot beat the best pattern so far by the 1e-6 that a better one needs
(:func:`search`, ``prune``): the same period and pattern as building every period, on the ten
paper sets and 50 generated instances, about a fifth of the periods built. The search keeps
only each period's counts; the chosen pattern is read back as arrays
(:class:`~iosched.evaluate.periodic.PackedApplications`), an instance's adjacent pieces at
one rate as one piece.

Three deliberate differences, none of which changes Table 4:

* a period at which some application gets no instance is never a candidate,
  so a returned pattern always holds every application;
* the authors' water-filling only checks that the first instance's transfer
  time is at most T - w, so its pieces can spread over more than T - w and
  overlap the instance's own compute (the evaluator rejects such patterns:
  about one random instance in a hundred). Here the first instance fails
  unless its pieces fit between the compute end and the next compute start;
* the authors place an instance once at most ``precision`` card-seconds are left to
  move (``dataLeft > 0+PRECISION`` fails it), a tolerance in the unit of a processor's
  bandwidth. Where B or β_k is below one card (a platform whose bandwidth is a small
  fraction of one processor's) that is a large share of the volume: with B = 2e-5 cards
  and vol_k = 4e-5 card-seconds, 2.5 %, and instances whose I/O ended ~2.5 % short at
  the period's end were placed (the evaluator rejects them). Here at most
  min(P, P min(β_k, B)) card-seconds may be left, at most P seconds of transfer at k's
  full rate: a share of the volume at most P / time_io_k (at most 1e-6 with the default
  precision, inside the evaluator's 1e-5), and the authors' P wherever min(β_k, B) >= 1
  card, as on the paper's sets and the generated instances.

The period cap is the instance's (``k_prime``, t_min: :meth:`PeriodicInstance.period_cap`): PerSched's
``k_prime`` and ``t_min`` default to the instance's and can only narrow the search, never take it past the
cap (where they ask for more, the search stops at the cap and ``info["t_max"]`` says so). The paper's sets
carry K' = 10 and the authors' t_min: their search is the paper's.

Robustness (none of it changes Table 4): every parameter and the instance are checked
before anything runs (:func:`plan_search`, naming what to change); the compiled insertion
loop is bounded (at most MAX_INSTANCES instances and MAX_PIECES I/O pieces per pattern, one
turn of the period per insertion, a date lost to double precision fails the insertion
instead of reading past an array); and the search has a wall-clock budget (``time_limit``, the
default profile's 60 s unless given, counted from iosched.solve's clock; the exact methods pass
their profile's) checked between periods: it then
returns the best pattern so far with status ``time_limit``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from iosched.core import HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import PackedApplications, Pattern, dilation, sys_efficiency
from iosched.heuristics.periodic_kernel import BROKEN, OK, TOO_LARGE, compile_kernel, kernel, kernels, method_deadline
from iosched.instances.periodic import PeriodicInstance, checked_instance
from iosched.solvers import Deadline
from iosched.validate import Integer, Number, TimeLimit, choice, integer, number, positive

PRECISION = 2e-5

# --- limits: what one run may build -----------------------------------------------------------
# Measured on a 2-core, 24 GiB machine (random:1:200, K' = 10): a period whose pattern holds
# 300,000 instances (3 million pieces as the insertion places them, one per instance once an
# instance's adjacent pieces at one rate are merged) takes 1.1 s in the kernel; the chosen
# pattern of 366,000 instances takes 60 MB as arrays and 0.2 s to evaluate. A run beyond these
# limits is refused before it starts (or, for pieces, which are only known once built, the
# search stops at the first period it builds above them), with a message that says what to
# change; nothing swaps and no single period runs for minutes.
MAX_APPS = 10_000  # applications
MAX_INSTANCES = 500_000  # instances in one pattern: Σ_k floor(K' t_min / (w_k + time_io_k))
MAX_CELLS = 20_000_000  # K x the most instances of one application (the kernel's rows per application)
MAX_PIECES = 6_000_000  # I/O pieces in one pattern (an instance's adjacent pieces at one rate count once)
MAX_PERIODS = 100_000  # periods of the upward search, about ln K' / ln(1 + eps)
RESOLUTION = 1e-7  # the shortest I/O time must be at least this fraction of K' t_min (doubles)
# a user's precision at most this share of the shortest I/O time or work: an instance may be left P s of
# transfer short, or its dates moved by P, so volumes and times are off by at most this share, ten times inside
# the evaluator's 1e-5 (at 1e-3, the old ceiling, 5 of random:0..19 gave patterns it rejected; the default
# precision, default_precision, is within it)
PRECISION_SHARE = 1e-6
READ_BACK = 2.0  # building the chosen pattern costs up to this many periods' search time (the kernel again,
# recording, and numpy arrays; a margin over the ratio measured in benchmarks/speed.md, constants)
BATCH_INSTANCES = 256  # periods that can hold at most this many instances are built in batches ...
BATCH_PERIODS = 32  # ... of this many periods per call of the kernel (each call costs about 5 us)
THREADS_FROM = 2e-4  # s: with workers > 1, threads build the periods once three in a row took this long
# (shorter periods ran slower in two threads than in one: benchmarks/speed.md, constants)

# parameter ranges, checked by iosched.solve and the suites before anything runs (and again inside)
KPrime = Annotated[float | None, Number(1)]  # None: the instance's k_prime
Eps = Annotated[float, Number(0, 1, lo_open=True, hi_open=True)]
Seconds = Annotated[float | None, Number(0, lo_open=True)]
Workers = Annotated[int, Integer(1, 256)]


def _card_units(instance: PeriodicInstance):
    """Work (s), volume (card-seconds), cards, time_io (s) per application, and B in cards."""
    b = instance.platform.processor_bandwidth
    B = instance.platform.bandwidth / b
    apps = []
    for a in instance.applications:
        vol = a.io_volume / b
        apps.append((a.work, vol, float(a.processors), vol / min(a.processors, B)))
    units = np.array(apps).T.copy()
    ok = np.isfinite(units).all(axis=0) & (units > 0).all(axis=0)
    if not (math.isfinite(B) and B > 0 and ok.all()):
        a = instance.applications[int(np.argmin(ok))]
        raise InstanceError(f"applications[{a.name}].io_volume = {a.io_volume!r} in units of processor_bandwidth "
                            f"= {b!r} (bandwidth {instance.platform.bandwidth!r}) is not a finite positive "
                            f"number: the platform's and the application's scales are too far apart")
    return units, B


@dataclass(frozen=True)
class Plan:
    """A checked period search: [t_min, t_max] by factors (1 + eps), dates merged within ``precision``;
    t_max = min(K' t_min, the instance's period cap)."""

    t_min: float
    k_prime: float
    eps: float
    precision: float
    t_max: float


def largest_k_prime(t_min: float, k_prime: float, fits: Callable[[float], bool]) -> float:
    """The largest K' in [1, k_prime] with ``fits(K' t_min)`` (bisection; ``fits(t_min)`` holds): the K' a
    refused ``k_prime`` could be lowered to, for the error message that refuses it."""
    lo, hi = 1.0, k_prime
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits(mid * t_min) else (lo, mid)
    return lo


def plan_search(instance: PeriodicInstance, k_prime=None, eps=0.01, t_min=None, precision=None) -> Plan:
    """Check PerSched's parameters against the instance before anything runs.

    ``k_prime`` and ``t_min`` default to the instance's; the search never goes past the instance's period
    cap (a ``t_min`` above it is refused). Raises :class:`ParameterError` (a parameter: its name and value,
    and what fits) or :class:`InstanceError` (the instance itself: the field and value) when the search
    would exceed the limits above: too many periods, patterns too large for memory or time, or I/O
    times too short for double-precision dates at the longest period.
    """
    instance = checked_instance(instance)
    own = k_prime is None
    k_prime = instance.k_prime if own else number("k_prime", k_prime, 1, error=ParameterError)
    k_name = f"the instance's k_prime = {k_prime!r}" if own else f"k_prime = {k_prime!r}"
    eps = number("eps", eps, 0, 1, lo_open=True, hi_open=True, error=ParameterError)
    apps = instance.applications
    if len(apps) > MAX_APPS:
        raise InstanceError(f"applications: PerSched handles at most {MAX_APPS} applications, got {len(apps)}")
    cycles = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
    error: type[ParameterError] | type[InstanceError]  # what a t_min beyond the checks is
    if t_min is not None:
        source, error = "t_min", ParameterError
        t_min = positive("t_min", t_min, error=ParameterError)
    elif instance.t_min is not None:
        source, error, t_min = "the instance's t_min", InstanceError, instance.t_min
    else:
        source, error, t_min = "t_min (by default max_k work + I/O time)", InstanceError, max(cycles)
    t_max = k_prime * t_min
    if not math.isfinite(t_max):
        raise ParameterError(f"k_prime x t_min = {k_prime!r} x {t_min!r} s is not a finite number")
    cap = instance.period_cap()
    if t_min > cap:
        raise ParameterError(f"t_min = {t_min!r} s is above the instance's period cap K' t_min = "
                             f"{instance.k_prime!r} x {instance.search_t_min()!r} s = {cap!r} s: no period to search")
    t_max = min(t_max, cap)
    periods = 1 + math.log(t_max / t_min) / math.log1p(eps)
    if periods > MAX_PERIODS:
        need = math.expm1(math.log(t_max / t_min) / (MAX_PERIODS - 1))
        raise ParameterError(f"eps = {eps!r} with {k_name} makes about {periods:.3g} periods in the "
                             f"search, above the limit of {MAX_PERIODS}; eps >= {need:.3g} fits")

    def instances(T):
        return sum(math.floor(T / c) for c in cycles)

    def rows(T):
        return len(apps) * max(math.floor(T / c) for c in cycles)

    for count, limit, what in ((instances, MAX_INSTANCES, "application instances in one pattern"),
                               (rows, MAX_CELLS, "cells (applications x the most instances of one)")):
        if count(t_max) <= limit:
            continue
        if count(t_min) <= limit:
            fit = largest_k_prime(t_min, t_max / t_min, lambda T: count(T) <= limit)  # noqa: B023
            raise ParameterError(
                f"{k_name}: a period of {t_max:.6g} s (K' t_min, at most the period cap) can hold up to "
                f"{count(t_max):.4g} {what}, above PerSched's limit of {limit}; k_prime <= {fit:.4g} fits")
        short = min(range(len(apps)), key=lambda k: cycles[k])
        raise error(
            f"{source} = {t_min!r} s: a period that long can hold up to {count(t_min):.4g} {what} "
            f"(applications[{apps[short].name}] alone, work + I/O time {cycles[short]:.4g} s, fits "
            f"{t_min / cycles[short]:.4g} times), above PerSched's limit of {limit}: the applications' time "
            f"scales are too far apart")
    tio = [instance.time_io(k) for k in range(len(apps))]
    short = min(range(len(apps)), key=lambda k: tio[k])
    if tio[short] < RESOLUTION * t_max:
        raise InstanceError(
            f"applications[{apps[short].name}].io_volume = {apps[short].io_volume!r}: its I/O time "
            f"{tio[short]:.4g} s is below {RESOLUTION:g} of the longest period searched (K' t_min = {t_max:.6g} s); "
            f"PerSched's dates are doubles and cannot place it (a smaller k_prime or t_min may)")
    quick = min(range(len(apps)), key=lambda k: apps[k].work)
    if apps[quick].work < RESOLUTION * t_max:
        raise InstanceError(
            f"applications[{apps[quick].name}].work = {apps[quick].work!r} s is below {RESOLUTION:g} of the longest "
            f"period searched (K' t_min = {t_max:.6g} s); PerSched's dates are doubles and cannot place it (a "
            f"smaller k_prime or t_min may)")
    floor = 1e-13 * t_max  # a few hundred units in the last place of the longest period
    if precision is None:
        precision = max(default_precision(instance), floor)
    else:
        precision = positive("precision", precision, error=ParameterError)
        top = PRECISION_SHARE * min(tio[short], apps[quick].work)
        if not floor <= precision <= top:
            raise ParameterError(f"precision must be in [{floor:.4g}, {top:.4g}] s for this search (1e-13 of "
                                 f"K' t_min to {PRECISION_SHARE:g} of the shortest I/O time or work, so that a "
                                 f"pattern stays within the evaluator's tolerance), got {precision!r}")
    return Plan(t_min, k_prime, eps, precision, t_max)


def _counts_at(args):
    """(code, counts) of the pattern built at one period, from card units."""
    T, units, B, precision = args
    codes, counts = _build_counts(np.array([float(T)]), units, B, precision)
    return int(codes[0]), counts[0].tolist()


def _build_counts(periods: np.ndarray, units, B, precision) -> tuple[np.ndarray, np.ndarray]:
    """Codes and instance counts (one row per period) of the patterns built at ``periods``, in one call."""
    codes = np.empty(len(periods), np.int64)
    counts = np.empty((len(periods), units.shape[1]), np.int64)
    kernels()[1](periods, float(B), float(precision), *units, MAX_INSTANCES, MAX_PIECES, codes, counts)
    return codes, counts


def count_caps(instance: PeriodicInstance, periods, precision: float) -> np.ndarray:
    """caps[q, k]: the most instances of application k a pattern that PerSched's insertion builds
    at ``periods[q]`` (s) can hold.

    Proof: an instance of k occupies k for its compute, w_k less at most the ``precision`` P by
    which a date may merge, and for its transfer, which moves vol_k less at most min(P, P m_k)
    card-seconds (m_k = min(β_k, B)) at a rate of at most m_k cards, that is time_io_k less at
    most min(P / m_k, P); an instance's transfer ends before the next compute of k starts (within
    P). So n_k instances need n_k (w_k + time_io_k - δ_k) <= T with δ_k = 4 P + 2 min(P / m_k, P),
    a generous sum of those slacks, and n_k <= floor(T / (w_k + time_io_k - δ_k)). (Before the
    kernel's allowance was capped at P seconds of transfer, δ_k had P / m_k, which on platforms
    far below one card exceeded the whole cycle: caps near 1e301, bounds that overflowed.)
    """
    units, B = _card_units(instance)
    w, vol, beta, tio = units
    slack = 4 * precision + 2 * np.minimum(precision / np.minimum(beta, B), precision)
    cycle = np.maximum(w + tio - slack, 1e-300)
    return np.floor(np.asarray(periods, float)[:, None] * (1 + 1e-12) / cycle[None, :])


SAFE = 1 + 1e-9  # a bound is inflated by this before it may rule a period out (the sums below are numpy's)


def period_bounds(instance: PeriodicInstance, periods, precision: float) -> tuple[np.ndarray, np.ndarray]:
    """Per period of ``periods`` (s), bounds on what the pattern PerSched builds there can reach:
    an upper bound on its SysEfficiency and on 1 / its Dilation (0 where some application
    cannot hold an instance: no candidate).

    SysEfficiency: the most Σ_k β_k n_k w_k / (N T) with n_k <= count_caps and the volume moved
    at most what B carries in T (Σ_k n_k (vol_k - P) <= B T: the insertion never exceeds B), a
    fractional knapsack solved greedily by β_k w_k / vol_k. 1 / Dilation: min_k n_k w_k / (ρ_k T)
    at n_k = count_caps.
    """
    periods = np.asarray(periods, float)
    caps = count_caps(instance, periods, precision)
    units, B = _card_units(instance)
    w, vol, beta, _ = units
    value = beta * w
    order = np.argsort(-value / vol, kind="stable")
    cum_vol = np.cumsum(caps[:, order] * vol[order], axis=1)
    cum_val = np.cumsum(caps[:, order] * value[order], axis=1)
    room = B * periods * SAFE + caps.sum(axis=1) * precision
    K = len(w)
    over = cum_vol > room[:, None]
    j = np.where(over.any(axis=1), over.argmax(axis=1), K)
    rows = np.arange(len(periods))
    before_val = np.where(j > 0, cum_val[rows, np.maximum(j - 1, 0)], 0.0)
    before_vol = np.where(j > 0, cum_vol[rows, np.maximum(j - 1, 0)], 0.0)
    density = (value / vol)[order][np.minimum(j, K - 1)]
    part = j < K  # a period whose room some unit overflows: that unit's share of the room left
    best = before_val.copy()  # (only there: elsewhere room * density can overflow, and would be dropped)
    best[part] += (room - before_vol)[part] * density[part]
    N = instance.platform.processors
    se = np.minimum(best, cum_val[:, -1]) / (N * periods) * SAFE
    rho = np.array([instance.rho(k) for k in range(K)])
    inv_dil = (caps * w / rho).min(axis=1) / periods * SAFE
    missing = (caps < 1).any(axis=1)
    se[missing], inv_dil[missing] = 0.0, 0.0
    return se, inv_dil


def build_pattern(instance: PeriodicInstance, period: float, precision: float | None = None) -> Pattern:
    """The pattern PerSched's insertion builds at one period (seconds)."""
    instance = checked_instance(instance)
    period = positive("period", period, error=ParameterError)
    precision = positive("precision", precision, error=ParameterError) if precision is not None else max(
        default_precision(instance), 1e-13 * period)
    units, B = _card_units(instance)
    code, _, dates, rec_app, rec_c, pc_inst, pc_ts, pc_te, pc_bw = kernel()(
        period, float(B), precision, *units, MAX_INSTANCES, MAX_PIECES, 1)
    if code == TOO_LARGE:
        raise ParameterError(f"period = {period!r} s: the pattern holds more than {MAX_INSTANCES} instances or "
                             f"{MAX_PIECES} I/O pieces, above PerSched's limits")
    if code != OK:
        raise InstanceError(f"period = {period!r} s: PerSched lost a date (double precision) at precision "
                            f"{precision!r} s")
    # instances app by app, each app's by compute start (ties in insertion order), each compute start
    # the date it merged into; an instance's pieces in the order they were placed
    order = np.lexsort((rec_c, rec_app))
    starts = dates[np.searchsorted(dates, rec_c[order] - precision, side="left")]
    per_record = np.bincount(pc_inst, minlength=len(rec_app))
    first = np.concatenate(([0], np.cumsum(per_record)))[order]
    seg_off = np.concatenate(([0], np.cumsum(per_record[order])))
    take = np.repeat(first - seg_off[:-1], per_record[order]) + np.arange(seg_off[-1])
    app_off = np.concatenate(([0], np.cumsum(np.bincount(rec_app, minlength=len(instance.applications)))))
    b = instance.platform.processor_bandwidth
    return Pattern(float(period), PackedApplications(app_off, starts, seg_off, pc_ts[take], pc_te[take],
                                                     pc_bw[take] * b))


def period_grid(t_min: float, t_max: float, eps: float) -> list[float]:
    """The periods of the upward search: t_min, then x(1+eps) rounded to 1e-3 s, up to t_max (K' t_min,
    at most the instance's period cap).

    Where rounding to 1e-3 s would not advance (periods below 0.05 s at eps = 0.01), the
    unrounded x(1+eps) is taken instead; the grid stops with an error past 2 MAX_PERIODS.
    """
    grid: list[float] = []
    T = t_min
    while T <= t_max:
        if len(grid) >= 2 * MAX_PERIODS:
            raise ParameterError(f"eps = {eps!r} with t_min = {t_min!r} s and t_max = {t_max!r} s makes more "
                                 f"than {2 * MAX_PERIODS} periods")
        grid.append(T)
        nxt = math.floor(T * (1 + eps) * 1000 + 0.5) / 1000
        T = nxt if nxt > T else T * (1 + eps)
    return grid


def search(instance: PeriodicInstance, k_prime: float | None = None, eps: float = 0.01,
           t_min: float | None = None, objective: str = "sys_efficiency",
           precision: float | None = None, workers: int = 1, deadline: Deadline | None = None,
           prune: bool = True) -> dict:
    """Algorithm 2: the period search. Returns the chosen period and the trace.

    ``objective`` "sys_efficiency" keeps the best SysEfficiency and refines the
    period downward; "dilation" then takes the least Dilation over every pattern
    both loops built (the paper's min Dilation column). ``workers`` > 1 builds
    the periods of the upward loop in that many threads (the compiled kernel releases the GIL).

    With ``prune`` (the default) the upward loop builds no period whose bounds
    (:func:`period_bounds`) show that its pattern could not become the best one kept (its
    SysEfficiency, and for "dilation" also 1 / its Dilation, at most the best so far plus the
    1e-6 margin by which a better one must win): the chosen period and pattern are the same as
    without pruning, the trace holds only the periods built (``pruned`` counts the others).
    Short periods (at most BATCH_INSTANCES instances can fit) are built BATCH_PERIODS at a time
    in one call of the kernel, pruned by the best before the batch.

    With a ``deadline`` no period starts once the time left is shorter than the last
    period took plus READ_BACK times that for reading the chosen pattern back (what
    build_pattern costs: the kernel again and Python objects for every piece): the search
    then keeps what it has and says ``stopped``. A period whose pattern exceeds the size
    limits ends the upward loop (``too_large_from``); one where the arithmetic broke down is
    skipped (``broken``).
    """
    plan = plan_search(instance, k_prime, eps, t_min, precision)
    choice("objective", objective, ("sys_efficiency", "dilation"), error=ParameterError)
    workers = integer("workers", workers, 1, 256, error=ParameterError)
    units, B = _card_units(instance)
    grid = period_grid(plan.t_min, plan.t_max, plan.eps)
    periods = np.array(grid)
    se_bound, inv_dil_bound = period_bounds(instance, periods, plan.precision)
    small = count_caps(instance, periods, plan.precision).sum(axis=1) <= BATCH_INSTANCES
    out: dict[str, Any] = {"t_min": plan.t_min, "t_max": plan.t_max, "precision": plan.precision,
                           "periods_planned": len(grid), "stopped": None, "too_large_from": None, "broken": [],
                           "pruned": 0}
    trace = []
    last = 0.0  # how long the next period (or batch) and reading a pattern back will take, from the last
    best = [-1.0, -1.0]  # SysEfficiency and 1 / Dilation of the best pattern built so far

    def out_of_time(needed):
        return deadline is not None and (deadline.expired() or deadline.remaining() < needed)

    def wanted(q) -> bool:
        return not prune or se_bound[q] > best[0] + 1e-6 or (
            objective == "dilation" and inv_dil_bound[q] > best[1] + 1e-6)

    def take(T, code, counts):
        """False once the upward loop must stop."""
        if code == TOO_LARGE:
            out["too_large_from"] = T
            return False
        if code == BROKEN:
            out["broken"].append(T)
        else:
            trace.append((T, counts))
            if min(counts) > 0:
                best[0] = max(best[0], sys_efficiency(instance, counts, T))
                best[1] = max(best[1], 1 / dilation(instance, counts, T))
        return True

    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 and len(grid) > 1 else None
    slow, q = 0, 0  # periods in a row that took THREADS_FROM or longer; the next period of the grid
    try:
        while q < len(grid):
            if not wanted(q):
                out["pruned"] += 1
                q += 1
                continue
            if out_of_time(last):
                out["stopped"] = "time_limit"
                break
            # periods grow with T; threads join once three in a row took long enough to pay for the hand-off
            threaded = pool is not None and slow >= 3
            span = 4 * workers if threaded else BATCH_PERIODS if small[q] else 1
            stop = min(len(grid), q + span)
            if not threaded and small[q]:
                stop = q + int(np.argmin(np.append(small[q:stop], False)))  # the short periods only
            chunk = [j for j in range(q, stop) if wanted(j)]
            out["pruned"] += stop - q - len(chunk)
            start = time.perf_counter()
            if threaded and pool is not None:  # (threaded: there is a pool)
                results = list(pool.map(_counts_at, [(grid[j], units, B, plan.precision) for j in chunk]))
            else:
                codes, counts = _build_counts(periods[chunk], units, B, plan.precision)
                results = [(int(c), n) for c, n in zip(codes, counts.tolist())]
            took = time.perf_counter() - start
            per_period = took * (workers if threaded else 1) / len(chunk)
            slow = slow + 1 if per_period >= THREADS_FROM else 0
            last = (took if threaded else took / len(chunk) * span) + READ_BACK * per_period
            if not all(take(grid[j], *r) for j, r in zip(chunk, results)):
                break
            q = stop
    finally:
        if pool is not None:
            pool.shutdown()
    best_se, T_se = -1.0, None
    for T, counts in trace:
        if min(counts) > 0 and sys_efficiency(instance, counts, T) > best_se + 1e-6:
            best_se, T_se = sys_efficiency(instance, counts, T), T
    if T_se is None:
        return {**out, "period": None, "trace": trace}
    T, chosen = T_se, T_se
    step = (T_se - T_se / (1 + plan.eps)) / (1 / plan.eps)
    for _ in range(MAX_PERIODS):  # downward, while SysEfficiency scales as T_opt / T
        if out_of_time(last):
            out["stopped"] = "time_limit"
            break
        start = time.perf_counter()
        code, counts = _counts_at((T, units, B, plan.precision))
        last = (1 + READ_BACK) * (time.perf_counter() - start)
        if code != OK:
            break
        trace.append((T, counts))
        target = best_se * T_se / T
        if min(counts) > 0 and abs(sys_efficiency(instance, counts, T) - target) < PRECISION:
            chosen = T
            if not 0 < T - step < T:
                break
            T -= step
        else:
            break
    if objective == "dilation":  # the authors compare 1 / Dilation with a 1e-6 margin
        best_sd = -1.0
        for T, counts in trace:
            if min(counts) > 0 and 1 / dilation(instance, counts, T) > best_sd + 1e-6:
                best_sd, chosen = 1 / dilation(instance, counts, T), T
    return {**out, "period": chosen, "trace": trace}


def default_precision(instance: PeriodicInstance) -> float:
    """min(2e-5, 1e-6 min_k time_io_k, 1e-6 min_k w_k): the authors' 2e-5 s unless I/O or compute
    times are short (dates closer than the precision merge: a compute shorter than it would vanish)."""
    apps = instance.applications
    return min(PRECISION, 1e-6 * min(instance.time_io(k) for k in range(len(apps))),
               1e-6 * min(a.work for a in apps))


def check_time_limit(time_limit) -> float | None:
    """``time_limit`` (s) checked; None stays None (the default profile's limit)."""
    if time_limit is None:
        return None
    return number("time_limit", time_limit, 0, 10**7, lo_open=True, error=ParameterError)


def run_search(instance, objective, deadline: Deadline, k_prime=None, eps=0.01, t_min=None, precision=None,
               workers=1) -> MethodOutput:
    """The search and the chosen pattern under ``deadline``, as a method's output (parameters checked)."""
    found = search(instance, k_prime=k_prime, eps=eps, t_min=t_min, objective=objective,
                   precision=precision, workers=workers, deadline=deadline)
    info = {"t_min": found["t_min"], "t_max": found["t_max"],
            "periods_tried": len(found["trace"]) + len(found["broken"]), "periods_pruned": found["pruned"]}
    asked = (instance.k_prime if k_prime is None else k_prime) * found["t_min"]
    if asked > found["t_max"]:
        info["period_cap"] = (f"searched up to the instance's period cap K' t_min = {found['t_max']:.6g} s, below "
                              f"k_prime x t_min = {asked:.6g} s")
    if found["stopped"]:
        info["stopped"] = (f"time limit ({deadline.seconds:g} s) after {info['periods_tried']} periods "
                           f"({found['periods_planned']} planned upward)")
    if found["too_large_from"] is not None:
        info["size_limit"] = (f"periods from {found['too_large_from']:.6g} s hold more than {MAX_INSTANCES} "
                              f"instances or {MAX_PIECES} I/O pieces: not searched")
    if found["broken"]:
        info["numerical_failures"] = (f"{len(found['broken'])} period(s) skipped where double precision lost a "
                                      f"date, first {found['broken'][0]:.6g} s")
    if found["period"] is None:
        if found["stopped"]:
            info["error"] = "no pattern found within the time limit"
            return MethodOutput(None, Status.TIME_LIMIT, info=info)
        if found["too_large_from"] == found["t_min"]:
            info["error"] = f"the pattern at t_min is above PerSched's size limits ({info['size_limit']})"
            return MethodOutput(None, Status.ERROR, info=info)
        info["error"] = "no period in [t_min, t_max] holds an instance of every application"
        return MethodOutput(None, Status.INFEASIBLE, info=info)
    pattern = build_pattern(instance, found["period"], found["precision"])
    return MethodOutput(pattern, Status.TIME_LIMIT if found["stopped"] else Status.FEASIBLE, info=info)



def _run(instance, objective, k_prime, eps, t_min, precision, workers, time_limit, context):
    entry = time.perf_counter()
    time_limit = check_time_limit(time_limit)
    plan_search(instance, k_prime, eps, t_min, precision)  # every parameter checked before anything runs
    integer("workers", workers, 1, 256, error=ParameterError)
    deadline = method_deadline(time_limit, entry, context)
    return run_search(instance, objective, deadline, k_prime, eps, t_min, precision, workers)


@register("periodic", "persched", objective="sys_efficiency", exact_over=HEURISTIC,
          prepare=compile_kernel)
def persched(instance: PeriodicInstance, k_prime: KPrime = None, eps: Eps = 0.01,
             t_min: Seconds = None, precision: Seconds = None,
             workers: Workers = 1, time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """PerSched (Algorithm 2): the pattern of best SysEfficiency over the period search (k_prime, t_min: the
    instance's unless given, never past its period cap); stops after time_limit s."""
    return _run(instance, "sys_efficiency", k_prime, eps, t_min, precision, workers, time_limit, context)


@register("periodic", "persched-mindil", objective="dilation", exact_over=HEURISTIC,
          prepare=compile_kernel)
def persched_mindil(instance: PeriodicInstance, k_prime: KPrime = None, eps: Eps = 0.01,
                    t_min: Seconds = None, precision: Seconds = None,
                    workers: Workers = 1, time_limit: TimeLimit = None,
                    *, context: RunContext | None = None) -> MethodOutput:
    """PerSched's least-Dilation pattern over its whole search (the paper's min Dilation); stops after time_limit s."""
    return _run(instance, "dilation", k_prime, eps, t_min, precision, workers, time_limit, context)


