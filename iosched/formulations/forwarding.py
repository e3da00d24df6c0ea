"""The forwarding problem's formulations (the total I/O time, s, minimised, or another model objective):

* ``milp`` (Pyomo, :mod:`iosched.models.forwarding_every`): every allocation, nodes grouped in classes of
  interchangeable nodes (the symmetry among identical forwarding nodes is aggregated away: a class holds
  counts of nodes per configuration, not one variable per node); ``average=True`` adds the average-part
  cuts (:func:`add_average_cuts`);
* ``milp-dfra-space`` (Pyomo, :mod:`iosched.models.forwarding`): DFRA's remapping space;
* ``waterfill`` (algorithm): the closed-form bound valid for every allocation
  (:func:`iosched.models.forwarding.lower_bound`).
"""

from __future__ import annotations

import math

from iosched import lazy
from iosched.core import EVERY_SOLUTION
from iosched.formulations.registry import ALGORITHM, PYOMO, Formulation, Ran, register_formulation
from iosched.models import forwarding as models
from iosched.models import forwarding_every as every

pe = lazy.module("pyomo.environ")


def _objective(params: dict) -> str:
    return params.get("objective", "total_io_time")


def add_average_cuts(instance, m) -> int:
    """Add to an every-allocation model (:func:`iosched.models.forwarding_every.build_every`) one row per job j
    to place, ``average``: T_j >= Σ_{K, s} (c_j(s) / n_j) t_j(K, s) w[K, s].

    Valid for every allocation the model holds: job j's n_j compute nodes are spread over the nodes it uses,
    c_j(s) on each node of class K in configuration s, Σ_{K, s} c_j(s) w[K, s] = n_j (the model's ``link``
    row); so the weights c_j(s) w[K, s] / n_j sum to 1 and the right-hand side is an average of j's part
    times, at most the largest, which T_j is at least. In the LP relaxation a class of m nodes charges
    T_j >= t o[K, s] with o as small as w / m: a job spread over the m nodes of one class pays t / m of its
    part time there, where this row makes it pay t. Returns the rows added."""
    m.average = pe.ConstraintList(doc="a job's time is at least the average of its part times")
    for i, job in enumerate(instance.jobs):
        terms = [(cls.configs[s][i] / job.nodes * cls.times[s][job.id], k, s) for k, cls in enumerate(m.classes)
                 for s in range(len(cls.configs)) if cls.configs[s][i]]
        m.average.add(m.T[job.id] >= sum(c * m.w[k, s] for c, k, s in terms))
    return len(instance.jobs)


def build_every(instance, objective: str = "total_io_time", max_configurations: int = 20_000,
                average: bool = False):
    """:func:`iosched.models.forwarding_every.build_every`; with ``average`` its average-part cuts
    (:func:`add_average_cuts`)."""
    m = every.build_every(instance, objective, max_configurations)
    if average:
        add_average_cuts(instance, m)
    return m


def every_size(instance, params: dict) -> int:
    """The every-allocation model's variables, counted before it is built: per group of interchangeable nodes,
    prod_j (n_j + 1) configurations, each a count w (and a presence o in a group of several nodes)."""
    configs = math.prod(j.nodes + 1 for j in instance.jobs)
    return sum(configs * (2 if len(nodes) > 1 else 1) for nodes in every.node_groups(instance).values()) + len(
        instance.jobs)


def _waterfill(instance, profile, objective: str = "total_io_time") -> Ran:
    value = models.lower_bound(instance, objective)
    return Ran(None, value, value)


register_formulation(Formulation(
    "forwarding", "milp", PYOMO, EVERY_SOLUTION, _objective,
    "configurations per class of interchangeable forwarding nodes, the evaluator's times precomputed",
    build=build_every, read=lambda inst, m, _: every.read_every(inst, m), estimate=every_size))
register_formulation(Formulation(
    "forwarding", "milp-dfra-space", PYOMO, models.SCOPE, _objective,
    "a choice per job: its default mapping or k dedicated nodes",
    build=models.build_milp, read=lambda inst, m, _: models.read_allocation(inst, m)))
register_formulation(Formulation(
    "forwarding", "waterfill", ALGORITHM, EVERY_SOLUTION, _objective,
    "each job at most its links' speed within the usable nodes' capacity, by water-filling",
    run=_waterfill, relaxation=True))
