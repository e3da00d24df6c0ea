"""The CP-SAT formulation of :mod:`iosched.models.filedomain` (OR-Tools), the MILP's model in whole
nanoseconds with times per byte and lock costs rounded down (so its bound less 1 ns is valid).
"""

from __future__ import annotations

import math
from fractions import Fraction

from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import FileDomainInstance
from iosched.models.filedomain_units import (
    BOUND_SLACK,
    Units,
    aggregator_classes,
    aligned_sequence,
    model_units,
    ticking,
)
from iosched.solvers import Deadline, Profile


def _ns_per_byte(gbs: float) -> Fraction:
    """The time per byte (ns) of a bandwidth in GB/s, as a fraction of denominator <= 1000 rounded down."""
    x = 1 / gbs
    f = Fraction(x).limit_denominator(1000)
    return f if f <= x else Fraction(math.floor(x * f.denominator), f.denominator)


def cpsat_model(instance: FileDomainInstance, granularity: str = "byte", horizon_s: float | None = None,
           deadline: Deadline | None = None):
    """(model, variables) of the CP-SAT formulation; T in whole nanoseconds. With ``deadline``, the
    build stops (OutOfTime) once it has passed."""
    from ortools.sat.python import cp_model

    units, U, P, w = model_units(instance, granularity)
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
    """The CP-SAT model (module docstring); T in nanoseconds. ``granularity``: byte or unit. Its variables
    by name (T, y, q, f, l, and the lock units) are in ``model.named``."""
    model, named = cpsat_model(instance, granularity)
    model.named = named
    return model


def read_cpsat(instance: FileDomainInstance, solver, v: dict, granularity: str) -> Domains:
    """The domains of a solved CP-SAT model (``v``: its variables by name, ``model.named``)."""
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
    return aligned_sequence(instance, units, owners, amounts)


def cpsat_true_optimum(instance, domains, bound, prof: Profile, info: dict) -> bool:
    """CP-SAT's optimum is one of its rounded model: optimal here only if its true time meets the bound."""
    true = evaluate(instance, domains).time
    if bound is not None and true - bound <= max(prof.rel_gap, 2 * BOUND_SLACK) * true + 1e-9:
        return True
    info["note"] = "optimal for CP-SAT's rounded model; its true time exceeds the bound"
    return False
