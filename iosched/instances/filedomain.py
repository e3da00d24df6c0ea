"""Instances of the file-domain problem: one collective write, a striped file, P aggregators.

A collective write covers an aggregate access region of a shared file, given either as
``region`` (offset and length, every byte written) or as ``requests``: per MPI rank, a
list of ``[offset, length]`` pieces, whose union is the data written and whose span
[min offset, max end) is the region (holes inside it are not written). Byte offsets are
integers, at most 2^62 (the file's largest offset here, so that offset arithmetic never
overflows 64-bit integers).

The file is striped round-robin: stripe k = [k w, (k+1) w) of file offsets (w =
``stripe_size``) lives on server (first_server + k) mod S (S = ``stripe_count``).
Aggregators are numbered 0..P-1; ``aggregators`` is P (each on its own node) or the node
of each aggregator. Bandwidths (GB/s, 1 GB = 10^9 bytes) cap each aggregator, each node
(optional: omitted, nodes are no constraint) and each server. Locking is ``extent``
(server-managed extent locks per server object, Lustre-like, lock unit the stripe) or
``token`` (byte-range tokens from one token manager, GPFS-like, lock unit ``block_size``);
``lock_costs`` gives the seconds of one lock acquisition and of one conflict (revocation).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from iosched.errors import InstanceError, ParameterError
from iosched.instances import JsonInstance
from iosched.instances.fields import Field, Fields
from iosched.validate import choice, integer, number

MAX_OFFSET = 2**62  # largest file offset (bytes): offset arithmetic stays within int64
MAX_AGGREGATORS = 2**20
MAX_SERVERS = 2**16
MAX_REQUESTS = 10**6  # request pieces over all ranks
MAX_STRIPE = 2**40
KiB, MiB, GiB = 2**10, 2**20, 2**30
GB = 1e9  # bandwidths are in GB/s
BANDWIDTH_RANGE = (1e-9, 1e9)  # GB/s: one byte per second to an exabyte per second keeps every time finite
MAX_LOCK_S = 1e6  # seconds per lock acquisition or conflict


@dataclass(frozen=True)
class Bandwidth:
    """GB/s of each aggregator, each node (None: no node constraint) and each server."""

    aggregator: tuple[float, ...]
    node: tuple[float, ...] | None
    server: tuple[float, ...]


@dataclass(frozen=True)
class FileDomainInstance(JsonInstance):
    """One collective write: the region (bytes), the striping, the aggregators and the cost model.

    ``requests`` is None when the whole region is written, else per rank a tuple of
    (offset, length) pieces (bytes). ``aggregator_nodes[a]`` is the node of aggregator a.
    ``block_size`` (bytes) is the token granularity (``locking == "token"`` only, else None).
    ``acquire_s`` / ``revoke_s``: seconds per lock acquisition / per conflict. ``provenance``:
    where the instance came from (an imported log: file name, SHA-256, what was assumed); methods
    ignore it.
    """

    region_offset: int
    region_length: int
    stripe_size: int
    stripe_count: int
    aggregator_nodes: tuple[int, ...]
    bandwidth: Bandwidth
    locking: str = "extent"
    acquire_s: float = 0.0
    revoke_s: float = 0.0
    first_server: int = 0
    block_size: int | None = None
    requests: tuple[tuple[tuple[int, int], ...], ...] | None = None
    name: str = "filedomain"
    provenance: dict | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.provenance is not None and not isinstance(self.provenance, dict):
            raise InstanceError(f"provenance must be an object, got {self.provenance!r:.80}")
        integer("region.offset", self.region_offset, 0, MAX_OFFSET - 1)
        integer("region.length", self.region_length, 1, MAX_OFFSET - self.region_offset)
        integer("striping.stripe_size", self.stripe_size, 1, MAX_STRIPE)
        integer("striping.stripe_count", self.stripe_count, 1, MAX_SERVERS)
        integer("striping.first_server", self.first_server, 0, self.stripe_count - 1)
        if not isinstance(self.aggregator_nodes, tuple) or not self.aggregator_nodes:
            raise InstanceError(f"aggregators must be a positive count or a non-empty list, got "
                                f"{self.aggregator_nodes!r}")
        if len(self.aggregator_nodes) > MAX_AGGREGATORS:
            raise InstanceError(f"aggregators must be at most {MAX_AGGREGATORS}, got {len(self.aggregator_nodes)}")
        if not _all_within(self.aggregator_nodes, (int,), 0, MAX_AGGREGATORS - 1):  # else name the first bad one
            for a, n in enumerate(self.aggregator_nodes):
                integer(f"aggregators[{a}]", n, 0, MAX_AGGREGATORS - 1)
        choice("locking", self.locking, ("extent", "token"))
        if self.locking == "token":
            integer("block_size", self.block_size, 1, MAX_STRIPE)
        elif self.block_size is not None:
            raise InstanceError(f"block_size applies to token locking only, got {self.block_size!r} with extent")
        number("lock_costs.acquire_s", self.acquire_s, 0, MAX_LOCK_S)
        number("lock_costs.revoke_s", self.revoke_s, 0, MAX_LOCK_S)
        bw = self.bandwidth
        for label, values, count in (("aggregator", bw.aggregator, self.aggregators),
                                     ("server", bw.server, self.stripe_count),
                                     ("node", bw.node, self.nodes)):
            if values is None and label == "node":
                continue
            if len(values) != count:
                raise InstanceError(f"bandwidth.{label} must be one number or a list of {count}, "
                                    f"got a list of {len(values)}")
            if not _all_within(values, (int, float), *BANDWIDTH_RANGE):  # else name the first bad one
                for i, v in enumerate(values):
                    number(f"bandwidth.{label}[{i}]", v, *BANDWIDTH_RANGE)
        if self.requests is not None:
            lo = min((o for rank in self.requests for o, n in rank if n), default=None)
            hi = max((o + n for rank in self.requests for o, n in rank if n), default=None)
            if lo is None:
                raise InstanceError("requests must hold at least one piece of positive length")
            if (lo, hi - lo) != (self.region_offset, self.region_length):
                raise InstanceError(f"region [{self.region_offset}, +{self.region_length}) is not the span of the "
                                    f"requests [{lo}, +{hi - lo})")

    # --- derived sizes -------------------------------------------------------------------------

    @property
    def aggregators(self) -> int:
        return len(self.aggregator_nodes)

    @property
    def nodes(self) -> int:
        return max(self.aggregator_nodes) + 1

    @property
    def region_end(self) -> int:
        return self.region_offset + self.region_length

    @property
    def unit_size(self) -> int:
        """The lock unit (bytes): the stripe with extent locking, the block with tokens."""
        return self.stripe_size if self.locking == "extent" else self.block_size

    @property
    def first_stripe(self) -> int:
        return self.region_offset // self.stripe_size

    @property
    def stripes(self) -> int:
        """Stripes the region touches (the first and last may be partial)."""
        return (self.region_end - 1) // self.stripe_size - self.first_stripe + 1

    def server_of(self, stripe):
        """Server of absolute stripe index (int or array)."""
        return (self.first_server + stripe) % self.stripe_count

    @functools.cached_property
    def data(self) -> np.ndarray:
        """The bytes written: sorted disjoint half-open extents, shape (k, 2), int64."""
        if self.requests is None:
            return np.array([[self.region_offset, self.region_end]], dtype=np.int64)
        pieces = np.array([(o, o + n) for rank in self.requests for o, n in rank if n], dtype=np.int64)
        pieces = pieces[np.argsort(pieces[:, 0], kind="stable")]
        reach = np.maximum.accumulate(pieces[:, 1])
        new = np.ones(len(pieces), dtype=bool)
        new[1:] = pieces[1:, 0] > reach[:-1]  # a piece starting past every earlier end opens an extent
        starts = pieces[new, 0]
        ends = reach[np.r_[np.flatnonzero(new)[1:] - 1, len(pieces) - 1]]
        return np.column_stack([starts, ends])

    @functools.cached_property
    def data_bytes(self) -> int:
        return int((self.data[:, 1] - self.data[:, 0]).sum())

    @property
    def full(self) -> bool:
        """Every byte of the region is written."""
        return self.data_bytes == self.region_length

    def server_bytes(self) -> np.ndarray:
        """Bytes written to each server (fixed by the data, whatever the domains)."""
        return bytes_per_server(self, self.data[:, 0], self.data[:, 1])

    # --- JSON ----------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        def compact(values):
            return values[0] if values is not None and len(set(values)) == 1 else list(values or [])

        d = {"name": self.name}
        if self.requests is None:
            d["region"] = {"offset": self.region_offset, "length": self.region_length}
        else:
            d["requests"] = [[[o, n] for o, n in rank] for rank in self.requests]
        d["striping"] = {"stripe_size": self.stripe_size, "stripe_count": self.stripe_count,
                         "first_server": self.first_server}
        own_nodes = self.aggregator_nodes == tuple(range(self.aggregators))
        d["aggregators"] = self.aggregators if own_nodes else list(self.aggregator_nodes)
        bw = {"aggregator": compact(self.bandwidth.aggregator), "server": compact(self.bandwidth.server)}
        if self.bandwidth.node is not None:
            bw["node"] = compact(self.bandwidth.node)
        d["bandwidth"] = bw
        d["locking"] = self.locking
        if self.block_size is not None:
            d["block_size"] = self.block_size
        d["lock_costs"] = {"acquire_s": self.acquire_s, "revoke_s": self.revoke_s}
        if self.provenance is not None:
            d["provenance"] = self.provenance
        return d

    @classmethod
    def from_dict(cls, d: dict, name: str = "filedomain") -> FileDomainInstance:
        FIELDS.check(d)
        if ("region" in d) == ("requests" in d):
            raise InstanceError("give exactly one of region and requests")
        requests = None
        if "region" in d:
            FIELDS.check(d["region"], "region")
            offset, length = d["region"]["offset"], d["region"]["length"]
        else:
            requests = _requests(d["requests"])
            pieces = [(o, o + n) for rank in requests for o, n in rank if n]
            if not pieces:
                raise InstanceError("requests must hold at least one piece of positive length")
            offset = min(p[0] for p in pieces)
            length = max(p[1] for p in pieces) - offset
        s = d["striping"]
        FIELDS.check(s, "striping")
        count = integer("striping.stripe_count", s["stripe_count"], 1, MAX_SERVERS)
        agg = d["aggregators"]
        if isinstance(agg, list):
            if not agg:
                raise InstanceError("aggregators must be a positive count or a non-empty list, got []")
            if len(agg) > MAX_AGGREGATORS:
                raise InstanceError(f"aggregators must be at most {MAX_AGGREGATORS}, got a list of {len(agg)}")
            nodes = tuple(agg) if _all_within(agg, (int,), 0, MAX_AGGREGATORS - 1) else tuple(
                integer(f"aggregators[{a}]", n, 0, MAX_AGGREGATORS - 1) for a, n in enumerate(agg))
        else:
            nodes = tuple(range(integer("aggregators", agg, 1, MAX_AGGREGATORS)))
        bw = d["bandwidth"]
        FIELDS.check(bw, "bandwidth")
        n_nodes = max(nodes) + 1
        bandwidth = Bandwidth(_spread("bandwidth.aggregator", bw["aggregator"], len(nodes)),
                              _spread("bandwidth.node", bw["node"], n_nodes) if "node" in bw else None,
                              _spread("bandwidth.server", bw["server"], count))
        costs = FIELDS.get(d, "lock_costs")
        FIELDS.check(costs, "lock_costs")
        locking = FIELDS.get(d, "locking")
        block = d.get("block_size")
        if locking == "token" and block is None:
            block = s["stripe_size"]
        return cls(offset, length, s["stripe_size"], count, nodes, bandwidth, locking, costs["acquire_s"],
                   costs["revoke_s"], FIELDS.get(s, "striping.first_server"), block, requests, name=d.get("name", name),
                   provenance=d.get("provenance"))


# The JSON of a filedomain instance; FileDomainInstance.from_dict checks every object's keys against it.
FIELDS = Fields(
    "filedomain instance",
    Field("name", "string", "", "the instance's name (default: the file's name without .json)", None),
    Field("region", "object", "", "the aggregate access region, every byte of it written (give region or "
          "requests, not both)", None),
    Field("region.offset", "integer", "bytes", "its first byte's file offset"),
    Field("region.length", "integer", "bytes", "its length (at least 1)"),
    Field("requests", "list", "", "per MPI rank, a list of [offset, length] pieces (bytes) it writes: their union "
          "is the data written, their span [least offset, greatest end) the region, holes inside it unwritten "
          "(give region or requests)", None),
    Field("striping", "object", "", "how the file is striped: stripe k = [k w, (k+1) w) of file offsets lives on "
          "server (first_server + k) mod stripe_count"),
    Field("striping.stripe_size", "integer", "bytes", "w, the stripe size (Lustre) or block size (GPFS)"),
    Field("striping.stripe_count", "integer", "servers", "S, the servers (OSTs) the file is striped over"),
    Field("striping.first_server", "integer", "", "the server of stripe 0, in 0..S-1", 0),
    Field("aggregators", "integer or list", "", "P, each aggregator on its own node; or the node (0, 1, ...) of "
          "each aggregator"),
    Field("bandwidth", "object", "", "the bandwidths: each one number for all, or a list of one per item"),
    Field("bandwidth.aggregator", "number or list", "GB/s", "what each aggregator moves (P of them)"),
    Field("bandwidth.server", "number or list", "GB/s", "what each server takes (S of them)"),
    Field("bandwidth.node", "number or list", "GB/s", "what each node moves, shared by its aggregators (absent: "
          "nodes are no constraint)", None),
    Field("locking", "string", "", "extent (server-managed extent locks per server object, Lustre-like, lock unit "
          "the stripe) or token (byte-range tokens from one manager, GPFS-like, lock unit block_size)", "extent"),
    Field("block_size", "integer", "bytes", "the token unit, with token locking only (absent: stripe_size)", None),
    Field("lock_costs", "object", "", "the cost of locking", {"acquire_s": 0.0, "revoke_s": 0.0}),
    Field("lock_costs.acquire_s", "number", "s", "one lock acquisition"),
    Field("lock_costs.revoke_s", "number", "s", "one conflict (a revocation)"),
    Field("provenance", "object", "", "where the instance came from (an imported log: its name, SHA-256, what was "
          "read and assumed); methods ignore it", None),
)


# --- byte arithmetic on the striping (the evaluator's, and the instance's server loads) ------------

def sum_by(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Integer sums of ``values`` per ``index`` (exact: bincount's float sums while below 2^53)."""
    if len(values) and int(np.abs(values).sum()) < 2**53:
        return np.bincount(index, weights=values, minlength=size).astype(np.int64)
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, index, values)
    return out


