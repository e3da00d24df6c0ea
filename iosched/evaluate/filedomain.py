"""The one checker of file domains, and the cost model of the I/O phase of a collective write.

A solution (:class:`Domains`) gives, per aggregator, a list of half-open byte extents
[start, end) in absolute file offsets, and how the aggregators issue their writes
(``io``: ``extent``, one write call per contiguous piece of data in a domain; ``stripe``,
one call per piece of a stripe: the seed's stripe-size I/O). Entries beyond the list are
empty domains; more entries than aggregators is a violation.

Feasibility: every offset an integer; every extent non-empty and inside the region; the
extents of all aggregators together cover the region exactly once (no gap, no overlap).

Cost model (all assumptions; units: bytes, seconds, GB/s = 10^9 bytes/s):

* **Data.** An aggregator writes the data bytes of its domain (holes between requests are
  not written). Server loads are fixed by the data: stripe k = [k w, (k+1) w) is on server
  (first_server + k) mod S. Only the I/O phase is modelled: the exchange phase, the
  collective buffer size (one round per domain) and caching are not.
* **Fluid time.** Every aggregator a, node n and server s is a capacity (GB/s). With all
  transfers concurrent, the proportional constant rates V_as / T meet every capacity iff
  T >= B_a / b_a, B_n / b_n, B_s / b_s; so the fluid time is the largest of these ratios.
* **Lock units and sequences.** Extent locking (Lustre-like): each server keeps extent
  locks on its object; the lock unit is the stripe; the sequence of a server is its data in
  object order (stripe k at object offset (k div S) w; for one server object order is file
  order). Token locking (GPFS-like): one token manager for the file; the unit is the block
  (``block_size``); the sequence is all data in file order.
* **Conflicts.** In a sequence, the data splits into runs of one owner (holes do not end a
  run). A lock grant is expanded by the lock manager over the owner's run and kept
  (cached), so the first write of each run is one grant and each change of owner revokes the
  previous owner's expanded lock: one conflict per owner change. A unit written by k > 1
  aggregators (false sharing: a stripe, or a block, that two domains split) costs k - 1
  conflicts more, because a lock cannot be split below its unit: its lock moves to each
  other writer once more than a clean split needs (a lower estimate of the ping-pong).
* **Acquisitions.** ``io = extent``: one grant per run. ``io = stripe`` (each call wrapped
  in its own lock/unlock, as the seed describes): one grant per (call, unit touched), a
  call being one stripe piece of one contiguous data piece. The seed's argument for
  stripe-size I/O (a large call waits for all its locks before moving data; per-stripe
  calls overlap those waits with transfers) is a latency effect the fluid model does not
  see: here stripe-size I/O only adds grants.
* **Lock time** = acquire_s x grants + revoke_s x conflicts, serialised on the lock manager
  that handles them and on the data it guards: with extent locking it is added to the
  server's fluid time (a revocation stalls that object's I/O); with tokens the token
  manager is a resource of its own, busy for that time.
* **Modelled time** T = max(max_a B_a / b_a, max_n B_n / b_n, max_s (B_s / b_s + lock_s),
  token manager's lock time). Bandwidth = data bytes / T.

The computation works on extents (sort and sweep, closed forms for stripe rounds); nothing
is allocated per byte or per stripe, so a 1 TB region with 1 MiB stripes evaluates in well
under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.instances.fields import Field, Fields
from iosched.instances.filedomain import GB, MAX_OFFSET, FileDomainInstance, bytes_per_server, sum_by

MAX_EXTENTS = 2**23  # extents in one solution (about 200 MB of arrays): more is refused
IO_MODES = ("extent", "stripe")


@dataclass(frozen=True)
class Domains:
    """Per aggregator, its extents as an (k, 2) array (or list of [start, end)) of byte offsets;
    ``io``: one write call per contiguous piece (``extent``) or per stripe piece (``stripe``)."""

    domains: tuple
    io: str = "extent"

    def to_dict(self, instance: FileDomainInstance | None = None) -> dict:
        d: dict[str, object] = {"domains": [np.asarray(dom, dtype=np.int64).reshape(-1, 2).tolist() if len(dom) else []
                         for dom in self.domains]}
        if self.io != "extent":
            d["io"] = self.io
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Domains:
        if not isinstance(d, dict) or "domains" not in d:
            raise InstanceError(f"a filedomain solution is an object with 'domains', got {d!r:.80}")
        SOLUTION_FIELDS.check(d)
        if not isinstance(d["domains"], list):
            raise InstanceError(f"domains must be a list (one list of [start, end] per aggregator), "
                                f"got {d['domains']!r:.80}")
        return cls(tuple(d["domains"]), SOLUTION_FIELDS.get(d, "io"))

    @classmethod
    def from_owners(cls, starts, ends, owners, aggregators: int, io: str = "extent") -> Domains:
        """Domains from parallel arrays of extents and their owners (0..aggregators-1)."""
        starts, ends, owners = (np.asarray(x, dtype=np.int64) for x in (starts, ends, owners))
        order = np.argsort(owners, kind="stable")
        bounds = np.searchsorted(owners[order], np.arange(aggregators + 1))
        pairs = np.column_stack([starts[order], ends[order]])
        return cls(tuple(pairs[bounds[a]:bounds[a + 1]] for a in range(aggregators)), io)

    def owners(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, ends, owners) of every extent, for well-formed domains."""
        parts = [np.asarray(d, dtype=np.int64).reshape(-1, 2) for d in self.domains]
        pairs = np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
        owner = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
        return pairs[:, 0], pairs[:, 1], owner



