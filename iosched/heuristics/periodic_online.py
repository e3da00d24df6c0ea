"""The online baselines of the periodic problem: no periodic pattern, the bandwidth shared at
run time in the fluid model (fair sharing without a scheduler, and the greedy online policies
of Gainaru et al., IPDPS 2015, that the PerSched paper compares against)."""

from __future__ import annotations

import math
from typing import Annotated

from iosched.core import HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Trace
from iosched.fluid import max_min_fair, priority_fill
from iosched.heuristics.periodic_persched import (
    MAX_PIECES,
    RESOLUTION,
    check_time_limit,
)
from iosched.instances.periodic import PeriodicInstance, checked_instance
from iosched.solvers import Deadline
from iosched.validate import Number, TimeLimit, choice, number, positive

ONLINE_POLICIES = ("fairshare", "fcfs", "max-syseff", "min-dilation", "minmax")


def _priority_order(policy, waiting, requested, dil, eff, gamma):
    """Positions in ``waiting`` in serving order (ties to the lower application index)."""
    keys = {
        "fcfs": lambda k: (requested[k], k),
        "max-syseff": lambda k: (-eff[k], k),
        "min-dilation": lambda k: (-dil[k], k),
        "minmax": lambda k: ((0, -dil[k]) if dil[k] > gamma else (1, -eff[k]), k),
    }
    return sorted(range(len(waiting)), key=lambda i: keys[policy](waiting[i]))


MAX_CYCLES = 1_000_000
Cycles = Annotated[float, Number(1, MAX_CYCLES)]
Gamma = Annotated[float, Number(0, lo_open=True)]


