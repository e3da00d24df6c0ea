"""The exact allocation MILP over DFRA's remapping space (``milp-dfra-space``), and bounds valid for every
allocation (the MILP over every allocation is :mod:`iosched.models.forwarding_every`).

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
  exactly which jobs are on f. Running jobs and jobs with no dedicated option are always
  there; the movable ones fall into types (same rate cap on f, same traits), whose members
  are interchangeable for every rate on f. A configuration s of f is a count per type; the
  model enumerates them all and precomputes, with the evaluator's own
  :func:`~iosched.evaluate.forwarding.node_rates`, every user's effective rate in each.
  z[f, s] in [0, 1] with sum_s z[f, s] = 1 and, per type, sum_s count_t(s) z[f, s] =
  sum_{j of type t} y[j, default]. When every type of f has one member, binary y leaves
  z = 1 on the configuration actually chosen as the only solution (z stays continuous);
  otherwise z is binary.

T_j >= sum_s t[j, f, s] z[f, s] for every node f of j (the barrier: its slowest part; for a
type of several members the row is switched off by a big-M when j itself has moved), and
T_j >= sum_o t[j, o] y[j, o]; running jobs the same on their nodes. Minimising a positive
combination of the T's makes each equal to the evaluator's value, so the objective of any
integer solution is exactly the evaluator's score of the allocation it encodes (the tests
check this). The pool: sum_{j, o of bandwidth b} k_o y[j, o] <= the healthy idle nodes of
bandwidth b. The price is prod_t (members_t + 1) configurations per node
(``max_configurations`` bounds it).

:func:`lower_bound` is valid for every allocation the evaluator accepts (proof in its
docstring): each job at most its links' speed, all of them within the capacity of the
nodes not dedicated to running jobs, solved in closed form (water-filling on sqrt(w_j)).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace
from typing import Annotated

from iosched import lazy
from iosched.core import METHOD_START, MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import (
    OBJECTIVES,
    Allocation,
    alone_time,
    dedicated_time,
    evaluate,
    node_rates,
    node_times,
    running_alone,
)
from iosched.heuristics.forwarding import dfra, fixed, mckp
from iosched.instances.forwarding import ForwardingInstance, even_groups
from iosched.solvers import Deadline, load_profile, solve_pyomo_within
from iosched.validate import Integer, OneOf, choice

pe = lazy.module("pyomo.environ")

MODEL_OBJECTIVES = ("total_io_time", "max_io_time", "total_slowdown")
Configurations = Annotated[int, Integer(1, 10**7)]
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
    """A lower bound on ``objective`` valid for every allocation the evaluator accepts.

    Proof. Let job j to place (volume V_j, n_j compute nodes) have c_f of them on node f, at effective rate
    r_f there. Its time is max_f (V_j c_f / n_j) / r_f >= V_j / R_j with R_j = sum_f r_f (a largest ratio
    is at least the ratio of the sums). Each r_f is at most the part's links c_f io_j B_c,j / n_j (the
    slowdown only divides it), so R_j <= io_j B_c,j, and at most f's capacity, so R_j <= min(n_j, U) C_max
    over the U usable nodes (those not dedicated to a running job) of largest capacity C_max. On every node
    the max-min fair shares sum to at most its capacity, so sum_j R_j <= C, the usable nodes' total
    capacity. Running jobs' added time is never negative (another user never raises a share nor lowers a
    slowdown). Hence total_io_time >= min sum_j V_j / R_j under those constraints, a convex program solved
    in closed form (:func:`_waterfill`); total_slowdown the same with weights V_j / alone_j; max_io_time >=
    max(max_j V_j / cap_j, sum_j V_j / C). No assumption beyond the evaluator's model; tight when every job
    can run alone at its links' speed (the tests check it against enumeration).
    """
    if objective == "forwarding_nodes_used":
        return float(max(len(instance.busy), 1))
    if objective not in MODEL_OBJECTIVES:
        return None
    banned = {f for r in instance.running if r.dedicated for f, _ in r.forwarding}
    usable = [instance.capacity(f.id) for f in instance.forwarding_nodes if f.id not in banned]
    total, best = sum(usable), max(usable)
    caps = [min(j.io_nodes * j.node_bandwidth, min(j.nodes, len(usable)) * best) for j in instance.jobs]
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
    """A node would need more than ``max_configurations`` co-location configurations."""


@dataclass
class NodeChoices:
    """One default forwarding node: the types of movable jobs crossing it and every configuration.

    Movable jobs of one type (same rate cap on the node, same traits) are interchangeable for
    everyone's rates, so a configuration is a count per type. ``rates[s][t]`` is the effective
    rate of a member of type t in configuration s (if present); ``fixed[s]`` the time of each
    job always on the node (running, or with no dedicated option).
    """

    types: list[list[str]]  # member job ids per type
    configs: list[tuple[int, ...]]  # count per type
    rates: list[dict[int, float]]
    fixed: list[dict[str, float]]
    counts: dict[str, int]  # movable job -> its compute nodes on this node


@dataclass
class Choices:
    """What the MILP chooses from: dedicated options per job, and per default node its configurations."""

    options: dict[str, list[tuple[float, int, float]]]  # job -> [(bandwidth, k, time)]
    pool: dict[float, list[int]]  # bandwidth -> healthy idle node ids
    nodes: dict[int, NodeChoices] = field(default_factory=dict)
    running_const: dict[str, float] = field(default_factory=dict)  # running job -> time on nodes no choice touches


def choices(instance: ForwardingInstance, max_configurations: int = 20_000,
            deadline: Deadline | None = None) -> Choices:
    """The finite choice set of the scope, every rate and time precomputed with the evaluator's functions
    (TimeoutError once ``deadline`` has passed: 120,000 configurations take about 16 s)."""
    pool: dict[float, list[int]] = {}
    for f in instance.idle_healthy:
        pool.setdefault(instance.node[f].bandwidth, []).append(f)
    default = {j.id: instance.default_groups(j) for j in instance.jobs}
    crossing: dict[int, dict[str, int]] = {}  # f -> job to place -> its compute nodes on f
    for j in instance.jobs:
        for f, c in default[j.id]:
            crossing.setdefault(f, {})
            crossing[f][j.id] = crossing[f].get(j.id, 0) + c
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
    for f, on in crossing.items():
        if deadline is not None and deadline.expired():
            raise TimeoutError(f"the co-location configurations of {len(out.nodes)} of {len(crossing)} forwarding "
                               f"nodes were computed when the time limit of {deadline.seconds:g} s was reached")
        types: dict[tuple, list[str]] = {}
        for jid, c in on.items():
            if options[jid]:
                j = jobs[jid]
                types.setdefault((c * j.io_nodes / j.nodes * j.node_bandwidth, instance.traits(j)), []).append(jid)
        members = list(types.values())
        size = math.prod(len(m) + 1 for m in members)
        if size > max_configurations:
            raise ModelTooLarge(f"forwarding node {f} is crossed by {sum(map(len, members))} jobs that could move, "
                                f"in {len(members)} types: {size} co-location configurations exceed "
                                f"max_configurations={max_configurations}")
        fixed_users = on_node.get(f, []) + [(jobs[jid], c) for jid, c in on.items() if not options[jid]]
        node = NodeChoices(members, [], [], [], {jid: on[jid] for m in members for jid in m})
        for config in itertools.product(*[range(len(m) + 1) for m in members]):
            users = list(fixed_users)
            owner = [None] * len(users)
            for t, k in enumerate(config):
                users += [(jobs[jid], on[jid]) for jid in members[t][:k]]
                owner += [t] * k
            rates = node_rates(instance, f, users)
            node.configs.append(config)
            node.rates.append({owner[u]: rates[u] for u in range(len(users)) if owner[u] is not None})
            node.fixed.append({u.id: u.volume * c / u.nodes / rates[k]
                               for k, (u, c) in enumerate(users) if owner[k] is None})
        out.nodes[f] = node
    for r in instance.running:
        rest = dict.fromkeys(f for f, _ in instance.groups(r) if f not in crossing)
        out.running_const[r.id] = max((node_times(instance, f, on_node[f])[[u.id for u, _ in on_node[f]].index(r.id)]
                                       for f in rest), default=0.0)
    return out


def build_milp(instance: ForwardingInstance, objective: str = "total_io_time", max_configurations: int = 20_000,
               data: Choices | None = None) -> pe.ConcreteModel:
    """The choice MILP of the module docstring, minimising ``objective`` (total_io_time, max_io_time
    or total_slowdown) exactly as the evaluator scores it, over the scope."""
    choice("objective", objective, MODEL_OBJECTIVES, error=ParameterError)
    data = data or choices(instance, max_configurations)
    m = pe.ConcreteModel(name=f"forwarding-{objective}")
    m.choices = data
    jobs = [j.id for j in instance.jobs]
    by_id = {j.id: j for j in instance.jobs}
    m.J = pe.Set(initialize=jobs, ordered=True)
    m.O = pe.Set(initialize=[(jid, o) for jid in jobs for o in range(len(data.options[jid]) + 1)], dimen=2,
                 ordered=True, doc="(job, option): 0 is the default mapping, o >= 1 a dedicated option")
    m.y = pe.Var(m.O, domain=pe.Binary, doc="job takes this option")
    m.one = pe.Constraint(m.J, rule=lambda m, jid: sum(m.y[jid, o] for o in range(len(data.options[jid]) + 1)) == 1)
    m.B = pe.Set(initialize=sorted(data.pool), ordered=True)
    def pool_rule(m, b):
        terms = [k * m.y[jid, o + 1] for jid in jobs for o, (bw, k, _) in enumerate(data.options[jid]) if bw == b]
        return sum(terms) <= len(data.pool[b]) if terms else pe.Constraint.Skip

    m.pool = pe.Constraint(m.B, rule=pool_rule, doc="dedicated nodes of each bandwidth within the idle pool")
    m.F = pe.Set(initialize=list(data.nodes), ordered=True)
    m.C = pe.Set(initialize=[(f, s) for f in data.nodes for s in range(len(data.nodes[f].configs))], dimen=2,
                 ordered=True)
    m.z = pe.Var(m.C, domain=pe.UnitInterval, doc="node f is in configuration s")
    for f, node in data.nodes.items():
        if any(len(t) > 1 for t in node.types):  # counts of interchangeable jobs: only integral z is exact
            for s in range(len(node.configs)):
                m.z[f, s].domain = pe.Binary
    m.one_config = pe.Constraint(m.F, rule=lambda m, f: sum(m.z[f, s] for s in range(len(data.nodes[f].configs)))
                                 == 1)
    m.link = pe.ConstraintList(doc="each type's count in the configuration = its members on their default mapping")
    for f, node in data.nodes.items():
        for t, members in enumerate(node.types):
            m.link.add(sum(cfg[t] * m.z[f, s] for s, cfg in enumerate(node.configs) if cfg[t])
                       == sum(m.y[jid, 0] for jid in members))
    running = [r.id for r in instance.running if any(r.id in data.nodes[f].fixed[0] for f in data.nodes)]
    m.R = pe.Set(initialize=running, ordered=True)
    m.T = pe.Var(m.J, domain=pe.NonNegativeReals, doc="I/O time of a job to place (s)")
    m.Tr = pe.Var(m.R, domain=pe.NonNegativeReals, doc="I/O time of a running job (s)")
    m.times = pe.ConstraintList(doc="a job's time is at least each of its parts' and its option's")
    for f, node in data.nodes.items():
        for u in node.fixed[0]:
            var = m.T[u] if u in data.options else m.Tr[u]
            m.times.add(var >= sum(t[u] * m.z[f, s] for s, t in enumerate(node.fixed)))
        for t, members in enumerate(node.types):
            for jid in members:
                part = by_id[jid].volume * node.counts[jid] / by_id[jid].nodes
                terms = [(s, part / r[t]) for s, r in enumerate(node.rates) if t in r]
                if len(members) == 1:
                    m.times.add(m.T[jid] >= sum(v * m.z[f, s] for s, v in terms))
                else:  # the type is present without j: the big-M switches the row off when j has moved
                    big = max(v for _, v in terms)
                    m.times.add(m.T[jid] >= sum(v * m.z[f, s] for s, v in terms) - big * (1 - m.y[jid, 0]))
    for jid in jobs:
        if data.options[jid]:
            m.times.add(m.T[jid] >= sum(t * m.y[jid, o + 1] for o, (_, _, t) in enumerate(data.options[jid])))
    for rid in running:
        m.times.add(m.Tr[rid] >= data.running_const[rid])
    before = running_alone(instance)
    for jid in jobs:  # valid in the scope, and they give the LP relaxation each job's best case
        m.T[jid].setlb(_fastest(data, by_id[jid]))
    for rid in running:
        m.Tr[rid].setlb(before[rid])
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


def _fastest(data: Choices, job) -> float:
    """A job's least time over the scope: its fastest dedicated option, or on its default mapping the
    slowest of its nodes' best configurations, whichever is less."""
    default = 0.0
    for node in data.nodes.values():
        for t, members in enumerate(node.types):
            if job.id in members:
                part = job.volume * node.counts[job.id] / job.nodes
                default = max(default, min(part / r[t] for r in node.rates if t in r))
        if job.id in node.fixed[0]:
            default = max(default, min(times[job.id] for times in node.fixed))
    return min([default] + [t for _, _, t in data.options[job.id]])


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


