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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated

from iosched import lazy
from iosched.core import MethodOutput, RunContext, Status, register
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
from iosched.instances.forwarding import TRAITS, ForwardingInstance, even_groups
from iosched.models import driver
from iosched.solvers import Deadline, Profile, load_profile
from iosched.validate import Integer, OneOf, choice

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel

SPLIT_MAX_JOBS = 256  # lower_bound's interference split past this many jobs would cost seconds (cubic)
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

    For total_io_time and total_slowdown the bound is then raised by interference (:func:`shared_or_alone`)
    on instances of at most SPLIT_MAX_JOBS jobs to place: the split costs a water-filling per pair of jobs
    (cubic in the jobs), and every result of :func:`iosched.solve` computes this bound, heuristics' on
    90,000 jobs too.
    """
    if objective == "forwarding_nodes_used":
        return float(max(len(instance.busy), 1))
    if objective not in MODEL_OBJECTIVES:
        return None
    banned = {f for r in instance.running if r.dedicated for f, _ in r.forwarding or ()}  # (dedicated: mapped)
    usable = [instance.capacity(f.id) for f in instance.forwarding_nodes if f.id not in banned]
    total, best = sum(usable), max(usable)
    caps = [min(j.io_nodes * j.node_bandwidth, min(j.nodes, len(usable)) * best) for j in instance.jobs]
    vols = [j.volume for j in instance.jobs]
    if objective == "max_io_time":
        return max(max(v / c for v, c in zip(vols, caps)), sum(vols) / total)
    if objective == "total_slowdown":
        vols = [v / alone_time(instance, j) for v, j in zip(vols, instance.jobs)]
    water = _waterfill(vols, caps, total)
    if len(instance.jobs) > SPLIT_MAX_JOBS:
        return water
    return max(water, shared_or_alone(instance, vols, caps, usable))


def shared_or_alone(instance: ForwardingInstance, weights: list[float], caps: list[float],
                    usable: list[float]) -> float:
    """The water-filling bound of :func:`lower_bound` (objective sum_j weights_j / R_j, rates R_j <= caps_j
    within the ``usable`` capacities) split, for one job j at a time, on whether j shares a forwarding node
    with another job to place; the largest over j of the lesser case.

    Proof. (B) j shares node f with job i: on f, j's slowdown is at least s(j <- i), the largest table
    entry over j's traits and i's, and its part time there is s V_j (c / n_j) / min(its links, its share)
    >= s L_j, with L_j = V_j / (io_j B_c,j) its links' time: T_j >= s(j <- i) L_j and T_i >= s(i <- j) L_i.
    A time floor T_u >= t_u is a rate cap R_u <= V_u / t_u in the water-filling (more rate saves nothing),
    so the score is at least the water-filling with those two caps lowered; the least over partners i.
    (A) j shares no node with another job to place, and uses k >= 1 nodes (k <= n_j): its rate is at most
    its links and the k largest capacities; the others use the other nodes, at most the total less the k
    smallest capacities, each at most min(n_i, U - k) nodes. The score is at least j's term plus the others'
    water-filling on that capacity; the least over k (past the k whose largest capacities cover j's links,
    j's term stops falling and the others' only rises). Every allocation is in (A) or (B), so the lesser of
    the two is a bound, for every j. A partner i with s(j <- i) = s(i <- j) = 1 makes (B) no better than
    the water-filling itself: such a j is skipped. This is the issue's case split on Figure 4 (AWP beside a
    high-bandwidth job takes 1.3 x 156.25 s, so it is alone: 156.25 + the other two on 17.5 GB/s).
    """
    m = len(instance.jobs)
    if m < 2:
        return 0.0
    table = instance.interference.slowdown
    traits = [[TRAITS.index(t) for t in instance.traits(j)] for j in instance.jobs]

    def factor(victim: int, aggressor: int) -> float:
        return max(table[v][a] for v in traits[victim] for a in traits[aggressor])

    links = [j.volume / (j.io_nodes * j.node_bandwidth) for j in instance.jobs]
    ascending = sorted(usable)
    low = list(itertools.accumulate(ascending, initial=0.0))
    high = list(itertools.accumulate(reversed(ascending), initial=0.0))
    total, best, count = sum(usable), max(usable), len(usable)
    out = 0.0
    for j, job in enumerate(instance.jobs):
        others = [i for i in range(m) if i != j]
        if any(factor(j, i) == 1 and factor(i, j) == 1 for i in others):
            continue
        shared = math.inf
        for i in others:
            capped = list(caps)
            capped[j] = min(caps[j], job.volume / (factor(j, i) * links[j]))
            capped[i] = min(caps[i], instance.jobs[i].volume / (factor(i, j) * links[i]))
            shared = min(shared, _waterfill(weights, capped, total))
        alone = math.inf
        for k in range(1, min(job.nodes, count - 1) + 1):
            rest = [min(caps[i], min(instance.jobs[i].nodes, count - k) * best) for i in others]
            alone = min(alone, weights[j] / min(caps[j], high[k])
                        + _waterfill([weights[i] for i in others], rest, total - low[k]))
            if high[k] >= caps[j]:
                break
        out = max(out, min(shared, alone))
    return out


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
            owner: list[int | None] = [None] * len(users)
            for t, k in enumerate(config):
                users += [(jobs[jid], on[jid]) for jid in members[t][:k]]
                owner += [t] * k
            rates = node_rates(instance, f, users)
            node.configs.append(config)
            node.rates.append({o: rates[u] for u, o in enumerate(owner) if o is not None})
            node.fixed.append({u.id: u.volume * c / u.nodes / rates[k]
                               for k, (u, c) in enumerate(users) if owner[k] is None})
        out.nodes[f] = node
    for r in instance.running:
        rest = dict.fromkeys(f for f, _ in instance.groups(r) if f not in crossing)
        out.running_const[r.id] = max((node_times(instance, f, on_node[f])[[u.id for u, _ in on_node[f]].index(r.id)]
                                       for f in rest), default=0.0)
    return out


def build_milp(instance: ForwardingInstance, objective: str = "total_io_time", max_configurations: int = 20_000,
               data: Choices | None = None) -> ConcreteModel:
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


def read_allocation(instance: ForwardingInstance, m: ConcreteModel) -> Allocation:
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


def set_start(instance: ForwardingInstance, m: ConcreteModel, allocation: Allocation) -> ConcreteModel:
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


def too_slow_to_build(run: driver.ExactRun, variables: int) -> str | None:
    """Why a MILP of ``variables`` variables (SECONDS_PER_VARIABLE each) would not be built and handed over in
    what is left of ``run``'s deadline, naming the estimate; None when it would."""
    return run.too_slow(variables, SECONDS_PER_VARIABLE, f"MILP's {variables} variables")


