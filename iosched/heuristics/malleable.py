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
from typing import Annotated

from iosched.core import HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.heuristics.malleable_sim import SimResult, simulate
from iosched.instances.malleable import MalleableInstance
from iosched.solvers import Deadline
from iosched.validate import Boolean, Integer, OneOf, TimeLimit

DECISIONS_SHOWN = 200  # decisions listed in ``info`` (all are counted)

Depth = Annotated[int, Integer(1, 10**9)]  # queued jobs the backfill looks at


def _stopped(res: SimResult) -> MethodOutput:
    """A simulation cut by its deadline: no schedule (a partial run is not one), how far it got."""
    return MethodOutput(None, Status.TIME_LIMIT, info={"events": res.events,
                                                        "note": "the time limit passed before the last job ended"})


@register("malleable", "dmr", objective="mean_completion", exact_over=HEURISTIC)
def dmr(instance: MalleableInstance, scheduler: Annotated[str, OneOf(("easy", "fcfs"))] = "easy", depth: Depth = 100,
        modes: Annotated[str, OneOf(("all", "wide"))] = "all", asynchronous: Annotated[bool, Boolean()] = False,
        time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """DMR's policy at each check (request, preferred, wide optimisation) on EASY backfilling;
    ``asynchronous``: each action carried out at the check after the one that decided it (the
    seed's asynchronous mode); ``time_limit`` in seconds (the default profile's when None)."""
    deadline = Deadline.for_method(time_limit, context=context)
    res = simulate(instance, "dmr", scheduler, depth, modes, deadline, asynchronous)
    if res.stopped:
        return _stopped(res)
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


def _rigid(instance: MalleableInstance, scheduler: str, depth: int, time_limit: float | None,
           context: RunContext | None) -> MethodOutput:
    res = simulate(instance, "rigid", scheduler, depth, deadline=Deadline.for_method(time_limit, context=context))
    return _stopped(res) if res.stopped else MethodOutput(res.schedule, Status.FEASIBLE)


@register("malleable", "rigid-fcfs", objective="mean_completion", exact_over=HEURISTIC)
def rigid_fcfs(instance: MalleableInstance, time_limit: TimeLimit = None,
               *, context: RunContext | None = None) -> MethodOutput:
    """Every job at its submitted size, first come first served (no backfilling)."""
    return _rigid(instance, "fcfs", 100, time_limit, context)


@register("malleable", "rigid-backfill", objective="mean_completion", exact_over=HEURISTIC)
def rigid_backfill(instance: MalleableInstance, depth: Depth = 100, time_limit: TimeLimit = None,
                   *, context: RunContext | None = None) -> MethodOutput:
    """Every job at its submitted size, with EASY backfilling (the seed's fixed workloads)."""
    return _rigid(instance, "easy", depth, time_limit, context)