def set_start(instance: ForwardingInstance, m: pe.ConcreteModel, allocation: Allocation) -> pe.ConcreteModel:
    """``allocation`` as the model's values of y and z, a MIP start (see :func:`iosched.solvers.solve_pyomo`):
    a job on its default mapping takes option 0; a dedicated job the kept option of its nodes' bandwidth with
    the most nodes up to its own (never slower: an option is dropped only when a smaller one is as fast);
    a job outside the encoding (mixed bandwidths, another shared mapping) is left without values, and so
    are the nodes it crosses: the solver completes a partial start. Returns ``m``."""
    data: Choices = m.choices
    default_on = {}
    for j in instance.jobs:
        groups = allocation.mapping[j.id]
        if j.id not in allocation.dedicated:
            if groups == instance.default_groups(j):
                default_on[j.id] = 1
            continue
        nodes = {f for f, _ in groups}
        bws = {instance.node[f].bandwidth for f in nodes}
        kept = [o for o, (bw, k, _) in enumerate(data.options[j.id]) if bws == {bw} and k <= len(nodes)]
        if kept:
            default_on[j.id] = 0
            for o in range(len(data.options[j.id]) + 1):
                m.y[j.id, o].value = 1 if o == kept[-1] + 1 else 0
    for jid, on in default_on.items():
        if on:
            for o in range(len(data.options[jid]) + 1):
                m.y[jid, o].value = 1 if o == 0 else 0
    for f, node in data.nodes.items():
        if all(jid in default_on for members in node.types for jid in members):
            config = tuple(sum(default_on[jid] for jid in members) for members in node.types)
            for s, c in enumerate(node.configs):
                m.z[f, s].value = 1 if c == config else 0
    return m


