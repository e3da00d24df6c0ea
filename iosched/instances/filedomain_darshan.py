"""Filedomain instances from Darshan logs: the collective write of one shared file (the reader is
:mod:`iosched.importers.darshan`; the schema :mod:`iosched.instances.filedomain`)."""

from __future__ import annotations

from dataclasses import replace

from iosched.errors import InstanceError, ParameterError
from iosched.instances.filedomain import MAX_AGGREGATORS, MAX_REQUESTS, FileDomainInstance, MiB
from iosched.instances.filedomain_presets import platform
from iosched.validate import integer


def from_darshan(log, file: str | None = None, aggregators: int | None = None, procs_per_node: int | None = None,
                 stripe_size: int | None = None, stripe_count: int | None = None, first_server: int | None = None,
                 aggregator_gbs: float = 1.0, server_gbs: float = 1.0, node_gbs: float | None = None,
                 locking: str | None = None, acquire_s: float = 1e-4, revoke_s: float = 1e-3,
                 name: str | None = None) -> FileDomainInstance:
    """The collective write of one shared file in a Darshan log (a path or a read
    :class:`~iosched.importers.darshan.DarshanLog`).

    The file: ``file`` (its full name or a unique suffix of it), else the file written by every
    rank that received the most bytes. Its data: each rank's write pieces from DXT_MPIIO, else
    DXT_POSIX (holes inside the span stay holes); without DXT, the POSIX counters give only the
    last byte written, and the region [0, last byte] is taken as written whole.

    Striping, from the log where it holds it, else from the file system of the mount holding the
    file (the log's mount table), with stated defaults (:data:`DARSHAN_DEFAULTS`): the LUSTRE
    component covering the region's first byte (servers are its OSTs in stripe order); on Lustre
    without a LUSTRE record, Lustre's default layout (1 stripe of 1 MiB); on GPFS, its block size
    (POSIX_FILE_ALIGNMENT, the file system's st_blksize, where the log holds it) as the stripe
    and the token unit, token locking, over one server (the log does not say how many NSD servers);
    on any other file system (ext4, NFS, XFS, tmpfs, DVS...) no striping: one server and a 1 MiB
    unit. ``stripe_size``, ``stripe_count``, ``first_server`` and ``locking`` given replace the
    defaults; a given value the log contradicts (a LUSTRE record's size, count or first OST, a GPFS
    block size) is a ParameterError naming both, never dropped.

    Aggregators: one per node, as ROMIO chooses by default (cb_nodes), the nodes being the DXT
    records' host names, else ceil(processes / ``procs_per_node``) (default one process per node:
    the log names no host); ``aggregators`` given places aggregator a on node a mod (nodes).
    Bandwidths (GB/s) and lock costs (s) are not in a log: the arguments' values. Every choice
    is said in ``provenance["assumed"]``.

    Parameters
    ----------
    log : str, Path or DarshanLog
        One log (read with the DXT, POSIX, MPI-IO and LUSTRE modules) or a log already read.
    file : str, optional
        The shared file, by its full name or a unique suffix; default the one written by every rank that
        received the most bytes.
    aggregators, procs_per_node : int, optional
        The aggregator count and processes per node where the log names no host.
    stripe_size, stripe_count, first_server : int, optional
        The striping, where the log does not hold it (a given value the log contradicts is refused).
    aggregator_gbs, server_gbs, node_gbs : float
        Bandwidths (GB/s) per aggregator, per server and per node.
    locking : str, optional
        The lock protocol; default the file system's.
    acquire_s, revoke_s : float
        Lock acquisition and revocation costs (s).
    name : str, optional
        The instance's name.

    Returns
    -------
    FileDomainInstance
        The region, the ranks' pieces, the striping, the aggregators; every choice in
        ``provenance["assumed"]``.

    Raises
    ------
    InstanceError
        Naming the log and what it lacks: one process only, no shared file written by several ranks, a file
        the log does not hold, a partial DXT trace.
    ParameterError
        A given value the log contradicts (a striping field, procs_per_node against its host names: both
        named).
    """
    from iosched.importers import darshan as dx

    if not isinstance(log, dx.DarshanLog):
        log = dx.read(log, ("DXT_MPIIO", "DXT_POSIX", "POSIX", "MPI-IO", "LUSTRE"))
    where = log.name
    if log.nprocs < 2:
        raise InstanceError(f"{where}: a single-process job (nprocs {log.nprocs}) has no collective write of a "
                            f"shared file")
    # DXT_MPIIO before 3.2 records collective writes at offset -1 (unknown): DXT_POSIX has the offsets then
    source = next((m for m in dx.DXT_MODULES if any(len(r.writes) for r in log.dxt.get(m, ()))
                   and all((r.writes[:, 0] >= 0).all() for r in log.dxt[m])), None)
    if source is not None and log.modules[source]["partial"]:
        raise InstanceError(f"{where}: {source} is partial (Darshan's trace buffer filled up): the region it "
                            f"gives would be cut off")
    if source is not None:
        written: dict[str, dict[int, list]] = {}
        for r in log.dxt[source]:
            if len(r.writes):
                written.setdefault(r.file, {}).setdefault(r.rank, []).append(r.writes)
        sizes = {f: sum(int(w[:, 1].sum()) for ws in ranks.values() for w in ws) for f, ranks in written.items()}
        rank_count = {f: len(ranks) for f, ranks in written.items()}
    else:
        df = log.counters.get("POSIX")
        if df is None or not len(df):
            raise InstanceError(f"{where}: no DXT_MPIIO, DXT_POSIX or POSIX records to find a written region "
                                f"(modules: {dx.module_list(log)})")
        rows = df[(df["POSIX_BYTES_WRITTEN"] > 0) & ~df["file"].isin(dx.STREAMS)]
        sizes = rows.groupby("file")["POSIX_BYTES_WRITTEN"].sum().astype(int).to_dict()
        shared = set(rows.loc[rows["rank"] == -1, "file"])
        rank_count = {f: log.nprocs if f in shared else int((rows["file"] == f).sum()) for f in sizes}
    if not sizes:
        raise InstanceError(f"{where}: no file is written (modules: {dx.module_list(log)})")
    if file is not None:
        matches = [f for f in sizes if f == file] or [f for f in sizes if f.endswith(file)]
        if len(matches) != 1:
            some = ", ".join(sorted(sizes, key=lambda f: sizes[f], reverse=True)[:5])
            what = "names several files" if matches else "is not a file the log shows written"
            raise InstanceError(f"{where}: file {file!r} {what} (written: {some})")
        chosen = matches[0]
        if rank_count[chosen] < 2:
            raise InstanceError(f"{where}: file {chosen!r} is written by one rank only: no collective write")
    else:
        every = [f for f in sizes if rank_count[f] >= log.nprocs]
        if not every:
            most = max(sizes, key=lambda f: (rank_count[f], sizes[f]))
            raise InstanceError(f"{where}: no shared file is written by all {log.nprocs} ranks (the most shared, "
                                f"{most!r}, by {rank_count[most]}); name one with file=")
        chosen = max(every, key=lambda f: sizes[f])
    requests: list[list[tuple[int, int]]] | None = None
    if source is not None:
        requests = [[] for _ in range(log.nprocs)]
        for rank, ws in written[chosen].items():
            if not 0 <= rank < log.nprocs:
                raise InstanceError(f"{where}: {source} names rank {rank}, outside the job's {log.nprocs}")
            requests[rank] = [(int(o), int(n)) for w in ws for o, n in w[:, :2] if n > 0]
        pieces = sum(len(p) for p in requests)
        if pieces > MAX_REQUESTS:
            raise InstanceError(f"{where}: {chosen!r} is written in {pieces} pieces, more than {MAX_REQUESTS}")
        lo = min(o for rank in requests for o, _ in rank)
        hi = max(o + n for rank in requests for o, n in rank)
        region, data_from = (lo, hi - lo), f"{source} ({pieces} pieces by {rank_count[chosen]} ranks)"
        if source == "DXT_POSIX" and "DXT_MPIIO" in log.dxt:
            data_from += ", as written to the file system (DXT_MPIIO has no offsets)"
        counters = ["write segments: offset, length"]
    else:
        last = int(rows.loc[rows["file"] == chosen, "POSIX_MAX_BYTE_WRITTEN"].max())
        region, data_from = (0, last + 1), "POSIX counters (no DXT: region from offset 0, assumed written whole)"
        counters = ["POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_WRITTEN"]
    given = {k: v for k, v in (("stripe_size", stripe_size), ("stripe_count", stripe_count),
                               ("first_server", first_server), ("locking", locking)) if v is not None}
    layout = _darshan_striping(log, chosen, region[0], given)
    counters += layout["counters"]
    hosts = list(dict.fromkeys(r.hostname for m in dx.DXT_MODULES for r in sorted(log.dxt.get(m, ()),
                                                                                   key=lambda r: r.rank)
                               if r.hostname))
    if hosts:
        if procs_per_node is not None:
            raise ParameterError(f"{where}: procs_per_node={procs_per_node} given, but the log's DXT host names "
                                 f"place the {log.nprocs} processes on {len(hosts)} nodes: drop procs_per_node")
        node_count, node_from = len(hosts), f"the {len(hosts)} DXT hosts"
    else:
        ppn = 1 if procs_per_node is None else integer("procs_per_node", procs_per_node, 1, MAX_AGGREGATORS)
        node_count = -(-log.nprocs // ppn)
        if node_count > MAX_AGGREGATORS:
            raise InstanceError(f"{where}: {log.nprocs} processes at {ppn} per node make {node_count} nodes, more "
                                f"than {MAX_AGGREGATORS}: give procs_per_node")
        node_from = (f"{node_count} nodes, {ppn} process{'es' if ppn > 1 else ''} per node "
                     f"({'given' if procs_per_node is not None else 'assumed'}: the log names no host)")
    if aggregators is not None:
        integer("aggregators", aggregators, 1, MAX_AGGREGATORS)
        nodes, agg_from = [a % node_count for a in range(aggregators)], f"{aggregators} aggregators given on " \
                                                                         f"{node_from}"
    else:
        nodes, agg_from = list(range(node_count)), f"one aggregator per node (ROMIO's default) on {node_from}"
    inst = platform(layout["stripe_count"], nodes, layout["stripe_size"], region, requests, aggregator_gbs,
                    server_gbs, node_gbs, layout["locking"], None, acquire_s, revoke_s, layout["first_server"],
                    name=name or f"darshan:{log.path.stem}")
    data = inst.data_bytes
    gaps = [[int(a), int(b)] for a, b in zip(inst.data[:-1, 1], inst.data[1:, 0])]
    holes = "" if inst.full else (f", {len(gaps)} holes: {inst.region_length - data} bytes of the span unwritten "
                                  f"(the first at [{gaps[0][0]}, {gaps[0][1]}))")
    again = "" if sizes[chosen] == data else f" ({sizes[chosen]} with overwrites)"
    assumed = (f"{chosen}: region [{region[0]}, {region[0] + region[1]}) from {data_from}, {data} bytes written"
               f"{again}{holes}; {layout['text']}; {agg_from}; bandwidths (aggregator {aggregator_gbs}, server "
               f"{server_gbs}{'' if node_gbs is None else f', node {node_gbs}'} GB/s) and lock costs ({acquire_s}, "
               f"{revoke_s} s) are not in the log: given or defaults")
    modules = [source or "POSIX", *layout["modules"]]
    return replace(inst, provenance=log.provenance(modules, counters, file=chosen, assumed=assumed,
                                                   mount=layout["mount"], holes=gaps[:20], hole_count=len(gaps)))


DARSHAN_DEFAULTS = {"stripe_size": MiB, "stripe_count": 1}  # no striping in the log: one server, a 1 MiB unit


def _darshan_striping(log, chosen: str, start: int, given: dict) -> dict:
    """The striping of ``chosen`` (its LUSTRE record, else its mount's file system with stated defaults),
    ``given`` values in place of the defaults; a given value the log contradicts is a ParameterError."""
    where, mount = log.name, log.mount(chosen)
    kind = mount[1].lower() if mount else None
    on = f"the file is on {kind} at {mount[0]}" if mount else "no mount point of the log's table holds the file"
    held: dict = {}  # what the log itself says
    defaults: dict[str, int | str]  # what is assumed where nothing is given
    comps = log.lustre.get(chosen, [])
    comp = next((c for c in comps if c.extent_start <= start and (c.extent_end < 0 or start < c.extent_end)), None)
    modules, counters = [], []
    if comp is not None and comp.stripe_size > 0 and comp.stripe_count > 0:
        held = {"stripe_size": comp.stripe_size, "stripe_count": comp.stripe_count, "first_server": 0}
        origin = (f"from LUSTRE (OSTs {list(comp.osts)} as servers 0..{comp.stripe_count - 1}"
                  + (f"; component 1 of {len(comps)}" if len(comps) > 1 else "") + ")")
        modules, counters = ["LUSTRE"], ["LUSTRE_COMP_STRIPE_SIZE", "LUSTRE_COMP_STRIPE_COUNT", "LUSTRE_OST_IDS"]
        defaults, default_from = {"locking": "extent"}, "Lustre's extent locks"
    elif kind == "lustre":
        defaults = {**DARSHAN_DEFAULTS, "first_server": 0, "locking": "extent"}
        origin, default_from = "", f"Lustre's default layout: {on} and the log has no LUSTRE record for it"
    elif kind == "gpfs":
        df = log.counters.get("POSIX")
        rows = df[df["file"] == chosen] if df is not None and len(df) else None
        block = int(rows["POSIX_FILE_ALIGNMENT"].max()) if rows is not None and len(rows) else 0
        defaults = {"stripe_count": 1, "first_server": 0, "locking": "token"}
        if block > 0:
            held = {"stripe_size": block}
            counters = ["POSIX_FILE_ALIGNMENT"]
            origin = "(stripe and token unit: the GPFS block size, POSIX_FILE_ALIGNMENT)"
        else:
            defaults["stripe_size"] = DARSHAN_DEFAULTS["stripe_size"]
            origin = ""
        default_from = f"{on}; the log does not say over how many NSD servers GPFS stripes it"
    else:
        defaults = {**DARSHAN_DEFAULTS, "first_server": 0, "locking": "extent"}
        origin, default_from = "", f"no striping: {on}"
    for key, value in given.items():
        if key in held and value != held[key]:
            raise ParameterError(f"{where}: {key}={value!r} given, but the log holds {key} {held[key]!r} for "
                                 f"{chosen!r} ({origin}): drop {key}, or edit the imported instance")
    out = {**defaults, **held, **given}
    first = f" from server {out['first_server']}" if out["first_server"] else ""
    parts = [f"striping {out['stripe_size']} B x {out['stripe_count']}{first}" + (f" {origin}" if origin else "")]
    assumed = [k for k in defaults if k not in given and k not in held]
    if assumed:
        parts.append(f"{', '.join(f'{k} {out[k]}' for k in assumed)} assumed ({default_from})")
    if given:
        parts.append(f"{', '.join(f'{k} {v}' for k, v in given.items())} given")
    return {**out, "text": "; ".join(parts), "modules": modules, "counters": counters,
            "mount": list(mount) if mount else None}
