"""Malleable jobs: DMR's reconfiguration policy and the rigid baselines, run in the event simulator.

* ``dmr``: the seed's policy (requested action, preferred size, wide optimisation) at every
  job's checks, on Slurm-like EASY backfilling (the seed's Slurm ran the backfill policy);
* ``rigid-fcfs`` and ``rigid-backfill``: the same workload with every job at its submitted
  size (the seed's "fixed" version), first come first served, or with EASY backfilling.

The simulator is :mod:`iosched.heuristics.malleable_sim`; its schedule goes to the
evaluator like any other method's.
"""

from __future__ import annotations

from collections import Counter

from iosched.core import MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable import MalleableInstance
from iosched.validate import choice, integer

DECISIONS_SHOWN = 200  # decisions listed in ``info`` (all are counted)


def _depth(depth) -> int:
    return integer("depth", depth, 1, 10**9, error=ParameterError)


@register("malleable", "dmr", objective="mean_completion")
def dmr(instance: MalleableInstance, scheduler: str = "easy", depth: int = 100, modes: str = "all") -> MethodOutput:
    """DMR's policy at each check (request, preferred, wide optimisation) on EASY backfilling."""
    choice("scheduler", scheduler, ("easy", "fcfs"), error=ParameterError)
    _depth(depth)
    choice("modes", modes, ("all", "wide"), error=ParameterError)
    res = simulate(instance, "dmr", scheduler, depth, modes)
    info = {
        "checks": res.checks,
        "rules": dict(sorted(res.rules.items())),
        "actions": dict(sorted(Counter(d.rule for d in res.decisions).items())),
        "decisions": [d.__dict__ for d in res.decisions[:DECISIONS_SHOWN]],
        "events": res.events,
    }
    if len(res.decisions) > DECISIONS_SHOWN:
        info["decisions_omitted"] = len(res.decisions) - DECISIONS_SHOWN
    return MethodOutput(res.schedule, Status.FEASIBLE, info=info)


@register("malleable", "rigid-fcfs", objective="mean_completion")
def rigid_fcfs(instance: MalleableInstance) -> MethodOutput:
    """Every job at its submitted size, first come first served (no backfilling)."""
    return MethodOutput(simulate(instance, "rigid", "fcfs").schedule, Status.FEASIBLE)


@register("malleable", "rigid-backfill", objective="mean_completion")
def rigid_backfill(instance: MalleableInstance, depth: int = 100) -> MethodOutput:
    """Every job at its submitted size, with EASY backfilling (the seed's fixed workloads)."""
    _depth(depth)
    return MethodOutput(simulate(instance, "rigid", "easy", depth).schedule, Status.FEASIBLE)