# Pyomo builds the choice MILP in about 0.11 ms per variable and hands it to HiGHS (outside HiGHS's
# time limit) in about 1.9 times its build time (126,000 variables: 14 s and 26 s, random:0:2000)
SECONDS_PER_VARIABLE = 3.5e-4  # build and handover together, to skip a model that cannot make it
HANDOVER = 2.5


def too_slow_to_build(variables: int, deadline: Deadline, limit: float) -> str | None:
    """Why a MILP of ``variables`` variables would not be built and handed to HiGHS (SECONDS_PER_VARIABLE
    each) in what is left of the method's ``limit`` (s), naming the estimate; None when it would."""
    if variables * SECONDS_PER_VARIABLE <= deadline.remaining():
        return None
    return (f"the MILP's {variables} variables would take about {variables * SECONDS_PER_VARIABLE:.3g} s to build "
            f"and hand to the solver; {deadline.remaining():.3g} s of the {limit:g} s limit were left")


# --- the start: what a time-limited MILP hands back when it has nothing better -------------------------

STARTS_IN_SCOPE = {"fixed": fixed, "dfra": dfra, "mckp": mckp}  # fast, always feasible, inside DFRA's space
START_NAMES = {"fixed": "the fixed mapping", "dfra": "DFRA's allocation", "mckp": "MCKP's allocation",
               "round-robin": "the round-robin mapping"}


