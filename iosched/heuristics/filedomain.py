"""File-domain partitionings: ROMIO's (even, Lustre, GPFS) and the seed's five methods.

ROMIO's three follow its code in pmodels/mpich ``src/mpi/romio/adio``, read for this module:

* ``even``: ``ADIOI_Calc_file_domains`` in ``common/ad_aggregate.c``;
* ``lustre``: ``ADIOI_LUSTRE_Get_striping_info`` and ``ADIOI_LUSTRE_Calc_aggregator`` in
  ``ad_lustre/ad_lustre_aggregate.c`` (the version with Pascal Deveze's divisor loop);
* ``gpfs``: ``ADIOI_GPFS_Calc_file_domains`` in ``ad_gpfs/ad_gpfs_aggrs.c`` (the path
  without ``BGQPLATFORM``), in current ROMIO's order (the first aggregators take the extra
  block) or, with ``large_first = false``, in older releases' (the last ones do).

Every method takes ``time_limit`` (s; None: the default profile's), counted from when
:func:`iosched.solve` started it: each builds its domains in whole-array steps and checks
the clock between them; past the limit it returns what it has (the domains if built) with
status ``time_limit``.

ROMIO describes domains by inclusive arrays fd_start[i], fd_end[i] and finds a byte's owner
with ``ADIOI_Calc_aggregator``: the first i with fd_end[i] >= off when the domains were
aligned (and equivalently, for contiguous domains, the one containing off). Where ROMIO's
arithmetic yields a domain that ends before the region or starts before the previous one
(a rounded-down first boundary; GPFS's first domain shortened below zero), our domains are
ROMIO's clipped to the region with that same owner for every byte: aggregator i owns
(E[i-1], E[i]] with E[i] = max(min_st - 1, fd_end[0..i]) and E[-1] = min_st - 1.

The seed's methods, stripes counted from the region's first stripe (n of them, the first
and last possibly partial), the per-aggregator stripe counts balanced as ⌈n/P⌉ for the
first n mod P aggregators and ⌊n/P⌋ for the others:

* ``stripe-aligned``: contiguous domains of those counts, every boundary on a stripe
  boundary (``even`` with ``striping_unit`` = stripe size is ROMIO's own version, which
  rounds each even boundary to the nearest stripe boundary and can be less balanced);
* ``stripe-size-io``: the same domains, written one stripe per call (``io = stripe``);
* ``static-cyclic``: stripe k (absolute index) to aggregator k mod P;
* ``group-cyclic``: aggregators in groups of S (the last one smaller when S does not divide
  P); the region cut at stripe boundaries into one sub-region per group, as many stripes as
  its aggregators' counts; within a sub-region, its i-th stripe to the group's aggregator
  i mod (group size);
* ``transpose``: the region's stripes as a matrix with S columns (column c holds the
  stripes i = c, c + S, ... counted from the region's first stripe: one server, in object
  order) and ⌈n/S⌉ rows; the stripes taken in column-major order (column 0 top to bottom,
  then column 1, ...) and cut into P consecutive runs of the balanced counts, run a to
  aggregator a. On the seed's Figure 2(d) (12 stripes, 3 servers, 5 aggregators) this gives
  P0 the first three stripes of S0, P1 the fourth and the first two of S1: one conflict per
  server.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iosched.core import HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import MAX_EXTENTS, Domains
from iosched.instances.filedomain import MAX_AGGREGATORS, FileDomainInstance, MiB
from iosched.solvers import Deadline
from iosched.validate import Boolean, Integer, TimeLimit, integer

C_INT_MAX = 2**31 - 1  # ROMIO's hints (striping_unit, min_fd_size, cb_nodes) are C ints
Hint = Annotated[int, Integer(0, C_INT_MAX)]  # a ROMIO hint, 0 for none


# --- building domains --------------------------------------------------------------------------------

def contiguous(instance: FileDomainInstance, ends: np.ndarray, io: str = "extent") -> Domains:
    """Aggregator i owns (E[i-1], E[i]] where E = running max of the inclusive ends, floored at the
    region start - 1 and capped at its last byte: ROMIO's ownership rule, clipped to the region."""
    r0, last = instance.region_offset, instance.region_end - 1
    E = np.minimum(np.maximum.accumulate(np.maximum(np.asarray(ends, dtype=np.int64), r0 - 1)), last)
    lo = np.r_[r0, E[:-1] + 1]
    owners = np.flatnonzero(E >= lo)
    return Domains.from_owners(lo[owners], E[owners] + 1, owners, len(E), io)


