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
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from iosched.errors import InstanceError
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


class Locking(StrEnum):
    """How the file system locks byte ranges (the JSON holds the strings)."""

    EXTENT = "extent"  # extent locks managed per server object, Lustre-like: the lock unit is the stripe
    TOKEN = "token"  # byte-range tokens from one token manager, GPFS-like: the lock unit is block_size


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
    locking: Locking = Locking.EXTENT
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
        object.__setattr__(self, "locking", Locking(choice("locking", self.locking, tuple(Locking))))
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
