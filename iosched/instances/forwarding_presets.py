"""Forwarding instances to solve: the TaihuLight-like generator, the seed's testbed applications and its
figures as presets, and the built-in names :func:`load` knows (the schema is :mod:`iosched.instances.forwarding`).

Units: GB, GB/s, seconds.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from iosched.errors import InstanceError
from iosched.instances.forwarding import (
    MAX_COMPUTE_NODES,
    MAX_ITEMS,
    ForwardingInstance,
    ForwardingNode,
    History,
    Job,
    even_groups,
)
from iosched.validate import integer, number

# --- TaihuLight: the generator ---------------------------------------------------------------------

TAIHULIGHT_COMPUTE_NODES = 40960
TAIHULIGHT_DEFAULT_NODES = 80  # in daily service, 512:1
TAIHULIGHT_POOL_NODES = 160  # reserved: backup and large runs
FORWARDING_BANDWIDTH = 2.5  # GB/s per forwarding node
PEAK_NODE_BANDWIDTH = FORWARDING_BANDWIDTH / 32  # GB/s per compute node: F = B_f / B_c = 32 in the seed


def taihulight_nodes(default_nodes: int = TAIHULIGHT_DEFAULT_NODES, pool_nodes: int = TAIHULIGHT_POOL_NODES,
                     anomalous: tuple[int, ...] = ()) -> tuple[ForwardingNode, ...]:
    """Forwarding nodes 0..default-1 in service, then the pool, 2.5 GB/s each; ``anomalous`` ids marked."""
    return tuple(ForwardingNode(i, FORWARDING_BANDWIDTH, i in anomalous, "default" if i < default_nodes else "pool")
                 for i in range(default_nodes + pool_nodes))


def draw_job(rng: np.random.Generator, jid: str, history_share: float, with_history: bool,
              decay: float = 0.5, nn: float = 0.09, n1: float = 0.03, volume: float = 5.0) -> Job:
    """One job profile, TaihuLight-like: power-of-two sizes 1..4096 with P(2^k) ~ 2^(-decay k); a share
    ``nn`` N-N and ``n1`` N-1 (half as many below 32 nodes), the rest 1-1; I/O volumes log-normal (median
    ``volume`` GB for N-N and N-1, 2 GB for 1-1, sigma 1.5); 3 % metadata-heavy, 5 % high IOPS."""
    weights = np.array([2.0 ** (-k * decay) for k in range(13)])
    nodes = int(2 ** rng.choice(13, p=weights / weights.sum()))
    u = rng.random()
    mode = "N-N" if u < nn else "N-1" if u < nn + n1 else "1-1"
    if nodes < 32 and mode != "1-1" and rng.random() < 0.5:
        mode = "1-1"
    io = 1 if mode == "1-1" else nodes
    node_bw = PEAK_NODE_BANDWIDTH * (1.0 if mode == "1-1" or rng.random() < 0.5 else 0.25)
    volume = float(rng.lognormal(math.log(volume if mode != "1-1" else 2.0), 1.5))
    heavy = rng.random() < 0.03
    meta = float(rng.uniform(40, 200) if heavy else rng.exponential(3.0))
    iops = "high" if rng.random() < 0.05 else "low"
    bandwidth = "high" if io * node_bw >= FORWARDING_BANDWIDTH else "low"
    history = None
    if with_history and rng.random() < history_share:  # the seed: most jobs recur within +-20 %
        history = History(round(volume * rng.uniform(0.8, 1.2), 3), io, round(meta * rng.uniform(0.8, 1.2), 3))
    return Job(jid, 0, nodes, io, node_bw, round(max(volume, 0.001), 3), mode, round(meta, 3), iops, bandwidth,
               history)


def generate(seed: int, n_jobs: int = 20, compute_nodes: int = TAIHULIGHT_COMPUTE_NODES,
             default_nodes: int = TAIHULIGHT_DEFAULT_NODES, pool_nodes: int = TAIHULIGHT_POOL_NODES,
             anomalous: int = 2, occupancy: float = 0.8, history: float = 0.9) -> ForwardingInstance:
    """A TaihuLight-like instance: ``n_jobs`` jobs to place among running jobs.

    The machine (40960 compute nodes, 80 forwarding nodes in service at 512:1, 160 in the
    pool, 2.5 GB/s each) holds the jobs to place and running jobs up to ``occupancy`` of its
    compute nodes, shuffled into contiguous ranges with idle gaps between (so jobs straddle
    blocks, as the seed found). Running jobs that DFRA would scale already hold dedicated pool
    nodes (up to half of the healthy pool). ``anomalous`` forwarding nodes, anywhere, deliver
    10 % of their bandwidth; a share ``history`` of the jobs to place have a history. Same
    seed, same instance.
    """
    integer("n_jobs", n_jobs, 1, MAX_ITEMS)
    integer("compute_nodes", compute_nodes, 1, MAX_COMPUTE_NODES)
    integer("default_nodes", default_nodes, 1, MAX_ITEMS)
    integer("pool_nodes", pool_nodes, 0, MAX_ITEMS)
    integer("anomalous", anomalous, 0, default_nodes + pool_nodes)
    number("occupancy", occupancy, 0, 1)
    number("history", history, 0, 1)
    if compute_nodes % default_nodes:
        raise InstanceError(f"compute_nodes ({compute_nodes}) must be a multiple of default_nodes ({default_nodes})")
    ratio = compute_nodes // default_nodes
    rng = np.random.default_rng(seed)
    jobs = [draw_job(rng, f"j{i + 1}", history, True) for i in range(n_jobs)]
    jobs = _fitted(jobs, compute_nodes)
    running, used = [], sum(j.nodes for j in jobs)
    while used < occupancy * compute_nodes:
        r = draw_job(rng, f"r{len(running) + 1}", 0.0, False)
        if used + r.nodes > compute_nodes:
            break
        running.append(r)
        used += r.nodes
    items = [("job", j) for j in jobs] + [("run", r) for r in running]
    order = rng.permutation(len(items))
    gaps = rng.multinomial(compute_nodes - used, np.ones(len(items) + 1) / (len(items) + 1))
    pos, placed, run = int(gaps[0]), [], []
    for k, idx in enumerate(order):
        kind, j = items[idx]
        j = replace(j, start=pos)
        (placed if kind == "job" else run).append(j)
        pos += j.nodes + int(gaps[k + 1])
    bad = set(int(x) for x in rng.choice(default_nodes + pool_nodes, size=anomalous, replace=False))
    fwd = taihulight_nodes(default_nodes, pool_nodes, tuple(sorted(bad)))
    idle = [f.id for f in fwd if f.service == "pool" and not f.anomalous]
    idle = idle[:len(idle) // 2]  # running jobs hold at most half of the healthy pool
    run = [_granted(r, idle) for r in run]  # as DFRA would have scaled them at their dispatch
    placed.sort(key=lambda j: int(j.id[1:]))
    run.sort(key=lambda j: int(j.id[1:]))
    return ForwardingInstance(compute_nodes, ratio, fwd, tuple(placed), tuple(run),
                              name=f"random:{seed}:{n_jobs}")


def _fitted(jobs: list[Job], compute_nodes: int) -> list[Job]:
    """Halve the largest job (the first of equals) until the sizes sum to at most 95 % of ``compute_nodes``;
    a heap of sizes, each job rebuilt once at its final size (linear in the jobs and the halvings)."""
    sizes = [j.nodes for j in jobs]
    heap = [(-n, k) for k, n in enumerate(sizes)]
    heapq.heapify(heap)
    total = sum(sizes)
    while total > 0.95 * compute_nodes:
        _, k = heapq.heappop(heap)
        half = max(1, sizes[k] // 2)
        total -= sizes[k] - half
        sizes[k] = half
        heapq.heappush(heap, (-half, k))
        if heap[0][0] == -1:
            raise InstanceError(f"n_jobs={len(jobs)} one-node jobs do not fit compute_nodes={compute_nodes}")
    return [j if n == j.nodes else _resized(j, n) for j, n in zip(jobs, sizes)]


def _resized(j: Job, nodes: int) -> Job:
    io = 1 if j.mode == "1-1" else nodes
    hist = None if j.history is None else replace(j.history, io_nodes=io)
    bw = "high" if io * j.node_bandwidth >= FORWARDING_BANDWIDTH else "low"
    return replace(j, nodes=nodes, io_nodes=io, bandwidth=bw, history=hist)


def _granted(r: Job, idle: list[int]) -> Job:
    """A running job that passes DFRA's scaling test (20 GB, 32 I/O nodes, metadata < 32) holds
    min(ceil(io / 32), what is left) dedicated pool nodes, its compute nodes split evenly."""
    if not (r.volume > 20 and r.io_nodes >= 32 and r.metadata_wait < 32) or not idle:
        return r
    k = min(-(-r.io_nodes // 32), len(idle), r.nodes)
    nodes = [idle.pop(0) for _ in range(k)]
    return replace(r, history=None, forwarding=even_groups(r.nodes, nodes), dedicated=True)


# --- the seed's testbed applications ---------------------------------------------------------------

# name -> (nodes, mode, io_nodes, node_bandwidth GB/s, volume GB, metadata_wait, iops, bandwidth, seed's group)
# Seed values: nodes (Shentu, LAMMPS, Macdrp 1024; swDNN 512; the rest 256 -- Section 6), the modes
# given in the text (AWP N-1, WRF1 1-1, XCFD N-N), the classes it states (WRF1, CAM, AWP low in all
# three dimensions; DNDC the only metadata-heavy one; APT high IOPS with < 1 KB requests; Shentu,
# LAMMPS, MPI-IO N bandwidth-hungry), and the groups (APT, DNDC, WRF1, CAM fail eligibility).
# Assumptions: every volume, io_nodes and node_bandwidth, and the unstated modes and classes.
PEAK = PEAK_NODE_BANDWIDTH
APPS = {
    "cesm": (256, "N-N", 256, PEAK, 50.0, 2.0, "low", "high", "scaling"),
    "cam": (256, "N-N", 16, 0.005, 10.0, 2.0, "low", "low", "non-scaling"),
    "awp": (256, "N-1", 256, 0.001, 40.0, 2.0, "low", "low", "scaling"),
    "shentu": (1024, "N-N", 1024, PEAK, 200.0, 2.0, "low", "high", "scaling"),
    "lammps": (1024, "N-N", 1024, PEAK, 100.0, 2.0, "low", "high", "scaling"),
    "macdrp": (1024, "N-N", 1024, PEAK, 100.0, 2.0, "low", "high", "scaling"),
    "dndc": (256, "N-N", 256, 0.002, 30.0, 100.0, "low", "low", "non-scaling"),
    "wrf1": (256, "1-1", 1, PEAK, 5.0, 1.0, "low", "low", "non-scaling"),
    "apt": (256, "N-N", 256, 0.0003, 5.0, 2.0, "high", "low", "non-scaling"),
    "xcfd": (256, "N-N", 256, PEAK, 60.0, 2.0, "low", "high", "scaling"),
    "swdnn": (512, "N-N", 512, PEAK, 100.0, 2.0, "low", "high", "scaling"),
}
TABLE3_APPS = {  # two more programs of the pairwise study (Table 3), same conventions
    "wrfn": (256, "N-N", 256, PEAK, 40.0, 2.0, "low", "high", "scaling"),
    "mpiio-n": (256, "N-N", 256, PEAK, 40.0, 2.0, "low", "high", "scaling"),
}
# The seed's Section 6 results: I/O speed-up of DFRA over the fixed 512:1 mapping.
SEED_SPEEDUP = {"shentu": 18.9, "cam": 1.03}
SEED_MEAN_SPEEDUP, SEED_SCALING_MEAN_SPEEDUP, SEED_MAX_SPEEDUP = 3.5, 4.8, 18.9
# Table 3 (fragment in the seed's text): (slowdown of the first, slowdown of the second) when the two
# share one forwarding node, 256 compute nodes each.
SEED_TABLE3 = {
    ("wrf1", "wrf1"): (1.0, 1.0), ("wrf1", "wrfn"): (1.0, 1.0), ("wrf1", "shentu"): (1.0, 1.0),
    ("wrf1", "cam"): (1.0, 1.0), ("wrf1", "awp"): (50.0, 1.0), ("wrfn", "wrfn"): (2.1, 2.1),
    ("wrfn", "shentu"): (2.0, 2.3), ("wrfn", "cam"): (1.0, 1.0), ("wrfn", "awp"): (12.5, 1.3),
    ("shentu", "shentu"): (2.0, 2.0), ("shentu", "cam"): (1.0, 1.0), ("shentu", "awp"): (12.5, 1.1),
    ("cam", "cam"): (1.0, 1.0), ("cam", "awp"): (100.0, 1.0), ("awp", "awp"): (2.0, 2.0),
    ("apt", "mpiio-n"): (10.0, 1.0),
}


def app_job(app: str, jid: str, start: int, nodes: int | None = None, history: bool = True) -> Job:
    """A job of the testbed application ``app`` (``nodes`` overrides its size), with its own figures as history."""
    n, mode, io, bw, vol, meta, iops, band, _ = {**APPS, **TABLE3_APPS}[app]
    if nodes is not None:
        io = 1 if mode == "1-1" else max(1, io * nodes // n)
        n = nodes
    return Job(jid, start, n, io, bw, vol, mode, meta, iops, band, History(vol, io, meta) if history else None)


NEIGHBOUR = ("N-N", 1 / 8, 0.01, 5.0)  # a typical neighbour: mode, share of I/O nodes, B_c GB/s, volume GB


def neighbour(jid: str, start: int, nodes: int) -> Job:
    """A typical low-I/O running job (assumption): an eighth of its nodes write 5 GB at 10 MB/s each."""
    mode, share, bw, vol = NEIGHBOUR
    return Job(jid, start, nodes, max(1, int(nodes * share)), bw, vol, mode, 1.0, "low", "low")


TESTBED_START = 10 * 512 + 256  # half a block into block 10


def testbed(job: Job, name: str) -> ForwardingInstance:
    """``job`` (starting at TESTBED_START) alone to place on TaihuLight, misaligned as the seed found nearly
    every job, with typical low-I/O running jobs on the rest of the blocks it crosses; no anomalous node."""
    end = TESTBED_START + job.nodes
    tail = -end % 512
    running = [neighbour("before", 10 * 512, 256)] + ([neighbour("after", end, tail)] if tail else [])
    return ForwardingInstance(TAIHULIGHT_COMPUTE_NODES, 512, taihulight_nodes(), (job,), tuple(running), name=name)


def app_preset(app: str) -> ForwardingInstance:
    """``app`` at its Section 6 scale on the testbed (:func:`testbed`)."""
    return testbed(app_job(app, app, TESTBED_START), f"testbed:{app}")


def pair(first: str, second: str) -> ForwardingInstance:
    """Table 3's co-run: ``first`` and ``second`` on 256 compute nodes each, sharing one forwarding node
    (block 0 of an 8-block machine with an 8-node pool); both are jobs to place."""
    a = app_job(first, first, 0, 256)
    b = app_job(second, second if second != first else second + "-2", 256, 256)
    return ForwardingInstance(4096, 512, taihulight_nodes(8, 8), (a, b), (), name=f"pair:{first}:{second}")


def figure4() -> ForwardingInstance:
    """Figure 4's shared mode: Shentu (1024 nodes) with one forwarding node to itself and two shared,
    one with AWP (256 nodes) and one with LAMMPS (256 nodes); all three running as given."""
    shentu = app_job("shentu", "shentu", 256, 1024)
    awp, lammps = app_job("awp", "awp", 0, 256), app_job("lammps", "lammps", 1280, 256)
    return ForwardingInstance(2048, 512, taihulight_nodes(4, 4), (awp, shentu, lammps), (), name="figure4")


def template() -> ForwardingInstance:
    """A small instance to start from (``iosched show forwarding --template``): 1024 compute nodes in two blocks
    of 512, two forwarding nodes in service and two in the pool (one anomalous), a running job on the first block
    and two jobs to place, one with a history."""
    nodes = (ForwardingNode(0, FORWARDING_BANDWIDTH), ForwardingNode(1, FORWARDING_BANDWIDTH),
             ForwardingNode(2, FORWARDING_BANDWIDTH, service="pool"),
             ForwardingNode(3, FORWARDING_BANDWIDTH, anomalous=True, service="pool"))
    running = (Job("r1", 0, 256, 32, 0.01, 5.0),)
    jobs = (Job("j1", 256, 512, 512, PEAK_NODE_BANDWIDTH, 100.0, "N-1", 2.0, bandwidth="high",
                history=History(90.0, 512, 2.0)),
            Job("j2", 768, 256, 1, PEAK_NODE_BANDWIDTH, 5.0, "1-1"))
    return ForwardingInstance(1024, 512, nodes, jobs, running, name="example")


def load(spec: str) -> ForwardingInstance:
    """``testbed:APP``, ``pair:A:B``, ``figure4``, ``random:SEED[:N_JOBS]``, or a JSON file path."""
    if spec.startswith("testbed:"):
        app = spec.split(":", 1)[1]
        if app not in APPS:
            raise InstanceError(f"testbed application must be one of {', '.join(APPS)}, got {app!r}")
        return app_preset(app)
    if spec.startswith("pair:"):
        parts = spec.split(":")[1:]
        known = {**APPS, **TABLE3_APPS}
        if len(parts) != 2 or not all(p in known for p in parts):
            raise InstanceError(f"pairs are pair:A:B with A, B among {', '.join(known)}, got {spec!r}")
        return pair(*parts)
    if spec == "figure4":
        return figure4()
    if spec.startswith("random:"):
        parts = spec.split(":")[1:]
        if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
            raise InstanceError(f"random instances are random:SEED[:N_JOBS], got {spec!r}")
        return generate(*[int(p) for p in parts])
    if not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return ForwardingInstance.from_json(Path(spec))


BUILTIN = [f"testbed:{a}" for a in APPS] + ["figure4", "pair:wrf1:awp", "random:0:20"]