def bytes_per_server(instance: FileDomainInstance, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Bytes of the extents [starts, ends) on each server (closed form per extent: partial first
    and last stripes, then whole rounds of S stripes and a remainder)."""
    w, S = instance.stripe_size, instance.stripe_count
    k0, k1 = starts // w, (ends - 1) // w
    one = k0 == k1
    out = sum_by(instance.server_of(k0[one]), ends[one] - starts[one], S)
    k0, k1, s, e = k0[~one], k1[~one], starts[~one], ends[~one]
    if not len(k0):
        return out
    out += sum_by(instance.server_of(k0), (k0 + 1) * w - s, S)
    out += sum_by(instance.server_of(k1), e - k1 * w, S)
    middle = k1 - k0 - 1
    out += int((middle // S).sum()) * w
    rem = middle % S  # servers of stripes k0+1 .. k0+rem get one more stripe
    first = instance.server_of(k0 + 1)
    diff = sum_by(first, np.full(len(first), w), 2 * S + 1) - sum_by(first + rem, np.full(len(first), w), 2 * S + 1)
    laps = np.cumsum(diff)[:2 * S]  # a cyclic range as a range on two laps
    return out + laps[:S] + laps[S:]



def _all_within(values, kinds: tuple, lo, hi) -> bool:
    """Whether every value is of one of ``kinds`` (exactly: no bool) and finite within [lo, hi]: one pass
    in numpy, so that 10^6 aggregators load in a fraction of a second (the checks value by value name
    the first that is not)."""
    if not all(type(v) in kinds for v in values):
        return False
    arr = np.asarray(values, dtype=float)
    return bool(np.isfinite(arr).all() and arr.min() >= lo and arr.max() <= hi)


def _spread(where: str, value, count: int) -> tuple[float, ...]:
    """One number for all, or a list of ``count`` numbers (checked in the instance)."""
    if isinstance(value, list):
        if len(value) != count:
            raise InstanceError(f"{where} must be one number or a list of {count}, got a list of {len(value)}")
        return tuple(map(float, value)) if _all_within(value, (int, float), *BANDWIDTH_RANGE) else tuple(
            number(f"{where}[{i}]", v, *BANDWIDTH_RANGE) for i, v in enumerate(value))
    return (number(where, value, *BANDWIDTH_RANGE),) * count


def _requests(value) -> tuple[tuple[tuple[int, int], ...], ...]:
    if not isinstance(value, list) or not value:
        raise InstanceError(f"requests must be a non-empty list (one list of [offset, length] per rank), "
                            f"got {value!r}")
    total = 0
    ranks = []
    for r, rank in enumerate(value):
        if not isinstance(rank, list):
            raise InstanceError(f"requests[{r}] must be a list of [offset, length], got {rank!r}")
        total += len(rank)
        if total > MAX_REQUESTS:
            raise InstanceError(f"requests must hold at most {MAX_REQUESTS} pieces, got more at requests[{r}]")
        pieces = []
        for i, p in enumerate(rank):
            if not isinstance(p, list) or len(p) != 2:
                raise InstanceError(f"requests[{r}][{i}] must be [offset, length], got {p!r}")
            o = integer(f"requests[{r}][{i}].offset", p[0], 0, MAX_OFFSET - 1)
            n = integer(f"requests[{r}][{i}].length", p[1], 0, MAX_OFFSET - o)
            pieces.append((o, n))
        ranks.append(tuple(pieces))
    return tuple(ranks)


# --- built-in instances and the generator ----------------------------------------------------------

def platform(servers: int, aggregators: int | list, stripe_size: int, region: tuple[int, int] | None = None,
             requests=None, aggregator_gbs: float = 1.0, server_gbs: float = 1.0, node_gbs: float | None = None,
             locking: str = "extent", block_size: int | None = None, acquire_s: float = 1e-4,
             revoke_s: float = 1e-3, first_server: int = 0, name: str = "filedomain") -> FileDomainInstance:
    """An instance with equal bandwidths everywhere (GB/s) and the default lock costs (s)."""
    nodes = tuple(range(aggregators)) if isinstance(aggregators, int) else tuple(aggregators)
    n_nodes = max(nodes) + 1
    bw = Bandwidth((aggregator_gbs,) * len(nodes), None if node_gbs is None else (node_gbs,) * n_nodes,
                   (server_gbs,) * servers)
    if requests is not None:
        requests = tuple(tuple((int(o), int(n)) for o, n in rank) for rank in requests)
        pieces = [(o, o + n) for rank in requests for o, n in rank if n]
        region = (min(p[0] for p in pieces), max(p[1] for p in pieces) - min(p[0] for p in pieces))
    if locking == "token" and block_size is None:
        block_size = stripe_size
    return FileDomainInstance(region[0], region[1], stripe_size, servers, nodes, bw, locking, acquire_s, revoke_s,
                              first_server, block_size, requests, name=name)


def paper_figure2(aggregators: int = 6) -> FileDomainInstance:
    """The seed's Figure 2: 3 servers, 12 stripes of 1 MiB from offset 0; 6 aggregators
    (panels a-c) or 5 (panel d, co-prime to the servers)."""
    return platform(3, aggregators, MiB, (0, 12 * MiB), name=f"paper:fig2{'d' if aggregators == 5 else ''}")


def template() -> FileDomainInstance:
    """A small instance to start from (``iosched show filedomain --template``): the seed's Figure 2, 12 stripes
    of 1 MiB on 3 servers, with 6 aggregators two to a node."""
    return platform(3, [a // 2 for a in range(6)], MiB, (0, 12 * MiB), node_gbs=1.5, name="example")


def sweep(servers: int, aggregators: int, stripes_per_server: int = 16, stripe_size: int = MiB) -> FileDomainInstance:
    """The sweep platform: S servers at 1 GB/s, P aggregators at 0.25 GB/s on their own nodes (so
    4 S aggregators saturate the servers), a region of 16 S stripes of 1 MiB from offset 0,
    0.1 ms per lock acquisition, 1 ms per conflict."""
    integer("servers", servers, 1, MAX_SERVERS)
    integer("aggregators", aggregators, 1, MAX_AGGREGATORS)
    integer("stripes_per_server", stripes_per_server, 1, MAX_OFFSET // (servers * stripe_size))
    return platform(servers, aggregators, stripe_size, (0, stripes_per_server * servers * stripe_size),
                    aggregator_gbs=0.25,
                    name=f"sweep:{servers}:{aggregators}" + (f":{stripes_per_server}" if stripes_per_server != 16
                                                             else ""))


def example_gpfs() -> FileDomainInstance:
    """A GPFS-like write: 8 servers, 4 MiB blocks as stripes and tokens, 12 aggregators two per node,
    a 100 MiB region starting at 3 MiB (not block-aligned)."""
    return platform(8, [a // 2 for a in range(12)], 4 * MiB, (3 * MiB, 100 * MiB), node_gbs=1.5, locking="token",
                    name="example:gpfs")


def example_requests() -> FileDomainInstance:
    """A strided write with holes: 8 ranks each writing 3 pieces of 300 KiB every 2.4 MiB, on 4 servers
    with 1 MiB stripes and 6 aggregators."""
    reqs = [[(r * 300 * KiB + i * 2400 * KiB, 300 * KiB) for i in range(3)] for r in range(6)]
    reqs += [[(7 * MiB + r * MiB + KiB, 500 * KiB)] for r in range(2)]
    return platform(4, 6, MiB, requests=reqs, name="example:requests")


BUILTIN = ["paper:fig2", "paper:fig2d", "example:gpfs", "example:requests", "sweep:S:P[:STRIPES_PER_SERVER]",
           "random:SEED[:S[:P[:MAX_STRIPES[:LOCKING[:requests]]]]]"]


def generate(seed: int, servers: int | None = None, aggregators: int | None = None, max_stripes: int = 64,
             locking: str = "extent", requests: bool = False) -> FileDomainInstance:
    """A random collective write; same seed, same instance.

    S in [2, 16] and P in [1, 4 S] unless given; a stripe size among 64 KiB, 1 MiB, 1.5 MiB
    (not a power of two) and 4 MiB; a region of 1..``max_stripes`` stripes starting at a
    random 4 KiB-aligned offset; bandwidths 0.5-2 GB/s (aggregators 0.5-2, servers 0.5-2,
    nodes holding two aggregators each with probability 1/2); acquisition 10-500 us,
    conflict 0.1-5 ms. With ``requests`` the region comes from 2-8 ranks writing 1-4
    strided pieces each (holes between them).
    """
    integer("seed", seed, None)
    integer("max_stripes", max_stripes, 1, 10**6)
    choice("locking", locking, ("extent", "token"))
    if not isinstance(requests, bool):
        raise InstanceError(f"requests must be true or false, got {requests!r}")
    rng = np.random.default_rng(seed)
    S, u = int(rng.integers(2, 17)), rng.random()  # drawn always, so that a given size keeps the rest
    S = integer("servers", servers, 1, MAX_SERVERS) if servers is not None else S
    P = integer("aggregators", aggregators, 1, MAX_AGGREGATORS) if aggregators is not None else 1 + int(u * 4 * S)
    w = int(rng.choice([64 * KiB, MiB, 3 * MiB // 2, 4 * MiB]))
    offset = int(rng.integers(0, 4 * S)) * 4 * KiB * int(rng.integers(1, 64))
    length = int(rng.integers(1, max_stripes + 1)) * w - int(rng.integers(0, w // 4096)) * 4096
    nodes = [a // 2 for a in range(P)] if rng.random() < 0.5 else list(range(P))
    node_gbs = float(np.round(rng.uniform(0.5, 3), 2)) if nodes[-1] != P - 1 else None
    reqs = None
    if requests:
        ranks, pieces = int(rng.integers(2, 9)), int(rng.integers(1, 5))
        size = max(1, length // (ranks * pieces * 2))
        reqs = [[(offset + (i * ranks + r) * 2 * size + int(rng.integers(0, size)), size) for i in range(pieces)]
                for r in range(ranks)]
    inst = platform(S, nodes, w, (offset, length), reqs, float(np.round(rng.uniform(0.5, 2), 2)),
                    float(np.round(rng.uniform(0.5, 2), 2)), node_gbs, locking,
                    w * int(rng.choice([1, 2])) if locking == "token" else None,
                    float(np.round(rng.uniform(1e-5, 5e-4), 6)), float(np.round(rng.uniform(1e-4, 5e-3), 6)),
                    int(rng.integers(0, S)), name=_random_name(seed, S, P, max_stripes, locking, requests))
    return inst


def _random_name(seed, S, P, max_stripes, locking, requests) -> str:
    """random:SEED:S:P, then the options that differ from the defaults (so that the name loads back)."""
    tail = [str(max_stripes), locking, "requests"] if requests else [str(max_stripes), locking]
    while tail and tail[-1] in ("64", "extent"):
        tail.pop()
    return ":".join(["random", str(seed), str(S), str(P), *tail])


def load(spec: str) -> FileDomainInstance:
    """A built-in name (``paper:fig2``, ``paper:fig2d``, ``example:gpfs``, ``example:requests``,
    ``sweep:S:P[:STRIPES_PER_SERVER]``, ``random:SEED[:S[:P[:MAX_STRIPES[:LOCKING[:requests]]]]]``)
    or a JSON file."""
    if spec in ("paper:fig2", "paper:fig2d"):
        return paper_figure2(5 if spec.endswith("d") else 6)
    if spec == "example:gpfs":
        return example_gpfs()
    if spec == "example:requests":
        return example_requests()
    if spec.startswith("sweep:"):
        parts = spec[6:].split(":")
        if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
            raise InstanceError(f"built-in name must be sweep:S:P[:STRIPES_PER_SERVER] with integers, got {spec!r}")
        return sweep(*(int(p) for p in parts))
    if spec.startswith("random:"):
        parts = spec[7:].split(":")
        numbers, options = parts[:4], parts[4:]
        ok = 1 <= len(numbers) and all(p.isdigit() for p in numbers) and len(options) <= 2 and \
            (not options or options[0] in ("extent", "token")) and (len(options) < 2 or options[1] == "requests")
        if not ok:
            raise InstanceError(f"built-in name must be random:SEED[:S[:P[:MAX_STRIPES[:LOCKING[:requests]]]]], "
                                f"got {spec!r}")
        args = [int(p) for p in numbers] + [None] * (3 - len(numbers[1:]))
        kw = {"max_stripes": args[3]} if len(numbers) == 4 else {}
        return generate(args[0], args[1], args[2], **kw, locking=options[0] if options else "extent",
                        requests=len(options) == 2)
    if not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return FileDomainInstance.from_json(Path(spec))


# --- from a Darshan log ------------------------------------------------------------------------------

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

    Raises InstanceError naming the log and what it lacks: one process only, no shared file
    written by several ranks, a file the log does not hold, a partial DXT trace.
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
            some = ", ".join(sorted(sizes, key=sizes.get, reverse=True)[:5])
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
        chosen = max(every, key=sizes.get)
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
        requests = None
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
