"""The exact allocation MILP over every allocation the evaluator accepts.

**What an allocation is worth.** The evaluator scores an allocation only through, per
forwarding node f, how many compute nodes c[j, f] of each job to place it serves (the
order of the groups, the ``dedicated`` and ``avoid_anomalous`` claims change feasibility,
never a time). So every feasible allocation is a choice, per usable node (every node but
those dedicated to a running job), of a *configuration* s = (c[j] for each job to place),
with sum_f c[j, f] = n_j; and every such choice is a feasible allocation (no claim made).

**Node classes.** Nodes of one capacity serving the same running jobs with the same compute
nodes (usually: the idle ones) are interchangeable. A class K of m_K nodes gets an integer
w[K, s] in [0, m_K], the number of its nodes in configuration s, sum_s w[K, s] = m_K, and
sum_{K, s} c_j(s) w[K, s] = n_j per job. Every user's part time t_u(K, s) in each
configuration is precomputed with the evaluator's own
:func:`~iosched.evaluate.forwarding.node_times` (max-min share, interference, anomalous
capacity, caps), so nothing is linearised but the barrier max:

* a class of one node: T_u >= sum_s t_u(K, s) w[K, s] (w binary, one configuration is 1);
* a class of several: a binary o[K, s] >= w[K, s] / m_K (some node of K is in s) and
  T_u >= t_u(K, s) o[K, s] for each user u of s.

Minimising a positive combination of the T's (placed jobs, and running jobs less their time
without the jobs placed) makes each equal to the slowest of its parts, so the optimum is
the evaluator's best score over every allocation and HiGHS's bound is valid for every
allocation (the tests check both against enumeration). The price is
prod_j (n_j + 1) configurations per class: the model is exact where that fits
(``max_configurations``), and refuses otherwise (use ``search``, ``milp-dfra-space`` and the
problem's bound, :func:`iosched.models.forwarding.lower_bound`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from iosched import lazy
from iosched.core import EVERY_SOLUTION, MethodOutput, RunContext, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import Allocation, alone_time, node_times, running_alone
from iosched.heuristics.forwarding import round_robin
from iosched.instances.forwarding import ForwardingInstance
from iosched.models.forwarding import (
    HANDOVER,
    MODEL_OBJECTIVES,
    STARTS_IN_SCOPE,
    Configurations,
    ModelTooLarge,
    best_start,
    exact_run,
    milp_dfra_space,
    too_slow_to_build,
)
from iosched.solvers import Deadline, load_profile
from iosched.validate import OneOf, choice

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel

SCOPES = ("every", "dfra-space")
SCOPE_EVERY = "every allocation the evaluator accepts"


def _round_robin(instance: ForwardingInstance, time_limit: float, context: RunContext | None = None) -> MethodOutput:
    """round-robin's groups of 32 compute nodes (its default), all of them on a machine of fewer."""
    return round_robin(instance, k=min(32, instance.compute_nodes), time_limit=time_limit, context=context)


STARTS = {**STARTS_IN_SCOPE, "round-robin": _round_robin}


@dataclass
class NodeClass:
    """Interchangeable forwarding nodes and, per configuration (compute nodes of each job to place, in
    the instance's order), every user's part time (s) there."""

    nodes: list[int]
    configs: list[tuple[int, ...]]
    times: list[dict[str, float]]


def node_groups(instance: ForwardingInstance) -> dict[tuple, list[int]]:
    """The usable forwarding nodes (not dedicated to a running job) grouped by (capacity, the running jobs'
    compute nodes on them): the nodes of a group are interchangeable, one class of the model each."""
    out: dict[tuple, list[int]] = {}
    for node in instance.forwarding_nodes:
        if node.id not in instance.reserved:
            key = (instance.capacity(node.id), tuple(sorted(instance.running_users.get(node.id, {}).items())))
            out.setdefault(key, []).append(node.id)
    return out


def node_classes(instance: ForwardingInstance, max_configurations: int = 20_000,
                 deadline: Deadline | None = None) -> list[NodeClass]:
    """Every class and configuration, times precomputed (ModelTooLarge past ``max_configurations`` per
    class, TimeoutError once ``deadline`` has passed)."""
    size = math.prod(j.nodes + 1 for j in instance.jobs)
    if size > max_configurations:
        raise ModelTooLarge(f"the every-allocation MILP needs prod(n_j + 1) = 10^{math.log10(size):.1f} "
                            f"configurations per node class for {len(instance.jobs)} jobs, more than "
                            f"max_configurations={max_configurations}; use 'search' or 'milp-dfra-space'"
                            " (scope=dfra-space)")
    by_id = {j.id: j for j in instance.running}
    out: list[NodeClass] = []
    for (_, running), nodes in node_groups(instance).items():
        cls = NodeClass(nodes, [], [])
        for config in itertools.product(*[range(j.nodes + 1) for j in instance.jobs]):
            if deadline is not None and deadline.expired():
                raise TimeoutError(f"the configurations of {len(out)} node classes were computed when the time "
                                   f"limit of {deadline.seconds:g} s was reached")
            users = [(by_id[r], c) for r, c in running] + [(j, c) for j, c in zip(instance.jobs, config) if c]
            cls.configs.append(config)
            cls.times.append(dict(zip([u.id for u, _ in users], node_times(instance, nodes[0], users)))
                             if users else {})
        out.append(cls)
    return out