@dataclass
class Start:
    """The best heuristic allocation by a MILP's objective: ``value`` is the evaluator's score of it."""

    heuristic: str  # the method's name (fixed, dfra, mckp, round-robin)
    allocation: Allocation
    value: float

    def summary(self) -> dict:
        return {"heuristic": self.heuristic, "value": self.value}

    def output(self, why: str, info: dict, status: Status = Status.TIME_LIMIT,
               bound: float | None = None) -> MethodOutput:
        """This allocation as the method's result, ``info["incumbent"]`` saying where it came from and ``why``."""
        info["incumbent"] = f"{START_NAMES[self.heuristic]} (the best heuristic start): {why}"
        return MethodOutput(self.allocation, status, bound=bound, info=info)

    def settle(self, instance: ForwardingInstance, objective: str, out, read, status: Status, info: dict,
               bound: float | None = None) -> MethodOutput:
        """The result once HiGHS has run (``out``): its allocation (``read()``) with ``status``, unless it has
        none or scores worse than this start (ties, within 1e-9, go to HiGHS); then this start, never called
        optimal (TIME_LIMIT where HiGHS stopped at its limit, else FEASIBLE); ERROR where HiGHS failed with
        nothing."""
        stopped = out.status == Status.TIME_LIMIT
        if not out.has_solution:
            if stopped:
                return self.output("the solver found no allocation within the time limit", info, bound=bound)
            return MethodOutput(None, Status.ERROR, bound=bound, info=info)
        alloc = read()
        value = getattr(evaluate(instance, alloc), objective)
        if self.value < value - 1e-9 * abs(value):
            return self.output(f"the solver's allocation scores {value:.6g}, worse", info,
                               Status.TIME_LIMIT if stopped else Status.FEASIBLE, bound)
        return MethodOutput(alloc, status, bound=bound, info=info)


