"""The unit-level MILP of :mod:`iosched.models.filedomain` (Pyomo + HiGHS), granularity ``byte`` or
``unit`` (its formulation is in that module's docstring); T in microseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iosched import lazy
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains
from iosched.instances.filedomain import FileDomainInstance
from iosched.models.filedomain_units import (
    US,
    Units,
    aggregator_classes,
    aligned_sequence,
    model_units,
)
from iosched.validate import choice

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel


SYMMETRY = ("loads", "first", "none")


def build_milp(instance: FileDomainInstance, granularity: str = "byte", symmetry: str = "loads") -> ConcreteModel:
    """The unit-level MILP (module docstring); T in microseconds. ``granularity``: byte or unit.

    ``symmetry`` orders the aggregators of each class of :func:`aggregator_classes` (interchangeable:
    permuting a class's domains changes no cost, so some optimal solution lies in any one order of them):

    * ``loads`` (the default): their loads non-increasing, ``symmetry_k``. Order a solution's class by load.
    * ``first``: by the first unit each writes in (units in the model's order), ``first_k`` with the
      continuous ``seen[u, a]`` <= seen[u-1, a] + y[u, a] (at most 1 once a has written by unit u) and
      y[u, g_i] <= seen[u, g_(i-1)]: the i-th aggregator of the class writes in unit u only if the one
      before it has written by then. Order a solution's class by the first unit each writes in (those
      that write nothing last): then every row holds with seen = [a has written by u].
    * ``none``: no ordering.

    The two orders are alternatives, not to be combined (a solution in the order of first units need not
    have its loads in order). Neither changes the optimum: each keeps, of every solution, the copy whose
    class members are in its order (their effect on the LP bound and the solve: docs/formulations.md)."""
    choice("symmetry", symmetry, SYMMETRY, error=ParameterError)
    units, U, P, w = model_units(instance, granularity)
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
    for k, group in enumerate(aggregator_classes(instance) if symmetry != "none" else []):
        if symmetry == "loads":
            setattr(m, f"symmetry_{k}", pe.Constraint(range(len(group) - 1), rule=lambda m, i, g=group: (
                m.agg_load[g[i]] >= m.agg_load[g[i + 1]])))
            continue
        if not hasattr(m, "seen"):
            m.seen = pe.Var(m.U, m.A, bounds=(0, 1), doc="aggregator a has written in some unit up to u")
            m.seen_rule = pe.Constraint(m.U, m.A, rule=lambda m, u, a: (
                m.seen[u, a] <= (m.seen[u - 1, a] if u else 0) + m.y[u, a]))
        setattr(m, f"first_{k}", pe.Constraint(m.U, range(1, len(group)), rule=lambda m, u, i, g=group: (
            m.y[u, g[i]] <= m.seen[u, g[i - 1]])))

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


def read_milp(instance: FileDomainInstance, m: ConcreteModel, granularity: str) -> Domains:
    """The domains a solved :func:`build_milp` model encodes (its granularity given again)."""
    units: Units = m._filedomain_units  # noqa: SLF001
    P = instance.aggregators
    owners, amounts = [], []
    for u in range(len(units.weight)):
        if granularity == "unit":
            owners.append(max(range(P), key=lambda a: pe.value(m.y[u, a])))
            amounts.append(int(units.weight[u]))
            continue
        q = {a: round(pe.value(m.q[u, a])) for a in range(P) if pe.value(m.y[u, a]) > 0.5}
        q[max(q, key=lambda a: q[a])] += int(units.weight[u]) - sum(q.values())  # bytes left on an absent owner
        first = max(q, key=lambda a: pe.value(m.f[u, a]))
        last = max(q, key=lambda a: pe.value(m.l[u, a]))
        order = [first] + [a for a in q if a not in (first, last)] + ([last] if last != first else [])
        owners += order
        amounts += [q[a] for a in order]
    return aligned_sequence(instance, units, owners, amounts)
