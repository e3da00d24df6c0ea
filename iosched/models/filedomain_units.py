"""What every file-domain engine (:mod:`iosched.models.filedomain`) shares: the region's lock units and
their sequences, domains from pieces in file order, and the plumbing of the models (size limits, build
estimates, deadlines, scaled outcomes). The bound every solution meets is in
:mod:`iosched.models.filedomain_bounds`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains
from iosched.instances.filedomain import GB, FileDomainInstance
from iosched.models import driver
from iosched.solvers import Deadline, Profile
from iosched.validate import choice

BOUND_SLACK = 1e-6  # HiGHS bounds are deflated by this (relative): its tolerances put them ~1e-8 too high
MAX_CELLS = 200_000  # units x aggregators (or servers x aggregators) in one model: more is refused
# seconds to build a Pyomo model per unit x aggregator (servers x aggregators for the count models),
# rounded up from the times measured (benchmarks/speed.md, constants); Pyomo then hands a model to HiGHS
# in about HANDOVER times its build time (measured, 40,000 variables)
BUILD_S_PER_CELL = {"byte": 1e-4, "unit": 3e-5, "counts": 3e-5}
HANDOVER = 4.0
US = 1e6  # microseconds per second


@dataclass(frozen=True)
class Units:
    """The region's lock units with data: absolute index, data bytes, and the lock sequences
    (arrays of positions into the units, in lock order); ``server_time`` (s) per server."""

    size: int
    index: np.ndarray
    weight: np.ndarray
    sequences: tuple[np.ndarray, ...]
    sequence_server: tuple[int, ...]  # the server of each sequence (extent), or -1 (token)
    server_time: np.ndarray


def data_below(instance: FileDomainInstance, x: np.ndarray) -> np.ndarray:
    """Data bytes at offsets below each x."""
    d = instance.data
    lengths = d[:, 1] - d[:, 0]
    before = np.r_[0, np.cumsum(lengths)]
    j = np.searchsorted(d[:, 0], x, side="right") - 1
    inside = np.clip(x - d[np.maximum(j, 0), 0], 0, lengths[np.maximum(j, 0)])
    return np.where(j >= 0, before[np.maximum(j, 0)] + inside, 0)


def lock_units(instance: FileDomainInstance, limit: int | None = None) -> Units:
    """The units with data and their sequences (``limit``: refuse more units than that)."""
    size = instance.unit_size
    first, last = instance.region_offset // size, (instance.region_end - 1) // size
    if limit is not None and last - first + 1 > limit:
        raise ParameterError(f"the region has {last - first + 1} lock units (region.length / unit size); "
                             f"this model takes at most {limit}")
    index = np.arange(first, last + 1, dtype=np.int64)
    cuts = data_below(instance, np.r_[index * size, (last + 1) * size])
    weight = np.diff(cuts)
    index, weight = index[weight > 0], weight[weight > 0]
    server_time = instance.server_bytes() / (np.asarray(instance.bandwidth.server) * GB)
    if instance.locking == "extent":
        server = instance.server_of(index)
        order = np.argsort(server, kind="stable")
        cuts = np.flatnonzero(np.diff(server[order])) + 1
        seqs = tuple(np.split(order, cuts))
        return Units(size, index, weight, seqs, tuple(int(server[s[0]]) for s in seqs), server_time)
    return Units(size, index, weight, (np.arange(len(index)),), (-1,), server_time)


def aggregator_classes(instance: FileDomainInstance) -> list[list[int]]:
    """Groups of interchangeable aggregators (same bandwidth, and the same node or equal nodes of
    one aggregator each, or no node constraint): permuting inside a group changes no cost."""
    bw = instance.bandwidth
    nodes = instance.aggregator_nodes
    alone = np.bincount(np.asarray(nodes), minlength=instance.nodes) == 1
    groups: dict = {}
    for a in range(instance.aggregators):
        key: tuple
        if bw.node is None:
            key = (bw.aggregator[a],)
        elif alone[nodes[a]]:
            key = (bw.aggregator[a], "alone", bw.node[nodes[a]])
        else:
            key = (bw.aggregator[a], "node", nodes[a])
        groups.setdefault(key, []).append(a)
    return [g for g in groups.values() if len(g) > 1]


def node_classes(instance: FileDomainInstance) -> list[list[list[int]]]:
    """Groups of interchangeable nodes of two or more aggregators (the same node bandwidth and the same
    aggregator bandwidths), each node as its aggregators: moving every aggregator's domain to its
    counterpart on another node of the group (in index order) changes no cost, so the nodes of a
    group can be ordered by their data (beside :func:`aggregator_classes`, which orders the
    aggregators inside a node: the two orders hold together)."""
    bw = instance.bandwidth
    if bw.node is None:
        return []
    members: dict[int, list[int]] = {}
    for a, n in enumerate(instance.aggregator_nodes):
        members.setdefault(n, []).append(a)
    groups: dict = {}
    for n, group in sorted(members.items()):
        if len(group) > 1:
            groups.setdefault((bw.node[n], tuple(bw.aggregator[a] for a in group)), []).append(group)
    return [g for g in groups.values() if len(g) > 1]


def from_sequence(instance: FileDomainInstance, owners, amounts, io: str = "extent") -> Domains:
    """Domains from the data in file order as consecutive (owner, data bytes) pieces; the holes
    between requests go to the owner of the data before them."""
    owners = np.asarray(owners, dtype=np.int64)
    amounts = np.asarray(amounts, dtype=np.int64)
    keep = amounts > 0
    owners, amounts = owners[keep], amounts[keep]
    d = instance.data
    lengths = d[:, 1] - d[:, 0]
    before = np.r_[0, np.cumsum(lengths)]
    cut = np.cumsum(amounts)[:-1]  # data coordinates where a piece starts
    j = np.searchsorted(before, cut, side="right") - 1
    inner = d[j, 0] + cut - before[j]
    lo = np.r_[instance.region_offset, inner]
    hi = np.r_[inner, instance.region_end]
    return Domains.from_owners(lo, hi, owners, instance.aggregators, io)


# --- what the engines' models share ----------------------------------------------------------------

class OutOfTime(Exception):
    """A model's build reached its method's deadline."""


def ticking(items, deadline: Deadline | None):
    """``items``, checking ``deadline`` before each (OutOfTime once it has passed)."""
    for item in items:
        if deadline is not None and deadline.expired():
            raise OutOfTime
        yield item


def pyomo_in_time(run: driver.ExactRun, build, cells: int, kind: str, profile: Profile | None = None):
    """(model, outcome, note): a Pyomo model built by ``build()`` and solved on the backend of ``profile``
    (default: the run's) within its limit and what is left of ``run``'s deadline; (None, None, why) when
    its estimated build and handover (``cells`` x BUILD_S_PER_CELL[kind] x (1 + HANDOVER)) would not fit in
    the time left (the driver's build check)."""
    late = run.too_slow(cells, BUILD_S_PER_CELL[kind] * (1 + HANDOVER), f"model of {cells} cells")
    if late is not None:
        return None, None, late
    return run.solve_pyomo(build, HANDOVER, profile=profile)


def check_cells(n: int, P: int, what: str) -> None:
    """Refuse a model of ``n`` x ``P`` (``what`` x aggregators) cells above MAX_CELLS."""
    if n * P > MAX_CELLS:
        raise ParameterError(f"{what} x aggregators = {n} x {P} = {n * P} exceeds the model limit {MAX_CELLS}")


def model_units(instance: FileDomainInstance, granularity: str):
    """What the MILP and CP-SAT models are built on: (lock units, their count U, aggregators P,
    their weights in bytes), after checking ``granularity`` and the model's size."""
    choice("granularity", granularity, ("byte", "unit"), error=ParameterError)
    units = lock_units(instance, MAX_CELLS // instance.aggregators)
    U, P = len(units.weight), instance.aggregators
    check_cells(U, P, "lock units")
    return units, U, P, [int(x) for x in units.weight]


def aligned_sequence(instance, units: Units, owners, amounts) -> Domains:
    """from_sequence with amounts checked to sum to each unit's data (rounding repaired on the last piece)."""
    amounts = np.asarray(amounts, dtype=np.int64)
    total = int(units.weight.sum())
    if amounts.sum() != total:
        amounts[-1] += total - int(amounts.sum())
    return from_sequence(instance, owners, amounts)


def scaled(out, per_second: float) -> tuple[float | None, float | None]:
    """Objective and bound in seconds; a HiGHS bound deflated by BOUND_SLACK (its tolerances)."""
    value = out.objective / per_second if out.objective is not None else None
    bound = out.bound / per_second * (1 - BOUND_SLACK) if out.bound is not None else None
    return value, bound
