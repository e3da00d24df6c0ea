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
"""

from __future__ import annotations

import math
from bisect import bisect_left
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from numba import njit

from iosched.core import MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern, Trace, dilation, sys_efficiency
from iosched.fluid import max_min_fair, priority_fill
from iosched.instances.periodic import PeriodicInstance

PRECISION = 2e-5


@njit(cache=True)
def _fmod(x, T, P):
    """fmod(x, T), with results within P of T taken as 0 (the authors' myFmod)."""
    r = np.fmod(x, T)
    if T - P < r < T + P:
        return 0.0
    return r


@njit(cache=True)
def _find(dates, n, x, P):
    """Index of the date within P of x, or -1."""
    i = np.searchsorted(dates[:n], x - P)
    if i < n and dates[i] <= x + P:
        return i
    return -1


@njit(cache=True)
def _grow(a):
    b = np.empty(2 * a.shape[0], a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grow_rows(a):
    b = np.empty((a.shape[0], 2 * a.shape[1]), a.dtype)
    b[:, : a.shape[1]] = a
    return b


@njit(cache=True)
def _shift_in(a, n, i, x):
    """Insert x at a[i], shifting a[i:n] right (a has room for n + 1)."""
    for j in range(n, i, -1):
        a[j] = a[j - 1]
    a[i] = x


@njit(cache=True)
def _fill(T, B, P, w, vol, beta, tio):
    """Build one period's pattern; see the module docstring for the rules.

    Returns the instance counts, the final dates, and the record of every
    instance (application, compute start) and I/O piece (instance, start, end,
    rate in cards).
    """
    K = w.shape[0]
    dates = np.empty(64)
    tot = np.empty(64)
    dates[0], dates[1], tot[0], tot[1] = 0.0, T, 0.0, 0.0
    nd = 2
    starts = np.empty((K, 8))
    n_inst = np.zeros(K, np.int64)
    last = np.zeros(K)
    run_ts = np.empty((K, 8))
    run_te = np.empty((K, 8))
    n_runs = np.zeros(K, np.int64)
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
    ratio = w / tio
    alive = np.ones(K, np.bool_)
    n_alive = K
    while n_alive > 0:
        best, best_sd, best_ratio = -1, 2.0, -1.0
        for k in range(K):
            if not alive[k]:
                continue
            sd = n_inst[k] * (w[k] + tio[k]) / T
            if sd < best_sd - P:
                best, best_sd, best_ratio = k, sd, ratio[k]
            elif sd == best_sd and ratio[k] > best_ratio + P:
                best, best_ratio = k, ratio[k]
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
                    free[i] = min(B - tot[i], beta_k)
                order = np.argsort(-free, kind="mergesort")
                chosen = np.zeros(m, np.bool_)
                add_at = np.zeros(m)
                busy = 0.0
                for o in range(m):
                    i = order[o]
                    if free[i] <= 0 or left <= P:
                        break
                    length = T if nd == 2 else _fmod(T + dates[i + 1] - dates[i], T, P)
                    add = min(length, left / free[i])
                    busy += add
                    left -= free[i] * add
                    chosen[i] = True
                    add_at[i] = add
                ok = not (left > P or busy > T - wk + P)
                if ok:
                    for i in range(m):
                        if chosen[i]:
                            ts_[npieces], te_[npieces], bw_[npieces] = dates[i], dates[i] + add_at[i], free[i]
                            npieces += 1
                    # ours, not the authors': the pieces must fit in the window [p0, p0 + T - w]
                    # left by the compute placed right before the first one
                    ok = te_[npieces - 1] - ts_[0] <= T - wk + P
        else:
            # Insert-In-Pattern: after the last inserted instance of k
            ni = n_inst[k]
            j = np.searchsorted(starts[k, :ni], last[k])
            end_io = starts[k, (j + 1) % ni]
            e = _find(dates, nd, T if end_io == 0 else end_io, P)
            d = dates[e]
            nr = n_runs[k]
            ok = nr > 0
            if ok:
                r = np.searchsorted(run_ts[k, :nr], d, side="right") - 1
                if r < 0:
                    begin_io = run_te[k, nr - 1]
                elif run_te[k, r] > d:
                    begin_io = dates[e + 1]
                else:
                    begin_io = run_te[k, r]
                if end_io > begin_io + P:
                    ok = end_io >= begin_io + wk - P
                elif end_io + P < begin_io:
                    ok = end_io + T >= begin_io + wk - P
                else:
                    ok = False
            if ok:
                x = _fmod(_fmod(begin_io + wk, T, P) + T, T, P)
                i = np.searchsorted(dates[:nd], x - P)
                if not (i < nd and dates[i] <= x + P):
                    _shift_in(dates, nd, i, x)
                    _shift_in(tot, nd, i, tot[i - 1])
                    nd += 1
                stop = _find(dates, nd, end_io, P)
                end = nd - 1
                while ts_.shape[0] < nd + 2:
                    ts_, te_, bw_ = _grow(ts_), _grow(te_), _grow(bw_)
                while left > P and i != stop:
                    if i == end:  # the end of the period: a zero-length piece, then wrap
                        ts_[npieces], te_[npieces], bw_[npieces] = T, T, min(B, beta_k)
                        npieces += 1
                        i = 0
                        continue
                    free_i = min(B - tot[i], beta_k)
                    if free_i > 0:
                        length = T if nd == 2 else _fmod(T + dates[i + 1] - dates[i], T, P)
                        add = min(length, left / free_i)
                        left -= free_i * add
                        ts_[npieces], te_[npieces], bw_[npieces] = dates[i], dates[i] + add, free_i
                        npieces += 1
                    i += 1
                ok = not left > P
        if not ok:
            alive[k] = False
            n_alive -= 1
            continue
        # addInstance: the compute right before the first I/O piece
        if nd + npieces + 2 > dates.shape[0]:
            dates, tot = _grow(dates), _grow(tot)
        c = _fmod(ts_[0] - wk + T, T, P)
        x = _fmod(c + T, T, P)
        i = np.searchsorted(dates[:nd], x - P)
        if not (i < nd and dates[i] <= x + P):
            _shift_in(dates, nd, i, x)
            _shift_in(tot, nd, i, tot[i - 1])
            nd += 1
        ni = n_inst[k]
        j = np.searchsorted(starts[k, :ni], c)
        if j == ni or starts[k, j] != c:
            if ni == starts.shape[1]:
                starts = _grow_rows(starts)
            _shift_in(starts[k], ni, j, c)
            n_inst[k] = ni + 1
        last[k] = c
        for p in range(npieces):  # piece starts are dates already; ends may split an interval
            x = _fmod(te_[p] + T, T, P)
            i = np.searchsorted(dates[:nd], x - P)
            if not (i < nd and dates[i] <= x + P):
                _shift_in(dates, nd, i, x)
                _shift_in(tot, nd, i, tot[i - 1])
                nd += 1
        if n_rec == rec_app.shape[0]:
            rec_app, rec_c = _grow(rec_app), _grow(rec_c)
        rec_app[n_rec], rec_c[n_rec] = k, c
        end = nd - 1
        run_start, run_end = -1.0, -1.0
        for p in range(npieces + 1):
            if p < npieces:
                te = _fmod(te_[p] + T, T, P)
                i = first = _find(dates, nd, _fmod(ts_[p] + T, T, P), P)
                while abs(dates[i] - te) > P:
                    tot[i] += bw_[p]
                    i += 1
                    if i == end:
                        i = 0
                if i == first:
                    continue
                s, f = dates[first], (T if i == 0 else dates[i])
                if n_pc == pc_inst.shape[0]:
                    pc_inst, pc_ts, pc_te, pc_bw = _grow(pc_inst), _grow(pc_ts), _grow(pc_te), _grow(pc_bw)
                pc_inst[n_pc], pc_ts[n_pc], pc_te[n_pc], pc_bw[n_pc] = n_rec, s, f, bw_[p]
                n_pc += 1
                if run_start >= 0 and s == run_end:  # adjacent: extend the run
                    run_end = f
                    continue
            if run_start >= 0:  # store the finished run of adjacent pieces
                nr = n_runs[k]
                if nr == run_ts.shape[1]:
                    run_ts, run_te = _grow_rows(run_ts), _grow_rows(run_te)
                q = np.searchsorted(run_ts[k, :nr], run_start)
                _shift_in(run_ts[k], nr, q, run_start)
                _shift_in(run_te[k], nr, q, run_end)
                n_runs[k] = nr + 1
            if p < npieces:
                run_start, run_end = s, f
        n_rec += 1
    return (n_inst, dates[:nd], rec_app[:n_rec], rec_c[:n_rec],
            pc_inst[:n_pc], pc_ts[:n_pc], pc_te[:n_pc], pc_bw[:n_pc])


def _card_units(instance: PeriodicInstance):
    """Work (s), volume (card-seconds), cards, time_io (s) per application, and B in cards."""
    b = instance.platform.processor_bandwidth
    B = instance.platform.bandwidth / b
    apps = []
    for a in instance.applications:
        vol = a.io_volume / b
        apps.append((a.work, vol, float(a.processors), vol / min(a.processors, B)))
    return np.array(apps).T.copy(), B


def _build(instance: PeriodicInstance, T: float, precision: float):
    (w, vol, beta, tio), B = _card_units(instance)
    return _fill(float(T), float(B), float(precision), w, vol, beta, tio)


def _counts_at(args):
    instance, T, precision = args
    return T, [int(n) for n in _build(instance, T, precision)[0]]


def build_pattern(instance: PeriodicInstance, period: float, precision: float | None = None) -> Pattern:
    """The pattern PerSched's insertion builds at one period (seconds)."""
    precision = precision or default_precision(instance)
    _, dates, rec_app, rec_c, pc_inst, pc_ts, pc_te, pc_bw = _build(instance, period, precision)
    b = instance.platform.processor_bandwidth
    pieces = [[] for _ in rec_app]
    for r, s, e, bw in zip(pc_inst.tolist(), pc_ts.tolist(), pc_te.tolist(), pc_bw.tolist()):
        pieces[r].append((s, e, bw * b))
    dates = dates.tolist()
    out = []
    for k in range(len(instance.applications)):
        insts = []
        mine = sorted((c, r) for r, (a, c) in enumerate(zip(rec_app.tolist(), rec_c.tolist())) if a == k)
        for c, r in mine:
            start = dates[bisect_left(dates, c - precision)]  # the date the compute start merged into
            insts.append(PatternInstance(start, tuple(pieces[r])))
        out.append(tuple(insts))
    return Pattern(float(period), tuple(out))


def period_grid(t_min: float, k_prime: float, eps: float) -> list[float]:
    """The periods of the upward search: t_min, then x(1+eps) rounded to 1e-3 s, up to K' t_min."""
    grid, T = [], t_min
    while T <= k_prime * t_min:
        grid.append(T)
        T = math.floor(T * (1 + eps) * 1000 + 0.5) / 1000
    return grid


def search(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
           t_min: float | None = None, objective: str = "sys_efficiency",
           precision: float | None = None, workers: int = 1) -> dict:
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
    precision = precision or default_precision(instance)
    grid = period_grid(t_min, k_prime, eps)
    tasks = [(instance, T, precision) for T in grid]
    if workers > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            trace = list(pool.map(_counts_at, tasks, chunksize=max(1, len(tasks) // (4 * workers))))
    else:
        trace = [_counts_at(t) for t in tasks]
    best_se, T_se = -1.0, None
    for T, counts in trace:
        if min(counts) > 0 and sys_efficiency(instance, counts, T) > best_se + 1e-6:
            best_se, T_se = sys_efficiency(instance, counts, T), T
    if T_se is None:
        return {"period": None, "trace": trace, "t_min": t_min}
    T, chosen = T_se, T_se
    step = (T_se - T_se / (1 + eps)) / (1 / eps)
    while True:
        _, counts = _counts_at((instance, T, precision))
        trace.append((T, counts))
        target = best_se * T_se / T
        if min(counts) > 0 and abs(sys_efficiency(instance, counts, T) - target) < PRECISION:
            chosen = T
            T -= step
        else:
            break
    if objective == "dilation":  # the authors compare 1 / Dilation with a 1e-6 margin
        best_sd = -1.0
        for T, counts in trace:
            if min(counts) > 0 and 1 / dilation(instance, counts, T) > best_sd + 1e-6:
                best_sd, chosen = 1 / dilation(instance, counts, T), T
    return {"period": chosen, "trace": trace, "t_min": t_min}


def default_precision(instance: PeriodicInstance) -> float:
    """min(2e-5, 1e-6 min_k time_io_k): the authors' 2e-5 s unless I/O times are short."""
    return min(PRECISION, 1e-6 * min(instance.time_io(k) for k in range(len(instance.applications))))


def _run(instance, objective, k_prime, eps, t_min, precision, workers):
    precision = precision or default_precision(instance)
    found = search(instance, k_prime=k_prime, eps=eps, t_min=t_min, objective=objective,
                   precision=precision, workers=workers)
    info = {"t_min": found["t_min"], "periods_tried": len(found["trace"])}
    if found["period"] is None:
        info["error"] = "no period in [t_min, K' t_min] holds an instance of every application"
        return MethodOutput(None, Status.INFEASIBLE, info=info)
    return MethodOutput(build_pattern(instance, found["period"], precision), Status.FEASIBLE, info=info)


@register("periodic", "persched", objective="sys_efficiency")
def persched(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
             t_min: float | None = None, precision: float | None = None,
             workers: int = 1) -> MethodOutput:
    """PerSched (Algorithm 2): the pattern of best SysEfficiency over the period search."""
    return _run(instance, "sys_efficiency", k_prime, eps, t_min, precision, workers)


@register("periodic", "persched-mindil", objective="dilation")
def persched_mindil(instance: PeriodicInstance, k_prime: float = 10, eps: float = 0.01,
                    t_min: float | None = None, precision: float | None = None,
                    workers: int = 1) -> MethodOutput:
    """PerSched's least-Dilation pattern over its whole search (the paper's min Dilation)."""
    return _run(instance, "dilation", k_prime, eps, t_min, precision, workers)


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


def simulate_online(instance: PeriodicInstance, policy: str = "fairshare", cycles: float = 100,
                    gamma: float = 1.2) -> Trace:
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

    Only instances whose I/O completes before the horizon are in the trace.
    """
    if policy not in ONLINE_POLICIES:
        raise ParameterError(f"policy must be one of {', '.join(ONLINE_POLICIES)}, got {policy!r}")
    if not cycles > 0:
        raise ParameterError(f"cycles must be positive, got {cycles!r}")
    apps = instance.applications
    K = len(apps)
    longest = max(range(K), key=lambda k: apps[k].work + instance.time_io(k))
    horizon = 10 * cycles * instance.default_t_min()
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
    while t < horizon:
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
    def run(instance: PeriodicInstance, cycles: float = 100, gamma: float = 1.2) -> MethodOutput:
        return MethodOutput(simulate_online(instance, policy, cycles, gamma), Status.FEASIBLE)

    run.__doc__ = f"Online baseline without a periodic pattern: {policy} (fluid simulation)."
    return run


for _policy in ONLINE_POLICIES:
    register("periodic", _policy if _policy == "fairshare" else f"online-{_policy}",
             objective="sys_efficiency")(_online(_policy))