# --- the start: what a time-limited MILP hands back when it has nothing better -------------------------

STARTS_IN_SCOPE = {"fixed": fixed, "dfra": dfra, "mckp": mckp}  # fast, always feasible, inside DFRA's space


class Start(driver.Start[Allocation]):
    """The best heuristic allocation by a MILP's objective: ``value`` is the evaluator's score of it."""

    @property
    def allocation(self) -> Allocation:
        return self.solution


def best_start(instance: ForwardingInstance, objective: str, deadline: Deadline, heuristics: dict,
               context: RunContext | None = None) -> Start:
    """The best by ``objective`` (the evaluator's score) of ``heuristics`` (name -> method), each run with the
    run's ``context`` within ``deadline`` (past it they keep jobs' default mappings, and the rest are skipped)."""
    limit = driver.method_limit(deadline, context)
    made = [(name, lambda h=h: h(instance, time_limit=limit, context=context).solution)
            for name, h in heuristics.items()]
    starts = driver.ranked(made, lambda alloc: getattr(evaluate(instance, alloc), objective), deadline)
    best = starts[0]  # (the first heuristic always runs, and always gives an allocation)
    return Start(best.heuristic, best.solution, best.value)


def exact_run(instance: ForwardingInstance, objective: str, profile: Profile, scope: str,
              context: RunContext | None = None) -> driver.ExactRun:
    """The driver of a forwarding MILP: its deadline from ``profile`` and the run's ``context``, allocations
    scored by ``objective``."""
    run = driver.ExactRun(profile, lambda alloc: getattr(evaluate(instance, alloc), objective), scope=scope,
                          context=context)
    run.info["objective"] = objective
    return run


def _milp(instance: ForwardingInstance, objective: str, profile: str, max_configurations: int,
          context: RunContext | None) -> MethodOutput:
    # HiGHS's presolve is off for this model: on large instances (the rows T >= sum_s t z over every
    # configuration) it spends most of the solve removing few nonzeros (benchmarks/speed.md, constants)
    prof = replace(load_profile(profile), highs={**load_profile(profile).highs, "presolve": "off"})
    run = exact_run(instance, objective, prof, SCOPE, context)  # the whole method: configurations, start, build, solve
    try:
        data = choices(instance, max_configurations, run.deadline)  # ModelTooLarge (a ParameterError) refuses
    except TimeoutError as e:
        return run.fall_back("", error=str(e))
    run.begin(best_start(instance, objective, run.deadline, STARTS_IN_SCOPE, context))
    configurations = sum(len(n.configs) for n in data.nodes.values())
    variables = configurations + sum(len(o) + 2 for o in data.options.values())
    if (late := too_slow_to_build(run, variables)) is not None:
        return run.fall_back("the MILP was not built", error=late)
    assert run.start is not None
    start = run.start.solution
    m, out, note = run.solve_pyomo(
        lambda: set_start(instance, build_milp(instance, objective, max_configurations, data), start),
        HANDOVER, warm=True)
    if out is None:
        return run.fall_back("the MILP was not solved", error=f"the MILP was not solved: {note}")
    run.record(out, options=sum(len(o) for o in m.choices.options.values()), configurations=configurations)
    # optimal over the scope is not optimal over every allocation: the result is FEASIBLE (or TIME_LIMIT)
    stopped = out.status == Status.TIME_LIMIT
    result = run.settle(read_allocation(instance, m) if out.has_solution else None,
                        Status.TIME_LIMIT if stopped else Status.FEASIBLE, stopped, what="allocation")
    if result.solution is not None:
        run.info["dedicated_nodes"] = {jid: len({f for f, _ in result.solution.mapping[jid]})
                                       for jid in sorted(result.solution.dedicated)}
    return result


@register("forwarding", "milp-dfra-space", objective="total_io_time",
          exact_over="DFRA's remapping space: default mapping or k dedicated nodes per job")
def milp_dfra_space(instance: ForwardingInstance,
                    objective: Annotated[str, OneOf(MODEL_OBJECTIVES)] = "total_io_time", profile: str = "default",
                    max_configurations: Configurations = 20_000, *, context: RunContext | None = None) -> MethodOutput:
    """The exact choice MILP over DFRA's remapping space (HiGHS); ``info`` has the model's status and bound.

    Once the configurations are computed, a start, the best of fixed, DFRA and MCKP by ``objective``, within
    the same time limit: when the model is not built or solved in time, or HiGHS has no better allocation,
    the method returns that start (``info["incumbent"]`` says why)."""
    return _milp(instance, objective, profile, max_configurations, context)
