"""PerSched's insertion kernel (Algorithms 1 and 3 for one period), compiled by numba.

The rules it follows are :mod:`iosched.heuristics.periodic_persched`'s; this module holds the
compiled loops and their loading: plain Python that numba compiles on first use
(:func:`kernel`), so that ``import iosched`` does not import numba. The helpers are loops
rather than np.searchsorted, np.argsort and slice assignment, which numba compiles in less
time; the searches start from where the last one of their kind landed (the pattern is built
forward in time).
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np

from iosched.solvers import Deadline
from iosched.status import RunContext


def _fmod(x, T, P):
    """fmod(x, T), with results within P of T taken as 0 (the authors' myFmod). Most calls have x in
    [0, 2T), where fmod is x or x - T (exact by Sterbenz's lemma): no libm call."""
    if 0.0 <= x < T:
        r = x
    elif T <= x < 2.0 * T:
        r = x - T
    else:
        r = np.fmod(x, T)
    if T - P < r < T + P:
        return 0.0
    return r


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


def _add_date(dates, tot, nd, x, P, near):
    """Merge date x into the sorted dates[:nd], searched from index ``near``: a date within P of x
    stands for it; otherwise x is inserted, splitting its interval (the new interval carries the
    load of the one it splits; dates and tot have room). Returns (x's index, the new count)."""
    i = _lower_near(dates, nd, x - P, near)
    if not (i < nd and dates[i] <= x + P):
        _shift_in(dates, nd, i, x)
        _shift_in(tot, nd, i, tot[i - 1])
        nd += 1
    return i, nd


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
    # an instance is placed once at most enough[k] card-seconds are left to move: the authors' P, but
    # never more than P seconds of transfer at k's full rate min(beta_k, B) (see the module docstring)
    enough = np.empty(K)
    for k in range(K):
        n_inst[k], last[k], n_runs[k], ratio[k] = 0, 0.0, 0, w[k] / tio[k]
        slow[k] = 0.0
        rate = beta[k] if beta[k] < B else B
        enough[k] = P if rate >= 1.0 else P * rate
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
        left, done = vol[k], enough[k]
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
                    if free[i] <= 0 or left <= done:
                        break
                    length = T if nd == 2 else _fmod(T + dates[i + 1] - dates[i], T, P)
                    add = length if length < left / free[i] else left / free[i]
                    busy += add
                    left -= free[i] * add
                    add_at[i] = add
                ok = not (left > done or busy > T - wk + P)
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
                i, nd = _add_date(dates, tot, nd, x, P, near)
                near = i
                stop = _find(dates, nd, end_io, P, near_wrap)
                end = nd - 1
                while ts_.shape[0] < nd + 2:
                    ts_, te_, bw_ = _grow(ts_), _grow(te_), _grow(bw_)
                steps = 0  # at most one turn of the period: nd - 1 intervals and the wrap
                while stop >= 0 and left > done and i != stop and steps <= nd:
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
                ok = stop >= 0 and npieces > 0 and not left > done
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
        i, nd = _add_date(dates, tot, nd, x, P, near)
        near = i
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
            near, nd = _add_date(dates, tot, nd, x, P, near)
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

_KERNEL = ("_fmod", "_lower_near", "_order_desc", "_find", "_grow", "_grow_rows", "_shift_in", "_add_date",
           "_fill", "_counts_many")
_LOCK = threading.Lock()
NOTICE_AFTER = 1.0  # s: above a load from numba's disk cache on an idle machine (benchmarks/speed.md, constants)
# once the kernel is ready: "compiled" (whether numba compiled it in this process), "seconds"
_LOADED: dict[str, bool | float] = {}


def _in_cache(dispatcher) -> bool:
    """Whether numba's disk cache holds ``dispatcher`` compiled from this very source (numba stamps
    its cache index with the source file's time and size); False when it cannot tell."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # numba's private layout changed: assume a compilation, as the notice did before
        return False


def _compiled(dispatchers) -> bool:
    """Whether numba compiled any of ``dispatchers`` in this process rather than loading it from its cache."""
    try:
        return any(d.stats.cache_misses for d in dispatchers)
    except AttributeError:
        return True


def kernel():
    """The insertion kernel ``_fill``, compiled by numba (or loaded from its disk cache) once per process.

    numba is imported here, not with the module. The first compilation after installation (or
    after an edit of this file) takes seconds, a load from the cache a fraction of one (more on a
    busy machine; benchmarks/speed.md, constants). When either takes more than NOTICE_AFTER s,
    stderr says which it is (numba's cache index tells beforehand; its dispatchers' statistics
    afterwards) and when it is done. :func:`iosched.solve` runs it before the method's clock (the
    methods register it as ``prepare``), ``iosched compile`` ahead of any run, and
    :func:`method_deadline` keeps a compilation out of a budget when a method is called directly.
    """
    with _LOCK:
        g = globals()
        if not hasattr(g["_fill"], "py_func"):
            from numba import njit

            start = time.perf_counter()
            announced = threading.Event()
            for name in _KERNEL:
                g[name] = njit(cache=True, nogil=True)(g[name])
            loading = _in_cache(g["_fill"]) and _in_cache(g["_counts_many"])

            def announce():
                announced.set()
                what = ("loading PerSched's compiled kernel from numba's cache (slow: the machine is busy)"
                        if loading else "compiling PerSched's kernel with numba (once after installation or an "
                        "upgrade; cached for later processes)")
                print(f"iosched: {what} ...", file=sys.stderr, flush=True)

            notice = threading.Timer(NOTICE_AFTER, announce)
            notice.daemon = True
            notice.start()
            try:
                one = np.ones(1)
                g["_fill"](2.0, 1.0, 1e-9, one, one, one, one, 10, 10, 1)
                g["_counts_many"](np.ones(1) * 2, 1.0, 1e-9, one, one, one, one, 10, 10, np.empty(1, np.int64),
                                  np.empty((1, 1), np.int64))
            finally:
                notice.cancel()
                notice.join()
            _LOADED.update(compiled=_compiled([g["_fill"], g["_counts_many"]]),
                           seconds=time.perf_counter() - start)
            if announced.is_set():
                print(f"iosched: PerSched's kernel {'compiled' if _LOADED['compiled'] else 'loaded'} after "
                      f"{_LOADED['seconds']:.1f} s", file=sys.stderr, flush=True)
        return g["_fill"]


def kernels():
    """(``_fill``, ``_counts_many``) compiled (see :func:`kernel`)."""
    kernel()
    return globals()["_fill"], globals()["_counts_many"]


def compile_kernel() -> None:
    """Compile (or load) the kernel now; see :func:`kernel`."""
    kernel()


def method_deadline(seconds: float | None, entry: float, context: RunContext | None = None) -> Deadline:
    """A method's budget of ``seconds`` (None: the default profile's) with the kernel loaded, counted
    from :func:`iosched.solve`'s clock (``context``: :meth:`Deadline.for_method`), or from ``entry`` (the
    method's first line, a perf_counter reading) when the method is called directly. A numba compilation
    in this call (the first run after installation or after an edit) is added back, so that it does not
    eat a search; a load from the disk cache is not."""
    first = not _LOADED
    compile_kernel()
    deadline = Deadline.for_method(seconds, context=context)
    if context is None or context.method_start is None:
        deadline.end = entry + deadline.seconds
    if first and _LOADED["compiled"]:
        deadline.end += _LOADED["seconds"]
    return deadline