def best_start(instance: ForwardingInstance, objective: str, deadline: Deadline, heuristics: dict) -> Start:
    """The best by ``objective`` (the evaluator's score) of ``heuristics`` (name -> method), each run within
    ``deadline`` (past it they keep jobs' default mappings, and the rest are skipped)."""
    origin = METHOD_START.get()  # a method called here counts its time_limit from there, as this one does
    limit = deadline.end - (time.perf_counter() if origin is None else origin)
    best = None
    for name, heuristic in heuristics.items():
        alloc = heuristic(instance, time_limit=max(limit, 0.0)).solution
        value = getattr(evaluate(instance, alloc), objective)
        if best is None or value < best.value:
            best = Start(name, alloc, value)
        if deadline.expired():
            break
    return best


def _milp(instance: ForwardingInstance, objective: str, profile: str, max_configurations: int) -> MethodOutput:
    # HiGHS's presolve is off for this model: on random:1:1000 (850,000 nonzeros, the rows T >= sum_s t z over
    # every configuration) it took 15 s to remove 1 % of them, and the whole solve 45 s; without it 13 s
    prof = replace(load_profile(profile), highs={**load_profile(profile).highs, "presolve": "off"})
    deadline = Deadline.for_method(prof.time_limit)  # the whole method: configurations, start, build, solve
    try:
        data = choices(instance, max_configurations, deadline)  # ModelTooLarge (a ParameterError) refuses
    except TimeoutError as e:
        return MethodOutput(None, Status.TIME_LIMIT, info={"error": str(e), "scope": SCOPE})
    start = best_start(instance, objective, deadline, STARTS_IN_SCOPE)
    info = {"objective": objective, "scope": SCOPE, "start": start.summary()}
    configurations = sum(len(n.configs) for n in data.nodes.values())
    variables = configurations + sum(len(o) + 2 for o in data.options.values())
    if (late := too_slow_to_build(variables, deadline, prof.time_limit)) is not None:
        return start.output("the MILP was not built", {**info, "error": late})
    m, out, note = solve_pyomo_within(
        lambda: set_start(instance, build_milp(instance, objective, max_configurations, data), start.allocation),
        prof, deadline, HANDOVER, warm=True)
    if out is None:
        return start.output("the MILP was not solved", {**info, "error": f"the MILP was not solved: {note}"})
    info["start"] = {**info["start"], "solver": prof.solver, **{f"solver_{k}": v for k, v in (out.start or {}).items()}}
    info.update({"model_status": out.status.value, "model_bound": out.bound, "model_objective": out.objective,
                 "model_gap": out.gap, "solver_time_s": out.wall_time_s,
                 "options": sum(len(o) for o in m.choices.options.values()), "configurations": configurations,
                 "message": out.message})
    # optimal over the scope is not optimal over every allocation: the result is FEASIBLE (or TIME_LIMIT)
    status = Status.TIME_LIMIT if out.status == Status.TIME_LIMIT else Status.FEASIBLE
    result = start.settle(instance, objective, out, lambda: read_allocation(instance, m), status, info)
    if result.solution is not None:
        info["dedicated_nodes"] = {jid: len({f for f, _ in result.solution.mapping[jid]})
                                   for jid in sorted(result.solution.dedicated)}
    return result


@register("forwarding", "milp-dfra-space", objective="total_io_time",
          exact_over="DFRA's remapping space: default mapping or k dedicated nodes per job")
def milp_dfra_space(instance: ForwardingInstance,
                    objective: Annotated[str, OneOf(MODEL_OBJECTIVES)] = "total_io_time", profile: str = "default",
                    max_configurations: Configurations = 20_000) -> MethodOutput:
    """The exact choice MILP over DFRA's remapping space (HiGHS); ``info`` has the model's status and bound.

    Once the configurations are computed, a start, the best of fixed, DFRA and MCKP by ``objective``, within
    the same time limit: when the model is not built or solved in time, or HiGHS has no better allocation,
    the method returns that start (``info["incumbent"]`` says why)."""
    return _milp(instance, objective, profile, max_configurations)