# The JSON of a filedomain solution; Domains.from_dict checks its keys against it.
SOLUTION_FIELDS = Fields(
    "filedomain solution",
    Field("domains", "list", "", "per aggregator 0..P-1, its file domain: a list of [start, end) byte ranges "
          "(sorted, disjoint; together they cover every byte written exactly once)"),
    Field("io", "string", "", "how each aggregator writes its domain: extent (one call per contiguous piece) or "
          "stripe (one call per stripe piece)", "extent"),
)

@dataclass
class Evaluation:
    """Feasibility and the cost model's figures (module docstring). Lists are per aggregator,
    node or server; times in seconds, bandwidth in GB/s."""

    feasible: bool
    violations: list[Violation] = field(default_factory=list)
    time: float = math.inf  # the modelled time of the I/O phase (s): the objective
    fluid_time: float = math.inf  # the same without lock costs (s)
    bandwidth: float = 0.0  # data bytes / time (GB/s)
    bottleneck: str = ""
    conflicts: int = 0  # revocations (extent) or token moves (token), false sharing included
    acquisitions: int = 0
    false_sharing: int = 0  # stripes written by more than one aggregator
    false_sharing_blocks: int = 0  # blocks written by more than one aggregator (token locking)
    aggregators_used: int = 0
    servers_per_aggregator: int = 0  # the most servers one aggregator writes to
    aggregators_per_server: int = 0  # the most aggregators one server receives from
    data_bytes: int = 0
    aggregator_bytes: list = field(default_factory=list)
    node_bytes: list = field(default_factory=list)
    server_bytes: list = field(default_factory=list)
    server_conflicts: list = field(default_factory=list)  # extent locking
    lock_time: list = field(default_factory=list)  # per server (extent) or [token manager] (s)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "violations"}
        d["violations"] = [v.__dict__ for v in self.violations]
        for k in ("time", "fluid_time"):
            if not math.isfinite(d[k]):
                d[k] = None
        return d


# --- parsing: trust nothing ------------------------------------------------------------------------

def _parse(instance: FileDomainInstance, solution, bad: list[Violation]):
    """(starts, ends, owners) int64 arrays of a solution, or None with violations."""
    if not isinstance(solution, Domains):
        bad.append(Violation("malformed", f"not a Domains solution: {type(solution).__name__}", 1))
        return None
    if not isinstance(solution.io, str) or solution.io not in IO_MODES:
        bad.append(Violation("malformed", f"io must be one of {', '.join(IO_MODES)}, got {solution.io!r:.40}", 1))
    doms: object = solution.domains  # (as given: anything until checked)
    if not isinstance(doms, (list, tuple)):
        bad.append(Violation("malformed", f"domains must be a list, got {type(doms).__name__}", 1))
        return None
    if len(doms) > instance.aggregators:
        bad.append(Violation("aggregators", f"{len(doms)} domains for {instance.aggregators} aggregators",
                             len(doms) - instance.aggregators))
        return None
    fast = None if bad else _arrays(doms)
    if fast is not None:
        return fast
    parts, total = [], 0
    for a, dom in enumerate(doms):
        arr = _extents(dom, f"domains[{a}]", bad)
        if arr is None:
            return None
        total += len(arr)
        if total > MAX_EXTENTS:
            bad.append(Violation("extents", f"more than {MAX_EXTENTS} extents (at domains[{a}])", total - MAX_EXTENTS))
            return None
        parts.append(arr)
    if bad:
        return None
    pairs = np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
    owners = np.repeat(np.arange(len(parts), dtype=np.int64), [len(p) for p in parts])
    return pairs[:, 0].copy(), pairs[:, 1].copy(), owners


