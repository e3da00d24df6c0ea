"""Workloads: the Standard Workload Format (SWF) extended with burst buffer and SSD columns.

A line holds the 18 SWF fields (Parallel Workloads Archive; -1 = unknown), then, as in
the BBSched authors' simulator, one integer column per extra resource: column 19 the
burst buffer request (GB), column 20 (optional) the local SSD per node (GB). ``;`` lines
are comments; the header comments ``; MaxNodes: N`` and ``; BurstBuffer: B`` (GB) give
the capacities. Every field must be an integer; a bad line raises :class:`InstanceError`
naming the line number and the field. Jobs asking for more nodes or burst buffer than the
machine has are dropped and listed in :attr:`Trace.dropped`.

What the simulator uses: job number (1), submit time (2, s), run time (4, s), requested
processors (8; field 5 when 8 is -1) as nodes, requested time (9, s; the run time when
-1). The other fields are kept as read, for writing the trace back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from iosched import validate
from iosched.errors import InstanceError
from iosched.instances.window_presets import MIXES as WINDOW_MIXES
from iosched.instances.window_presets import SSD_MIXES, THETA_BB_GB, THETA_NODES  # Theta: 4,392 nodes, 1.26 PB

FIELDS = ("job", "submit", "wait", "run", "allocated", "cpu", "memory", "requested", "requested_time",
          "requested_memory", "status", "user", "group", "executable", "queue", "partition", "preceding",
          "think")
EXTRA = ("burst_buffer", "ssd_per_node")  # columns 19 and 20
MAX_GENERATED = 10**6  # jobs of a generated trace: 10^6 simulate in about 57 s and 0.75 GB here (10^7 would take
#                        ten times both)
MAX_VALUE = 2**53  # an SWF field's largest magnitude: times and sizes stay exact as float64 in the metrics
MAX_NODES = 2**31 - 1  # a machine's nodes (MaxNodes, --nodes): node-seconds of a 2^22 s span stay exact
MAX_REQUEST_GB = 285_000  # the largest Theta request of the paper (Table 2: BB range up to 285 TB)
# the paper's S1-S4 (share of jobs given a BB request, smallest request in GB): the window instances' table;
# S5-S7 are S2 with SSD per node (SSD_MIXES)
MIXES = {mix: WINDOW_MIXES[mix] for mix in ("S1", "S2", "S3", "S4")}


@dataclass(frozen=True)
class Trace:
    """Jobs of a workload (one row each, in submit order) and the machine's capacities.

    ``fields``: the 18 SWF fields, int64 (n, 18). ``burst_buffer``, ``ssd_per_node``: the
    extra columns (GB; zeros when absent). ``nodes`` and ``bb_capacity``: the machine
    (nodes, GB). ``dropped``: (job number, reason) of jobs left out. ``extra``: how many
    extra columns to write (0, 1 or 2).
    """

    fields: np.ndarray
    burst_buffer: np.ndarray
    ssd_per_node: np.ndarray
    nodes: int
    bb_capacity: int = 0
    dropped: tuple[tuple[int, str], ...] = ()
    extra: int = 1
    comments: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def ids(self) -> np.ndarray:
        return self.fields[:, 0]

    @property
    def submit(self) -> np.ndarray:
        return self.fields[:, 1]

    @property
    def run(self) -> np.ndarray:
        return self.fields[:, 3]

    @property
    def job_nodes(self) -> np.ndarray:
        """Nodes each job asks for: requested processors, or allocated ones when unknown."""
        req = self.fields[:, 7]
        return np.where(req > 0, req, self.fields[:, 4])

    @property
    def requested_time(self) -> np.ndarray:
        """The wall-time limit (s); the run time when the trace does not give it."""
        req = self.fields[:, 8]
        return np.where(req > 0, req, self.fields[:, 3])

    def head(self, count: int) -> Trace:
        """The first ``count`` jobs."""
        validate.integer("count", count, 1)
        return replace(self, fields=self.fields[:count], burst_buffer=self.burst_buffer[:count],
                       ssd_per_node=self.ssd_per_node[:count])


def _int(text: str, where: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InstanceError(f"{where}: expected an integer, got {text!r}") from None
    if abs(value) > MAX_VALUE:
        raise InstanceError(f"{where}: {value} is beyond 2^53, which the simulator cannot represent exactly")
    return value


def read_swf(path: str | Path, nodes: int | None = None, burst_buffer: int | None = None) -> Trace:
    """Read an (extended) Standard Workload Format file (the Parallel Workloads Archive's, with up to two
    extra columns: burst buffer and SSD per node, GB).

    Parameters
    ----------
    path : str or Path
        The SWF file.
    nodes, burst_buffer : int, optional
        The machine's nodes and burst buffer (GB): override or supply the header's ``MaxNodes`` and
        ``BurstBuffer``.

    Returns
    -------
    Trace
        The jobs in submit order and the machine's capacities; jobs left out with their reason in
        ``dropped``.

    Raises
    ------
    InstanceError
        No such file, or, naming line and field: a wrong number of fields, a non-integer, a duplicate job
        number, a negative submit time, a run time or node count that is not positive.
    """
    path = Path(path)
    if not path.is_file():
        raise InstanceError(f"no such trace file: {str(path)!r}")
    header: dict[str, int] = {}
    comments, rows, extras = [], [], []
    width = None
    with path.open(encoding="utf-8", errors="replace") as f:  # SWF is ASCII: a stray byte shows as U+FFFD
        for number, line in enumerate(f, 1):
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                comments.append(text)
                key, _, value = text[1:].partition(":")
                if key.strip() in ("MaxNodes", "BurstBuffer") and value.strip():
                    header[key.strip()] = _int(value.strip(), f"{path.name} line {number} ({key.strip()})")
                continue
            parts = text.split()
            if len(parts) not in (18, 19, 20):
                raise InstanceError(f"{path.name} line {number}: {len(parts)} fields, expected 18 SWF fields "
                                    f"and at most 2 extra columns ({', '.join(EXTRA)})")
            if width is None:
                width = len(parts)
            elif len(parts) != width:
                raise InstanceError(f"{path.name} line {number}: {len(parts)} fields, earlier lines have {width}")
            names = FIELDS + EXTRA
            values = [_int(p, f"{path.name} line {number} field {k + 1} ({names[k]})") for k, p in enumerate(parts)]
            _check_row(values, f"{path.name} line {number}")
            rows.append(values[:18])
            extras.append(values[18:] + [0] * (20 - len(values)))
    if not rows:
        raise InstanceError(f"{path.name}: no jobs")
    fields = np.array(rows, dtype=np.int64)
    extra = np.array(extras, dtype=np.int64)
    ids = fields[:, 0]
    if len(np.unique(ids)) != len(ids):
        _, first = np.unique(ids, return_index=True)
        dup = np.setdiff1d(np.arange(len(ids)), first)[0]  # the first row repeating an earlier job number
        raise InstanceError(f"{path.name}: job number {ids[dup]} appears twice (field 1, job)")
    cap_nodes = nodes if nodes is not None else header.get("MaxNodes")
    if cap_nodes is None:
        raise InstanceError(f"{path.name}: no '; MaxNodes:' header; give the machine's nodes")
    cap_bb = burst_buffer if burst_buffer is not None else header.get("BurstBuffer", 0)
    return _trace(fields, extra[:, 0], extra[:, 1], cap_nodes, cap_bb, (width or 18) - 18, tuple(comments))


def _check_row(values: list[int], where: str) -> None:
    if values[1] < 0:
        raise InstanceError(f"{where} field 2 (submit): {values[1]} is negative")
    if values[3] <= 0:
        raise InstanceError(f"{where} field 4 (run): {values[3]}, a run time must be positive")
    if values[7] <= 0 and values[4] <= 0:
        raise InstanceError(f"{where} field 8 (requested): {values[7]} and field 5 (allocated) {values[4]}, "
                            f"a job needs a positive node count")
    for k, name in zip((18, 19), EXTRA):
        if k < len(values) and values[k] < 0:
            raise InstanceError(f"{where} field {k + 1} ({name}): {values[k]} is negative")


def _trace(fields, bb, ssd, nodes, bb_capacity, extra, comments=()) -> Trace:
    """A Trace in submit order, jobs beyond the capacities dropped (and listed)."""
    validate.integer("nodes", nodes, 1, MAX_NODES)
    validate.integer("burst_buffer", bb_capacity, 0, MAX_VALUE)
    order = np.argsort(fields[:, 1], kind="stable")
    fields, bb, ssd = fields[order], bb[order], ssd[order]
    req = np.where(fields[:, 7] > 0, fields[:, 7], fields[:, 4])
    too_wide, too_deep = req > nodes, bb > bb_capacity
    dropped = [(int(fields[k, 0]), f"{req[k]} nodes > {nodes}") for k in np.flatnonzero(too_wide)]
    dropped += [(int(fields[k, 0]), f"burst buffer {bb[k]} GB > {bb_capacity}")
                for k in np.flatnonzero(too_deep & ~too_wide)]
    keep = ~(too_wide | too_deep)
    if not keep.any():
        raise InstanceError(f"every job asks for more than the machine ({nodes} nodes, {bb_capacity} GB)")
    return Trace(fields[keep], bb[keep], ssd[keep], int(nodes), int(bb_capacity), tuple(dropped), extra,
                 tuple(comments))


def write_swf(trace: Trace, path: str | Path, start: np.ndarray | None = None) -> None:
    """Write the trace as extended SWF (header with the capacities), readable by :func:`read_swf`.

    Parameters
    ----------
    trace : Trace
        The jobs and the machine.
    path : str or Path
        The file written.
    start : numpy.ndarray, optional
        Start times (s, one per job): the wait field (3) becomes start - submit, as a simulated schedule.
    """
    fields = trace.fields.copy()
    if start is not None:
        fields[:, 2] = np.asarray(start, dtype=np.int64) - fields[:, 1]
    lines = [f"; MaxNodes: {trace.nodes}", f"; BurstBuffer: {trace.bb_capacity}"]
    lines += [c for c in trace.comments if not c[1:].strip().startswith(("MaxNodes", "BurstBuffer"))]
    cols = [fields]
    if trace.extra >= 1:
        cols.append(trace.burst_buffer[:, None])
    if trace.extra >= 2:
        cols.append(trace.ssd_per_node[:, None])
    table = np.hstack(cols)
    lines += [" ".join(map(str, row)) for row in table.tolist()]
    Path(path).write_text("\n".join(lines) + "\n")


def apply_mix(trace: Trace, mix: str, seed: int = 0, max_request: int = MAX_REQUEST_GB,
              bb_capacity: int | None = None) -> Trace:
    """The paper's burst-buffer mixes (S1-S4) or SSD mixes (S5-S7) put on a trace.

    S1/S3: 50 % of jobs, S2/S4: 75 %, drawn at random, get a burst buffer request uniform in
    [5 TB, ``max_request``] (S1/S2) or [20 TB, ``max_request``] (S3/S4), in GB; the others
    none. (The paper draws from the Darshan-derived requests above 5 or 20 TB, which we do
    not have; their range tops at 285 TB.) S5/S6/S7 are S2 (the paper's Section 6 puts them
    on Cori-S2 and Theta-S2) and then 20/50/80 % of jobs need 129-256 GB of SSD per node, the
    rest 1-128 GB. The capacity defaults to the trace's, or Theta's 1.26 PB when the trace has none.
    """
    validate.choice("mix", mix, list(MIXES) + list(SSD_MIXES))
    validate.integer("seed", seed, 0)
    rng = np.random.default_rng(seed)
    n = len(trace)
    cap = bb_capacity if bb_capacity is not None else (trace.bb_capacity or THETA_BB_GB)
    share, smallest = MIXES["S2" if mix in SSD_MIXES else mix]
    validate.integer("max_request", max_request, smallest)
    has = rng.random(n) < share
    bb = np.where(has, rng.integers(smallest, max_request + 1, n), 0)
    if mix in SSD_MIXES:  # drawn after the burst buffer, from the same stream
        big = rng.random(n) < SSD_MIXES[mix]
        ssd = np.where(big, rng.integers(129, 257, n), rng.integers(1, 129, n))
        return _trace(trace.fields, bb, ssd, trace.nodes, cap, 2)
    return _trace(trace.fields, bb, trace.ssd_per_node, trace.nodes, cap, max(trace.extra, 1))


def generate(seed: int, jobs: int = 2000, nodes: int = THETA_NODES, load: float = 0.9, overestimate: float = 3.0,
             bb_capacity: int = THETA_BB_GB) -> Trace:
    """A synthetic workload (no burst buffer: put a mix on it with :func:`apply_mix`).

    Model: job sizes 2^k nodes (k up to log2 ``nodes``), P(2^k) proportional to 2^(-k/2),
    as the window generator; run times log-uniform in [60 s, 24 h]; requested times the
    run time times a factor uniform in [1, ``overestimate``], rounded up to a whole
    minute (never below the run time); Poisson arrivals whose rate makes the offered load
    (node-seconds per second over ``nodes``) equal to ``load``. Same seed, same trace. At most
    :data:`MAX_GENERATED` jobs.
    """
    validate.integer("seed", seed, 0)
    validate.integer("jobs", jobs, 1, MAX_GENERATED)
    validate.integer("nodes", nodes, 1, 10**7)
    validate.number("load", load, 0, 10, lo_open=True)
    validate.number("overestimate", overestimate, 1, 100)
    rng = np.random.default_rng(seed)
    top = int(math.floor(math.log2(nodes)))
    weights = 2.0 ** (-np.arange(top + 1) / 2)
    size = np.minimum(2 ** rng.choice(top + 1, size=jobs, p=weights / weights.sum()), nodes).astype(np.int64)
    run = np.exp(rng.uniform(math.log(60), math.log(86_400), jobs)).astype(np.int64)
    requested = np.maximum(np.ceil(run * rng.uniform(1, overestimate, jobs) / 60) * 60, run).astype(np.int64)
    mean_gap = float(np.mean(size * run)) / (load * nodes)
    submit = np.floor(np.cumsum(rng.exponential(mean_gap, jobs))).astype(np.int64)
    f = np.full((jobs, 18), -1, dtype=np.int64)
    f[:, 0], f[:, 1], f[:, 3], f[:, 4], f[:, 7], f[:, 8] = np.arange(1, jobs + 1), submit, run, size, size, requested
    f[:, 2], f[:, 10], f[:, 17] = -1, 1, -1
    zeros = np.zeros(jobs, dtype=np.int64)
    comments = (f"; Generated: iosched.batch.generate(seed={seed}, jobs={jobs}, nodes={nodes}, load={load}, "
                f"overestimate={overestimate})",)
    return _trace(f, zeros, zeros.copy(), nodes, bb_capacity, 1, comments)


def make_trace(jobs: list[tuple[int, int, int, int, int]], nodes: int, bb_capacity: int = 0) -> Trace:
    """A trace from (submit s, run s, requested time s, nodes, burst buffer GB) tuples, numbered from 1."""
    if not jobs:
        raise InstanceError("a trace needs at least one job")
    f = np.full((len(jobs), 18), -1, dtype=np.int64)
    bb = np.zeros(len(jobs), dtype=np.int64)
    for k, job in enumerate(jobs):
        if len(job) != 5:
            raise InstanceError(f"jobs[{k}]: expected (submit, run, requested_time, nodes, burst_buffer), got {job!r}")
        values = [1 + k, job[0], -1, job[1], job[3], -1, -1, job[3], job[2], -1, 1, -1, -1, -1, -1, -1, -1, -1]
        _check_row(values + [job[4]], f"jobs[{k}]")
        f[k], bb[k] = values, job[4]
    return _trace(f, bb, np.zeros_like(bb), nodes, bb_capacity, 1)
