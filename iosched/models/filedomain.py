"""Exact file domains: the modelled time of :mod:`iosched.evaluate.filedomain`, minimised.

The region's data is cut into lock units (stripes with extent locking, blocks with tokens;
weights w_u = data bytes in unit u, units without data dropped). Each lock sequence (a
server's units in object order, or all units in file order with tokens) is an ordered list
of units. Every formulation minimises T (module docstring of the evaluator) over its scope:

* ``segments`` (HiGHS through highspy, :mod:`iosched.models.filedomain_segments`): scope =
  every solution; clean segments of whole units x bins at a fixed time, searched over the lock
  levels; its infeasible tests are bounds for every solution. ``auto`` (the default) takes it
  where its model fits (MAX_COLUMNS there), else ``milp``.
* ``milp`` (Pyomo + HiGHS) and ``cpsat`` (OR-Tools CP-SAT), granularity ``byte``: scope =
  every solution. Per (unit, aggregator): q bytes (integer), y present, f first, l last
  in the unit; per consecutive units u, v of a sequence and aggregator a: m <= l_ua, f_va
  (the run goes on across the two units). Runs of a sequence = Σ y - Σ m; false sharing =
  Σ_u (Σ_a y_ua - 1); a unit with two or more owners has f != l. Any solution can be
  rearranged inside each unit (an owner's bytes of a unit made contiguous, the first and
  last owners chosen to continue the neighbours' runs) without raising any cost, so this
  is exact for every solution, with ``io = extent`` (which never costs more than ``stripe``).
* the same with granularity ``unit``: scope = whole lock units to aggregators (y only).
* ``aggregated``: extent locking, every stripe full (equal stripes): counts c_as of server
  s's stripes given to aggregator a and u_as = [c_as > 0]; runs on s = Σ_a u_as (each
  aggregator's stripes on a server are made consecutive in object order). Scope = whole
  stripes; its size P x S does not grow with the file. The engine first solves the
  relaxation below and lays its loads out per server (one block per aggregator in object
  order); it also lays out the column split over P' <= P writers (the servers' data taken
  server by server and cut into P' byte-balanced chunks) for each P'; and it returns the
  best of these and the count model's solution with the relaxation's bound: when one meets
  the bound it is optimal over every solution.
* ``relaxation``: loads q_as >= 0 (continuous bytes of server s to aggregator a; the model
  holds the shares q_as / Σ_a q_as), u_as = [q_as > 0], runs >= Σ_a u_as, false sharing
  dropped (tokens: runs >= aggregators used).
  Every solution gives such q and u, so its optimum (or its solver bound) is a lower bound
  valid for every solution.
* ``dp``: contiguous domains in aggregator order (aggregator 0 first), boundaries on unit
  boundaries (``unit``) or at any byte (``byte``), lock costs ignored: min over the
  boundaries of the fluid time, by a parametric search (bisection on T with the greedy
  fill, each aggregator taking the most units within T b_a; exact to 10^-12 relative).
  Needs one aggregator per node when nodes are capacities. With zero lock costs and
  ``byte`` it is globally optimal (only loads matter and contiguous domains realise any).

Bounds for every solution: :func:`time_bound` (cheap; it is the problem's bound) — the data
over all aggregators, each server's load plus one grant, and the counting bound (P' writing
aggregators make P' runs, so some server holds ⌈P'/S⌉ of them, min over P') — and the
solver's bound for byte granularity, the relaxation's for the other engines. Every engine
first tries the heuristics' domains against ``time_bound`` (``early``; no model is solved
when one meets it), then returns the best of its own solutions and the heuristics' (Pyomo's
HiGHS interface takes no MIP start, so they are a start after the fact; the one returned is
named in ``info["chosen"]``), OPTIMAL when it meets a bound within the profile's gap.

Times inside the HiGHS models are in microseconds (bytes per µs = 1000 x GB/s). HiGHS's
integrality tolerance (10^-6) lets q <= w y put up to w 10^-6 bytes (4 bytes of a 4 MiB
stripe) on an owner with y ~ 0, uncharged: the reader gives such bytes to the unit's owner
with the most bytes, so the domains' time may exceed the model's objective by those bytes
over a bandwidth (nanoseconds), and the bound stays valid (the leak only relaxes). HiGHS's
bounds are reported 10^-6 (relative) lower than it gives them: its tolerances put them up
to ~10^-8 above the true optimum. CP-SAT works in whole nanoseconds with each time per byte
rounded down to a fraction of denominator <= 1000 and lock costs rounded down to whole
nanoseconds, so each of its constraints is a relaxation of the true one and its bound less
1 ns is valid; its optimum is declared optimal only if its true time meets that bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Annotated

import numpy as np

from iosched import lazy
from iosched.core import MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import GB, FileDomainInstance
from iosched.solvers import Deadline, Profile, load_profile, solve_cpsat, solve_pyomo_within
from iosched.validate import Boolean, OneOf, choice

pe = lazy.module("pyomo.environ")

BOUND_SLACK = 1e-6  # HiGHS bounds are deflated by this (relative): its tolerances put them ~1e-8 too high
MAX_CELLS = 200_000  # units x aggregators (or servers x aggregators) in one model: more is refused
# seconds to build a Pyomo model per unit x aggregator (servers x aggregators for the count models),
# rounded up from 60-90 us (byte MILP), 15-25 us (unit MILP) and 18-22 us (count models) measured
# on sweep:16:64 and sweep:64:256:4 (2-core machine, 2026-11); Pyomo then hands a model to HiGHS in
# about HANDOVER times its build time (measured, 40,000 variables)
BUILD_S_PER_CELL = {"byte": 1e-4, "unit": 3e-5, "counts": 3e-5}
HANDOVER = 4.0
ENGINES = ("auto", "segments", "milp", "cpsat", "aggregated", "dp")
US = 1e6  # microseconds per second


# --- units, sequences and the bound every solution meets -----------------------------------------

@dataclass(frozen=True)
class Units:
    """The region's lock units with data: absolute index, data bytes, and the lock sequences
    (arrays of positions into the units, in lock order); ``server_time`` (s) per server."""

    size: int
    index: np.ndarray
    weight: np.ndarray
    sequences: tuple[np.ndarray, ...]
    sequence_server: tuple[int, ...]  # the server of each sequence (extent), or -1 (token)
    server_time: np.ndarray


def data_below(instance: FileDomainInstance, x: np.ndarray) -> np.ndarray:
    """Data bytes at offsets below each x."""
    d = instance.data
    lengths = d[:, 1] - d[:, 0]
    before = np.r_[0, np.cumsum(lengths)]
    j = np.searchsorted(d[:, 0], x, side="right") - 1
    inside = np.clip(x - d[np.maximum(j, 0), 0], 0, lengths[np.maximum(j, 0)])
    return np.where(j >= 0, before[np.maximum(j, 0)] + inside, 0)


def lock_units(instance: FileDomainInstance, limit: int | None = None) -> Units:
    """The units with data and their sequences (``limit``: refuse more units than that)."""
    size = instance.unit_size
    first, last = instance.region_offset // size, (instance.region_end - 1) // size
    if limit is not None and last - first + 1 > limit:
        raise ParameterError(f"the region has {last - first + 1} lock units (region.length / unit size); "
                             f"this model takes at most {limit}")
    index = np.arange(first, last + 1, dtype=np.int64)
    cuts = data_below(instance, np.r_[index * size, (last + 1) * size])
    weight = np.diff(cuts)
    index, weight = index[weight > 0], weight[weight > 0]
    server_time = instance.server_bytes() / (np.asarray(instance.bandwidth.server) * GB)
    if instance.locking == "extent":
        server = instance.server_of(index)
        order = np.argsort(server, kind="stable")
        cuts = np.flatnonzero(np.diff(server[order])) + 1
        seqs = tuple(np.split(order, cuts))
        return Units(size, index, weight, seqs, tuple(int(server[s[0]]) for s in seqs), server_time)
    return Units(size, index, weight, (np.arange(len(index)),), (-1,), server_time)


def time_bound(instance: FileDomainInstance) -> float:
    """A lower bound on the modelled time valid for every solution (cheap): the data over all
    aggregators' (and all nodes') bandwidth, each server's fixed load plus one lock grant
    (extent), one grant at the token manager (token), and :func:`counting_bound`."""
    D = instance.data_bytes
    bw = instance.bandwidth
    terms = [D / (sum(bw.aggregator) * GB)]
    if bw.node is not None:
        terms.append(D / (sum(bw.node) * GB))
    server = instance.server_bytes()
    server_time = server / (np.asarray(bw.server) * GB)
    if instance.locking == "extent":
        server_time = server_time + instance.acquire_s * (server > 0)
    else:
        terms.append(instance.acquire_s)
    terms.append(float(server_time.max()))
    return max(max(terms), counting_bound(instance))


def counting_bound(instance: FileDomainInstance) -> float:
    """min over P' (aggregators that write) of max(D / (the P' largest aggregator bandwidths), the
    lock time of ⌈P'/K⌉ runs on the least loaded of the K lock sequences): P' writers make at least
    P' runs, so some sequence (a server with data, or the token manager's one) holds ⌈P'/K⌉ of them,
    one grant each and a conflict per change."""
    A, R = instance.acquire_s, instance.revoke_s
    caps = np.cumsum(np.sort(np.asarray(instance.bandwidth.aggregator))[::-1]) * GB
    used = np.arange(1, instance.aggregators + 1)
    if instance.locking == "extent":
        server = instance.server_bytes()
        has = server > 0
        K, base = int(has.sum()), float((server[has] / (np.asarray(instance.bandwidth.server)[has] * GB)).min())
    else:
        K, base = 1, 0.0
    runs = -(-used // K)
    return float(np.maximum(instance.data_bytes / caps, base + A * runs + R * (runs - 1)).min())


def aggregator_classes(instance: FileDomainInstance) -> list[list[int]]:
    """Groups of interchangeable aggregators (same bandwidth, and the same node or equal nodes of
    one aggregator each, or no node constraint): permuting inside a group changes no cost."""
    bw = instance.bandwidth
    nodes = instance.aggregator_nodes
    alone = np.bincount(np.asarray(nodes), minlength=instance.nodes) == 1
    groups: dict = {}
    for a in range(instance.aggregators):
        if bw.node is None:
            key = (bw.aggregator[a],)
        elif alone[nodes[a]]:
            key = (bw.aggregator[a], "alone", bw.node[nodes[a]])
        else:
            key = (bw.aggregator[a], "node", nodes[a])
        groups.setdefault(key, []).append(a)
    return [g for g in groups.values() if len(g) > 1]


def from_sequence(instance: FileDomainInstance, owners, amounts, io: str = "extent") -> Domains:
    """Domains from the data in file order as consecutive (owner, data bytes) pieces; the holes
    between requests go to the owner of the data before them."""
    owners = np.asarray(owners, dtype=np.int64)
    amounts = np.asarray(amounts, dtype=np.int64)
    keep = amounts > 0
    owners, amounts = owners[keep], amounts[keep]
    d = instance.data
    lengths = d[:, 1] - d[:, 0]
    before = np.r_[0, np.cumsum(lengths)]
    cut = np.cumsum(amounts)[:-1]  # data coordinates where a piece starts
    j = np.searchsorted(before, cut, side="right") - 1
    inner = d[j, 0] + cut - before[j]
    lo = np.r_[instance.region_offset, inner]
    hi = np.r_[inner, instance.region_end]
    return Domains.from_owners(lo, hi, owners, instance.aggregators, io)


# --- the MILP (Pyomo + HiGHS) -------------------------------------------------------------------

class OutOfTime(Exception):
    """A model's build reached its method's deadline."""


def ticking(items, deadline: Deadline | None):
    """``items``, checking ``deadline`` before each (OutOfTime once it has passed)."""
    for item in items:
        if deadline is not None and deadline.expired():
            raise OutOfTime
        yield item


def _pyomo_in_time(build, cells: int, kind: str, prof: Profile, deadline: Deadline):
    """(model, outcome, note): a Pyomo model built by ``build()`` and solved by HiGHS within ``prof``'s
    limit and what is left of ``deadline``; (None, None, why) when its estimated build and handover
    (``cells`` x BUILD_S_PER_CELL[kind] x (1 + HANDOVER)) would not fit in the time left."""
    needed = cells * BUILD_S_PER_CELL[kind] * (1 + HANDOVER)
    if needed > deadline.remaining():
        return None, None, (f"about {needed:.3g} s to build and hand over ({cells} cells), "
                            f"{deadline.remaining():.3g} s left")
    return solve_pyomo_within(build, prof, deadline, HANDOVER)


def _check_cells(n: int, P: int, what: str) -> None:
    if n * P > MAX_CELLS:
        raise ParameterError(f"{what} x aggregators = {n} x {P} = {n * P} exceeds the model limit {MAX_CELLS}")


def _model_units(instance: FileDomainInstance, granularity: str):
    """What the MILP and CP-SAT models are built on: (lock units, their count U, aggregators P,
    their weights in bytes), after checking ``granularity`` and the model's size."""
    choice("granularity", granularity, ("byte", "unit"), error=ParameterError)
    units = lock_units(instance, MAX_CELLS // instance.aggregators)
    U, P = len(units.weight), instance.aggregators
    _check_cells(U, P, "lock units")
    return units, U, P, [int(x) for x in units.weight]


def build_milp(instance: FileDomainInstance, granularity: str = "byte") -> pe.ConcreteModel:
    """The unit-level MILP (module docstring); T in microseconds. ``granularity``: byte or unit."""
    units, U, P, w = _model_units(instance, granularity)
    bw = instance.bandwidth
    A, R = instance.acquire_s * US, instance.revoke_s * US
    seq_pairs = [[(int(s[i]), int(s[i + 1])) for i in range(len(s) - 1)] for s in units.sequences]
    pairs = [p for ps in seq_pairs for p in ps]

    m = pe.ConcreteModel(name=f"filedomain-milp-{granularity}")
    m.U = pe.RangeSet(0, U - 1)
    m.A = pe.RangeSet(0, P - 1)
    m.E = pe.Set(initialize=pairs, dimen=2, ordered=True, doc="consecutive units of a lock sequence")
    m.T = pe.Var(domain=pe.NonNegativeReals, doc="modelled time (µs)")
    m.y = pe.Var(m.U, m.A, domain=pe.Binary, doc="aggregator a writes in unit u")
    m.match = pe.Var(m.E, m.A, bounds=(0, 1), doc="a's run goes on from unit u to the next unit v")
    if granularity == "unit":
        m.one = pe.Constraint(m.U, rule=lambda m, u: sum(m.y[u, a] for a in m.A) == 1)
        m.match_u = pe.Constraint(m.E, m.A, rule=lambda m, u, v, a: m.match[u, v, a] <= m.y[u, a])
        m.match_v = pe.Constraint(m.E, m.A, rule=lambda m, u, v, a: m.match[u, v, a] <= m.y[v, a])
        m.agg_load = pe.Expression(m.A, rule=lambda m, a: sum(w[u] * m.y[u, a] for u in m.U))
    else:
        m.q = pe.Var(m.U, m.A, domain=pe.NonNegativeIntegers, bounds=lambda m, u, a: (0, w[u]),
                     doc="data bytes of unit u written by a")
        m.f = pe.Var(m.U, m.A, domain=pe.Binary, doc="a is the first owner in unit u")
        m.l = pe.Var(m.U, m.A, domain=pe.Binary, doc="a is the last owner in unit u")
        m.single = pe.Var(m.U, domain=pe.Binary, doc="unit u has one owner")
        m.all = pe.Constraint(m.U, rule=lambda m, u: sum(m.q[u, a] for a in m.A) == w[u])
        m.present = pe.Constraint(m.U, m.A, rule=lambda m, u, a: m.q[u, a] <= w[u] * m.y[u, a])
        m.some = pe.Constraint(m.U, m.A, rule=lambda m, u, a: m.q[u, a] >= m.y[u, a])
        m.first = pe.Constraint(m.U, rule=lambda m, u: sum(m.f[u, a] for a in m.A) == 1)
        m.last = pe.Constraint(m.U, rule=lambda m, u: sum(m.l[u, a] for a in m.A) == 1)
        m.f_y = pe.Constraint(m.U, m.A, rule=lambda m, u, a: m.f[u, a] <= m.y[u, a])
        m.l_y = pe.Constraint(m.U, m.A, rule=lambda m, u, a: m.l[u, a] <= m.y[u, a])
        m.single_owner = pe.Constraint(m.U, rule=lambda m, u: sum(m.y[u, a] for a in m.A)
                                       <= 1 + (P - 1) * (1 - m.single[u]))
        m.ends_differ = pe.Constraint(m.U, m.A, rule=lambda m, u, a: m.f[u, a] + m.l[u, a] <= 1 + m.single[u])
        m.match_u = pe.Constraint(m.E, m.A, rule=lambda m, u, v, a: m.match[u, v, a] <= m.l[u, a])
        m.match_v = pe.Constraint(m.E, m.A, rule=lambda m, u, v, a: m.match[u, v, a] <= m.f[v, a])
        m.agg_load = pe.Expression(m.A, rule=lambda m, a: sum(m.q[u, a] for u in m.U))

    m.aggregator = pe.Constraint(m.A, rule=lambda m, a: m.agg_load[a] <= bw.aggregator[a] * 1e3 * m.T)
    if bw.node is not None:
        members = {n: [a for a in range(P) if instance.aggregator_nodes[a] == n] for n in range(instance.nodes)}
        m.N = pe.Set(initialize=[n for n in members if members[n]])
        m.node = pe.Constraint(m.N, rule=lambda m, n: sum(m.agg_load[a] for a in members[n]) <= bw.node[n] * 1e3 * m.T)
    for k, group in enumerate(aggregator_classes(instance)):
        setattr(m, f"symmetry_{k}", pe.Constraint(range(len(group) - 1),
                                                  rule=lambda m, i, g=group: m.agg_load[g[i]] >= m.agg_load[g[i + 1]]))

    def lock(seq, seq_pairs):  # the lock time (µs) of one sequence
        owners = sum(m.y[int(u), a] for u in seq for a in m.A)
        matched = sum(m.match[u, v, a] for (u, v) in seq_pairs for a in m.A)
        runs = owners - matched
        extras = owners - len(seq) if granularity == "byte" else 0
        return A * runs + R * (runs - 1 + extras)

    m.server_floor = pe.Constraint(expr=m.T >= float(units.server_time.max()) * US)
    m.lock = pe.ConstraintList()
    for seq, ps, s in zip(units.sequences, seq_pairs, units.sequence_server):
        base = float(units.server_time[s]) * US if s >= 0 else 0.0
        m.lock.add(m.T >= base + lock(seq, ps))
    m.obj = pe.Objective(expr=m.T, sense=pe.minimize)
    m._filedomain_units = units  # noqa: SLF001  (kept with the model to read the solution)
    return m


def _read_milp(instance: FileDomainInstance, m: pe.ConcreteModel, granularity: str) -> Domains:
    units: Units = m._filedomain_units  # noqa: SLF001
    P = instance.aggregators
    owners, amounts = [], []
    for u in range(len(units.weight)):
        if granularity == "unit":
            owners.append(max(range(P), key=lambda a: pe.value(m.y[u, a])))
            amounts.append(int(units.weight[u]))
            continue
        q = {a: round(pe.value(m.q[u, a])) for a in range(P) if pe.value(m.y[u, a]) > 0.5}
        q[max(q, key=q.get)] += int(units.weight[u]) - sum(q.values())  # bytes left on an absent owner
        first = max(q, key=lambda a: pe.value(m.f[u, a]))
        last = max(q, key=lambda a: pe.value(m.l[u, a]))
        order = [first] + [a for a in q if a not in (first, last)] + ([last] if last != first else [])
        owners += order
        amounts += [q[a] for a in order]
    return _aligned_sequence(instance, units, owners, amounts)


def _aligned_sequence(instance, units: Units, owners, amounts) -> Domains:
    """from_sequence with amounts checked to sum to each unit's data (rounding repaired on the last piece)."""
    amounts = np.asarray(amounts, dtype=np.int64)
    total = int(units.weight.sum())
    if amounts.sum() != total:
        amounts[-1] += total - int(amounts.sum())
    return from_sequence(instance, owners, amounts)


# --- CP-SAT --------------------------------------------------------------------------------------

def _ns_per_byte(gbs: float) -> Fraction:
    """The time per byte (ns) of a bandwidth in GB/s, as a fraction of denominator <= 1000 rounded down."""
    x = 1 / gbs
    f = Fraction(x).limit_denominator(1000)
    return f if f <= x else Fraction(math.floor(x * f.denominator), f.denominator)


def _cpsat(instance: FileDomainInstance, granularity: str = "byte", horizon_s: float | None = None,
           deadline: Deadline | None = None):
    """(model, variables) of the CP-SAT formulation; T in whole nanoseconds. With ``deadline``, the
    build stops (OutOfTime) once it has passed."""
    from ortools.sat.python import cp_model

    units, U, P, w = _model_units(instance, granularity)
    bw = instance.bandwidth
    agg = [_ns_per_byte(b) for b in bw.aggregator]
    node = [_ns_per_byte(b) for b in bw.node] if bw.node is not None else None
    srv = [_ns_per_byte(b) for b in bw.server]
    A, R = math.floor(instance.acquire_s * 1e9), math.floor(instance.revoke_s * 1e9)
    horizon = math.ceil((horizon_s if horizon_s is not None else _horizon(instance)) * 1e9) + 1
    big = max(instance.data_bytes * max(f.numerator for f in agg), horizon * max(f.denominator for f in agg))
    if big >= 2**62:
        raise ParameterError("the instance is too large for CP-SAT's integer scaling (bytes x 1000 or the "
                             "time horizon in ns over 2^62); use engine=milp")
    model = cp_model.CpModel()
    model.name = f"filedomain-cpsat-{granularity}"
    T = model.new_int_var(0, horizon, "T_ns")
    y = {(u, a): model.new_bool_var(f"y_{u}_{a}") for u in ticking(range(U), deadline) for a in range(P)}
    seq_pairs = [[(int(s[i]), int(s[i + 1])) for i in range(len(s) - 1)] for s in units.sequences]
    match = {(u, v, a): model.new_bool_var(f"m_{u}_{v}_{a}") for ps in seq_pairs for u, v in ticking(ps, deadline)
             for a in range(P)}
    q = None
    if granularity == "unit":
        for u in ticking(range(U), deadline):
            model.add_exactly_one(y[u, a] for a in range(P))
        for (u, v, a), x in match.items():
            model.add_implication(x, y[u, a])
            model.add_implication(x, y[v, a])
        load = [sum(w[u] * y[u, a] for u in range(U)) for a in range(P)]
        first, last = y, y
    else:
        q = {(u, a): model.new_int_var(0, w[u], f"q_{u}_{a}") for u in ticking(range(U), deadline) for a in range(P)}
        first = {k: model.new_bool_var(f"f_{k[0]}_{k[1]}") for k in ticking(y, deadline)}
        last = {k: model.new_bool_var(f"l_{k[0]}_{k[1]}") for k in ticking(y, deadline)}
        for u in ticking(range(U), deadline):
            model.add(sum(q[u, a] for a in range(P)) == w[u])
            model.add_exactly_one(first[u, a] for a in range(P))
            model.add_exactly_one(last[u, a] for a in range(P))
            owners = sum(y[u, a] for a in range(P))
            for a in range(P):
                model.add(q[u, a] >= 1).only_enforce_if(y[u, a])
                model.add(q[u, a] == 0).only_enforce_if(~y[u, a])
                model.add_implication(first[u, a], y[u, a])
                model.add_implication(last[u, a], y[u, a])
                model.add(owners == 1).only_enforce_if([first[u, a], last[u, a]])  # first and last: alone
        for (u, v, a), x in match.items():
            model.add_implication(x, last[u, a])
            model.add_implication(x, first[v, a])
        load = [sum(q[u, a] for u in range(U)) for a in range(P)]
    for a in range(P):
        model.add(load[a] * agg[a].numerator <= T * agg[a].denominator)
    if node is not None:
        for n in range(instance.nodes):
            members = [a for a in range(P) if instance.aggregator_nodes[a] == n]
            if members:
                model.add(sum(load[a] for a in members) * node[n].numerator <= T * node[n].denominator)
    for group in aggregator_classes(instance):
        for a, b in zip(group, group[1:]):
            model.add(load[a] >= load[b])
    server_bytes = instance.server_bytes()
    server_ns = [int(server_bytes[s]) * srv[s].numerator // srv[s].denominator for s in range(len(srv))]
    model.add(T >= max(server_ns))
    for seq, ps, s in zip(units.sequences, seq_pairs, units.sequence_server):
        owners = sum(y[int(u), a] for u in seq for a in range(P))
        runs = owners - sum(match[u, v, a] for u, v in ps for a in range(P))
        extras = owners - len(seq) if granularity == "byte" else 0
        model.add(T >= (server_ns[s] if s >= 0 else 0) + A * runs + R * (runs - 1 + extras))
    model.minimize(T)
    return model, {"T": T, "y": y, "q": q, "f": first, "l": last, "units": units}


def _horizon(instance: FileDomainInstance) -> float:
    """An upper bound (s) on the optimum: the stripe-aligned domains' modelled time, doubled, plus 1 ms."""
    from iosched.heuristics.filedomain import stripe_aligned

    return 2 * evaluate(instance, stripe_aligned(instance).solution).time + 1e-3


def build_cpsat(instance: FileDomainInstance, granularity: str = "byte"):
    """The CP-SAT model (module docstring); T in nanoseconds. ``granularity``: byte or unit."""
    return _cpsat(instance, granularity)[0]


def _read_cpsat(instance: FileDomainInstance, solver, v: dict, granularity: str) -> Domains:
    units: Units = v["units"]
    P = instance.aggregators
    owners, amounts = [], []
    for u in range(len(units.weight)):
        if granularity == "unit":
            owners.append(next(a for a in range(P) if solver.value(v["y"][u, a])))
            amounts.append(int(units.weight[u]))
            continue
        q = {a: solver.value(v["q"][u, a]) for a in range(P) if solver.value(v["q"][u, a]) > 0}
        first = next(a for a in range(P) if solver.value(v["f"][u, a]))
        last = next(a for a in range(P) if solver.value(v["l"][u, a]))
        order = [first] + [a for a in q if a not in (first, last)] + ([last] if last != first else [])
        owners += order
        amounts += [q[a] for a in order]
    return _aligned_sequence(instance, units, owners, amounts)


# --- the aggregated model and the relaxation ----------------------------------------------------

def _server_stripes(instance: FileDomainInstance) -> np.ndarray:
    """Stripes of each server in the region, all of them full (else a ParameterError)."""
    w = instance.stripe_size
    if instance.locking != "extent":
        raise ParameterError("the aggregated model is for extent locking; use engine=milp or cpsat with tokens")
    if not instance.full or instance.region_offset % w or instance.region_end % w:
        raise ParameterError("the aggregated model needs equal stripes: a region aligned to striping.stripe_size "
                             "and written whole (no requests with holes)")
    k = instance.first_stripe + np.arange(instance.stripes)
    return np.bincount(instance.server_of(k), minlength=instance.stripe_count)


def build_aggregated(instance: FileDomainInstance) -> pe.ConcreteModel:
    """Counts per (aggregator, server) of whole equal stripes (module docstring); T in µs."""
    n_s = _server_stripes(instance)
    return _counts_model(instance, [int(x) * instance.stripe_size for x in n_s], instance.stripe_size)


def build_relaxation(instance: FileDomainInstance) -> pe.ConcreteModel:
    """The relaxation whose optimum is a lower bound for every solution (module docstring); T in µs."""
    if instance.locking == "extent":
        return _counts_model(instance, [int(x) for x in instance.server_bytes()], None)
    return _counts_model(instance, [instance.data_bytes], None)


def _counts_model(instance: FileDomainInstance, supply: list[int], stripe: int | None) -> pe.ConcreteModel:
    """Loads per (aggregator, sequence): whole stripes (``stripe`` given, integer counts) or
    continuous bytes; u = presence; the lock time counts Σ_a u runs per sequence."""
    P, K = instance.aggregators, len(supply)
    _check_cells(K, P, "servers" if instance.locking == "extent" else "sequences")
    bw = instance.bandwidth
    A, R = instance.acquire_s * US, instance.revoke_s * US
    server_time = instance.server_bytes() / (np.asarray(bw.server) * GB) * US
    per_us = max(bw.aggregator) * 1e3  # bytes the fastest aggregator writes in a µs
    m = pe.ConcreteModel(name="filedomain-aggregated" if stripe else "filedomain-relaxation")
    m.A = pe.RangeSet(0, P - 1)
    m.S = pe.Set(initialize=[s for s in range(K) if supply[s] > 0])
    m.T = pe.Var(domain=pe.NonNegativeReals, doc="modelled time (µs)")
    m.u = pe.Var(m.A, m.S, domain=pe.Binary, doc="aggregator a writes to server s")
    if stripe:
        m.c = pe.Var(m.A, m.S, domain=pe.NonNegativeIntegers, bounds=lambda m, a, s: (0, supply[s] // stripe),
                     doc="stripes of server s written by a")
        m.all = pe.Constraint(m.S, rule=lambda m, s: sum(m.c[a, s] for a in m.A) * stripe == supply[s])
        m.present = pe.Constraint(m.A, m.S, rule=lambda m, a, s: m.c[a, s] <= supply[s] // stripe * m.u[a, s])
        m.some = pe.Constraint(m.A, m.S, rule=lambda m, a, s: m.c[a, s] >= m.u[a, s])
        m.agg_load = pe.Expression(m.A, rule=lambda m, a: stripe / per_us * sum(m.c[a, s] for s in m.S))
    else:  # shares rather than bytes: with q in bytes (up to 10^8 beside bandwidths of 10^2-10^3 per µs)
        # HiGHS's presolve once cut off feasible points and proved a bound above a solution's time
        m.x = pe.Var(m.A, m.S, domain=pe.UnitInterval, doc="share of server s's data written by a")
        m.all = pe.Constraint(m.S, rule=lambda m, s: sum(m.x[a, s] for a in m.A) == 1)
        m.present = pe.Constraint(m.A, m.S, rule=lambda m, a, s: m.x[a, s] <= m.u[a, s])
        m.agg_load = pe.Expression(m.A, rule=lambda m, a: sum(supply[s] / per_us * m.x[a, s] for s in m.S))
    # loads in µs at the fastest aggregator's bandwidth, so that their coefficients and T's are alike
    m.aggregator = pe.Constraint(m.A, rule=lambda m, a: m.agg_load[a] <= bw.aggregator[a] * 1e3 / per_us * m.T)
    if bw.node is not None:
        members = {n: [a for a in range(P) if instance.aggregator_nodes[a] == n] for n in range(instance.nodes)}
        m.N = pe.Set(initialize=[n for n in members if members[n]])
        m.node = pe.Constraint(m.N, rule=lambda m, n: sum(m.agg_load[a] for a in members[n])
                               <= bw.node[n] * 1e3 / per_us * m.T)
    for k, group in enumerate(aggregator_classes(instance)):
        setattr(m, f"symmetry_{k}", pe.Constraint(range(len(group) - 1),
                                                  rule=lambda m, i, g=group: m.agg_load[g[i]] >= m.agg_load[g[i + 1]]))
    m.server_floor = pe.Constraint(expr=m.T >= float(server_time.max()))
    if stripe and len(set(bw.aggregator)) == 1:  # pigeonhole: some aggregator has ⌈n / P⌉ stripes
        n = sum(supply) // stripe
        m.pigeonhole = pe.Constraint(expr=m.T >= -(-n // P) * stripe / (bw.aggregator[0] * 1e3))
    if instance.locking == "extent":
        m.lock = pe.Constraint(m.S, rule=lambda m, s: m.T >= float(server_time[s])
                               + (A + R) * sum(m.u[a, s] for a in m.A) - R)
    else:
        m.lock = pe.Constraint(expr=m.T >= (A + R) * sum(m.u[a, 0] for a in m.A) - R)
    m.obj = pe.Objective(expr=m.T, sense=pe.minimize)
    return m


def _read_aggregated(instance: FileDomainInstance, m: pe.ConcreteModel) -> Domains:
    """Each server's stripes in object order, in blocks of c_as to aggregators 0, 1, ..."""
    from iosched.heuristics.filedomain import by_stripe

    S, P = instance.stripe_count, instance.aggregators
    k = instance.first_stripe + np.arange(instance.stripes)
    server = instance.server_of(k)
    owner = np.empty(len(k), dtype=np.int64)
    for s in range(S):
        mine = np.flatnonzero(server == s)
        counts = [round(pe.value(m.c[a, s])) if s in m.S else 0 for a in range(P)]
        owner[mine] = np.repeat(np.arange(P), counts)[:len(mine)]
    return by_stripe(instance, owner, P)


def layout(instance: FileDomainInstance, loads: np.ndarray) -> Domains:
    """Domains from byte loads per (aggregator, server) (equal stripes, extent locking): on each
    server, its data in object order in one block per aggregator, the blocks of whole stripes
    first and then by size; loads rounded to integers keeping each server's total."""
    S, P, w = instance.stripe_count, instance.aggregators, instance.stripe_size
    k = instance.first_stripe + np.arange(instance.stripes, dtype=np.int64)
    server = instance.server_of(k)
    starts, ends, owners = [], [], []
    for s in range(S):
        mine = k[server == s]
        if not len(mine):
            continue
        q = np.clip(np.asarray(loads[:, s], dtype=float), 0, None)
        q = q * (len(mine) * w / q.sum()) if q.sum() > 0 else np.full(P, len(mine) * w / P)
        whole = np.floor(q).astype(np.int64)
        extra = len(mine) * w - int(whole.sum())
        whole[np.argsort(-(q - whole), kind="stable")[:extra]] += 1
        used = np.flatnonzero(whole)
        used = used[np.lexsort((-whole[used], whole[used] % w != 0))]
        c = np.r_[0, np.cumsum(whole[used])]
        first, last = c[:-1] // w, (c[1:] - 1) // w
        rows = np.repeat(np.arange(len(used)), last - first + 1)
        j = first[rows] + np.arange(len(rows)) - np.repeat(np.cumsum(last - first + 1) - (last - first + 1),
                                                           last - first + 1)
        lo = np.maximum(c[:-1][rows] - j * w, 0)
        hi = np.minimum(c[1:][rows] - j * w, w)
        starts.append(mine[j] * w + lo)
        ends.append(mine[j] * w + hi)
        owners.append(used[rows])
    return Domains.from_owners(np.concatenate(starts), np.concatenate(ends), np.concatenate(owners), P)


def column_split(instance: FileDomainInstance, writers: int) -> np.ndarray:
    """Byte loads per (aggregator, server) of the servers' data taken column by column (server by
    server) and cut into ``writers`` consecutive chunks proportional to the fastest aggregators'
    bandwidths: the transpose order with byte-exact balance."""
    bw = np.asarray(instance.bandwidth.aggregator)
    chosen = np.argsort(-bw, kind="stable")[:writers]
    column = instance.server_bytes().astype(float)
    C = np.r_[0.0, np.cumsum(column)]
    B = np.r_[0.0, np.cumsum(bw[chosen])] / bw[chosen].sum() * C[-1]
    overlap = np.clip(np.minimum(B[1:, None], C[None, 1:]) - np.maximum(B[:-1, None], C[None, :-1]), 0, None)
    loads = np.zeros((instance.aggregators, instance.stripe_count))
    loads[chosen] = overlap
    return loads


def writer_counts(P: int, S: int) -> list[int]:
    """The numbers of writers tried by the column split: all up to 512, else P, the multiples of S
    and the 2 S values below P."""
    if P <= 512:
        return list(range(1, P + 1))
    return sorted({P, *range(S, P + 1, S), *range(max(1, P - 2 * S), P + 1)})


# --- the linear-partition search -------------------------------------------------------------------

def dp_partition(instance: FileDomainInstance, granularity: str = "unit", deadline: Deadline | None = None
                 ) -> tuple[Domains, float, bool]:
    """Contiguous domains in aggregator order minimising the fluid time without lock costs.

    Returns the domains, that fluid time (s) and whether the bisection finished (it stops with
    the best domains so far once ``deadline`` has passed). Bisection on T: each aggregator in turn
    takes the most units (or bytes) within T x its bandwidth; T is feasible when all are taken.
    """
    choice("granularity", granularity, ("byte", "unit"), error=ParameterError)
    bw = instance.bandwidth
    cap = np.asarray(bw.aggregator, dtype=float)
    if bw.node is not None:
        if instance.nodes < instance.aggregators or len(set(instance.aggregator_nodes)) < instance.aggregators:
            raise ParameterError("engine=dp needs one aggregator per node when nodes are capacities "
                                 "(aggregators lists a node twice)")
        cap = np.minimum(cap, np.asarray(bw.node)[list(instance.aggregator_nodes)])
    cap = cap * GB
    if granularity == "unit":
        units = lock_units(instance, 10**7)
        prefix = np.r_[0, np.cumsum(units.weight)]
    else:
        prefix = None
    D = instance.data_bytes

    def fill(T: float) -> np.ndarray:
        """Data coordinates where each aggregator's domain ends (greedy)."""
        limits = np.floor(T * cap).astype(np.int64)
        if prefix is None:
            return np.minimum(np.cumsum(limits), D)
        ends, at = np.empty(len(cap), dtype=np.int64), 0
        for i, lim in enumerate(limits):
            at = int(np.searchsorted(prefix, prefix[at] + lim, side="right")) - 1
            ends[i] = prefix[at]
        return ends

    def cost(ends: np.ndarray) -> float:
        return float((np.diff(np.r_[0, ends]) / cap).max())

    # the start covers the data by construction: the fastest aggregator takes all of it (a greedy fill at
    # T = D / max(cap) can fall a unit short, floor(T x cap) rounding D - 1e-16 down); fills bisected on
    # below replace it only when they cover the data too
    fastest = int(np.argmax(cap))
    best = np.where(np.arange(len(cap)) >= fastest, D, 0).astype(np.int64)
    lo, hi = D / cap.sum() * (1 - 1e-12), cost(best)
    finished = False
    for _ in range(200):
        if hi - lo <= 1e-12 * hi:
            finished = True
            break
        if deadline is not None and deadline.expired():
            break
        mid = (lo + hi) / 2
        ends = fill(mid)
        if ends[-1] >= D:
            best, hi = ends, cost(ends)
        else:
            lo = mid
    domains = from_sequence(instance, np.arange(len(cap)), np.diff(np.r_[0, best]))
    server_time = float((instance.server_bytes() / (np.asarray(bw.server) * GB)).max())
    return domains, max(hi, server_time), finished


# --- the exact method ------------------------------------------------------------------------------

SCOPES = {
    ("segments", "byte"): "every solution",
    ("milp", "byte"): "every solution",
    ("cpsat", "byte"): "every solution (time in whole ns; times per byte and lock costs rounded down)",
    ("milp", "unit"): "whole lock units (stripes, or blocks with tokens) to aggregators",
    ("cpsat", "unit"): "whole lock units to aggregators (time in whole ns)",
    ("aggregated", "unit"): "whole stripes to aggregators, and the relaxation's loads laid out per server "
                            "(equal stripes, extent locking); bound: the relaxation (every solution)",
    ("dp", "unit"): "contiguous domains in aggregator order on unit boundaries, lock costs ignored",
    ("dp", "byte"): "contiguous domains in aggregator order, lock costs ignored",
}


def relaxation_bound(instance: FileDomainInstance, profile: Profile,
                     deadline: Deadline | None = None) -> tuple[float | None, str]:
    """The relaxation's proven bound (s) and its solver status: valid for every solution (None and
    'skipped' when it would not be built and solved within ``deadline``)."""
    deadline = deadline or Deadline(profile.time_limit)
    cells = instance.aggregators * (instance.stripe_count if instance.locking == "extent" else 1)
    _, out, _ = _pyomo_in_time(lambda: build_relaxation(instance), cells, "counts", profile, deadline)
    if out is None:
        return None, "skipped"
    return _scaled(out, US)[1], out.status.value


@register("filedomain", "exact", objective="time")
def exact(instance: FileDomainInstance, engine: Annotated[str, OneOf(ENGINES)] = "auto",
          granularity: Annotated[str | None, OneOf(("byte", "unit"))] = None, profile: str = "default",
          early: Annotated[bool, Boolean()] = True) -> MethodOutput:
    """Minimise the modelled time: segments and levels (auto: where it fits, else milp), milp / cpsat
    (any split, or whole units), aggregated counts, or the dp."""
    if engine == "aggregated" and granularity == "byte":
        raise ParameterError("engine=aggregated counts whole stripes: granularity must be unit")
    if engine == "segments" and granularity == "unit":
        raise ParameterError("engine=segments splits at any byte: granularity must be byte (or use engine=milp)")
    return solve_exact(instance, engine, granularity, load_profile(profile), early)


def solve_exact(instance: FileDomainInstance, engine: str = "auto", granularity: str | None = None,
                profile: Profile | None = None, early: bool = True) -> MethodOutput:
    """:func:`exact` under a :class:`Profile` (its time limit is the whole method's budget, counted
    from when :func:`iosched.solve` started the method).

    ``auto``: the segment model where it fits (MAX_COLUMNS), else the unit MILP where it fits
    (MAX_CELLS), else the heuristics' best beside :func:`time_bound`. With ``early`` (not for the
    dp) no model is solved when a heuristic's domains already meet :func:`time_bound` within the
    profile's gap: they are optimal."""
    from iosched.models import filedomain_segments as segments

    prof = profile or load_profile("default")
    deadline = Deadline.for_method(prof.time_limit)
    info: dict = {}
    asked = engine
    if engine == "auto":
        engine = "segments" if granularity in (None, "byte") else "milp"
        try:
            segments.check_size(instance)
        except ParameterError as e:
            info["auto"] = f"engine=segments refused: {e}"
            engine = "milp"
    elif engine == "segments":
        segments.check_size(instance)  # refuses before the heuristics run
    gran = granularity or ("byte" if engine in ("milp", "cpsat", "segments") else "unit")
    info.update(engine=engine, granularity=gran, scope=SCOPES[engine, gran])
    starts, times, skipped = timed_starts(instance, deadline) if engine != "dp" else ([], {}, 0)
    if skipped:
        info["heuristics_skipped"] = (f"{skipped} heuristic(s) not run: the time left would not hold another "
                                      f"and the evaluation of the answer")
    if early and engine != "dp":
        name, domains = min(starts, key=lambda c: times[c[0]])
        bound = time_bound(instance)
        if times[name] - bound <= max(prof.rel_gap, 2 * BOUND_SLACK) * times[name]:
            info.update(chosen=name, candidates={name: times[name]}, bound_is="valid for every solution",
                        certified_by="the counting bound (time_bound): no model solved")
            return MethodOutput(domains, Status.OPTIMAL, bound, info)
    if engine == "segments":
        name, incumbent = min(starts, key=lambda c: times[c[0]])
        try:
            domains, bound, proved = segments.search(instance, prof, deadline, incumbent, info, times[name])
            return _best_of(instance, [("segments", domains)], bound, not proved, prof, info, starts=starts,
                            times=times)
        except ParameterError as e:
            if asked != "auto":
                raise
            info.update(auto=f"engine=segments refused: {e}", engine="milp", scope=SCOPES["milp", "byte"])
            engine = "milp"
    if engine == "dp":
        domains, fluid, finished = dp_partition(instance, gran, deadline)
        if not finished:
            info["scope_incumbent"] = fluid
            return MethodOutput(domains, Status.TIME_LIMIT, None, info)
        info["scope_optimum"] = fluid
        info["scope_optimum_is"] = "the fluid time (lock costs ignored) of contiguous domains"
        proven = instance.acquire_s == 0 and instance.revoke_s == 0 and gran == "byte"
        return MethodOutput(domains, Status.OPTIMAL if proven else Status.FEASIBLE, fluid if proven else None, info)
    if engine == "aggregated":
        candidates, bound, timed_out = _aggregated(instance, prof, deadline, info)
        return _best_of(instance, candidates, bound, timed_out, prof, info, starts=starts, times=times)
    if engine == "milp":
        try:
            cells = len(_model_units(instance, gran)[3]) * instance.aggregators
        except ParameterError as e:
            if asked != "auto":
                raise
            info["auto"] = f"{info.get('auto', '')}; engine=milp refused: {e}: the heuristics' best".lstrip("; ")
            return _best_of(instance, [], None, bool(skipped), prof, info, starts=starts, times=times)
        model, out, note = _pyomo_in_time(lambda: build_milp(instance, gran), cells, gran, prof, deadline)
        if out is None:
            info["skipped"] = f"the MILP was not solved: {note}"
            return _best_of(instance, [], None, True, prof, info, starts=starts, times=times)
        domains = _read_milp(instance, model, gran) if out.has_solution else None
        value, bound = _scaled(out, US)
    else:
        try:
            model, v = _cpsat(instance, gran, deadline=deadline)
        except OutOfTime:
            info["skipped"] = "the CP-SAT model was not solved: its build reached the time limit"
            return _best_of(instance, [], None, True, prof, info, starts=starts, times=times)
        out, solver = solve_cpsat(model, deadline.limit(prof))
        domains = _read_cpsat(instance, solver, v, gran) if out.has_solution else None
        value, bound = _scaled(out, 1e9)
        if bound is not None:
            bound = max(0.0, bound - 1e-9)
    info.update(solver_status=out.status.value, solver_message=out.message, solver_wall_s=out.wall_time_s,
                model_objective=value, model_bound=bound)
    candidates = [] if domains is None else [("solver", domains)]
    if gran == "unit":  # scope-limited: the solver's bound is not a bound for every solution
        info["scope_optimal"] = out.status == Status.OPTIMAL
        info["scope_optimum" if out.status == Status.OPTIMAL else "scope_incumbent"] = value
        info["scope_bound"] = bound
        bound = None
        if deadline.remaining() > 0.05:
            bound, info["relaxation_status"] = relaxation_bound(instance, prof, deadline)
    proven = gran == "byte" and out.status == Status.OPTIMAL and (engine == "milp" or _cpsat_true_optimum(
        instance, domains, bound, prof, info))
    return _best_of(instance, candidates, bound, out.status == Status.TIME_LIMIT, prof, info, proven, starts, times)


def _cpsat_true_optimum(instance, domains, bound, prof: Profile, info: dict) -> bool:
    """CP-SAT's optimum is one of its rounded model: optimal here only if its true time meets the bound."""
    true = evaluate(instance, domains).time
    if bound is not None and true - bound <= max(prof.rel_gap, 2 * BOUND_SLACK) * true + 1e-9:
        return True
    info["note"] = "optimal for CP-SAT's rounded model; its true time exceeds the bound"
    return False


def heuristic_starts(instance: FileDomainInstance, deadline: Deadline | None = None) -> list[tuple[str, Domains]]:
    """The heuristics' domains (those that run on this instance), as starting points: all of them, or
    with ``deadline`` those that finish before it (the first, ROMIO's even, always)."""
    return timed_starts(instance, deadline)[0]


def timed_starts(instance: FileDomainInstance, deadline: Deadline | None = None):
    """(:func:`heuristic_starts`, each one's evaluated time (s) by name, how many were not run). With
    ``deadline`` a heuristic is started only while the time left holds twice the longest heuristic and
    evaluation so far (it, and solve's evaluation of the answer: on 10^6 aggregators each takes seconds)."""
    from iosched.core import METHODS

    heuristics = [m for m in METHODS.values() if m.problem == "filedomain" and m.name != "exact"]
    starts, times, slowest = [], {}, 0.0
    for k, method in enumerate(heuristics):
        if starts and deadline is not None and deadline.remaining() < 2 * slowest:
            return starts, times, len(heuristics) - k
        began = time.perf_counter()
        try:
            domains = method.run(instance).solution
        except ParameterError:  # e.g. too many extents for a cyclic method
            continue
        if domains is not None:
            name = f"heuristic {method.name}"
            starts.append((name, domains))
            times[name] = evaluate(instance, domains).time
        slowest = max(slowest, time.perf_counter() - began)
    return starts, times, 0


def _best_of(instance: FileDomainInstance, candidates: list, bound: float | None, timed_out: bool, prof: Profile,
             info: dict, proven: bool = False, starts: list | None = None, times: dict | None = None) -> MethodOutput:
    """The best of the engine's candidates and the heuristics' domains (``starts``, computed here
    when not given; ``times``: those already evaluated, by name); OPTIMAL when the solver proved its
    scope is every solution (``proven``) or the best meets the bound (one for every solution) within
    the profile's gap (at least twice the bound's deflation)."""
    candidates = candidates + (heuristic_starts(instance) if starts is None else starts)
    times = dict(times or {})
    times.update({name: evaluate(instance, d).time for name, d in candidates if name not in times})
    bound = max(time_bound(instance), bound if bound is not None else 0.0)
    name, domains = min(candidates, key=lambda c: times[c[0]])
    info["candidates"] = {k: v for k, v in times.items() if not k.startswith("heuristic") or k == name}
    info["chosen"] = name
    info["bound_is"] = "valid for every solution" if bound is not None else "none proven"
    tolerance = max(prof.rel_gap, 2 * BOUND_SLACK)
    if proven or (bound is not None and times[name] - bound <= tolerance * times[name]):
        return MethodOutput(domains, Status.OPTIMAL, bound, info)
    return MethodOutput(domains, Status.TIME_LIMIT if timed_out else Status.FEASIBLE, bound, info)


def _aggregated(instance: FileDomainInstance, prof: Profile, deadline: Deadline, info: dict):
    """The column splits, the relaxation (a bound for every solution; its loads laid out per server
    give a solution) with at most 3/4 of the budget, then the whole-stripe count model in the time
    left: (candidates, bound, timed out)."""
    _server_stripes(instance)  # equal stripes, extent locking
    candidates, best = [], None
    for k in writer_counts(instance.aggregators, instance.stripe_count):
        if deadline.expired():
            break
        domains = layout(instance, column_split(instance, k))
        t = evaluate(instance, domains).time
        if best is None or t < best[0]:
            best = (t, k, domains)
    if best is not None:
        candidates.append((f"column split over {best[1]} writers", best[2]))
    cells = instance.aggregators * instance.stripe_count
    share = replace(prof, time_limit=max(0.01, deadline.remaining() - prof.time_limit / 4))
    relax, r, note = _pyomo_in_time(lambda: build_relaxation(instance), cells, "counts", share, deadline)
    if r is None:
        info["skipped"] = f"the relaxation was not solved: {note}"
        return candidates, None, True
    bound = _scaled(r, US)[1]
    info.update(relaxation_status=r.status.value, relaxation_bound=bound)
    if r.has_solution:
        loads = np.zeros((instance.aggregators, instance.stripe_count))
        supply = instance.server_bytes()
        for (a, s), var in relax.x.items():
            loads[a, s] = pe.value(var) * supply[s]
        candidates.append(("relaxation layout", layout(instance, loads)))
    timed_out = r.status == Status.TIME_LIMIT
    model, out, note = _pyomo_in_time(lambda: build_aggregated(instance), cells, "counts", prof, deadline)
    if out is None:
        info["skipped"] = f"the count model was not solved: {note}"
        timed_out = True
    else:
        if out.has_solution:
            candidates.append(("whole stripes", _read_aggregated(instance, model)))
        value, scope_bound = _scaled(out, US)
        info.update(solver_status=out.status.value, solver_wall_s=out.wall_time_s, scope_bound=scope_bound,
                    scope_optimal=out.status == Status.OPTIMAL,
                    **{"scope_optimum" if out.status == Status.OPTIMAL else "scope_incumbent": value})
        timed_out |= out.status == Status.TIME_LIMIT
    return candidates, bound, timed_out


def _scaled(out, per_second: float) -> tuple[float | None, float | None]:
    """Objective and bound in seconds; a HiGHS bound deflated by BOUND_SLACK (its tolerances)."""
    value = out.objective / per_second if out.objective is not None else None
    bound = out.bound / per_second * (1 - BOUND_SLACK) if out.bound is not None else None
    return value, bound