def _arrays(doms) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A methods' domains (int64 arrays of shape (k, 2), offsets within [0, 2^62], at most MAX_EXTENTS)
    checked as one array; None when any is otherwise (the domain-by-domain check then names it)."""
    if not all(d.__class__ is np.ndarray and d.dtype == np.int64 and d.ndim == 2 and d.shape[1] == 2 for d in doms):
        return None
    lengths = np.fromiter((len(d) for d in doms), dtype=np.int64, count=len(doms))
    if lengths.sum() > MAX_EXTENTS:
        return None
    pairs = np.concatenate(doms) if len(doms) else np.zeros((0, 2), dtype=np.int64)
    if len(pairs) and (pairs.min() < 0 or pairs.max() > MAX_OFFSET):
        return None
    return pairs[:, 0].copy(), pairs[:, 1].copy(), np.repeat(np.arange(len(doms), dtype=np.int64), lengths)


def _extents(dom, where: str, bad: list[Violation]) -> np.ndarray | None:
    """One domain as an (k, 2) int64 array of offsets in [0, 2^62], or None with a violation."""
    if isinstance(dom, np.ndarray):
        arr = dom
    elif isinstance(dom, (list, tuple)):
        if len(dom) == 0:
            return np.zeros((0, 2), dtype=np.int64)
        if any(x.__class__ is bool for p in dom if isinstance(p, (list, tuple)) for x in p):
            bad.append(Violation("malformed", f"{where}: offsets must be integers, got a boolean", 1))
            return None
        try:
            arr = np.array(dom)
        except (ValueError, TypeError, OverflowError):
            bad.append(Violation("malformed", f"{where}: not a list of [start, end] pairs", 1))
            return None
    else:
        bad.append(Violation("malformed", f"{where}: not a list of [start, end] pairs, got {type(dom).__name__}", 1))
        return None
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        bad.append(Violation("malformed", f"{where}: not a list of [start, end] pairs (shape {arr.shape})", 1))
        return None
    if arr.dtype.kind not in "iu":
        what = "non-finite" if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)) else arr.dtype.name
        bad.append(Violation("malformed", f"{where}: offsets must be integers, got {what}", 1))
        return None
    if arr.min() < 0 or arr.max() > MAX_OFFSET:
        bad.append(Violation("outside_file", f"{where}: offsets must be in [0, 2^62]", 1))
        return None
    return arr.astype(np.int64, copy=False)


# --- extent arithmetic -----------------------------------------------------------------------------

def _union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted extents covering the union of the given ones (sorted by start)."""
    reach = np.maximum.accumulate(ends)
    new = np.ones(len(starts), dtype=bool)
    new[1:] = starts[1:] > reach[:-1]
    last = np.r_[np.flatnonzero(new)[1:] - 1, len(starts) - 1]
    return starts[new], reach[last]


def _merge(starts, ends, owners):
    """Adjacent extents of one owner as one (input sorted by start, disjoint)."""
    keep = np.ones(len(starts), dtype=bool)
    keep[1:] = (starts[1:] != ends[:-1]) | (owners[1:] != owners[:-1])
    last = np.r_[np.flatnonzero(keep)[1:] - 1, len(starts) - 1]
    return starts[keep], ends[last], owners[keep]


def data_pieces(instance: FileDomainInstance, starts, ends, owners):
    """The data bytes of each domain extent: (starts, ends, owners) sorted, adjacent same-owner merged.

    Input: a feasible partition of the region, sorted by start.
    """
    if instance.full:
        return _merge(starts, ends, owners)
    data = instance.data
    cuts = distinct(np.concatenate([starts, ends, data[:, 0], data[:, 1]]))
    lo, hi = cuts[:-1], cuts[1:]
    j = np.searchsorted(data[:, 0], lo, side="right") - 1
    inside = (j >= 0) & (lo < data[np.maximum(j, 0), 1])
    lo, hi = lo[inside], hi[inside]
    own = owners[np.searchsorted(starts, lo, side="right") - 1]
    return _merge(lo, hi, own)


