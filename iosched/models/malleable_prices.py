"""Lagrangian prices on the nodes over time: per-skeleton bounds that let the enumeration of
:mod:`iosched.models.malleable_exact` cut tuples by capacity before any of them is solved.

**The bound.** Cut time into intervals I_k = [tau_k, tau_(k+1)) of width w from the first arrival to a
horizon H past every job's latest completion of interest, and give each a price pi_k >= 0 (node-second
price; none beyond H). In every schedule the jobs hold at most N w node-seconds in each I_k, so for every
schedule::

    sum_j (C_j - a_j) >= sum_j [ C_j - a_j + sum_k pi_k U_jk ] - N w sum_k pi_k,

U_jk the node-seconds job j holds in I_k. For a job in skeleton s (:mod:`iosched.models.malleable_skeleton`)
with start S and stalls, C_j - a_j >= (S - a_j) + F_s (its own minimum at that start), and at every instant
before S + F_s it holds at least d_min: the skeleton's blocks at no stall, except that each expansion's
stall window [k P, k P + stall bound) counts at the old (smaller) size and nothing counts from S + F_s on
(every stall value holds at least that: during a window the job holds the old size or the new, larger one;
a stall only delays the end). So the bracket is at least g_s = min over S of [(S - a_j) + F_s +
sum_k pi_k U^min_k(S)], a piecewise linear function of S whose breakpoints are the S where a block
boundary of d_min meets a tau_k: its minimum over [a_j, a_j + R] is at one of them or at an end, and these
candidates are all evaluated. For a tuple, sum_j g_(s_j) - N w sum_k pi_k is a lower bound on the sum of
its completions, as long as each start lies in its range R: a start later than R = (the incumbent's cut
less every job's least own minimum) puts the sum above the cut anyway, so a tuple cut by this bound holds no
schedule below the cut. Any prices >= 0 give valid bounds; good ones are searched for by subgradient
ascent on the Lagrangian dual (Polyak steps towards the cut, halved when the bound stalls).

**Floating point.** The prices and g_s are floats. Each g_s is a minimum of sums of a few dozen terms
(prefix sums of at most MAX_INTERVALS products), each below the bound M = Pi(H) sum p + R + F_s in size;
their rounding error is below 1e-12 M, and every g_s is lowered by ERROR M = 1e-9 M, as is N w sum pi
raised, before it prunes anything: the pruning is exact arithmetic's, with room to spare.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iosched.models.malleable_skeleton import JobData, Skeleton
from iosched.solvers import Deadline

MAX_INTERVALS = 50  # price intervals over the horizon (twice as many: twice the time, no better bound on grid6-2)
ITERATIONS = 200  # subgradient steps at most
CHUNK = 64  # skeletons evaluated at a time while looking for a job's least priced value
STALL = 8  # steps without a better bound before the step factor halves
ERROR = 1e-9  # relative: each bound is lowered by this much of its magnitude (module docstring)


@dataclass
class Priced:
    """Per job, per skeleton (in the job's list order), the priced bound g_s (lowered by its error margin),
    and the constant N w sum pi (raised): a tuple's sum of completions is at least sum g - ``charge``."""

    values: list[np.ndarray]
    charge: float
    bound: float  # the best Lagrangian value found: sum_j min_s g_s - charge
    iterations: int
    complete: bool = True  # False: the deadline came first, the skeletons not priced keep their own minimum


def _blocks(job: JobData, sk: Skeleton) -> tuple[np.ndarray, np.ndarray]:
    """d_min of the module docstring relative to S: block boundaries (m + 2, clipped to F, non-decreasing:
    an action's window ends by the next check, its run after it being non-negative) and demands. The
    stall bounds are :func:`iosched.models.malleable_skeleton.shape`'s, without its affine forms."""
    P, m, sizes, checks = job.period, len(sk.checks), sk.sizes, sk.checks
    bounds = [0.0]
    for i in range(1, m + 1):
        k, c = checks[i - 1] * P, job.cost[(sizes[i - 1], sizes[i])]
        if sizes[i] > sizes[i - 1]:  # the old size over the stall window, at most
            window = (checks[i] - checks[i - 1]) * P - c if i < m else job.timeout
            stall = window if window < job.timeout else job.timeout  # min(timeout, window), typed as a Fraction
            bounds.append(float(k + (stall if stall > 0 else 0)))
        else:  # a shrink holds the old size during its reconfiguration
            bounds.append(float(k + c))
    bounds.append(float(sk.own))
    return np.minimum(np.array(bounds), float(sk.own)), np.array(sizes, dtype=float)


def integral(x: np.ndarray, tau: np.ndarray, prefix: np.ndarray) -> np.ndarray:
    """Pi(x): ``np.interp(x, tau, prefix)`` (0 before tau_0, prefix's last after the horizon) on the uniform
    grid ``tau``, by the interval's index instead of a binary search."""
    last = len(tau) - 1
    t = np.clip((x - tau[0]) * (last / (tau[-1] - tau[0])), 0, last)
    k = np.minimum(t.astype(np.intp), last - 1)
    return prefix[k] + (t - k) * (prefix[k + 1] - prefix[k])


class JobPrices:
    """One job's skeletons, stacked for vectorised evaluation under prices."""

    def __init__(self, job: JobData, skeletons: list[Skeleton], reach: float, deadline: Deadline | None = None):
        """Raises TimeoutError past ``deadline`` (checked every CHUNK skeletons)."""
        self.arrival, self.reach = float(job.arrival), reach
        self.own = np.array([float(s.own) for s in skeletons])  # ascending: the lists are in order of F
        self.smallest = float(min(job.sizes))  # every block of d_min holds at least this many nodes
        width = max(len(s.sizes) for s in skeletons) + 1 if skeletons else 1
        self.bounds = np.zeros((len(skeletons), width))  # padded: repeated last boundary, demand 0
        self.demand = np.zeros((len(skeletons), width - 1))
        self.width = np.zeros(len(skeletons), dtype=np.intp)  # boundaries before the padding
        for n, sk in enumerate(skeletons):
            if deadline is not None and n % CHUNK == 0 and deadline.expired():
                raise TimeoutError("pricing the skeletons")
            b, p = _blocks(job, sk)
            self.bounds[n, :len(b)] = b
            self.bounds[n, len(b):] = b[-1]
            self.demand[n, :len(p)] = p
            self.width[n] = len(b)
        # Pi(S + b) enters with coefficient: -p_0 at b_0, p_(i-1) - p_i at b_i, p_m at b_(m+1)
        left = np.concatenate([np.zeros((len(skeletons), 1)), self.demand], axis=1)
        right = np.concatenate([self.demand, np.zeros((len(skeletons), 1))], axis=1)
        self.coef = left - right

    def evaluate(self, tau: np.ndarray, prefix: np.ndarray, rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """Per skeleton (of ``rows``), the least priced value over its candidate starts and that start (the
        padding past the rows' widest skeleton left out: its boundaries repeat the last one, coefficient 0)."""
        own = self.own[rows]
        if not len(own):
            return np.zeros(0), np.zeros(0)
        wide = int(self.width[rows].max())
        bounds, coef = self.bounds[rows, :wide], self.coef[rows, :wide]
        a, hi = self.arrival, self.arrival + max(self.reach, 0.0)
        cand = (tau[None, None, :] - bounds[:, :, None]).reshape(len(own), -1)
        cand = np.clip(cand, a, hi)  # outside the range: its ends, candidates anyway
        cand = np.concatenate([cand, np.full((len(own), 1), a), np.full((len(own), 1), hi)], axis=1)
        value = (cand - a) + own[:, None]
        for i in range(wide):
            value += coef[:, i:i + 1] * integral(cand + bounds[:, i:i + 1], tau, prefix)
        arg = np.argmin(value, axis=1)
        at = np.arange(len(own))
        return value[at, arg], cand[at, arg]

    def floor(self, own: float, tau: np.ndarray, prefix: np.ndarray) -> float:
        """A lower bound on the priced value g of every skeleton of own minimum ``own`` or more: d_min covers
        [S, S + F) with blocks of at least ``smallest`` nodes, so g >= min over S of (S - a) + F + smallest
        (Pi(S + F) - Pi(S)), least at S = a, the range's end, a tau_k or a tau_k - F (the kinks), and
        non-decreasing in F (Pi is: the prices are >= 0). Only the search for the least g uses it (to stop
        early), never a bound."""
        a, hi = self.arrival, self.arrival + max(self.reach, 0.0)
        cand = np.clip(np.concatenate([tau, tau - own, [a, hi]]), a, hi)
        value = (cand - a) + own + self.smallest * (integral(cand + own, tau, prefix) - integral(cand, tau, prefix))
        return float(value.min())

    def least(self, tau: np.ndarray, prefix: np.ndarray, deadline: Deadline) -> tuple[float, int, float] | None:
        """The least priced value over the skeletons, which one and its start: the skeletons are in order of
        own minimum F, and :meth:`floor` bounds g from below, non-decreasing in F, so they are evaluated CHUNK
        at a time until that floor reaches the least g found; None where ``deadline`` passes first."""
        best, row, start = np.inf, 0, self.arrival
        for first in range(0, len(self.own), CHUNK):
            if self.own[first] >= best or self.floor(float(self.own[first]), tau, prefix) >= best:
                break
            if deadline.expired():
                return None
            value, at = self.evaluate(tau, prefix, slice(first, first + CHUNK))
            n = int(np.argmin(value))
            if value[n] < best:
                best, row, start = float(value[n]), first + n, float(at[n])
        return best, row, start

    def holding(self, n: int, start: float, tau: np.ndarray) -> np.ndarray:
        """Node-seconds of skeleton n's d_min from ``start`` in each interval."""
        out = np.zeros(len(tau) - 1)
        for i in range(self.demand.shape[1]):
            lo, hi = start + self.bounds[n, i], start + self.bounds[n, i + 1]
            if self.demand[n, i] and hi > lo:
                out += self.demand[n, i] * np.clip(np.minimum(hi, tau[1:]) - np.maximum(lo, tau[:-1]), 0, None)
        return out


def prices(jobs: list[JobData], lists: list[list[Skeleton]], nodes: int, cut: float, deadline: Deadline,
           share: float = 1.0) -> Priced:
    """Subgradient ascent on the Lagrangian dual (module docstring) until ITERATIONS, a step factor below 1e-3
    or ``share`` of the time ``deadline`` leaves once the skeletons are stacked; the per-skeleton bounds at the
    best prices found, with their error margins, evaluated by ``deadline``: past it, a skeleton not evaluated
    yet keeps its own minimum F, lowered by its margin (any prices >= 0 give g_s >= F_s, so F_s is a weaker
    value of the same bound; past it while stacking, every skeleton does, without prices)."""
    fastest = sum(min(float(s.own) for s in lst) for lst in lists)
    reach = cut - fastest  # a start later than this puts every completion sum above the cut
    first = min(float(j.arrival) for j in jobs)
    horizon = max(float(j.arrival) for j in jobs) + reach + max(float(s.own) for lst in lists for s in lst)
    tau = np.linspace(first, horizon, MAX_INTERVALS + 1)
    width = tau[1] - tau[0]
    try:
        stacks = [JobPrices(j, lst, reach, deadline) for j, lst in zip(jobs, lists)]
    except TimeoutError:  # no prices: every skeleton keeps its own minimum (prices 0: g = F, no charge)
        return Priced([np.array([float(s.own) for s in lst]) * (1 - ERROR) for lst in lists], 0.0, -np.inf, 0, False)
    ascent = Deadline(share * deadline.remaining())
    pi = np.zeros(MAX_INTERVALS)
    best, best_pi, factor, stale, done = -np.inf, pi.copy(), 2.0, 0, 0
    while done < ITERATIONS and factor > 1e-3 and not ascent.expired():
        done += 1
        prefix = np.concatenate([[0.0], np.cumsum(pi * width)])
        total, used = 0.0, np.zeros(MAX_INTERVALS)
        least = [st.least(tau, prefix, ascent) for st in stacks]
        found = [f for f in least if f is not None]
        if len(found) < len(least):  # the deadline came during this step: the best prices so far stand
            break
        for st, (value, n, start) in zip(stacks, found):
            total += value
            used += st.holding(n, start, tau)
        bound = total - nodes * width * pi.sum()
        if bound > best + 1e-9:
            best, best_pi, stale = bound, pi.copy(), 0
        else:
            stale += 1
            if stale >= STALL:
                factor, stale, pi = factor / 2, 0, best_pi.copy()
                continue
        slope = used - nodes * width
        norm = float(slope @ slope)
        if norm <= 0 or bound >= cut:
            break
        pi = np.maximum(0.0, pi + factor * (cut - bound) / norm * slope)
    prefix = np.concatenate([[0.0], np.cumsum(best_pi * width)])
    values, complete = [], True
    for st in stacks:  # a thousand skeletons at a time: the candidates of 200,000 would not fit in memory
        parts = []
        for first in range(0, len(st.own), 1024):
            if deadline.expired():
                complete = False
                parts.append(st.own[first:])
                break
            parts.append(st.evaluate(tau, prefix, slice(first, first + 1024))[0])
        priced = np.concatenate(parts) if parts else np.zeros(0)
        size = prefix[-1] * st.demand.sum(axis=1) + st.reach + st.own + np.abs(priced)
        values.append(priced - ERROR * size)
    charge = nodes * width * float(best_pi.sum())
    return Priced(values, charge * (1 + ERROR) + ERROR, float(best), done, complete)
