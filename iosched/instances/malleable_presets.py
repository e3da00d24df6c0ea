"""Malleable workloads to solve: the seed's applications as presets, the seeded generators (the seed's recipe,
Feitelson-style sizes, small workloads on a 1 s grid for the exact models), and the built-in names :func:`load`
knows (the schema is :mod:`iosched.instances.malleable`).

The seed's applications are presets (:data:`APPS`). The seed gives their ladders, preferred
sizes, iterations and periods (Table 1) but no run times per size; ours are assumptions,
chosen so that running at the preferred size takes about 1.5 times as long as at the
maximum, the ratio of flexible to fixed mean execution time in the seed's Table 4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from iosched.errors import InstanceError
from iosched.instances.malleable import MAX_JOBS, MAX_NODES, Job, MalleableInstance, Runtime, ladder
from iosched.validate import integer, number

# --- the seed's applications ------------------------------------------------------------------------


@dataclass(frozen=True)
class App:
    """A preset: the seed's Table 1 sizes, iterations and period, and an assumed run-time model."""

    runtime: Runtime
    min_nodes: int
    max_nodes: int
    preferred: int | None
    work: float  # iterations (Table 1)
    period: float  # s


APPS = {
    # Table 1: min 2, max 32, preferred 8, 10000 iterations, period 15 s. Run times assumed:
    # T(32) = 450 s, T(8) = 675 s (1.5 x).
    "cg": App(Runtime("amdahl", seconds_1=2777.0, serial=0.135), 2, 32, 8, 10_000, 15.0),
    # as CG; T(32) = 400 s, T(8) = 624 s (1.56 x).
    "jacobi": App(Runtime("amdahl", seconds_1=2712.0, serial=0.12), 2, 32, 8, 10_000, 15.0),
    # Table 1: min 1, max 16, preferred 1, 25 iterations, no period (it checks at every iteration):
    # the period here is one iteration at 16 nodes. T(16) = 700 s, T(1) = 1042 s (1.49 x).
    "nbody": App(Runtime("amdahl", seconds_1=1042.0, serial=0.65), 1, 16, 1, 25, 28.0),
    # Flexible Sleep, the synthetic application: min 1, max 20 (ladder 1..16), 25 iterations,
    # no preferred size. Sleeping scales linearly (assumed): 10 s an iteration on one node.
    "fs": App(Runtime("linear", seconds_1=250.0, up_to=20), 1, 20, None, 25, 15.0),
}
PAPER_APPS = ("cg", "jacobi", "nbody")  # the throughput evaluation's three applications
PAPER_NODES = 64  # inferred from Figure 6: 5 jobs at 8 nodes plus one of 32 exceed the cluster; 32 + 32 fill it
PAPER_ARRIVAL_S = 10.0  # Poisson arrivals "of factor 10": mean inter-arrival 10 s
RECONFIG_S = 0.42  # Table 2: the synchronous mode's average expand and shrink time (0.423 s, 0.425 s)
TIMEOUT_S = 40.0  # assumed: Table 2's longest asynchronous expansion took 40.4 s


def app_job(app: str, id: str, arrival: float, **overrides) -> Job:
    """A job of a preset application (``overrides`` replace any Job field)."""
    if app not in APPS:
        raise InstanceError(f"app must be one of {', '.join(APPS)}, got {app!r}")
    a = APPS[app]
    kw = dict(arrival=arrival, work=a.work, runtime=a.runtime, min_nodes=a.min_nodes, max_nodes=a.max_nodes,
              factor=2, preferred=a.preferred, period=a.period, reconfig_s=RECONFIG_S, timeout=TIMEOUT_S, app=app)
    kw.update(overrides)
    return Job(id, **kw)


# --- generators -------------------------------------------------------------------------------------

KINDS = ("paper", "feitelson", "grid")


def _poisson_arrivals(rng, n: int, mean: float) -> np.ndarray:
    """Arrival times (s) of a Poisson process of rate 1/mean, the first at 0."""
    gaps = rng.exponential(mean, n)
    gaps[0] = 0.0
    return np.cumsum(gaps)


def _paper(rng, n: int, nodes: int, arrival_mean_s: float, reconfig_s: float) -> list[Job]:
    """The seed's recipe: the three applications in equal shares, randomly sorted; Poisson arrivals."""
    apps = [PAPER_APPS[i % 3] for i in range(n)]
    rng.shuffle(apps)
    arrivals = _poisson_arrivals(rng, n, arrival_mean_s)
    return [app_job(a, f"j{i + 1}", round(float(t), 6), reconfig_s=reconfig_s)
            for i, (a, t) in enumerate(zip(apps, arrivals))]


