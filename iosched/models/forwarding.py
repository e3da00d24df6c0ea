"""The exact allocation MILP over DFRA's remapping space, and bounds valid for every allocation.

**Scope.** Each job to place either keeps its default mapping (shared with whoever else is
on those forwarding nodes) or gets k dedicated healthy idle nodes of one bandwidth, its
compute nodes split evenly -- the allocations DFRA itself can make (and fixed and MCKP
too). Round-robin and other shared remappings, splits other than even, dedicated sets of
mixed bandwidths and shared use of pool nodes lie outside it: the model's optimum is the
best allocation *in this scope*, not a bound for every allocation.

**Linearisation, exact over the scope.** With binary choices y[j, o] (o = default, or a
dedicated option (bandwidth b, k)), a job's I/O time is

* for a dedicated option: a constant, :func:`iosched.evaluate.forwarding.dedicated_time`,
  precomputed (options that are not strictly faster than a smaller k of the same bandwidth
  are dropped: they cost more pool for the same time);
* for the default mapping: on each default forwarding node f it crosses, a function of
  exactly which jobs are on f. For every f the model enumerates the configurations S (the
  subsets of the movable jobs whose default mapping crosses f; running jobs and jobs with
  no dedicated option are always there) and precomputes, with the evaluator's own
  :func:`~iosched.evaluate.forwarding.node_times`, the time of every job on f under S.
  Continuous z[f, S] >= 0 with sum_S z[f, S] = 1 and, for each movable j on f,
  sum_{S containing j} z[f, S] = y[j, default]: for binary y the only solution puts z = 1
  on the configuration actually chosen.

T_j >= sum_S t[j, f, S] z[f, S] for every node f of j (the barrier: its slowest part), and
T_j >= sum_o t[j, o] y[j, o]; running jobs the same on their nodes. Minimising a positive
combination of the T's makes each equal to the evaluator's value, so the objective of any
integer solution is exactly the evaluator's score of the allocation it encodes (the tests
check this). The pool: sum_{j, o of bandwidth b} k_o y[j, o] <= the healthy idle nodes of
bandwidth b. The price is 2^m configurations on a node crossed by m movable jobs
(``max_movable`` bounds m).

:func:`lower_bound` is valid for every allocation the evaluator accepts: job j's time is at
least volume_j / R_j, its total rate R_j at most its own links io_j B_c,j (and its nodes'
capacity), the sum of all R_j at most the total capacity of all forwarding nodes; the
convex program min sum w_j / R_j is solved in closed form (water-filling on sqrt(w_j)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pyomo.environ as pe

from iosched.core import MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import (
    OBJECTIVES,
    Allocation,
    alone_time,
    dedicated_time,
    node_times,
    running_alone,
)
from iosched.instances.forwarding import ForwardingInstance, even_groups
from iosched.solvers import Deadline, load_profile, solve_pyomo
from iosched.validate import choice, integer

MODEL_OBJECTIVES = ("total_io_time", "max_io_time", "total_slowdown")
SCOPE = ("each job to place keeps its default mapping or gets k dedicated healthy idle nodes of one "
         "bandwidth, compute nodes split evenly (DFRA's remapping space)")


# --- bounds valid for every allocation ---------------------------------------------------------------


def _waterfill(weights: list[float], caps: list[float], capacity: float) -> float:
    """min sum w_j / R_j  s.t.  sum R_j <= capacity, 0 < R_j <= cap_j (closed form by KKT:
    R_j = min(cap_j, theta sqrt(w_j)), theta set so the rates use the capacity)."""
    if sum(caps) <= capacity:
        return sum(w / c for w, c in zip(weights, caps))
    order = sorted(range(len(caps)), key=lambda i: caps[i] / math.sqrt(weights[i]))  # saturate first
    left, roots = capacity, sum(math.sqrt(w) for w in weights)
    rates = [0.0] * len(caps)
    for pos, i in enumerate(order):
        theta = left / roots
        if caps[i] <= theta * math.sqrt(weights[i]):
            rates[i] = caps[i]
            left -= caps[i]
            roots -= math.sqrt(weights[i])
        else:
            for k in order[pos:]:
                rates[k] = theta * math.sqrt(weights[k])
            break
    return sum(w / r for w, r in zip(weights, rates))


def lower_bound(instance: ForwardingInstance, objective: str = "total_io_time") -> float | None:
    """A lower bound on ``objective`` valid for every allocation (see the module docstring)."""
    if objective == "forwarding_nodes_used":
        return float(max(len(instance.busy), 1))
    if objective not in MODEL_OBJECTIVES:
        return None
    total = sum(instance.capacity(f.id) for f in instance.forwarding_nodes)
    best = max(instance.capacity(f.id) for f in instance.forwarding_nodes)
    nf = len(instance.forwarding_nodes)
    caps = [min(j.io_nodes * j.node_bandwidth, min(j.nodes, nf) * best) for j in instance.jobs]
    vols = [j.volume for j in instance.jobs]
    if objective == "max_io_time":
        return max(max(v / c for v, c in zip(vols, caps)), sum(vols) / total)
    if objective == "total_slowdown":
        vols = [v / alone_time(instance, j) for v, j in zip(vols, instance.jobs)]
    return _waterfill(vols, caps, total)


def bounds(instance: ForwardingInstance) -> dict:
    """Every bound valid for all allocations, by objective."""
    return {name: lower_bound(instance, name) for name in OBJECTIVES}


# --- the choice model -----------------------------------------------------------------------------------


class ModelTooLarge(ParameterError):
    """The enumeration would pass ``max_movable`` jobs on one node (2^m configurations)."""


@dataclass
class Choices:
    """What the MILP chooses from: dedicated options per job, and per default node its configurations."""

    options: dict[str, list[tuple[float, int, float]]]  # job -> [(bandwidth, k, time)]
    pool: dict[float, list[int]]  # bandwidth -> healthy idle node ids
    nodes: dict[int, dict] = field(default_factory=dict)  # f -> {"movable": [ids], "times": [{job: t}]}
    running_const: dict[str, float] = field(default_factory=dict)  # running job -> time on nodes no choice touches


def choices(instance: ForwardingInstance, max_movable: int = 14) -> Choices:
    """The finite choice set of the scope, every time precomputed with the evaluator's functions."""
    pool: dict[float, list[int]] = {}
    for f in instance.idle_healthy:
        pool.setdefault(instance.node[f].bandwidth, []).append(f)
    default = {j.id: instance.default_groups(j) for j in instance.jobs}
    crossing: dict[int, list[str]] = {}
    for j in instance.jobs:
        for f, _ in default[j.id]:
            crossing.setdefault(f, []).append(j.id)
    running_on: dict[int, dict[str, tuple]] = {}  # f -> running job -> (job, its compute nodes on f)
    for r in instance.running:
        for f, c in instance.groups(r):
            on_f = running_on.setdefault(f, {})
            on_f[r.id] = (r, on_f.get(r.id, (r, 0))[1] + c)
    on_node = {f: list(d.values()) for f, d in running_on.items()}
    options: dict[str, list[tuple[float, int, float]]] = {}
    for j in instance.jobs:
        alone_there = all(len(crossing[f]) == 1 and f not in on_node for f, _ in default[j.id])
        own = max(node_times(instance, f, [(j, c)])[0] for f, c in default[j.id]) if alone_there else math.inf
        opts = []
        for bw, ids in pool.items():
            best = own
            for k in range(1, min(len(ids), j.nodes) + 1):
                t = dedicated_time(j, k, bw)
                if t < best * (1 - 1e-12):
                    opts.append((bw, k, t))
                    best = t
        options[j.id] = opts
    out = Choices(options, pool)
    jobs = {j.id: j for j in instance.jobs}
    for f, ids in crossing.items():
        movable = [jid for jid in ids if options[jid]]
        if len(movable) > max_movable:
            raise ModelTooLarge(f"forwarding node {f} is crossed by {len(movable)} jobs that could move: "
                                 f"2^{len(movable)} co-location configurations exceed max_movable={max_movable}")
        counts = {}
        for jid in ids:
            counts[jid] = sum(c for g, c in default[jid] if g == f)
        fixed_users = on_node.get(f, []) + [(jobs[jid], counts[jid]) for jid in ids if jid not in movable]
        times = []
        for mask in range(2 ** len(movable)):
            users = fixed_users + [(jobs[jid], counts[jid]) for b, jid in enumerate(movable) if mask >> b & 1]
            times.append({u.id: t for (u, _), t in zip(users, node_times(instance, f, users))})
        out.nodes[f] = {"movable": movable, "times": times}
    touched = set(crossing)
    for r in instance.running:
        rest = [(f, c) for f, c in instance.groups(r) if f not in touched]
        out.running_const[r.id] = max((node_times(instance, f, on_node[f])[[u.id for u, _ in on_node[f]].index(r.id)]
                                       for f in dict.fromkeys(f for f, _ in rest)), default=0.0)
    return out