def by_stripe(instance: FileDomainInstance, owner: np.ndarray, aggregators: int, io: str = "extent") -> Domains:
    """Domains from the owner of each stripe the region touches (relative index 0..n-1), clipped."""
    w, k0 = instance.stripe_size, instance.first_stripe
    k = k0 + np.arange(len(owner), dtype=np.int64)
    starts = np.maximum(k * w, instance.region_offset)
    ends = np.minimum((k + 1) * w, instance.region_end)
    keep = np.ones(len(owner), dtype=bool)  # merge runs of one owner
    keep[1:] = owner[1:] != owner[:-1]
    last = np.r_[np.flatnonzero(keep)[1:] - 1, len(owner) - 1]
    return Domains.from_owners(starts[keep], ends[last], owner[keep], aggregators, io)


def _check_stripes(instance: FileDomainInstance, method: str) -> int:
    n = instance.stripes
    if n > MAX_EXTENTS:
        raise ParameterError(f"{method} would write {n} extents (region.length / striping.stripe_size); at most "
                             f"{MAX_EXTENTS}")
    return n


def balanced(n: int, P: int) -> np.ndarray:
    """Counts of n items over P: ⌈n/P⌉ for the first n mod P, ⌊n/P⌋ for the others."""
    return n // P + (np.arange(P) < n % P)


# --- ROMIO -------------------------------------------------------------------------------------------