def build_every(instance: ForwardingInstance, objective: str = "total_io_time", max_configurations: int = 20_000,
                data: list[NodeClass] | None = None) -> ConcreteModel:
    """The every-allocation MILP of the module docstring, minimising ``objective`` (total_io_time,
    max_io_time or total_slowdown) exactly as the evaluator scores it."""
    choice("objective", objective, MODEL_OBJECTIVES, error=ParameterError)
    data = data if data is not None else node_classes(instance, max_configurations)
    m = pe.ConcreteModel(name=f"forwarding-every-{objective}")
    m.classes = data
    jobs = [j.id for j in instance.jobs]
    running = sorted({u for cls in data for t in cls.times for u in t} - set(jobs))
    m.C = pe.Set(initialize=[(k, s) for k, cls in enumerate(data) for s in range(len(cls.configs))], dimen=2,
                 ordered=True)
    m.w = pe.Var(m.C, domain=pe.NonNegativeIntegers, bounds=lambda m, k, s: (0, len(data[k].nodes)),
                 doc="nodes of class k in configuration s")
    m.fill = pe.Constraint(range(len(data)), rule=lambda m, k: sum(m.w[k, s] for s in range(len(data[k].configs)))
                           == len(data[k].nodes))
    m.link = pe.Constraint(range(len(jobs)), rule=lambda m, i: sum(
        cls.configs[s][i] * m.w[k, s] for k, cls in enumerate(data) for s in range(len(cls.configs))
        if cls.configs[s][i]) == instance.jobs[i].nodes, doc="every compute node of every job mapped")
    m.T = pe.Var(jobs + running, domain=pe.NonNegativeReals, doc="I/O time of a job (s)")
    m.times = pe.ConstraintList(doc="a job's time is at least each of its parts'")
    several = [(k, s) for k, cls in enumerate(data) if len(cls.nodes) > 1 for s in range(len(cls.configs))]
    m.o = pe.Var(several, domain=pe.Binary, doc="some node of class k is in configuration s")
    for k, cls in enumerate(data):
        if len(cls.nodes) == 1:
            for u in {u for t in cls.times for u in t}:
                m.times.add(m.T[u] >= sum(t[u] * m.w[k, s] for s, t in enumerate(cls.times) if u in t))
            continue
        for s, t in enumerate(cls.times):
            m.times.add(len(cls.nodes) * m.o[k, s] >= m.w[k, s])
            for u, v in t.items():
                m.times.add(m.T[u] >= v * m.o[k, s])
    before = running_alone(instance)
    for r in running:
        m.T[r].setlb(before[r])
    for j in instance.jobs:  # its own links at full speed: valid for every allocation, and helps the LP
        m.T[j.id].setlb(j.volume / (j.io_nodes * j.node_bandwidth))
    if objective == "max_io_time":
        m.Tmax = pe.Var(domain=pe.NonNegativeReals)
        m.top = pe.Constraint(jobs, rule=lambda m, jid: m.Tmax >= m.T[jid])
        m.obj = pe.Objective(expr=m.Tmax)
    else:
        by_id = {j.id: j for j in instance.running + instance.jobs}
        weight = {u: 1.0 if objective == "total_io_time" else 1 / alone_time(instance, by_id[u]) for u in by_id}
        m.obj = pe.Objective(expr=sum(weight[j] * m.T[j] for j in jobs)
                             + sum(weight[r] * (m.T[r] - before[r]) for r in running))
    return m


def read_every(instance: ForwardingInstance, m: ConcreteModel) -> Allocation:
    """The allocation a solved every-allocation model encodes (each class's nodes dealt to its configurations)."""
    groups: dict[str, list[tuple[int, int]]] = {j.id: [] for j in instance.jobs}
    for k, cls in enumerate(m.classes):
        free = list(cls.nodes)
        for s, config in enumerate(cls.configs):
            for _ in range(round(pe.value(m.w[k, s]))):
                f = free.pop(0)
                for j, c in zip(instance.jobs, config):
                    if c:
                        groups[j.id].append((f, c))
    mapping = {jid: tuple(g) for jid, g in groups.items()}
    avoid = not any(instance.node[f].anomalous for g in mapping.values() for f, _ in g)
    return Allocation(mapping, frozenset(), avoid)