def _feitelson(rng, n: int, nodes: int, arrival_mean_s: float, reconfig_s: float) -> list[Job]:
    """Rigid-style requests in the manner of Feitelson (1996), made malleable.

    Size s in 1..nodes with probability proportional to 1/s, times 8 for powers of two
    (harmonic, favouring small powers of two). Run time at s: hyperexponential, the long
    branch (mean 1800 s) taken with probability 0.2 + 0.6 log2(s) / log2(nodes) (larger jobs
    run longer), else the short one (mean 120 s). Speed-up: Amdahl with a serial fraction
    uniform in [0, 0.2]. Ladder: factor 2 from s / 4 (or s / 2, or s, whichever is an
    integer) up to s; submitted at s; no preferred size (the policy's wide optimisation).
    """
    sizes = np.arange(1, nodes + 1)
    weights = (1.0 / sizes) * np.where((sizes & (sizes - 1)) == 0, 8.0, 1.0)
    arrivals = _poisson_arrivals(rng, n, arrival_mean_s)
    jobs = []
    for i in range(n):
        s = int(rng.choice(sizes, p=weights / weights.sum()))
        p_long = 0.2 + 0.6 * (math.log2(s) / math.log2(nodes) if nodes > 1 else 0.0)
        run = float(rng.exponential(1800.0 if rng.random() < p_long else 120.0)) + 1.0
        serial = float(rng.uniform(0.0, 0.2))
        seconds_1 = run / (serial + (1 - serial) / s)
        low = s
        for _ in range(2):
            if low % 2 == 0:
                low //= 2
        jobs.append(Job(f"j{i + 1}", round(float(arrivals[i]), 6), 1000.0,
                        Runtime("amdahl", seconds_1=round(seconds_1, 6), serial=round(serial, 6)),
                        low, s, 2, period=15.0, reconfig_s=reconfig_s, timeout=TIMEOUT_S, app="feitelson"))
    return jobs


def _grid(rng, n: int, nodes: int, arrival_mean_s: float, reconfig_s: float) -> list[Job]:
    """Small workloads on a 1 s grid, for the exact models.

    Ladders within {1, 2, 4} (factor 2); speed-up linear up to 2 or 4 nodes (half the jobs
    each: beyond 2 nodes the first kind gains nothing) with T(1) a multiple of 4 s; check
    period 8 s; reconfiguration 4 s (or any multiple of 4 s given); integer arrivals. Every
    event of the simulated policies then falls on whole seconds (runs between resizes last
    multiples of 4 s, so the work left is a whole number of seconds at any size), and the
    exact models, which work in whole seconds, hold the policies' schedules. Half the jobs (on average) prefer 2 nodes;
    the others leave the size to the wide optimisation.
    """
    arrivals = np.floor(_poisson_arrivals(rng, n, arrival_mean_s)).astype(int)
    jobs = []
    for i in range(n):
        low = int(rng.choice([1, 2]))
        sizes = ladder(low, 4, 2)
        submit = int(rng.choice(sizes))
        preferred = 2 if rng.random() < 0.5 else None
        seconds_1 = 4 * int(rng.integers(4, 25))
        up_to = int(rng.choice([2, 4]))
        jobs.append(Job(f"j{i + 1}", int(arrivals[i]), 100, Runtime("linear", seconds_1=seconds_1, up_to=up_to),
                        low, 4, 2, submit=submit, preferred=preferred, period=8, reconfig_s=reconfig_s, timeout=8,
                        app="grid"))
    return jobs


GENERATORS = {"paper": _paper, "feitelson": _feitelson, "grid": _grid}
DEFAULT_NODES = {"paper": PAPER_NODES, "feitelson": 128, "grid": 8}
DEFAULT_ARRIVAL = {"paper": PAPER_ARRIVAL_S, "feitelson": 60.0, "grid": 4.0}
DEFAULT_RECONFIG = {"paper": RECONFIG_S, "feitelson": RECONFIG_S, "grid": 4.0}