def simulate_online(instance: PeriodicInstance, policy: str = "fairshare", cycles: float = 100,
                    gamma: float = 1.2, deadline: Deadline | None = None) -> Trace:
    """Run the applications without a periodic pattern in the fluid model. All start
    computing at 0; the run ends when the application of longest w_k + time_io_k
    completes its ``cycles``-th instance (or at 10 ``cycles`` times that length if it
    starves), so that application has no partial instance at the horizon.

    At every I/O request and completion the applications waiting for I/O get rates by
    ``policy``; rates stay constant until the next event:

    * ``fairshare``: no I/O scheduler: B is shared max-min fairly, each capped at β_k b;
    * the greedy online policies of Gainaru et al. (IPDPS 2015): requests are served in a
      priority order, each getting min(β_k b, what is left of B):
      ``fcfs`` earliest request first; ``max-syseff`` largest β_k w_k / remaining volume
      first (computation unlocked per unit of data left); ``min-dilation`` largest
      current Dilation first, ρ_k t / (w_k (instances done + 1)); ``minmax`` the
      applications whose current Dilation exceeds ``gamma`` first (by Dilation), then
      the others by ``max-syseff``.

    Only instances whose I/O completes before the horizon are in the trace. With a
    ``deadline`` (checked every 64 events), or once MAX_PIECES I/O segments are stored, the
    run ends early: the trace then ends where it stopped (``trace.horizon`` is that time).
    """
    instance = checked_instance(instance)
    choice("policy", policy, ONLINE_POLICIES, error=ParameterError)
    cycles = number("cycles", cycles, 1, MAX_CYCLES, error=ParameterError)
    gamma = positive("gamma", gamma, error=ParameterError)
    apps = instance.applications
    K = len(apps)
    longest = max(range(K), key=lambda k: apps[k].work + instance.time_io(k))
    horizon = 10 * cycles * instance.default_t_min()
    for what, values in (("io_volume", [instance.time_io(k) for k in range(K)]), ("work", [a.work for a in apps])):
        k = min(range(K), key=values.__getitem__)
        if values[k] < RESOLUTION * horizon:
            raise InstanceError(
                f"applications[{apps[k].name}].{what} = {getattr(apps[k], what)!r}: its "
                f"{'I/O time' if what == 'io_volume' else 'compute time'} {values[k]:.4g} s is below {RESOLUTION:g} "
                f"of the simulated horizon (10 x cycles x t_min = {horizon:.6g} s); the simulation's times are "
                f"doubles and cannot resolve it (fewer cycles may)")
    caps = [instance.max_rate(k) for k in range(K)]
    rho = [instance.rho(k) for k in range(K)]
    B = instance.platform.bandwidth
    t = 0.0
    compute_end = [a.work for a in apps]  # inf while doing I/O
    started = [0.0] * K  # compute start of the current instance
    remaining = [0.0] * K  # volume left of the current I/O phase
    requested = [math.inf] * K  # when the current I/O phase began
    done: list[list[PatternInstance]] = [[] for _ in range(K)]
    segs: list[list] = [[] for _ in range(K)]  # I/O segments of the current instance
    stored, events = 0, 0
    while t < horizon:
        events += 1
        if stored >= MAX_PIECES or (deadline is not None and events % 64 == 0 and deadline.expired()):
            break
        waiting = [k for k in range(K) if remaining[k] > 0]
        rates = [0.0] * K
        if waiting:
            if policy == "fairshare":
                shares = max_min_fair([caps[k] for k in waiting], B)
            else:
                dil = {k: rho[k] * t / (apps[k].work * (len(done[k]) + 1)) for k in waiting}
                eff = {k: apps[k].processors * apps[k].work / remaining[k] for k in waiting}
                order = _priority_order(policy, waiting, requested, dil, eff, gamma)
                shares = priority_fill([caps[k] for k in waiting], order, B)
            for k, r in zip(waiting, shares):
                rates[k] = r
        step = min([compute_end[k] - t for k in range(K) if compute_end[k] < math.inf]
                   + [remaining[k] / rates[k] for k in waiting if rates[k] > 0] + [horizon - t])
        step = max(step, 0.0)
        for k in waiting:
            if rates[k] > 0:
                segs[k].append((t, t + step, rates[k]))
                stored += 1
                remaining[k] -= rates[k] * step
        t += step
        for k in range(K):
            if compute_end[k] <= t:  # compute ends: request I/O
                compute_end[k] = math.inf
                remaining[k], requested[k] = apps[k].io_volume, t
            elif k in waiting and remaining[k] <= 1e-12 * apps[k].io_volume:  # I/O completes
                done[k].append(PatternInstance(started[k], tuple(segs[k])))
                segs[k], remaining[k], requested[k] = [], 0.0, math.inf
                started[k], compute_end[k] = t, t + apps[k].work
        if len(done[longest]) >= cycles:
            break
    return Trace(t, tuple(tuple(d) for d in done))


def _online(policy):
    def run(instance: PeriodicInstance, cycles: Cycles = 100, gamma: Gamma = 1.2,
            time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
        deadline = Deadline.for_method(check_time_limit(time_limit), context=context)
        trace = simulate_online(instance, policy, cycles, gamma, deadline)
        longest = max(range(len(instance.applications)),
                      key=lambda k: instance.applications[k].work + instance.time_io(k))
        if len(trace.applications[longest]) >= cycles:
            return MethodOutput(trace, Status.FEASIBLE)
        info = {"stopped": f"after {len(trace.applications[longest])} of {cycles:g} cycles at t = "
                           f"{trace.horizon:.6g} s"}
        if deadline.expired():
            return MethodOutput(trace, Status.TIME_LIMIT, info={**info, "reason": f"time limit {deadline.seconds:g} s"})
        return MethodOutput(trace, Status.FEASIBLE, info=info)

    run.__doc__ = f"Online baseline without a periodic pattern: {policy} (fluid simulation); stops after time_limit s."
    return run


for _policy in ONLINE_POLICIES:
    register("periodic", _policy if _policy == "fairshare" else f"online-{_policy}",
             objective="sys_efficiency", exact_over=HEURISTIC)(_online(_policy))