def set_every_start(instance: ForwardingInstance, m: ConcreteModel, allocation: Allocation) -> ConcreteModel:
    """``allocation`` as the model's values of w and o, a MIP start (see :func:`iosched.solvers.solve_pyomo`):
    each forwarding node counts in its class's configuration of the compute nodes each job has there. An
    allocation using a node outside every class (dedicated to a running job) leaves the model without a start.
    Returns ``m``."""
    on: dict[int, list[int]] = {}
    for i, j in enumerate(instance.jobs):
        for f, c in allocation.mapping[j.id]:
            on.setdefault(f, [0] * len(instance.jobs))[i] += c
    counts: dict[tuple[int, int], int] = {}
    for k, cls in enumerate(m.classes):
        where = {config: s for s, config in enumerate(cls.configs)}
        for f in cls.nodes:
            s = where.get(tuple(on.pop(f, [0] * len(instance.jobs))))
            if s is None:
                return m
            counts[k, s] = counts.get((k, s), 0) + 1
    if on:
        return m
    for (k, s) in m.C:
        m.w[k, s].value = counts.get((k, s), 0)
        if (k, s) in m.o:
            m.o[k, s].value = 1 if counts.get((k, s)) else 0
    return m


def _milp_every(instance: ForwardingInstance, objective: str, profile: str, max_configurations: int,
                context: RunContext | None) -> MethodOutput:
    run = exact_run(instance, objective, load_profile(profile), SCOPE_EVERY, context)
    try:
        data = node_classes(instance, max_configurations, run.deadline)
    except ModelTooLarge as e:
        raise ParameterError(str(e)) from None
    except TimeoutError as e:
        return run.fall_back("", error=str(e))
    run.begin(best_start(instance, objective, run.deadline, STARTS, context))
    count = sum(len(c.configs) for c in data)
    variables = count * 2 + len(instance.jobs)
    if (late := too_slow_to_build(run, variables)) is not None:
        return run.fall_back("the MILP was not built", error=late)
    assert run.start is not None
    start = run.start.solution
    m, out, note = run.solve_pyomo(
        lambda: set_every_start(instance, build_every(instance, objective, max_configurations, data), start),
        HANDOVER, warm=True)
    if out is None:
        return run.fall_back("the MILP was not solved", error=f"the MILP was not solved: {note}")
    run.record(out, node_classes=len(data), configurations=count)
    bound = out.bound if out.bound is not None and math.isfinite(out.bound) else None
    status = out.status if out.status in (Status.OPTIMAL, Status.TIME_LIMIT) else Status.FEASIBLE
    return run.settle(read_every(instance, m) if out.has_solution else None, status, out.status == Status.TIME_LIMIT,
                      bound, what="allocation")


def _milp(instance, objective, scope, profile, max_configurations, context: RunContext | None) -> MethodOutput:
    if scope == "dfra-space":
        return milp_dfra_space(instance, objective, profile, max_configurations, context=context)
    return _milp_every(instance, objective, profile, max_configurations, context)


@register("forwarding", "milp", objective="total_io_time", exact_over=EVERY_SOLUTION)
def milp(instance: ForwardingInstance, objective: Annotated[str, OneOf(MODEL_OBJECTIVES)] = "total_io_time",
         scope: Annotated[str, OneOf(SCOPES)] = "every", profile: str = "default",
         max_configurations: Configurations = 20_000, *, context: RunContext | None = None) -> MethodOutput:
    """The exact MILP over every allocation (HiGHS), or over DFRA's space (``scope=dfra-space``).

    Once the configurations are computed, a start, the best of fixed, DFRA, MCKP and round-robin by
    ``objective`` (over DFRA's space: not round-robin), within the same time limit: when the model is not
    built or solved in time, or HiGHS has no better allocation, the method returns that start
    (``info["incumbent"]`` says why)."""
    return _milp(instance, objective, scope, profile, max_configurations, context)


@register("forwarding", "milp-max", objective="max_io_time", exact_over=EVERY_SOLUTION)
def milp_max(instance: ForwardingInstance, scope: Annotated[str, OneOf(SCOPES)] = "every",
             profile: str = "default", max_configurations: Configurations = 20_000,
             *, context: RunContext | None = None) -> MethodOutput:
    """The MILP minimising the largest I/O time of the jobs placed, over every allocation or DFRA's space.

    It returns the best heuristic start when HiGHS has nothing better in time, as ``milp`` does."""
    return _milp(instance, "max_io_time", scope, profile, max_configurations, context)
