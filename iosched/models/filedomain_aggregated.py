"""The count models of :mod:`iosched.models.filedomain`: ``aggregated`` (whole equal stripes per
(aggregator, server), extent locking), the ``relaxation`` (a bound for every solution), the layouts
of loads per server and the column splits, and the engine that runs them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from iosched import lazy
from iosched.core import Status
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import GB, FileDomainInstance
from iosched.models import driver
from iosched.models.filedomain_units import (
    US,
    aggregator_classes,
    check_cells,
    pyomo_in_time,
    scaled,
)
from iosched.solvers import Deadline, Profile

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel


def server_stripes(instance: FileDomainInstance) -> np.ndarray:
    """Stripes of each server in the region, all of them full (else a ParameterError: the count models
    and the layouts of loads per server need equal stripes and extent locking)."""
    w = instance.stripe_size
    if instance.locking != "extent":
        raise ParameterError("the aggregated model is for extent locking; use engine=milp or cpsat with tokens")
    if not instance.full or instance.region_offset % w or instance.region_end % w:
        raise ParameterError("the aggregated model needs equal stripes: a region aligned to striping.stripe_size "
                             "and written whole (no requests with holes)")
    k = instance.first_stripe + np.arange(instance.stripes)
    return np.bincount(instance.server_of(k), minlength=instance.stripe_count)


def build_aggregated(instance: FileDomainInstance) -> ConcreteModel:
    """Counts per (aggregator, server) of whole equal stripes (module docstring); T in µs."""
    n_s = server_stripes(instance)
    return _counts_model(instance, [int(x) * instance.stripe_size for x in n_s], instance.stripe_size)


def build_relaxation(instance: FileDomainInstance) -> ConcreteModel:
    """The relaxation whose optimum is a lower bound for every solution (module docstring); T in µs."""
    if instance.locking == "extent":
        return _counts_model(instance, [int(x) for x in instance.server_bytes()], None)
    return _counts_model(instance, [instance.data_bytes], None)


def _counts_model(instance: FileDomainInstance, supply: list[int], stripe: int | None) -> ConcreteModel:
    """Loads per (aggregator, sequence): whole stripes (``stripe`` given, integer counts) or
    continuous bytes; u = presence; the lock time counts Σ_a u runs per sequence."""
    P, K = instance.aggregators, len(supply)
    check_cells(K, P, "servers" if instance.locking == "extent" else "sequences")
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


def read_aggregated(instance: FileDomainInstance, m: ConcreteModel) -> Domains:
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


def relaxation_bound(instance: FileDomainInstance, profile: Profile,
                     deadline: Deadline | None = None) -> tuple[float | None, str]:
    """The relaxation's proven bound (s) and its solver status: valid for every solution (None and
    'skipped' when it would not be built and solved within ``deadline``)."""
    run = driver.ExactRun(profile, deadline=deadline or Deadline(profile.time_limit))
    cells = instance.aggregators * (instance.stripe_count if instance.locking == "extent" else 1)
    _, out, _ = pyomo_in_time(run, lambda: build_relaxation(instance), cells, "counts")
    if out is None:
        return None, "skipped"
    return scaled(out, US)[1], out.status.value


def run_aggregated(instance: FileDomainInstance, run: driver.ExactRun):
    """The column splits, the relaxation (a bound for every solution; its loads laid out per server
    give a solution) with at most 3/4 of the budget, then the whole-stripe count model in the time
    left, recorded in ``run.info`` (the shared keys): (candidates, bound, timed out)."""
    server_stripes(instance)  # equal stripes, extent locking
    prof, deadline, info = run.profile, run.deadline, run.info
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
    relax, r, note = pyomo_in_time(run, lambda: build_relaxation(instance), cells, "counts", share)
    if r is None:
        info["skipped"] = f"the relaxation was not solved: {note}"
        return candidates, None, True
    bound = scaled(r, US)[1]
    info.update(relaxation_status=r.status.value, relaxation_bound=bound)
    if r.has_solution:
        loads = np.zeros((instance.aggregators, instance.stripe_count))
        supply = instance.server_bytes()
        for (a, s), var in relax.x.items():
            loads[a, s] = pe.value(var) * supply[s]
        candidates.append(("relaxation layout", layout(instance, loads)))
    timed_out = r.status == Status.TIME_LIMIT
    model, out, note = pyomo_in_time(run, lambda: build_aggregated(instance), cells, "counts")
    if out is None:
        info["skipped"] = f"the count model was not solved: {note}"
        timed_out = True
    else:
        if out.has_solution:
            candidates.append(("whole stripes", read_aggregated(instance, model)))
        run.record(out, *scaled(out, US))  # the count model's: its scope is whole stripes
        timed_out |= out.status == Status.TIME_LIMIT
    return candidates, bound, timed_out