def romio_file_domains(min_st: int, max_end: int, nprocs_for_coll: int, min_fd_size: int = 0,
                       striping_unit: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """ADIOI_Calc_file_domains (ad_aggregate.c): (fd_start, fd_end, fd_size), inclusive offsets,
    -1 for domains past the end; ``max_end`` is the last byte (inclusive), as in ROMIO.

    fd_size = ⌈(max_end - min_st + 1) / P⌉, at least min_fd_size. With striping_unit > 0 each
    end offset min_st + fd_size (i + 1) moves to the nearest multiple of striping_unit (a tie
    rounds up: ``rem_front < rem_back`` rounds down, else up), fd_start[i] = fd_end[i-1] + 1,
    and the last end is max_end. Then a domain starting past max_end is (-1, -1) and an end
    past it is max_end.
    """
    P = nprocs_for_coll
    fd_size = max((max_end - min_st + 1 + P - 1) // P, min_fd_size)
    i = np.arange(P, dtype=np.int64)
    if striping_unit > 0:
        end_off = min_st + fd_size * (i + 1)
        rem_front = end_off % striping_unit
        rem_back = striping_unit - rem_front
        end_off = np.where(rem_front < rem_back, end_off - rem_front, end_off + rem_back)
        fd_end = end_off - 1
        fd_end[-1] = max_end
        fd_start = np.r_[min_st, fd_end[:-1] + 1]
    else:
        fd_start = min_st + fd_size * i
        fd_end = fd_start + fd_size - 1
    past = fd_start > max_end
    fd_start[past], fd_end[past] = -1, -1
    fd_end = np.minimum(fd_end, max_end)
    return fd_start, fd_end, fd_size


def lustre_aggregators(cb_nodes: int, stripe_count: int, co_ratio: int = 1) -> int:
    """avail_cb_nodes of ADIOI_LUSTRE_Get_striping_info (write mode, CO = co_ratio): S min(⌊cb/S⌋, CO)
    when cb_nodes >= S, else the largest divisor of S not above cb_nodes (ROMIO's loop, verbatim)."""
    if cb_nodes >= stripe_count:
        return stripe_count * min(cb_nodes // stripe_count, co_ratio)
    divisor, avail = 2, 1
    while stripe_count >= divisor * divisor:
        if stripe_count % divisor == 0:
            if stripe_count // divisor <= cb_nodes:
                return stripe_count // divisor
            if divisor <= cb_nodes:
                avail = divisor
        divisor += 1
    return avail


def gpfs_file_domains(min_st: int, max_end: int, naggs: int, blksize: int,
                      large_first: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """ADIOI_GPFS_Calc_file_domains (ad_gpfs_aggrs.c, not BGQPLATFORM): (fd_start, fd_end), inclusive.

    The blocks from the one holding min_st to gpfs_ub = ⌈max_end / blk⌉ blk - 1 (ROMIO's rounding:
    when max_end is the first byte of a block, that block is not counted and the last domain runs
    one byte into it) are dealt out: n_blk // naggs each (nb_cn_small), and one more to
    naggs_large = n_blk mod naggs of them: the FIRST naggs_large in current ROMIO
    (``if (i < naggs_large) fd_size[i] = (nb_cn_small+1) * blksize``; 17 blocks over 3 give
    {6, 6, 5}), the LAST in older releases (``if (i < naggs_small)`` small; {5, 6, 6}).
    fd_size[0] loses the bytes before min_st (gpfs_lb_rdoff), fd_size[naggs-1] those after max_end
    (gpfs_ub_rdoff), and the domains follow each other from min_st.
    """
    gpfs_ub = (max_end + blksize - 1) // blksize * blksize - 1
    gpfs_lb = min_st // blksize * blksize
    ub_rdoff = gpfs_ub - max_end
    lb_rdoff = min_st - gpfs_lb
    n_blk = (gpfs_ub - gpfs_lb + 1) // blksize
    small, large = n_blk // naggs, n_blk % naggs
    i = np.arange(naggs)
    extra = i < large if large_first else i >= naggs - large
    fd_size = (small + extra).astype(np.int64) * blksize
    fd_size[0] -= lb_rdoff
    fd_size[-1] -= ub_rdoff
    fd_start = min_st + np.r_[0, np.cumsum(fd_size)[:-1]]
    return fd_start, fd_start + fd_size - 1


# --- methods -----------------------------------------------------------------------------------------

def _finish(domains: Domains | None, deadline: Deadline, info: dict | None = None) -> MethodOutput:
    """The method's output: status time_limit once its deadline has passed (with the domains if built)."""
    late = deadline.expired()
    return MethodOutput(domains, Status.TIME_LIMIT if late or domains is None else Status.FEASIBLE, info=info or {})


@register("filedomain", "even", objective="time", exact_over=HEURISTIC)
def even(instance: FileDomainInstance, striping_unit: Hint = 0, min_fd_size: Hint = 0,
         time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """ROMIO's default: ADIOI_Calc_file_domains (even split; boundaries to the nearest striping_unit)."""
    deadline = Deadline.for_method(time_limit, context=context)
    start, end, fd_size = romio_file_domains(instance.region_offset, instance.region_end - 1, instance.aggregators,
                                             min_fd_size, striping_unit)
    info = {"fd_size": int(fd_size), "aligned": striping_unit > 0, "empty_domains": int((start == -1).sum())}
    return _finish(None if deadline.expired() else contiguous(instance, end), deadline, info)


@register("filedomain", "stripe-aligned", objective="time", exact_over=HEURISTIC)
def stripe_aligned(instance: FileDomainInstance, time_limit: TimeLimit = None,
                   *, context: RunContext | None = None) -> MethodOutput:
    """Contiguous domains of balanced whole-stripe counts (the seed's Figure 2a)."""
    deadline = Deadline.for_method(time_limit, context=context)
    counts = balanced(instance.stripes, instance.aggregators)
    return _finish(None if deadline.expired() else _aligned(instance, counts, "extent"), deadline,
                   {"stripes_per_aggregator": [int(counts.min()), int(counts.max())]})


def _aligned(instance: FileDomainInstance, counts: np.ndarray, io: str) -> Domains:
    ends = (instance.first_stripe + np.cumsum(counts)) * instance.stripe_size - 1
    return contiguous(instance, ends, io)


@register("filedomain", "stripe-size-io", objective="time", exact_over=HEURISTIC)
def stripe_size_io(instance: FileDomainInstance, time_limit: TimeLimit = None,
                   *, context: RunContext | None = None) -> MethodOutput:
    """The stripe-aligned domains written one stripe per call (more lock grants in the model)."""
    deadline = Deadline.for_method(time_limit, context=context)
    counts = balanced(instance.stripes, instance.aggregators)
    return _finish(None if deadline.expired() else _aligned(instance, counts, "stripe"), deadline)


@register("filedomain", "static-cyclic", objective="time", exact_over=HEURISTIC)
def static_cyclic(instance: FileDomainInstance, time_limit: TimeLimit = None,
                  *, context: RunContext | None = None) -> MethodOutput:
    """Stripe k to aggregator k mod P (the seed's Figure 2b)."""
    deadline = Deadline.for_method(time_limit, context=context)
    n, P = _check_stripes(instance, "static-cyclic"), instance.aggregators
    k = instance.first_stripe + np.arange(n, dtype=np.int64)
    return _finish(None if deadline.expired() else by_stripe(instance, k % P, P), deadline,
                   _relation(instance.stripe_count, P))


def _relation(S: int, P: int) -> dict:
    if P % S == 0:
        return {"servers_vs_aggregators": f"P = {P} is a multiple of S = {S}: each aggregator on one server"}
    if S % P == 0:
        return {"servers_vs_aggregators": f"P = {P} divides S = {S}: each server sees one aggregator"}
    return {"servers_vs_aggregators": f"P = {P} and S = {S}: neither divides the other; domains interleave"}


def group_cyclic_owner(n: int, S: int, P: int) -> np.ndarray:
    """Owner of each of n stripes by the group-cyclic method (module docstring): the i-th stripe of
    group g's sub-region to its aggregator g S + (i mod the group's size)."""
    counts = balanced(n, P)
    groups = -(-P // S)
    first = np.arange(groups) * S  # each group's first aggregator
    size = np.minimum(S, P - first)
    ends = np.cumsum(np.add.reduceat(counts, first))  # each group's sub-region ends at this stripe
    start = np.r_[0, ends[:-1]]
    i = np.arange(n, dtype=np.int64)
    g = np.searchsorted(ends, i, side="right")
    return first[g] + (i - start[g]) % size[g]


@register("filedomain", "group-cyclic", objective="time", exact_over=HEURISTIC)
def group_cyclic(instance: FileDomainInstance, time_limit: TimeLimit = None,
                 *, context: RunContext | None = None) -> MethodOutput:
    """Groups of S aggregators, one sub-region each, static-cyclic inside (the seed's Figure 2c)."""
    deadline = Deadline.for_method(time_limit, context=context)
    n, P, S = _check_stripes(instance, "group-cyclic"), instance.aggregators, instance.stripe_count
    groups = -(-P // S)
    info = {"groups": groups, "group_sizes": sorted({*([S] if groups > 1 else []), P - (groups - 1) * S}, reverse=True),
            **_relation(S, P)}
    owner = None if deadline.expired() else group_cyclic_owner(n, S, P)
    return _finish(None if owner is None or deadline.expired() else by_stripe(instance, owner, P), deadline, info)


def transpose_owner(n: int, S: int, P: int) -> np.ndarray:
    """Owner of each of n stripes by the transpose method (module docstring)."""
    i = np.arange(n, dtype=np.int64)
    col, row = i % S, i // S
    col_size = (n - np.arange(S) + S - 1) // S
    col_start = np.r_[0, np.cumsum(col_size)[:-1]]
    position = col_start[col] + row
    bounds = np.cumsum(balanced(n, P))
    return np.searchsorted(bounds, position, side="right")


@register("filedomain", "transpose", objective="time", exact_over=HEURISTIC)
def transpose(instance: FileDomainInstance, time_limit: TimeLimit = None,
              *, context: RunContext | None = None) -> MethodOutput:
    """Stripes in column-major order of the servers x rounds matrix, cut into P runs (Figure 2d)."""
    deadline = Deadline.for_method(time_limit, context=context)
    n, P = _check_stripes(instance, "transpose"), instance.aggregators
    owner = None if deadline.expired() else transpose_owner(n, instance.stripe_count, P)
    return _finish(None if owner is None or deadline.expired() else by_stripe(instance, owner, P), deadline)


@register("filedomain", "lustre", objective="time", exact_over=HEURISTIC)
def lustre(instance: FileDomainInstance, cb_nodes: Annotated[int | None, Integer(1, MAX_AGGREGATORS)] = None,
           co_ratio: Annotated[int, Integer(1, C_INT_MAX)] = 1, time_limit: TimeLimit = None,
           *, context: RunContext | None = None) -> MethodOutput:
    """ROMIO's Lustre driver: A aggregators (a multiple or a divisor of S), stripe k to k mod A."""
    deadline = Deadline.for_method(time_limit, context=context)
    P = instance.aggregators
    cb = P if cb_nodes is None else integer("cb_nodes", cb_nodes, 1, P, error=ParameterError)  # its aggregators
    n = _check_stripes(instance, "lustre")
    A = lustre_aggregators(cb, instance.stripe_count, co_ratio)
    k = instance.first_stripe + np.arange(n, dtype=np.int64)
    info = {"aggregators_used": A, "cb_nodes": cb, "co_ratio": co_ratio,
            "rule": "S min(cb_nodes // S, co_ratio)" if cb >= instance.stripe_count else
            "largest divisor of S not above cb_nodes"}
    return _finish(None if deadline.expired() else by_stripe(instance, k % A, A), deadline, info)


@register("filedomain", "gpfs", objective="time", exact_over=HEURISTIC)
def gpfs(instance: FileDomainInstance, block_size: Annotated[int | None, Integer(1, C_INT_MAX)] = None,
         large_first: Annotated[bool, Boolean()] = True, time_limit: TimeLimit = None,
         *, context: RunContext | None = None) -> MethodOutput:
    """ROMIO's GPFS driver: whole blocks, n_blk mod P aggregators one block more (the first ones;
    the last ones with large_first = false, as older ROMIO)."""
    deadline = Deadline.for_method(time_limit, context=context)
    default = MiB if instance.block_size is None else instance.block_size  # set exactly under token locking
    blk = default if block_size is None else block_size
    start, end = gpfs_file_domains(instance.region_offset, instance.region_end - 1, instance.aggregators, blk,
                                   large_first)
    return _finish(None if deadline.expired() else contiguous(instance, end), deadline,
                   {"block_size": blk, "large_first": large_first})