def build_milp(instance: ForwardingInstance, objective: str = "total_io_time", max_movable: int = 14,
               data: Choices | None = None) -> pe.ConcreteModel:
    """The choice MILP of the module docstring, minimising ``objective`` (total_io_time, max_io_time
    or total_slowdown) exactly as the evaluator scores it, over the scope."""
    choice("objective", objective, MODEL_OBJECTIVES, error=ParameterError)
    data = data or choices(instance, max_movable)
    m = pe.ConcreteModel(name=f"forwarding-{objective}")
    m.choices = data
    jobs = [j.id for j in instance.jobs]
    m.J = pe.Set(initialize=jobs, ordered=True)
    m.O = pe.Set(initialize=[(jid, o) for jid in jobs for o in range(len(data.options[jid]) + 1)], dimen=2,
                 ordered=True, doc="(job, option): 0 is the default mapping, o >= 1 a dedicated option")
    m.y = pe.Var(m.O, domain=pe.Binary, doc="job takes this option")
    m.one = pe.Constraint(m.J, rule=lambda m, jid: sum(m.y[jid, o] for o in range(len(data.options[jid]) + 1)) == 1)
    m.B = pe.Set(initialize=sorted(data.pool), ordered=True)
    m.pool = pe.Constraint(m.B, rule=lambda m, b: sum(
        k * m.y[jid, o + 1] for jid in jobs for o, (bw, k, _) in enumerate(data.options[jid]) if bw == b)
        <= len(data.pool[b]))
    m.C = pe.Set(initialize=[(f, s) for f in data.nodes for s in range(len(data.nodes[f]["times"]))], dimen=2,
                 ordered=True)
    m.z = pe.Var(m.C, domain=pe.NonNegativeReals, bounds=(0, 1), doc="node f is in configuration S")
    m.F = pe.Set(initialize=list(data.nodes), ordered=True)
    m.one_config = pe.Constraint(m.F, rule=lambda m, f: sum(m.z[f, s] for s in range(len(data.nodes[f]["times"]))) == 1)
    m.link = pe.ConstraintList(doc="a movable job is in the configuration iff it keeps its default mapping")
    for f, node in data.nodes.items():
        for b, jid in enumerate(node["movable"]):
            m.link.add(sum(m.z[f, s] for s in range(len(node["times"])) if s >> b & 1) == m.y[jid, 0])
    running = [r.id for r in instance.running if any(r.id in data.nodes[f]["times"][0] for f in data.nodes)]
    m.R = pe.Set(initialize=running, ordered=True)
    m.T = pe.Var(m.J, domain=pe.NonNegativeReals, doc="I/O time of a job to place (s)")
    m.Tr = pe.Var(m.R, domain=pe.NonNegativeReals, doc="I/O time of a running job (s)")
    m.times = pe.ConstraintList(doc="a job's time is at least each of its parts' and its option's")
    for f, node in data.nodes.items():
        present = {}
        for s, t in enumerate(node["times"]):
            for u, val in t.items():
                present.setdefault(u, []).append((s, val))
        for u, terms in present.items():
            var = m.T[u] if u in data.options else m.Tr[u]
            m.times.add(var >= sum(val * m.z[f, s] for s, val in terms))
    for jid in jobs:
        if data.options[jid]:
            m.times.add(m.T[jid] >= sum(t * m.y[jid, o + 1] for o, (_, _, t) in enumerate(data.options[jid])))
    for rid in running:
        m.times.add(m.Tr[rid] >= data.running_const[rid])
    before = running_alone(instance)
    if objective == "max_io_time":
        m.Tmax = pe.Var(domain=pe.NonNegativeReals)
        m.top = pe.Constraint(m.J, rule=lambda m, jid: m.Tmax >= m.T[jid])
        m.obj = pe.Objective(expr=m.Tmax)
    else:
        jw = {j.id: 1.0 if objective == "total_io_time" else 1 / alone_time(instance, j) for j in instance.jobs}
        rw = {r.id: 1.0 if objective == "total_io_time" else 1 / alone_time(instance, r) for r in instance.running}
        m.obj = pe.Objective(expr=sum(jw[j] * m.T[j] for j in jobs)
                             + sum(rw[r] * (m.Tr[r] - before[r]) for r in running))
    return m