def server_runs(instance: FileDomainInstance, starts, ends, owners):
    """The data pieces cut by server: for each piece and each server it touches, the piece's
    contiguous object range there. Returns (server, obj_start, obj_end, owner) sorted by server
    then object offset (object order on a server is file order)."""
    w, S = instance.stripe_size, instance.stripe_count
    k0, k1 = starts // w, (ends - 1) // w
    m = np.minimum(k1 - k0 + 1, S)
    if (m == 1).all():  # every piece within one stripe
        j, obj_start, obj_end, own = k0, (k0 // S - k0) * w + starts, (k0 // S - k0) * w + ends, owners
    else:
        rows = np.repeat(np.arange(len(starts)), m)
        j = k0[rows] + (np.arange(len(rows)) - np.repeat(np.cumsum(m) - m, m))  # the piece's first stripe there
        kk0, kk1 = k0[rows], k1[rows]
        last = j + S * ((kk1 - j) // S)
        obj_start = (j // S) * w + np.where(j == kk0, starts[rows] - j * w, 0)
        obj_end = (last // S) * w + np.where(last == kk1, ends[rows] - last * w, w)
        own = owners[rows]
    server = instance.server_of(j)
    order = np.argsort(server.astype(np.uint16) if S <= 2**16 else server, kind="stable")
    return server[order], obj_start[order], obj_end[order], own[order]


def shared_units(unit: int, starts, ends, owners) -> tuple[np.ndarray, np.ndarray]:
    """Units (index = offset // unit) written by more than one owner, and their owner counts.

    Only the first and last unit of a piece can be shared (pieces are disjoint); the pieces
    are sorted, so the (unit, owner) touches come in unit order and a shared unit's touches
    are neighbours.
    """
    u = np.column_stack([starts // unit, (ends - 1) // unit]).ravel()
    o = np.repeat(owners, 2)
    fresh = np.ones(len(u), dtype=bool)
    fresh[1:] = (u[1:] != u[:-1]) | (o[1:] != o[:-1])
    u, o = u[fresh], o[fresh]
    twin = np.zeros(len(u), dtype=bool)
    twin[1:] = u[1:] == u[:-1]
    twin[:-1] |= twin[1:]
    u, o = u[twin], o[twin]
    if not len(u):
        return u, u
    pairs = distinct(_key(u - u[0], o, int(o.max()) + 1))
    units = pairs // (int(o.max()) + 1)
    first = np.r_[True, units[1:] != units[:-1]]
    counts = np.diff(np.r_[np.flatnonzero(first), len(units)])
    units = units[first]
    return units + u[0], counts


def distinct(x: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an integer array (a sort and a comparison: numpy 2's hashing
    np.unique took five times as long on millions of offsets: benchmarks/speed.md, constants)."""
    x = np.sort(x)
    return x[np.r_[True, x[1:] != x[:-1]]] if len(x) else x


def _key(a: np.ndarray, b: np.ndarray, base: int) -> np.ndarray:
    """a * base + b as one int64 key (a, b >= 0, b < base); exact while a.max() * base < 2^62."""
    if int(a.max()) >= 2**62 // base:
        raise OverflowError("too many units for a 64-bit key")
    return a * base + b


def _refined_cells(starts, ends, a: int, b: int) -> np.ndarray:
    """Per extent, the pieces it is cut into by the multiples of a and of b."""
    lcm = a * b // math.gcd(a, b)

    def inside(step):  # multiples of step strictly inside (start, end)
        return (ends - 1) // step - starts // step

    return 1 + inside(a) + inside(b) - inside(lcm)


# --- the evaluator ---------------------------------------------------------------------------------

def evaluate(instance: FileDomainInstance, solution: Domains) -> Evaluation:
    """Check that the domains partition the region; score them in the cost model (module docstring)."""
    bad: list[Violation] = []
    parsed = _parse(instance, solution, bad)
    if parsed is None:
        return Evaluation(False, bad)
    starts, ends, owners = parsed
    r0, r1 = instance.region_offset, instance.region_end
    empty = ends <= starts
    if empty.any():
        a = int(owners[np.argmax(empty)])
        bad.append(Violation("empty_extent", f"{int(empty.sum())} extents with end <= start (first in domains[{a}])",
                             int(empty.sum())))
        return Evaluation(False, bad)
    outside = np.clip(np.minimum(ends, r0) - starts, 0, None) + np.clip(ends - np.maximum(starts, r1), 0, None)
    if outside.any():
        a = int(owners[np.argmax(outside > 0)])
        bad.append(Violation("outside_region", f"bytes outside [{r0}, {r1}) (first in domains[{a}])",
                             int(outside.sum())))
        return Evaluation(False, bad)
    order = np.argsort(starts, kind="stable")
    starts, ends, owners = starts[order], ends[order], owners[order]
    us, ue = _union(starts, ends) if len(starts) else (starts, ends)
    covered = int((ue - us).sum())
    overlap = int((ends - starts).sum()) - covered
    if covered < instance.region_length:
        gap_at = r0 if not len(us) or us[0] > r0 else int(ue[0])
        bad.append(Violation("gap", f"bytes of the region in no domain (first at offset {gap_at})",
                             instance.region_length - covered))
    if overlap:
        i = int(np.argmax(starts[1:] < np.maximum.accumulate(ends)[:-1])) + 1
        bad.append(Violation("overlap", f"bytes in more than one domain (first at offset {int(starts[i])})", overlap))
    if bad:
        return Evaluation(False, bad)
    return _score(instance, solution.io, *data_pieces(instance, starts, ends, owners))


def _score(instance: FileDomainInstance, io: str, starts, ends, owners) -> Evaluation:
    P, S = instance.aggregators, instance.stripe_count
    lengths = ends - starts
    agg = sum_by(owners, lengths, P)
    nodes = sum_by(np.asarray(instance.aggregator_nodes), agg, instance.nodes)
    server = bytes_per_server(instance, starts, ends)
    srv, obj_s, obj_e, own = server_runs(instance, starts, ends, owners)

    change = np.zeros(len(srv), dtype=bool)
    change[1:] = (srv[1:] == srv[:-1]) & (own[1:] != own[:-1])
    stripes_shared, stripe_counts = shared_units(instance.stripe_size, starts, ends, owners)
    bw = instance.bandwidth
    ev = Evaluation(True, data_bytes=int(lengths.sum()), aggregator_bytes=agg.tolist(), server_bytes=server.tolist(),
                    node_bytes=nodes.tolist() if bw.node is not None else [],
                    false_sharing=len(stripes_shared), aggregators_used=int((agg > 0).sum()))
    pairs = distinct(_key(srv, own, P))
    ev.servers_per_aggregator = int(np.bincount(pairs % P).max())
    ev.aggregators_per_server = int(np.bincount(pairs // P).max())

    terms = [(agg / (np.asarray(bw.aggregator) * GB), "aggregator")]
    if bw.node is not None:
        terms.append((nodes / (np.asarray(bw.node) * GB), "node"))
    server_time = server / (np.asarray(bw.server) * GB)
    ev.fluid_time = max(float(t.max()) for t, _ in terms + [(server_time, "server")])
    c_acq, c_rev = instance.acquire_s, instance.revoke_s
    if instance.locking == "extent":
        has = server > 0
        conflicts = np.bincount(srv[change], minlength=S)
        conflicts += np.bincount(instance.server_of(stripes_shared), weights=stripe_counts - 1,
                                 minlength=S).astype(np.int64)
        runs = np.bincount(srv[change], minlength=S) + has
        if io == "extent":
            grants = runs
        else:
            calls = (obj_e - 1) // instance.stripe_size - obj_s // instance.stripe_size + 1
            grants = np.bincount(srv, weights=calls, minlength=S).astype(np.int64)
        lock = c_acq * grants + c_rev * conflicts
        terms.append((server_time + lock, "server"))
        ev.conflicts, ev.acquisitions = int(conflicts.sum()), int(grants.sum())
        ev.server_conflicts, ev.lock_time = conflicts.tolist(), lock.tolist()
    else:
        terms.append((server_time, "server"))
        block = instance.unit_size  # the token unit (block_size)
        blocks, block_counts = shared_units(block, starts, ends, owners)
        moves = int((owners[1:] != owners[:-1]).sum())
        token_conflicts = moves + int((block_counts - 1).sum())
        if io == "extent":
            tokens = moves + 1
        else:
            tokens = int(_refined_cells(starts, ends, instance.stripe_size, block).sum())
        token_lock = c_acq * tokens + c_rev * token_conflicts
        terms.append((np.array([token_lock]), "token manager"))
        ev.conflicts, ev.acquisitions, ev.false_sharing_blocks = token_conflicts, tokens, len(blocks)
        ev.lock_time = [token_lock]
    best = -1.0
    for values, label in terms:
        i = int(np.argmax(values))
        if float(values[i]) > best:
            best = float(values[i])
            ev.bottleneck = label if label == "token manager" else f"{label} {i}"
    ev.time = best
    ev.bandwidth = ev.data_bytes / best / GB if best > 0 else math.inf
    return ev
