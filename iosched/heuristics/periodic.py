"""PerSched (Aupy, Gainaru, Le Fèvre, Algorithms 1-3) and its Dilation variant.

Faithful to the authors' published code, which reproduces the paper's Table 4:

* Internally bandwidths are counted in processor cards (b = 1) and volumes in
  what one card moves in a second, as in that code; times stay in seconds.
  Dates closer than ``precision`` are one date, and an instance is placed
  once less than ``precision`` card-seconds of data are left. The authors use
  2e-5 s; by default ours is min(2e-5, 1e-6 min_k time_io_k), the same on the
  paper's sets and small enough for instances on shorter time scales.
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

Two deliberate differences, neither of which changes Table 4:

* a period at which some application gets no instance is never a candidate,
  so a returned pattern always holds every application;
* the authors' water-filling only checks that the first instance's transfer
  time is at most T - w, so its pieces can spread over more than T - w and
  overlap the instance's own compute (the evaluator rejects such patterns:
  about one random instance in a hundred). Here the first instance fails
  unless its pieces fit between the compute end and the next compute start.

Robustness (none of it changes Table 4): every parameter and the instance are checked
before anything runs (:func:`plan_search`, naming what to change); the compiled insertion
loop is bounded (at most MAX_INSTANCES instances and MAX_PIECES I/O pieces per pattern, one
turn of the period per insertion, a date lost to double precision fails the insertion
instead of reading past an array); and the search has a wall-clock budget (``time_limit``,
60 s by default; the exact methods pass their profile's) checked between periods: it then
returns the best pattern so far with status ``time_limit``.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from iosched.core import MethodOutput, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import PackedApplications, Pattern, Trace, dilation, sys_efficiency
from iosched.fluid import max_min_fair, priority_fill
from iosched.instances.periodic import PeriodicInstance
from iosched.solvers import Deadline
from iosched.validate import Integer, Number, choice, integer, number, positive

PRECISION = 2e-5


def _fmod(x, T, P):
    """fmod(x, T), with results within P of T taken as 0 (the authors' myFmod)."""
    r = np.fmod(x, T)
    if T - P < r < T + P:
        return 0.0
    return r


# The kernel below is plain Python that numba compiles on first use (:func:`kernel`), so that
# ``import iosched`` does not import numba. Its helpers are loops rather than np.searchsorted,
# np.argsort and slice assignment, which numba compiles in less time; the searches start from
# where the last one of their kind landed (the pattern is built forward in time).


def _order_desc(key, m):
    """Indices of key[:m] by decreasing key, ties in index order (a stable bottom-up merge sort)."""
    idx = np.empty(m, np.int64)
    tmp = np.empty(m, np.int64)
    for i in range(m):
        idx[i] = i
    width = 1
    while width < m:
        for lo in range(0, m, 2 * width):
            mid, hi = lo + width, lo + 2 * width
            if mid > m:
                mid = m
            if hi > m:
                hi = m
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if key[idx[j]] > key[idx[i]]:
                    tmp[o] = idx[j]
                    j += 1
                else:
                    tmp[o] = idx[i]
                    i += 1
                o += 1
            while i < mid:
                tmp[o] = idx[i]
                i += 1
                o += 1
            while j < hi:
                tmp[o] = idx[j]
                j += 1
                o += 1
        idx, tmp = tmp, idx
        width *= 2
    return idx


def _lower_near(a, n, x, h):
    """The first index i < n with a[i] >= x (n if none), as np.searchsorted(a[:n], x), galloping
    outward from index h: O(log d) steps for an answer d places from h.

    The kernel's searches land next to the previous one of their kind (the pattern is built
    forward in time), where a plain binary search over all the dates costs its full depth.
    """
    if n == 0:
        return 0
    if h < 0:
        h = 0
    elif h > n - 1:
        h = n - 1
    step = 1
    if a[h] < x:  # the answer is in (h, n]
        lo = hi = h + 1
        while hi < n and a[hi] < x:
            lo = hi + 1
            hi = lo + step
            step <<= 1
        if hi > n:
            hi = n
    else:  # the answer is in [0, h]
        lo = hi = h
        while lo > 0 and a[lo - 1] >= x:
            hi = lo - 1
            lo = hi - step
            step <<= 1
        if lo < 0:
            lo = 0
    while lo < hi:  # a[lo - 1] < x (or lo == 0) and a[hi] >= x (or hi == n)
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _find(dates, n, x, P, h):
    """Index of the date within P of x, or -1 (searched from index h, see _lower_near)."""
    i = _lower_near(dates, n, x - P, h)
    if i < n and dates[i] <= x + P:
        return i
    return -1


def _grow(a):
    b = np.empty(2 * a.shape[0], a.dtype)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


def _grow_rows(a):
    b = np.empty((a.shape[0], 2 * a.shape[1]), a.dtype)
    for r in range(a.shape[0]):
        for i in range(a.shape[1]):
            b[r, i] = a[r, i]
    return b


def _shift_in(a, n, i, x):
    """Insert x at a[i], shifting a[i:n] right (a has room for n + 1)."""
    for j in range(n, i, -1):
        a[j] = a[j - 1]
    a[i] = x


OK, TOO_LARGE, BROKEN = 0, 1, 2  # what _fill reports


def _fill(T, B, P, w, vol, beta, tio, max_inst, max_pieces, record):
    """Build one period's pattern; see the module docstring for the rules.

    Returns a code (OK; TOO_LARGE: more than ``max_inst`` instances or ``max_pieces``
    I/O pieces, the period is abandoned; BROKEN: a date the rules rely on was not found,
    which only double-precision breakdown can cause), the instance counts, the final
    dates, and, when ``record`` is 1, the record of every instance (application, compute
    start) and I/O piece (instance, start, end, rate in cards; an instance's adjacent pieces
    at the same rate are one piece). With ``record`` 0 (the period search, which needs only
    the counts) both records come back empty: nothing grows with the pattern but the dates
    and the per-application runs. Every loop is bounded: by the caps, by the number of
    dates, or by one turn of the period.
    """
    K = w.shape[0]
    dates = np.empty(64)
    tot = np.empty(64)
    dates[0], dates[1], tot[0], tot[1] = 0.0, T, 0.0, 0.0
    nd = np.int64(2)  # not the literal 2: numba would compile the helpers for Literal[int](2) too
    near = near_wrap = np.int64(0)  # where the last search of dates near the front / at a wrap landed
    starts = np.empty((K, 8))
    n_inst = np.empty(K, np.int64)
    last = np.empty(K)
    run_ts = np.empty((K, 8))
    run_te = np.empty((K, 8))
    n_runs = np.empty(K, np.int64)
    rec_app = np.empty(16, np.int64)
    rec_c = np.empty(16)
    n_rec = 0
    pc_inst = np.empty(64, np.int64)
    pc_ts = np.empty(64)
    pc_te = np.empty(64)
    pc_bw = np.empty(64)
    n_pc = 0
    # pieces of the instance being inserted
    ts_ = np.empty(64)
    te_ = np.empty(64)
    bw_ = np.empty(64)
    ratio = np.empty(K)
    slow = np.empty(K)  # n_k (w_k + time_io_k) / T, what the next application is chosen by; inf once dead
    for k in range(K):
        n_inst[k], last[k], n_runs[k], ratio[k] = 0, 0.0, 0, w[k] / tio[k]
        slow[k] = 0.0
    n_alive = K
    code = OK
    while n_alive > 0:
        if n_rec >= max_inst or n_pc >= max_pieces:
            code = TOO_LARGE
            break
        best, best_sd, best_ratio = -1, 2.0, -1.0
        for k in range(K):  # the worst Dilation first (dead applications: infinite, never chosen)
            sd = slow[k]
            if sd < best_sd - P:
                best, best_sd, best_ratio = k, sd, ratio[k]
            elif sd == best_sd and ratio[k] > best_ratio + P:
                best, best_ratio = k, ratio[k]
        if best < 0:  # no Dilation below 2: impossible unless the arithmetic broke down
            code = BROKEN
            break
        k = best
        wk, beta_k = w[k], beta[k]
        if nd + 4 > dates.shape[0]:
            dates, tot = _grow(dates), _grow(tot)
        while ts_.shape[0] < nd + 2:
            ts_, te_, bw_ = _grow(ts_), _grow(te_), _grow(bw_)
        npieces = 0
        left = vol[k]
        if n_inst[k] == 0:
            # Insert-First-Instance: water-filling over the whole period
            ok = T >= wk
            if ok:
                m = nd - 1
                free = np.empty(m)
                for i in range(m):
                    free[i] = B - tot[i] if B - tot[i] < beta_k else beta_k
                order = _order_desc(free, m)
                add_at = np.empty(m)  # >= 0 where chosen
                for i in range(m):
                    add_at[i] = -1.0
                busy = 0.0
                for o in range(m):
                    i = order[o]
                    if free[i] <= 0 or left <= P:
                        break
                    length = T if nd == 2 else _fmod(T + dates[i + 1] - dates[i], T, P)
                    add = length if length < left / free[i] else left / free[i]
                    busy += add
                    left -= free[i] * add
                    add_at[i] = add
                ok = not (left > P or busy > T - wk + P)
                if ok:
                    for i in range(m):
                        if add_at[i] >= 0:
                            ts_[npieces], te_[npieces], bw_[npieces] = dates[i], dates[i] + add_at[i], free[i]
                            npieces += 1
                    # ours, not the authors': the pieces must fit in the window [p0, p0 + T - w]
                    # left by the compute placed right before the first one
                    ok = npieces > 0 and te_[npieces - 1] - ts_[0] <= T - wk + P
        else:
            # Insert-In-Pattern: after the last inserted instance of k
            ni = n_inst[k]
            j = _lower_near(starts[k], ni, last[k], ni - 1)  # the last instance is mostly the latest
            end_io = starts[k, (j + 1) % ni]
            e = _find(dates, nd, T if end_io == 0 else end_io, P, near_wrap)
            near_wrap = e
            nr = n_runs[k]
            ok = nr > 0 and e >= 0  # a lost date fails the insertion (never reads before or past the dates)
            if ok:
                d = dates[e]
                r = _lower_near(run_ts[k], nr, np.nextafter(d, np.inf), np.int64(0)) - 1  # the last run starting <= d
                if r < 0:
                    begin_io = run_te[k, nr - 1]
                elif run_te[k, r] > d:
                    ok = e + 1 < nd
                    begin_io = dates[e + 1] if ok else 0.0
                else:
                    begin_io = run_te[k, r]
            if ok:
                if end_io > begin_io + P:
                    ok = end_io >= begin_io + wk - P
                elif end_io + P < begin_io:
                    ok = end_io + T >= begin_io + wk - P
                else:
                    ok = False
            if ok:
                x = _fmod(_fmod(begin_io + wk, T, P) + T, T, P)
                i = near = _lower_near(dates, nd, x - P, near)
                if not (i < nd and dates[i] <= x + P):
                    _shift_in(dates, nd, i, x)
                    _shift_in(tot, nd, i, tot[i - 1])
                    nd += 1
                stop = _find(dates, nd, end_io, P, near_wrap)
                end = nd - 1
                while ts_.shape[0] < nd + 2:
                    ts_, te_, bw_ = _grow(ts_), _grow(te_), _grow(bw_)
                steps = 0  # at most one turn of the period: nd - 1 intervals and the wrap
                while stop >= 0 and left > P and i != stop and steps <= nd:
                    steps += 1
                    if i == end:  # the end of the period: a zero-length piece, then wrap
                        ts_[npieces], te_[npieces], bw_[npieces] = T, T, B if B < beta_k else beta_k
                        npieces += 1
                        i = 0
                        continue
                    free_i = B - tot[i] if B - tot[i] < beta_k else beta_k
                    if free_i > 0:
                        length = T if nd == 2 else _fmod(T + dates[i + 1] - dates[i], T, P)
                        add = length if length < left / free_i else left / free_i
                        left -= free_i * add
                        ts_[npieces], te_[npieces], bw_[npieces] = dates[i], dates[i] + add, free_i
                        npieces += 1
                    i += 1
                ok = stop >= 0 and npieces > 0 and not left > P
        if not ok:
            slow[k] = np.inf
            n_alive -= 1
            continue
        # addInstance: the compute right before the first I/O piece
        if nd + npieces + 2 > dates.shape[0]:
            dates, tot = _grow(dates), _grow(tot)
        c = _fmod(ts_[0] - wk + T, T, P)
        x = _fmod(c + T, T, P)
        if not 0 <= x < T:
            code = BROKEN
            break
        i = near = _lower_near(dates, nd, x - P, near)
        if not (i < nd and dates[i] <= x + P):
            _shift_in(dates, nd, i, x)
            _shift_in(tot, nd, i, tot[i - 1])
            nd += 1
        ni = n_inst[k]
        j = _lower_near(starts[k], ni, c, ni - 1)
        if j == ni or starts[k, j] != c:
            if ni == starts.shape[1]:
                starts = _grow_rows(starts)
            _shift_in(starts[k], ni, j, c)
            n_inst[k] = ni + 1
            slow[k] = n_inst[k] * (w[k] + tio[k]) / T
        last[k] = c
        for p in range(npieces):  # piece starts are dates already; ends may split an interval
            x = _fmod(te_[p] + T, T, P)
            if not 0 <= x < T:
                code = BROKEN
                break
            i = near = _lower_near(dates, nd, x - P, near)
            if not (i < nd and dates[i] <= x + P):
                _shift_in(dates, nd, i, x)
                _shift_in(tot, nd, i, tot[i - 1])
                nd += 1
        if code != OK:
            break
        if record:
            if n_rec == rec_app.shape[0]:
                rec_app, rec_c = _grow(rec_app), _grow(rec_c)
            rec_app[n_rec], rec_c[n_rec] = k, c
        end = nd - 1
        run_start, run_end = -1.0, -1.0
        piece_end, piece_bw = -1.0, -1.0  # the instance's last piece, which an adjacent one at its rate extends
        for p in range(npieces + 1):
            if p < npieces:
                te = _fmod(te_[p] + T, T, P)
                i = first = near = _find(dates, nd, _fmod(ts_[p] + T, T, P), P, near)
                if first < 0:
                    code = BROKEN
                    break
                steps = 0
                while abs(dates[i] - te) > P and steps < nd:
                    tot[i] += bw_[p]
                    i += 1
                    steps += 1
                    if i == end:
                        i = 0
                if steps == nd:
                    code = BROKEN
                    break
                if i == first:
                    continue
                s, f = dates[first], (T if i == 0 else dates[i])
                if s == piece_end and bw_[p] == piece_bw:
                    if record:
                        pc_te[n_pc - 1] = f
                else:
                    if record:
                        if n_pc == pc_inst.shape[0]:
                            pc_inst, pc_ts, pc_te, pc_bw = _grow(pc_inst), _grow(pc_ts), _grow(pc_te), _grow(pc_bw)
                        pc_inst[n_pc], pc_ts[n_pc], pc_te[n_pc], pc_bw[n_pc] = n_rec, s, f, bw_[p]
                    n_pc += 1
                piece_end, piece_bw = f, bw_[p]
                if run_start >= 0 and s == run_end:  # adjacent: extend the run
                    run_end = f
                    continue
            if run_start >= 0:  # store the finished run of adjacent pieces
                nr = n_runs[k]
                if nr == run_ts.shape[1]:
                    run_ts, run_te = _grow_rows(run_ts), _grow_rows(run_te)
                q = _lower_near(run_ts[k], nr, run_start, nr - 1)
                _shift_in(run_ts[k], nr, q, run_start)
                _shift_in(run_te[k], nr, q, run_end)
                n_runs[k] = nr + 1
            if p < npieces:
                run_start, run_end = s, f
        if code != OK:
            break
        n_rec += 1
    n_rec, n_pc = (n_rec, n_pc) if record else (0, 0)
    return (code, n_inst, dates[:nd], rec_app[:n_rec], rec_c[:n_rec],
            pc_inst[:n_pc], pc_ts[:n_pc], pc_te[:n_pc], pc_bw[:n_pc])


def _counts_many(periods, B, P, w, vol, beta, tio, max_inst, max_pieces, codes, counts):
    """The code and instance counts of the pattern built at each of ``periods`` (into ``codes``
    and the rows of ``counts``): one call from Python for many short periods."""
    for q in range(periods.shape[0]):
        out = _fill(periods[q], B, P, w, vol, beta, tio, max_inst, max_pieces, np.int64(0))
        codes[q] = out[0]
        for k in range(w.shape[0]):
            counts[q, k] = out[1][k]


# --- limits: what one run may build -----------------------------------------------------------
# Measured on a 2-core, 24 GiB machine (random:1:200, K' = 10): a pattern of 200,000 instances
# and 2.1 million I/O pieces takes 7 s in the kernel and 1.5 GB once read back and evaluated;
# 400,000 instances take 10 s. A run beyond these limits is refused before it starts (or, for
# pieces, which are only known once built, the search stops at the first period above them),
# with a message that says what to change; nothing swaps and no single period runs for minutes.
MAX_APPS = 10_000  # applications
MAX_INSTANCES = 500_000  # instances in one pattern: Σ_k floor(K' t_min / (w_k + time_io_k))
MAX_CELLS = 20_000_000  # K x the most instances of one application (the kernel's rows per application)
MAX_PIECES = 6_000_000  # I/O pieces in one pattern
MAX_PERIODS = 100_000  # periods of the upward search, about ln K' / ln(1 + eps)
RESOLUTION = 1e-7  # the shortest I/O time must be at least this fraction of K' t_min (doubles)
TIME_LIMIT = 60.0  # s: PerSched's default budget, checked between periods
READ_BACK = 2.0  # building the chosen pattern costs up to this many periods' search time (measured 1.2
# at random:1:200: the kernel again, recording, and numpy arrays; margin)
BATCH_INSTANCES = 256  # periods that can hold at most this many instances are built in batches ...
BATCH_PERIODS = 32  # ... of this many periods per call of the kernel (each call costs about 5 us)
THREADS_FROM = 2e-4  # s: with workers > 1, threads build the periods once three in a row took this long
# (measured: the paper's sets 1 and 7-10, periods of 10-140 us, ran slower in two threads than in one)

# parameter ranges, checked by iosched.solve and the suites before anything runs (and again inside)
KPrime = Annotated[float, Number(1)]
Eps = Annotated[float, Number(0, 1, lo_open=True, hi_open=True)]
Seconds = Annotated[float | None, Number(0, lo_open=True)]
Workers = Annotated[int, Integer(1, 256)]
TimeLimit = Annotated[float, Number(0, 1e9, lo_open=True)]


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


def _checked_instance(instance) -> PeriodicInstance:
    if not isinstance(instance, PeriodicInstance):
        raise InstanceError(f"a periodic instance is needed, got {type(instance).__name__}")
    return instance


@dataclass(frozen=True)
class Plan:
    """A checked period search: [t_min, K' t_min] by factors (1 + eps), dates merged within ``precision``."""

    t_min: float
    k_prime: float
    eps: float
    precision: float

    @property
    def t_max(self) -> float:
        return self.k_prime * self.t_min


def _largest_k_prime(t_min: float, k_prime: float, fits) -> float:
    """The largest K' in [1, k_prime] with ``fits(K' t_min)`` (bisection; ``fits(t_min)`` holds)."""
    lo, hi = 1.0, k_prime
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits(mid * t_min) else (lo, mid)
    return lo


def plan_search(instance: PeriodicInstance, k_prime=10, eps=0.01, t_min=None, precision=None) -> Plan:
    """Check PerSched's parameters against the instance before anything runs.

    Raises :class:`ParameterError` (a parameter: its name and value, and what fits) or
    :class:`InstanceError` (the instance itself: the field and value) when the search would
    exceed the limits above: too many periods, patterns too large for memory or time, or I/O
    times too short for double-precision dates at the longest period.
    """
    instance = _checked_instance(instance)
    k_prime = number("k_prime", k_prime, 1, error=ParameterError)
    eps = number("eps", eps, 0, 1, lo_open=True, hi_open=True, error=ParameterError)
    apps = instance.applications
    if len(apps) > MAX_APPS:
        raise InstanceError(f"applications: PerSched handles at most {MAX_APPS} applications, got {len(apps)}")
    cycles = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
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
    periods = 1 + math.log(k_prime) / math.log1p(eps)
    if periods > MAX_PERIODS:
        need = math.expm1(math.log(k_prime) / (MAX_PERIODS - 1))
        raise ParameterError(f"eps = {eps!r} with k_prime = {k_prime!r} makes about {periods:.3g} periods in the "
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
            fit = _largest_k_prime(t_min, k_prime, lambda T: count(T) <= limit)  # noqa: B023
            raise ParameterError(
                f"k_prime = {k_prime!r}: a period of K' t_min = {t_max:.6g} s can hold up to {count(t_max):.4g} "
                f"{what}, above PerSched's limit of {limit}; k_prime <= {fit:.4g} fits")
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
        top = 1e-3 * min(tio[short], apps[quick].work)
        if not floor <= precision <= top:
            raise ParameterError(f"precision must be in [{floor:.4g}, {top:.4g}] s for this search (1e-13 of "
                                 f"K' t_min to 1e-3 of the shortest I/O time or work), got {precision!r}")
    return Plan(t_min, k_prime, eps, precision)


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
    which a date may merge, and for its transfer, which moves vol_k less at most P card-seconds
    at a rate of at most min(β_k, B) cards, that is time_io_k less P / min(β_k, B); an instance's
    transfer ends before the next compute of k starts (within P). So n_k instances need
    n_k (w_k + time_io_k - δ_k) <= T with δ_k = 4 P + 2 P / min(β_k, B), a generous sum of those
    slacks, and n_k <= floor(T / (w_k + time_io_k - δ_k)).
    """
    units, B = _card_units(instance)
    w, vol, beta, tio = units
    slack = 4 * precision + 2 * precision / np.minimum(beta, B)
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
    best = before_val + np.where(j < K, (room - before_vol) * density, 0.0)
    N = instance.platform.processors
    se = np.minimum(best, cum_val[:, -1]) / (N * periods) * SAFE
    rho = np.array([instance.rho(k) for k in range(K)])
    inv_dil = (caps * w / rho).min(axis=1) / periods * SAFE
    missing = (caps < 1).any(axis=1)
    se[missing], inv_dil[missing] = 0.0, 0.0
    return se, inv_dil


def build_pattern(instance: PeriodicInstance, period: float, precision: float | None = None) -> Pattern:
    """The pattern PerSched's insertion builds at one period (seconds)."""
    instance = _checked_instance(instance)
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


def period_grid(t_min: float, k_prime: float, eps: float) -> list[float]:
    """The periods of the upward search: t_min, then x(1+eps) rounded to 1e-3 s, up to K' t_min.

    Where rounding to 1e-3 s would not advance (periods below 0.05 s at eps = 0.01), the
    unrounded x(1+eps) is taken instead; the grid stops with an error past 2 MAX_PERIODS.
    """
    grid, T = [], t_min
    while T <= k_prime * t_min:
        if len(grid) >= 2 * MAX_PERIODS:
            raise ParameterError(f"eps = {eps!r} with k_prime = {k_prime!r} and t_min = {t_min!r} s makes more "
                                 f"than {2 * MAX_PERIODS} periods")
        grid.append(T)
        nxt = math.floor(T * (1 + eps) * 1000 + 0.5) / 1000
        T = nxt if nxt > T else T * (1 + eps)
    return grid


def search(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
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
    grid = period_grid(plan.t_min, plan.k_prime, plan.eps)
    periods = np.array(grid)
    se_bound, inv_dil_bound = period_bounds(instance, periods, plan.precision)
    small = count_caps(instance, periods, plan.precision).sum(axis=1) <= BATCH_INSTANCES
    out = {"t_min": plan.t_min, "precision": plan.precision, "periods_planned": len(grid), "stopped": None,
           "too_large_from": None, "broken": [], "pruned": 0}
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
            if threaded:
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


def check_time_limit(time_limit) -> float:
    return number("time_limit", time_limit, 0, 1e9, lo_open=True, error=ParameterError)


def run_search(instance, objective, deadline: Deadline, k_prime=10, eps=0.01, t_min=None, precision=None,
               workers=1) -> MethodOutput:
    """The search and the chosen pattern under ``deadline``, as a method's output (parameters checked)."""
    found = search(instance, k_prime=k_prime, eps=eps, t_min=t_min, objective=objective,
                   precision=precision, workers=workers, deadline=deadline)
    info = {"t_min": found["t_min"], "periods_tried": len(found["trace"]) + len(found["broken"]),
            "periods_pruned": found["pruned"]}
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
        info["error"] = "no period in [t_min, K' t_min] holds an instance of every application"
        return MethodOutput(None, Status.INFEASIBLE, info=info)
    pattern = build_pattern(instance, found["period"], found["precision"])
    return MethodOutput(pattern, Status.TIME_LIMIT if found["stopped"] else Status.FEASIBLE, info=info)


_KERNEL = ("_fmod", "_lower_near", "_order_desc", "_find", "_grow", "_grow_rows", "_shift_in", "_fill",
           "_counts_many")
_LOCK = threading.Lock()
NOTICE_AFTER = 1.0  # s: a load from numba's disk cache takes about 0.5 s; longer means it compiles


def kernel():
    """The insertion kernel ``_fill``, compiled by numba (or loaded from its disk cache) once per process.

    numba is imported here, not with the module. The first compilation after installation (or
    after an edit of this file) takes about 6 s of CPU on our 2-core machine, a load from the
    cache about 0.5 s; when it takes more than NOTICE_AFTER s, stderr says what is happening and
    when it is done. :func:`iosched.solve` runs it before the method's clock (the methods
    register it as ``prepare``), ``iosched compile`` ahead of any run, and
    :func:`method_deadline` keeps it out of a budget when a method is called directly.
    """
    with _LOCK:
        g = globals()
        if not hasattr(g["_fill"], "py_func"):
            from numba import njit

            start = time.perf_counter()
            announced = threading.Event()

            def announce():
                announced.set()
                print("iosched: compiling PerSched's kernel with numba (once after installation or an upgrade; "
                      "cached for later processes) ...", file=sys.stderr, flush=True)

            notice = threading.Timer(NOTICE_AFTER, announce)
            notice.daemon = True
            notice.start()
            try:
                for name in _KERNEL:
                    g[name] = njit(cache=True, nogil=True)(g[name])
                one = np.ones(1)
                g["_fill"](2.0, 1.0, 1e-9, one, one, one, one, 10, 10, 1)
                g["_counts_many"](np.ones(1) * 2, 1.0, 1e-9, one, one, one, one, 10, 10, np.empty(1, np.int64),
                                  np.empty((1, 1), np.int64))
            finally:
                notice.cancel()
                notice.join()
            if announced.is_set():
                print(f"iosched: PerSched's kernel ready after {time.perf_counter() - start:.1f} s",
                      file=sys.stderr, flush=True)
        return g["_fill"]


def kernels():
    """(``_fill``, ``_counts_many``) compiled (see :func:`kernel`)."""
    kernel()
    return globals()["_fill"], globals()["_counts_many"]


def compile_kernel() -> None:
    """Compile (or load) the kernel now; see :func:`kernel`."""
    kernel()


COMPILING = 2.0  # s: loading the kernel took longer than this only if numba compiled it


def method_deadline(seconds: float, entry: float) -> Deadline:
    """A method's budget of ``seconds`` counted from ``entry`` (its first line, a perf_counter
    reading), with the kernel loaded: a numba compilation (the first run after installation
    or after an edit; a load from the disk cache takes about 0.5 s) is added back, so that it
    does not eat a search."""
    start = time.perf_counter()
    compile_kernel()
    took = time.perf_counter() - start
    deadline = Deadline(seconds)
    deadline.end = entry + seconds + (took if took > COMPILING else 0.0)
    return deadline


def _run(instance, objective, k_prime, eps, t_min, precision, workers, time_limit):
    entry = time.perf_counter()
    time_limit = check_time_limit(time_limit)
    plan_search(instance, k_prime, eps, t_min, precision)  # every parameter checked before anything runs
    integer("workers", workers, 1, 256, error=ParameterError)
    deadline = method_deadline(time_limit, entry)
    return run_search(instance, objective, deadline, k_prime, eps, t_min, precision, workers)


@register("periodic", "persched", objective="sys_efficiency", prepare=compile_kernel)
def persched(instance: PeriodicInstance, k_prime: KPrime = 10, eps: Eps = 0.01,
             t_min: Seconds = None, precision: Seconds = None,
             workers: Workers = 1, time_limit: TimeLimit = TIME_LIMIT) -> MethodOutput:
    """PerSched (Algorithm 2): the pattern of best SysEfficiency over the period search; stops after time_limit s."""
    return _run(instance, "sys_efficiency", k_prime, eps, t_min, precision, workers, time_limit)


@register("periodic", "persched-mindil", objective="dilation", prepare=compile_kernel)
def persched_mindil(instance: PeriodicInstance, k_prime: KPrime = 10, eps: Eps = 0.01,
                    t_min: Seconds = None, precision: Seconds = None,
                    workers: Workers = 1, time_limit: TimeLimit = TIME_LIMIT) -> MethodOutput:
    """PerSched's least-Dilation pattern over its whole search (the paper's min Dilation); stops after time_limit s."""
    return _run(instance, "dilation", k_prime, eps, t_min, precision, workers, time_limit)


# --- online baselines: no periodic pattern, bandwidth shared at run time ------------------------

ONLINE_POLICIES = ("fairshare", "fcfs", "max-syseff", "min-dilation", "minmax")


def _priority_order(policy, waiting, requested, dil, eff, gamma):
    """Positions in ``waiting`` in serving order (ties to the lower application index)."""
    keys = {
        "fcfs": lambda k: (requested[k], k),
        "max-syseff": lambda k: (-eff[k], k),
        "min-dilation": lambda k: (-dil[k], k),
        "minmax": lambda k: ((0, -dil[k]) if dil[k] > gamma else (1, -eff[k]), k),
    }
    return sorted(range(len(waiting)), key=lambda i: keys[policy](waiting[i]))


MAX_CYCLES = 1_000_000
Cycles = Annotated[float, Number(1, MAX_CYCLES)]
Gamma = Annotated[float, Number(0, lo_open=True)]


def simulate_online(instance: PeriodicInstance, policy: str = "fairshare", cycles: float = 100,
                    gamma: float = 1.2, deadline: Deadline | None = None) -> Trace:
    """Run the applications without a periodic pattern in the fluid model. All start
    computing at 0; the run ends when the application of longest w_k + time_io_k
    completes its ``cycles``-th instance (or at 10 ``cycles`` times that length if it
    starves), so that application has no partial instance at the horizon.

    At every I/O request and completion the applications waiting for I/O get rates by
    ``policy``; rates stay constant until the next event:

    * ``fairshare``: no I/O scheduler: B is shared max-min fairly, each capped at β_k b;
    * the greedy online policies of Gainaru et al. (IPDPS 2015): requests are served in a
      priority order, each getting min(β_k b, what is left of B):
      ``fcfs`` earliest request first; ``max-syseff`` largest β_k w_k / remaining volume
      first (computation unlocked per unit of data left); ``min-dilation`` largest
      current Dilation first, ρ_k t / (w_k (instances done + 1)); ``minmax`` the
      applications whose current Dilation exceeds ``gamma`` first (by Dilation), then
      the others by ``max-syseff``.

    Only instances whose I/O completes before the horizon are in the trace. With a
    ``deadline`` (checked every 64 events), or once MAX_PIECES I/O segments are stored, the
    run ends early: the trace then ends where it stopped (``trace.horizon`` is that time).
    """
    instance = _checked_instance(instance)
    choice("policy", policy, ONLINE_POLICIES, error=ParameterError)
    cycles = number("cycles", cycles, 1, MAX_CYCLES, error=ParameterError)
    gamma = positive("gamma", gamma, error=ParameterError)
    apps = instance.applications
    K = len(apps)
    longest = max(range(K), key=lambda k: apps[k].work + instance.time_io(k))
    horizon = 10 * cycles * instance.default_t_min()
    for what, values in (("io_volume", [instance.time_io(k) for k in range(K)]), ("work", [a.work for a in apps])):
        k = min(range(K), key=values.__getitem__)
        if values[k] < RESOLUTION * horizon:
            raise InstanceError(
                f"applications[{apps[k].name}].{what} = {getattr(apps[k], what)!r}: its "
                f"{'I/O time' if what == 'io_volume' else 'compute time'} {values[k]:.4g} s is below {RESOLUTION:g} "
                f"of the simulated horizon (10 x cycles x t_min = {horizon:.6g} s); the simulation's times are "
                f"doubles and cannot resolve it (fewer cycles may)")
    caps = [instance.max_rate(k) for k in range(K)]
    rho = [instance.rho(k) for k in range(K)]
    B = instance.platform.bandwidth
    t = 0.0
    compute_end = [a.work for a in apps]  # inf while doing I/O
    started = [0.0] * K  # compute start of the current instance
    remaining = [0.0] * K  # volume left of the current I/O phase
    requested = [math.inf] * K  # when the current I/O phase began
    done = [[] for _ in range(K)]
    segs: list[list] = [[] for _ in range(K)]  # I/O segments of the current instance
    stored, events = 0, 0
    while t < horizon:
        events += 1
        if stored >= MAX_PIECES or (deadline is not None and events % 64 == 0 and deadline.expired()):
            break
        waiting = [k for k in range(K) if remaining[k] > 0]
        rates = [0.0] * K
        if waiting:
            if policy == "fairshare":
                shares = max_min_fair([caps[k] for k in waiting], B)
            else:
                dil = {k: rho[k] * t / (apps[k].work * (len(done[k]) + 1)) for k in waiting}
                eff = {k: apps[k].processors * apps[k].work / remaining[k] for k in waiting}
                order = _priority_order(policy, waiting, requested, dil, eff, gamma)
                shares = priority_fill([caps[k] for k in waiting], order, B)
            for k, r in zip(waiting, shares):
                rates[k] = r
        step = min([compute_end[k] - t for k in range(K) if compute_end[k] < math.inf]
                   + [remaining[k] / rates[k] for k in waiting if rates[k] > 0] + [horizon - t])
        step = max(step, 0.0)
        for k in waiting:
            if rates[k] > 0:
                segs[k].append((t, t + step, rates[k]))
                stored += 1
                remaining[k] -= rates[k] * step
        t += step
        for k in range(K):
            if compute_end[k] <= t:  # compute ends: request I/O
                compute_end[k] = math.inf
                remaining[k], requested[k] = apps[k].io_volume, t
            elif k in waiting and remaining[k] <= 1e-12 * apps[k].io_volume:  # I/O completes
                done[k].append(PatternInstance(started[k], tuple(segs[k])))
                segs[k], remaining[k], requested[k] = [], 0.0, math.inf
                started[k], compute_end[k] = t, t + apps[k].work
        if len(done[longest]) >= cycles:
            break
    return Trace(t, tuple(tuple(d) for d in done))


def _online(policy):
    def run(instance: PeriodicInstance, cycles: Cycles = 100, gamma: Gamma = 1.2,
            time_limit: TimeLimit = TIME_LIMIT) -> MethodOutput:
        deadline = Deadline(check_time_limit(time_limit))
        trace = simulate_online(instance, policy, cycles, gamma, deadline)
        longest = max(range(len(instance.applications)),
                      key=lambda k: instance.applications[k].work + instance.time_io(k))
        if len(trace.applications[longest]) >= cycles:
            return MethodOutput(trace, Status.FEASIBLE)
        info = {"stopped": f"after {len(trace.applications[longest])} of {cycles:g} cycles at t = "
                           f"{trace.horizon:.6g} s"}
        if deadline.expired():
            return MethodOutput(trace, Status.TIME_LIMIT, info={**info, "reason": f"time limit {time_limit:g} s"})
        return MethodOutput(trace, Status.FEASIBLE, info=info)

    run.__doc__ = f"Online baseline without a periodic pattern: {policy} (fluid simulation); stops after time_limit s."
    return run


for _policy in ONLINE_POLICIES:
    register("periodic", _policy if _policy == "fairshare" else f"online-{_policy}",
             objective="sys_efficiency")(_online(_policy))