def read_allocation(instance: ForwardingInstance, m: pe.ConcreteModel) -> Allocation:
    """The allocation a solved model encodes (dedicated nodes dealt from each bandwidth class in job order)."""
    data: Choices = m.choices
    free = {b: list(ids) for b, ids in data.pool.items()}
    dedicated = {}
    mapping = {}
    for j in instance.jobs:
        picked = max(range(len(data.options[j.id]) + 1), key=lambda o: pe.value(m.y[j.id, o]))
        if picked == 0:
            mapping[j.id] = instance.default_groups(j)
        else:
            bw, k, _ = data.options[j.id][picked - 1]
            nodes = [free[bw].pop(0) for _ in range(k)]
            dedicated[j.id] = nodes
            mapping[j.id] = even_groups(j.nodes, nodes)
    avoid = not any(instance.node[f].anomalous for groups in mapping.values() for f, _ in groups)
    return Allocation(mapping, frozenset(dedicated), avoid)


def _milp(instance: ForwardingInstance, objective: str, profile: str, max_movable: int) -> MethodOutput:
    choice("objective", objective, MODEL_OBJECTIVES, error=ParameterError)
    integer("max_movable", max_movable, 0, 24, error=ParameterError)
    prof = load_profile(profile)
    deadline = Deadline(prof.time_limit)
    try:
        m = build_milp(instance, objective, max_movable)
    except ModelTooLarge as e:
        return MethodOutput(None, Status.ERROR, info={"error": str(e), "scope": SCOPE})
    configurations = sum(len(n["times"]) for n in m.choices.nodes.values())
    out = solve_pyomo(m, deadline.limit(prof))
    info = {"objective": objective, "scope": SCOPE, "model_status": out.status.value, "model_bound": out.bound,
            "model_objective": out.objective, "model_gap": out.gap, "solver_time_s": out.wall_time_s,
            "options": sum(len(o) for o in m.choices.options.values()), "configurations": configurations,
            "message": out.message}
    if not out.has_solution:
        return MethodOutput(None, Status.TIME_LIMIT if out.status == Status.TIME_LIMIT else Status.ERROR, info=info)
    alloc = read_allocation(instance, m)
    info["dedicated_nodes"] = {jid: len({f for f, _ in alloc.mapping[jid]}) for jid in sorted(alloc.dedicated)}
    # optimal over the scope is not optimal over every allocation: the result is FEASIBLE (or TIME_LIMIT)
    return MethodOutput(alloc, Status.TIME_LIMIT if out.status == Status.TIME_LIMIT else Status.FEASIBLE, info=info)


@register("forwarding", "milp", objective="total_io_time")
def milp(instance: ForwardingInstance, objective: str = "total_io_time", profile: str = "default",
         max_movable: int = 14) -> MethodOutput:
    """The exact choice MILP over DFRA's remapping space (HiGHS); ``info`` has the model's status and bound."""
    return _milp(instance, objective, profile, max_movable)


@register("forwarding", "milp-max", objective="max_io_time")
def milp_max(instance: ForwardingInstance, profile: str = "default", max_movable: int = 14) -> MethodOutput:
    """The choice MILP minimising the largest I/O time of the jobs placed."""
    return _milp(instance, "max_io_time", profile, max_movable)