def generate(seed: int, jobs: int = 20, kind: str = "paper", nodes: int | None = None,
             arrival_mean_s: float | None = None, reconfig_s: float | None = None) -> MalleableInstance:
    """A seeded workload of ``jobs`` jobs (same seed and parameters, same workload).

    ``kind``: ``paper`` (the seed's three applications on 64 nodes, Poisson arrivals of
    mean 10 s), ``feitelson`` (sizes and run times in the style of Feitelson's 1996 model on
    128 nodes, mean inter-arrival 60 s), ``grid`` (small workloads on 8 nodes on a 1 s grid,
    for the exact models, mean inter-arrival 4 s). ``nodes``, ``arrival_mean_s`` and
    ``reconfig_s`` (s per resize: 0.42 for paper and feitelson, the seed's Table 2; 4 for
    grid) override the kind's defaults.
    """
    integer("seed", seed, 0, 2**63 - 1)
    integer("jobs", jobs, 1, MAX_JOBS)
    if kind not in KINDS:
        raise InstanceError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    nodes = DEFAULT_NODES[kind] if nodes is None else nodes
    integer("nodes", nodes, 1, MAX_NODES)
    if kind == "paper" and nodes < 32:
        raise InstanceError(f"nodes must be at least 32 for the paper's applications, got {nodes!r}")
    if kind == "grid" and nodes < 4:
        raise InstanceError(f"nodes must be at least 4 for grid workloads, got {nodes!r}")
    mean = DEFAULT_ARRIVAL[kind] if arrival_mean_s is None else arrival_mean_s
    number("arrival_mean_s", mean, 0, 1e9)
    cost = DEFAULT_RECONFIG[kind] if reconfig_s is None else reconfig_s
    number("reconfig_s", cost, 0, 1e9)
    rng = np.random.default_rng(seed)
    job_list = GENERATORS[kind](rng, jobs, nodes, mean, cost)
    name = f"random:{seed}:{jobs}:{kind}"
    if nodes != DEFAULT_NODES[kind] or mean != DEFAULT_ARRIVAL[kind] or cost != DEFAULT_RECONFIG[kind]:
        name += f":{nodes}:{float(mean)!r}:{float(cost)!r}"
    return MalleableInstance(nodes, tuple(job_list), name=name)


def paper_workload(jobs: int, seed: int = 0) -> MalleableInstance:
    """The seed's throughput workloads (50, 100, 200, 400 jobs), our draw of its recipe."""
    inst = generate(seed, jobs, "paper")
    return replace(inst, name=f"paper:{jobs}" + (f":{seed}" if seed else ""))


def template() -> MalleableInstance:
    """A small instance to start from (``iosched show malleable --template``): three jobs, one per run-time
    model, on 8 nodes."""
    return MalleableInstance(8, (
        Job("j1", 0.0, 100.0, Runtime("amdahl", seconds_1=400.0, serial=0.1), 1, 8, preferred=4, app="solver"),
        Job("j2", 10.0, 50.0, Runtime("linear", seconds_1=200.0, up_to=4), 2, 8, submit=4, reconfig_s=1.0),
        Job("j3", 20.0, 10.0, Runtime("table", seconds=((1, 100.0), (2, 60.0))), 1, 2, period=10.0)),
        name="example")


PAPER_SIZES = (50, 100, 200, 400)
BUILTIN = [f"paper:{n}" for n in PAPER_SIZES]


def load(spec: str) -> MalleableInstance:
    """``paper:JOBS[:SEED]``, ``random:SEED[:JOBS[:KIND[:NODES:ARRIVAL_MEAN_S:RECONFIG_S]]]``, or a JSON file."""
    if spec.startswith("paper:"):
        parts = spec.split(":")[1:]
        if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts) or int(parts[0]) < 1:
            raise InstanceError(f"paper workloads are paper:JOBS[:SEED], got {spec!r}")
        return paper_workload(int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    if spec.startswith("random:"):
        parts = spec.split(":")[1:]
        if len(parts) not in (1, 2, 3, 6) or not all(p.isdigit() for p in parts[:2]):
            raise InstanceError(f"random workloads are random:SEED[:JOBS[:KIND[:NODES:ARRIVAL_MEAN_S:RECONFIG_S]]], "
                                f"got {spec!r}")
        kw: dict = {}
        if len(parts) > 1:
            kw["jobs"] = int(parts[1])
        if len(parts) > 2:
            kw["kind"] = parts[2]
        if len(parts) == 6:
            if not parts[3].isdigit():
                raise InstanceError(f"nodes in {spec!r} must be an integer, got {parts[3]!r}")
            kw["nodes"] = int(parts[3])
            for key, text_ in zip(("arrival_mean_s", "reconfig_s"), parts[4:]):
                try:
                    kw[key] = float(text_)
                except ValueError:
                    raise InstanceError(f"{key} in {spec!r} must be a number, got {text_!r}") from None
        return generate(int(parts[0]), **kw)
    if not spec or not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return MalleableInstance.from_json(Path(spec))
