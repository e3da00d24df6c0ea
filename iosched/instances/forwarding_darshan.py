"""Forwarding instances from Darshan logs: a batch of jobs to place, one per log (the reader is
:mod:`iosched.importers.darshan`; the schema :mod:`iosched.instances.forwarding`)."""

from __future__ import annotations

from dataclasses import replace

from iosched.instances.forwarding import (
    MAX_COMPUTE_NODES,
    MAX_ITEMS,
    MIN_BANDWIDTH,
    ForwardingInstance,
    ForwardingNode,
    History,
    Job,
    Level,
    Mode,
    Service,
)
from iosched.instances.forwarding_presets import FORWARDING_BANDWIDTH, PEAK_NODE_BANDWIDTH
from iosched.validate import integer, number


def from_darshan(logs, procs_per_node: int = 1, node_bandwidth: float = PEAK_NODE_BANDWIDTH,
                 forwarding_bandwidth: float = FORWARDING_BANDWIDTH, default_ratio: int = 512,
                 pool_nodes: int | None = None, name: str | None = None) -> ForwardingInstance:
    """A batch of jobs to place, one per Darshan log (a log or folder path, a read
    :class:`~iosched.importers.darshan.DarshanLog`, or a list of them), in the order they started.

    Per job, from the POSIX and STDIO counters (the layer that reaches the file system; MPI-IO
    sits above POSIX and would count the bytes twice; the terminal streams are left out):
    compute nodes = ceil(processes / ``procs_per_node``); I/O nodes from the ranks that moved bytes
    (a file Darshan reduced to rank -1 was opened by every rank); volume = bytes read + written
    (GB); mode 1-1 when one rank did the I/O, N-1 when files shared by several ranks carry at least
    half the bytes (N-M, several shared files, is run as N-1), else N-N; metadata_wait = the mean
    number of metadata operations in flight (Little's law: the summed F_META_TIME over the run
    time); iops high when more than half of the POSIX reads and writes are under 1 KiB. The log
    itself is the job's history (DFRA decides from the previous run). ``node_bandwidth`` (GB/s per
    compute node) is not in a log. The machine: the jobs side by side from node 0 in arrival
    order, one default forwarding node per ``default_ratio`` compute nodes, ``pool_nodes`` idle
    ones (default twice as many, TaihuLight's 160:80), ``forwarding_bandwidth`` GB/s each.

    A POSIX or STDIO module flagged partial (Darshan ran out of records) is summed as it is and
    named in ``assumed``.

    Parameters
    ----------
    logs : str, Path, DarshanLog or list of them
        A log or a folder of logs (read with the POSIX, STDIO and MPI-IO modules), or logs already read.
    procs_per_node : int
        Processes per compute node.
    node_bandwidth, forwarding_bandwidth : float
        GB/s per compute node and per forwarding node.
    default_ratio : int
        Compute nodes per default forwarding node.
    pool_nodes : int, optional
        Idle forwarding nodes; default twice the default ones.
    name : str, optional
        The instance's name.

    Returns
    -------
    ForwardingInstance
        One job to place per log accepted, in arrival order; every assumption in ``provenance["assumed"]``.

    Raises
    ------
    InstanceError
        A bad argument (named), or a log without file-system bytes through POSIX or STDIO (naming it). In a
        batch such a log is left out and listed in ``provenance["refused"]``; the batch is refused only when
        every log is.
    """
    from iosched.importers import darshan as dx

    integer("procs_per_node", procs_per_node, 1, MAX_COMPUTE_NODES)
    number("node_bandwidth", node_bandwidth, MIN_BANDWIDTH, 1e6)
    number("forwarding_bandwidth", forwarding_bandwidth, MIN_BANDWIDTH, 1e6)
    integer("default_ratio", default_ratio, 1, MAX_COMPUTE_NODES)
    profiles, refused = dx.each(logs, ("POSIX", "STDIO", "MPI-IO"),
                                lambda log: _darshan_profile(log, procs_per_node, node_bandwidth,
                                                             forwarding_bandwidth))
    profiles.sort(key=lambda p: p["arrival"])
    jobs: list[Job] = []
    pos = 0
    seen: dict[str, int] = {}
    for p in profiles:
        jid = str(p["job_id"])
        seen[jid] = seen.get(jid, 0) + 1
        jid = jid if seen[jid] == 1 else f"{jid}#{seen[jid]}"
        j = p.pop("job")
        jobs.append(replace(j, id=jid, start=pos))
        p["id"] = jid
        pos += j.nodes
    blocks = -(-pos // default_ratio)
    pool = 2 * blocks if pool_nodes is None else integer("pool_nodes", pool_nodes, 0, MAX_ITEMS)
    fwd = tuple(ForwardingNode(i, forwarding_bandwidth, False, Service.DEFAULT if i < blocks else Service.POOL)
                for i in range(blocks + pool))
    t0 = profiles[0]["arrival"]
    for p in profiles:
        p["arrival_s"] = round(p.pop("arrival") - t0, 6)
    partial = "; ".join(f"{p['log']} ({', '.join(p['partial'])})" for p in profiles if p.get("partial"))
    assumed = (f"{len(jobs)} jobs side by side on {blocks * default_ratio} compute nodes in arrival order "
               f"({procs_per_node} processes per node), {blocks} + {pool} forwarding nodes of {forwarding_bandwidth} "
               f"GB/s at {default_ratio}:1, node bandwidth {node_bandwidth} GB/s (not in a log), each log its job's "
               f"history" + (f"; partial modules summed as they are (Darshan's record limit: volume, I/O ranks and "
                             f"times are lower bounds): {partial}" if partial else "") + (f"; {len(refused)} logs "
                                                                                         f"refused" if refused else ""))
    provenance = {"source": "darshan", "assumed": assumed, "jobs": profiles}
    if refused:
        provenance["refused"] = [{"log": n, "reason": r} for n, r in refused]
    return ForwardingInstance(blocks * default_ratio, default_ratio, fwd, tuple(jobs), (),
                              name=name or f"darshan:{len(jobs)}-jobs", provenance=provenance)


def _darshan_profile(log, procs_per_node: int, node_bandwidth: float, forwarding_bandwidth: float) -> dict:
    """One log as a job to place (at node 0: the batch moves it) and its provenance entry."""
    from iosched.importers import darshan as dx

    io = dx.job_io(log)
    if io.io_procs == 1:
        mode, seen = "1-1", "1-1"
    elif 2 * io.shared_bytes >= io.bytes:
        mode, seen = "N-1", "N-1" if io.shared_files == 1 else f"N-M ({io.shared_files} shared files)"
    else:
        mode, seen = "N-N", "N-N"
    nodes = -(-io.nprocs // procs_per_node)
    io_nodes = 1 if mode == "1-1" else min(nodes, -(-io.io_procs // procs_per_node))
    meta_wait = io.meta_time_s / io.run_time_s
    iops = "high" if io.ops and 2 * io.small_ops > io.ops else "low"
    volume = io.bytes / 1e9  # GB
    job = Job("log", 0, nodes, io_nodes, node_bandwidth, volume, Mode(mode), round(meta_wait, 6), Level(iops),
              Level.HIGH if io_nodes * node_bandwidth >= forwarding_bandwidth else Level.LOW,
              History(volume, io_nodes, round(meta_wait, 6)))
    share = (io.io_time_s + io.meta_time_s) / (io.nprocs * io.run_time_s)
    partial = {"partial": [m for m in io.modules if log.modules[m]["partial"]]}  # Darshan's record limit (1,024)
    return {"job": job, "arrival": log.start_s, **log.provenance(io.modules, dx.JOB_IO_COUNTERS, **partial),
            "files_per_process": seen, "io_processes": io.io_procs, "io_time_share": round(share, 6),
            "run_time_s": round(io.run_time_s, 6),
            "small_request_share": round(io.small_ops / io.ops, 6) if io.ops else None}
