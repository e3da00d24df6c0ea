"""Window instances to solve: the paper's example, the seeded generator with the paper's S1-S7 burst-buffer
and SSD mixes at Theta's scale, and the built-in names :func:`load` knows (the schema is
:mod:`iosched.instances.window`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from iosched import validate
from iosched.errors import InstanceError
from iosched.instances.window import (
    MAX_JOBS,
    MAX_NODES,
    MAX_UNITS,
    Capacity,
    Job,
    Machine,
    SSDClass,
    WindowInstance,
    count,
)

PAPER_EXAMPLE = WindowInstance(
    Capacity(nodes=100, burst_buffer=100),  # 100 nodes, 100 TB (counted in TB here)
    (Job("J1", 80, 20), Job("J2", 10, 85), Job("J3", 40, 5), Job("J4", 10, 0), Job("J5", 20, 0)),
    name="paper:example",
)
# Table 1(b): the Pareto set is solutions 2 and 3
PAPER_PARETO = [(100, 20, ("J1", "J5")), (80, 90, ("J2", "J3", "J4", "J5"))]



def template() -> WindowInstance:
    """A small instance to start from (``iosched show window --template``): the paper's example window, with
    the whole machine it is a part of."""
    return replace(PAPER_EXAMPLE, name="example", machine=Machine(200, 150))


THETA_NODES = 4392
THETA_BB_GB = 1_260_000
MIXES = {  # the paper's synthetic workloads: share of jobs with a BB request, smallest request (GB)
    "S1": (0.50, 5_000), "S2": (0.75, 5_000), "S3": (0.50, 20_000), "S4": (0.75, 20_000),
    "S5": (0.75, 5_000), "S6": (0.75, 5_000), "S7": (0.75, 5_000),  # S2's burst buffer, and local SSD
}
SSD_MIXES = {"S5": 0.2, "S6": 0.5, "S7": 0.8}  # share of jobs needing 129-256 GB of SSD per node (else 1-128)
DEFAULTS = {"nodes": THETA_NODES, "burst_buffer": THETA_BB_GB, "max_request": 285_000, "load": 0.5}


def generate(seed: int, size: int = 20, mix: str = "S2", nodes: int = THETA_NODES,
             burst_buffer: int = THETA_BB_GB, max_request: int = 285_000, load: float = 0.5,
             ssd: bool = False) -> WindowInstance:
    """A random window of ``size`` jobs at Theta's scale by default (nodes, BB in GB).

    Job sizes are powers of two skewed to small ones (P(2^k) ~ 2^-k/2, up to ``nodes``);
    a share of jobs (by ``mix``: S1/S3 50 %, S2/S4 75 %) requests burst buffer uniformly
    in [smallest, ``max_request``] GB (S1/S2 from 5 TB, S3/S4 from 20 TB). The free
    capacity is ``load`` times the whole machine (``nodes``, ``burst_buffer``: the
    instance's ``machine``). The SSD mixes S5, S6, S7 are S2 with local SSD: half the free
    nodes have 128 GB and half 256 GB, and 20 %, 50 %, 80 % of jobs need 129-256 GB per
    node, the others 1-128 GB; ``ssd`` adds S5's SSD requests to any of S1-S4.
    Same seed, same window; the name (``random:SEED:SIZE:MIX``, then ``:ssd`` and every
    non-default ``key=value``) loads it back.
    """
    count("size", size, positive=True, top=MAX_JOBS)
    validate.choice("mix", mix, MIXES)
    count("nodes", nodes, positive=True, top=MAX_NODES)
    count("burst_buffer", burst_buffer)
    count("max_request", max_request, top=MAX_UNITS // MAX_JOBS)
    validate.number("load", load, 0, 1, lo_open=True)
    validate.boolean("ssd", ssd)
    share, smallest = MIXES[mix]
    ssd_share = SSD_MIXES.get(mix, SSD_MIXES["S5"] if ssd else None)
    if max_request < smallest:
        raise InstanceError(f"max_request must be at least the {mix} mix's smallest request {smallest}, "
                            f"got {max_request!r}")
    rng = np.random.default_rng(seed)
    top = int(math.floor(math.log2(nodes)))
    weights = np.array([2.0 ** (-k / 2) for k in range(top + 1)])
    free_nodes, free_bb = int(nodes * load), int(burst_buffer * load)
    jobs = []
    for i in range(size):
        n = int(min(2 ** rng.choice(top + 1, p=weights / weights.sum()), nodes))
        bb = int(rng.integers(smallest, max_request + 1)) if rng.random() < share else 0
        ssd_need = 0
        if ssd_share is not None:
            ssd_need = int(rng.integers(129, 257)) if rng.random() < ssd_share else int(rng.integers(1, 129))
        jobs.append(Job(f"j{i + 1}", n, bb, ssd_need))
    classes = ((SSDClass(128, free_nodes // 2), SSDClass(256, free_nodes - free_nodes // 2))
               if ssd_share is not None else ())
    given = {"nodes": nodes, "burst_buffer": burst_buffer, "max_request": max_request, "load": float(load)}
    name = f"random:{seed}:{size}:{mix}" + (":ssd" if ssd and mix not in SSD_MIXES else "")
    name += "".join(f":{k}={v!r}" for k, v in given.items() if v != DEFAULTS[k])
    return WindowInstance(Capacity(free_nodes, free_bb, classes), tuple(jobs), name=name,
                          machine=Machine(nodes, burst_buffer))


def _load_random(spec: str) -> WindowInstance:
    """``random:SEED[:SIZE[:MIX[:ssd]]]`` then ``:key=value`` for the other generator parameters."""
    form = "random:SEED[:SIZE[:MIX[:ssd]]][:nodes=N][:burst_buffer=B][:max_request=R][:load=L]"
    parts = spec.split(":")[1:]
    plain = [p for p in parts if "=" not in p]
    keyed = parts[len(plain):]
    ssd = len(plain) == 4 and plain[3] == "ssd"
    if (not 1 <= len(plain) - ssd <= 3 or not all(p.isdigit() for p in plain[:2])
            or any("=" not in p for p in keyed)):
        raise InstanceError(f"random windows are {form}, got {spec!r}")
    kwargs = {}
    for part in keyed:
        key, _, value = part.partition("=")
        if key not in DEFAULTS or key in kwargs:
            raise InstanceError(f"random windows are {form}: unknown or repeated {key!r} in {spec!r}")
        try:
            kwargs[key] = float(value) if key == "load" else int(value)
        except ValueError:
            raise InstanceError(f"{key} must be a number in {spec!r}, got {value!r}") from None
    return generate(*[int(p) for p in plain[:2]], *plain[2:3], ssd=ssd, **kwargs)


def load(spec: str) -> WindowInstance:
    """``paper:example``, ``random:SEED[:SIZE[:MIX[:ssd]]][:key=value...]`` (the name a generated
    window carries), or a JSON file path."""
    if spec == "paper:example":
        return PAPER_EXAMPLE
    if spec.startswith("random:"):
        return _load_random(spec)
    if not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return WindowInstance.from_json(Path(spec))


BUILTIN = ["paper:example"]
