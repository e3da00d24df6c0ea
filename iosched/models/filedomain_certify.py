"""A certificate in integers that no file-domain partition takes less than a value.

The MILPs' bounds come from floating-point solvers whose tolerances can put them a little above
the optimum (:mod:`iosched.models.filedomain` deflates them by BOUND_SLACK for that), so a MILP's
proved optimum never meets its bound within 10^-9. :func:`certify` replaces that deflated bound,
where it can, by an exact one: for a value v (the evaluated time of the best solution found), it
asks whether any partition has every term of its time <= T, the float below v, in an integer model
solved by CP-SAT (integer arithmetic, no tolerance). "Infeasible" proves that every partition
takes more than T, hence at least v (the evaluator's terms are floats): v is then a bound valid
for every solution and the solution is optimal with gap 0; "feasible" gives domains that take
less than v.

The model is the segment model of :mod:`iosched.models.filedomain_segments` (its argument that it
is exact for every solution is there) at the fixed time T, every row in integers of the
evaluator's arithmetic (:mod:`iosched.models.filedomain_bounds`): per lock sequence a path of
segments (whole units between clean cuts), each either whole to one aggregator or split into pieces
of at least two aggregators, each at most once; per aggregator its bytes (whole segments' bytes and
pieces) within its capacity at T, per node within the node's; per sequence its runs Y (whole
segments and pieces) and dirty cuts Y - Z (Z its segments) under its lock staircase at T
(:func:`iosched.models.filedomain_relax.lock_table`). Aggregators here are bins of their own (no
node merging) and interchangeable ones are ordered by bytes. Where no staircase allows a dirty
cut, no segment is split and the model is whole segments only, which CP-SAT settles by propagation
where the unit-level byte model (``engine=cpsat``) branches over symmetric owners: on the library's
token-1 (9 blocks, 35 aggregators) the proof at its optimum takes a small fraction of that model's
time here (benchmarks/speed.md, constants).
"""

from __future__ import annotations

import numpy as np

from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains
from iosched.instances.filedomain import FileDomainInstance
from iosched.models import filedomain_relax as relax
from iosched.models.filedomain_bounds import Capacities, caps_at, next_down, rates
from iosched.models.filedomain_segments import lay_pieces, sequences
from iosched.models.filedomain_units import OutOfTime, aggregator_classes, from_sequence, lock_units, ticking
from iosched.solvers import Deadline

MAX_CERTIFY_COLUMNS = 60_000  # variables of the certificate's model: more is not built


def certificate_columns(instance: FileDomainInstance, units=None) -> int:
    """Variables of :func:`strict_segments` at most (a split column pair per segment and aggregator)."""
    units = units or lock_units(instance, 10**6)
    return sum(len(s) * (len(s) + 1) // 2 for s in units.sequences) * (1 + 3 * instance.aggregators)


def strict_segments(instance: FileDomainInstance, T: float, deadline: Deadline | None = None):
    """The segment model with every term of the time <= T (s) as integer rows (module docstring):
    (CP-SAT model, what :func:`read` needs), or None when a counting argument alone shows there is no
    point (a server's data and one grant over T, the token servers' floor, the data over all
    capacities). Raises ParameterError past MAX_CERTIFY_COLUMNS, OutOfTime once ``deadline`` passes."""
    from ortools.sat.python import cp_model

    units = lock_units(instance, 10**6)
    if certificate_columns(instance, units) > MAX_CERTIFY_COLUMNS:
        raise ParameterError(f"the certificate's model would have over {MAX_CERTIFY_COLUMNS} variables")
    bw = instance.bandwidth
    P = instance.aggregators
    if instance.locking == "token" and float((instance.server_bytes() / rates(bw.server)).max()) > T:
        return None
    caps = Capacities(instance)
    if caps.total(T) < instance.data_bytes:
        return None
    seqs = sequences(instance, units)
    tables = [relax.lock_table(instance, relax.Sequence(s.weight, s.base), T,
                               min(int(s.weight.sum()), P * len(s.weight), 2**31)) for s in seqs]
    if any(t is None for t in tables):
        return None
    cap = [int(c) for c in caps.aggregators(T)]
    m = cp_model.CpModel()
    load: list[list] = [[] for _ in range(P)]
    handles = []
    for k, (seq, (ymax, emax, cmax1)) in enumerate(zip(seqs, tables)):
        n, W = len(seq.weight), seq.bounds
        split_ok = emax is None or max(emax) > 0
        out: list[list] = [[] for _ in range(n + 1)]
        into: list[list] = [[] for _ in range(n + 1)]
        runs, segs, mine = [], [], {}
        for i in ticking(range(n), deadline):
            for j in range(i + 1, n + 1):
                size = int(W[j] - W[i])
                z = m.new_bool_var(f"z{k}_{i}_{j}")
                out[i].append(z)
                into[j].append(z)
                segs.append(z)
                whole = {a: m.new_bool_var(f"w{k}_{i}_{j}_{a}") for a in range(P) if cap[a] >= size}
                for a, v in whole.items():
                    runs.append(v)
                    load[a].append(size * v)
                parts = list(whole.values())
                pieces = {}
                if split_ok and size >= 2:
                    s = m.new_bool_var(f"s{k}_{i}_{j}")
                    parts.append(s)
                    for a in range(P):
                        if cap[a] == 0:
                            continue
                        y = m.new_bool_var(f"y{k}_{i}_{j}_{a}")
                        x = m.new_int_var(0, min(size - 1, cap[a]), f"x{k}_{i}_{j}_{a}")
                        m.add(x >= y)
                        m.add(x <= min(size - 1, cap[a]) * y)
                        m.add_implication(y, s)
                        pieces[a] = (y, x)
                        runs.append(y)
                        load[a].append(x)
                    m.add(sum(x for _, x in pieces.values()) == size * s)
                    m.add(sum(y for y, _ in pieces.values()) >= 2 * s)
                m.add(sum(parts) == z)
                mine[i, j] = (z, whole, pieces)
        m.add(sum(out[0]) == 1)
        for p in range(1, n):
            m.add(sum(out[p]) == sum(into[p]))
        Y = m.new_int_var(1, ymax, f"runs{k}")
        m.add(Y == sum(runs))
        dirty = Y - sum(segs)
        if emax is None:
            m.add(Y - 1 + dirty <= cmax1)
        else:
            top = m.new_int_var(0, max(emax), f"dirty_max{k}")
            m.add_element(Y - 1, emax, top)
            m.add(dirty <= top)
        handles.append((seq, mine))
    B = []
    for a in range(P):
        b = m.new_int_var(0, cap[a], f"B{a}")
        m.add(b == sum(load[a]))
        B.append(b)
    if bw.node is not None:
        node_rates = rates(bw.node)
        for node in range(instance.nodes):
            members = [a for a in range(P) if instance.aggregator_nodes[a] == node]
            c = int(caps_at(node_rates[node:node + 1], T, instance.data_bytes)[0])
            if members and c < sum(cap[a] for a in members):
                m.add(sum(B[a] for a in members) <= c)
    for group in aggregator_classes(instance):
        for a, a_next in zip(group, group[1:]):
            m.add(B[a] >= B[a_next])
    return m, (units, handles)


def read(instance: FileDomainInstance, solver, built) -> Domains:
    """Domains from a point of :func:`strict_segments`: per sequence its segments in order, a split
    segment's pieces with the previous segment's owner first, laid out over the units."""
    units, handles = built
    per_unit: list[list[tuple[int, int]]] = [[] for _ in range(len(units.weight))]
    ident = np.arange(instance.aggregators)
    for seq, mine in handles:
        n, W = len(seq.weight), seq.bounds
        at, last = 0, -1
        while at < n:
            j = next(j for j in range(at + 1, n + 1) if solver.value(mine[at, j][0]))
            _, whole, pieces = mine[at, j]
            owner = [a for a, v in whole.items() if solver.value(v)]
            if owner:
                owners, amounts = owner[:1], [int(W[j] - W[at])]
            else:
                got = sorted(((a, solver.value(x)) for a, (y, x) in pieces.items() if solver.value(y)),
                             key=lambda p: p[0] != last)
                owners, amounts = [a for a, _ in got], [int(b) for _, b in got]
            last = owners[-1]
            lay_pieces(per_unit, seq, at, owners, amounts, ident)
            at = j
    owners = [a for unit in per_unit for a, _ in unit]
    amounts = [b for unit in per_unit for _, b in unit]
    return from_sequence(instance, owners, amounts)


def certify(instance: FileDomainInstance, value: float, seconds: float, deadline: Deadline | None = None):
    """Whether some partition takes less than ``value`` (s, an evaluated time), by
    :func:`strict_segments` at the float below it, solved by CP-SAT (one worker, at most ``seconds``):
    ('infeasible', None): none does, so ``value`` is a bound valid for every solution, exactly;
    ('feasible', domains): these take less; ('unknown', None): undecided in time; ('skipped', None):
    the model is too large (MAX_CERTIFY_COLUMNS) or ``deadline`` passed while it was built."""
    from ortools.sat.python import cp_model

    try:
        built = strict_segments(instance, next_down(value), deadline)
    except (ParameterError, OutOfTime):
        return "skipped", None
    if built is None:
        return "infeasible", None
    model, handles = built
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_time_in_seconds = max(seconds, 0.01)
    code = solver.solve(model)
    if code == cp_model.INFEASIBLE:
        return "infeasible", None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "feasible", read(instance, solver, handles)
    return "unknown", None
