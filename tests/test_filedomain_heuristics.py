"""ROMIO's partitionings on hand-computed cases, the seed's Figure 2 claims, and every method's domains."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import ParameterError
from iosched.heuristics.filedomain import (
    gpfs_file_domains,
    group_cyclic_owner,
    lustre_aggregators,
    romio_file_domains,
    transpose_owner,
)
from iosched.instances.filedomain_presets import generate, load, paper_figure2, platform

HEURISTICS = ["even", "stripe-aligned", "stripe-size-io", "static-cyclic", "group-cyclic", "transpose", "lustre",
              "gpfs"]


def extents(inst, method, **params):
    """Per aggregator, its extents as lists (sorted)."""
    res = iosched.solve("filedomain", inst, method, **params)
    assert res.evaluation.feasible, res.evaluation.violations
    return [sorted(np.asarray(d).reshape(-1, 2).tolist()) for d in res.solution.domains], res


# --- ROMIO's ADIOI_Calc_file_domains, traced by hand through ad_aggregate.c --------------------------

def test_even_no_hint():
    start, end, size = romio_file_domains(0, 99, 3)
    assert size == 34 and start.tolist() == [0, 34, 68] and end.tolist() == [33, 67, 99]
    doms, _ = extents(platform(2, 3, 10, (0, 100)), "even")
    assert doms == [[[0, 34]], [[34, 68]], [[68, 100]]]


def test_even_unit_not_a_power_of_two_region_smaller_than_p_stripes_not_at_zero():
    # region [1000, 8000), striping_unit 3000, P = 4: fd_size 1750; ends 2750 -> 3000 (up),
    # 4500 -> 6000 (a tie rounds up), 6250 -> 6000 (down: an empty domain), last = 7999
    start, end, size = romio_file_domains(1000, 7999, 4, striping_unit=3000)
    assert size == 1750
    assert start.tolist() == [1000, 3000, 6000, 6000] and end.tolist() == [2999, 5999, 5999, 7999]
    inst = platform(2, 4, 3000, (1000, 7000))
    assert inst.stripes == 3 < inst.aggregators
    doms, res = extents(inst, "even", striping_unit=3000)
    assert doms == [[[1000, 3000]], [[3000, 6000]], [], [[6000, 8000]]]
    assert res.evaluation.false_sharing == 0 and res.info["fd_size"] == 1750


def test_even_domain_ending_before_the_region_is_clipped():
    # region [100, 1100), unit 1000, P = 4: fd_end[0] = 350 rounded down to 0, minus 1 = -1
    # (before the region); fd_start[1] = 0 (before the region): clipped, same owner per byte
    start, end, _ = romio_file_domains(100, 1099, 4, striping_unit=1000)
    assert start.tolist() == [100, 0, 1000, 1000] and end.tolist() == [-1, 999, 999, 1099]
    doms, _ = extents(platform(1, 4, 1000, (100, 1000)), "even", striping_unit=1000)
    assert doms == [[], [[100, 1000]], [], [[1000, 1100]]]


def test_even_min_fd_size_leaves_empty_domains_past_the_end():
    start, end, size = romio_file_domains(0, 99, 4, min_fd_size=40)
    assert size == 40 and start.tolist() == [0, 40, 80, -1] and end.tolist() == [39, 79, 99, -1]
    doms, res = extents(platform(1, 4, 64, (0, 100)), "even", min_fd_size=40)
    assert doms == [[[0, 40]], [[40, 80]], [[80, 100]], []] and res.info["empty_domains"] == 1


def calc_aggregator(off, min_off, fd_size, fd_end, aligned):
    """ADIOI_Calc_aggregator's rank_index (ad_aggregate.c)."""
    if aligned:
        i = 0
        while off > fd_end[i]:
            i += 1
        return i
    return (off - min_off + fd_size) // fd_size - 1


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(1, 400), st.integers(1, 9), st.integers(0, 120), st.integers(0, 60))
def test_even_owner_of_every_byte_is_romios(offset, length, P, unit, min_fd):
    inst = platform(1, P, 7, (offset, length))
    start, end, size = romio_file_domains(offset, offset + length - 1, P, min_fd, unit)
    res = iosched.solve("filedomain", inst, "even", striping_unit=unit, min_fd_size=min_fd)
    owner = {}
    for a, dom in enumerate(res.solution.domains):
        for s, e in np.asarray(dom).reshape(-1, 2).tolist():
            owner.update({b: a for b in range(s, e)})
    for b in range(offset, offset + length):
        assert owner[b] == calc_aggregator(b, offset, size, end.tolist(), unit > 0)


# --- ROMIO's GPFS driver ---------------------------------------------------------------------------

# Hand-computed from ADIOI_GPFS_Calc_file_domains's formulas: gpfs_lb = min_st / blk * blk,
# gpfs_ub = (max_end + blk - 1) / blk * blk - 1, n_blk = (gpfs_ub - gpfs_lb + 1) / blk,
# nb_cn_small = n_blk / naggs, naggs_large = n_blk - naggs * nb_cn_small; current ROMIO gives
# (nb_cn_small + 1) blocks to i < naggs_large, older releases to i >= naggs_small; then
# fd_size[0] -= min_st - gpfs_lb, fd_size[naggs-1] -= gpfs_ub - max_end, domains from min_st.

def test_gpfs_17_blocks_over_3():  # ROMIO's own comment: 17 blocks over 3 aggregators
    start, end = gpfs_file_domains(0, 169, 3, 10)  # current: {6, 6, 5}
    assert start.tolist() == [0, 60, 120] and end.tolist() == [59, 119, 169]
    start, end = gpfs_file_domains(0, 169, 3, 10, large_first=False)  # older: {5, 6, 6}, as the comment says
    assert start.tolist() == [0, 50, 110] and end.tolist() == [49, 109, 169]


def test_gpfs_unaligned_region_trims_first_and_last():
    # region [23, 87), blocks of 10: gpfs_lb 20, gpfs_ub 89, 7 blocks = 3 + 2 + 2 (current) or 2 + 2 + 3
    # (older); the first loses 23 - 20 = 3 bytes, the last 89 - 86 = 3
    start, end = gpfs_file_domains(23, 86, 3, 10)
    assert start.tolist() == [23, 50, 70] and end.tolist() == [49, 69, 86]
    start, end = gpfs_file_domains(23, 86, 3, 10, large_first=False)
    assert start.tolist() == [23, 40, 60] and end.tolist() == [39, 59, 86]
    doms, _ = extents(platform(2, 3, 10, (23, 64)), "gpfs", block_size=10)
    assert doms == [[[23, 50]], [[50, 70]], [[70, 87]]]
    doms, _ = extents(platform(2, 3, 10, (23, 64)), "gpfs", block_size=10, large_first=False)
    assert doms == [[[23, 40]], [[40, 60]], [[60, 87]]]


def test_gpfs_region_smaller_than_p_blocks():
    # region [5, 25), 3 blocks over 4: current sizes 10, 10, 10, 0, the first less 5, the last less 5 (-5)
    start, end = gpfs_file_domains(5, 24, 4, 10)
    assert start.tolist() == [5, 10, 20, 30] and end.tolist() == [9, 19, 29, 24]
    doms, _ = extents(platform(2, 4, 10, (5, 20)), "gpfs", block_size=10)
    assert doms == [[[5, 10]], [[10, 20]], [[20, 25]], []]
    # older: sizes 0, 10, 10, 10: the first -5 bytes, the last 5
    start, end = gpfs_file_domains(5, 24, 4, 10, large_first=False)
    assert start.tolist() == [5, 0, 10, 20] and end.tolist() == [-1, 9, 19, 24]
    doms, _ = extents(platform(2, 4, 10, (5, 20)), "gpfs", block_size=10, large_first=False)
    assert doms == [[], [[5, 10]], [[10, 20]], [[20, 25]]]


def test_gpfs_last_byte_opening_a_block():
    # max_end = 30: ROMIO rounds (30 + 9) // 10 * 10 - 1 = 29, so 3 blocks and gpfs_ub_rdoff = -1:
    # the last domain runs one byte into the fourth block
    start, end = gpfs_file_domains(0, 30, 2, 10)  # current: 2 + 1 blocks, the last 11 bytes
    assert start.tolist() == [0, 20] and end.tolist() == [19, 30]
    start, end = gpfs_file_domains(0, 30, 2, 10, large_first=False)  # older: 1 + 2 blocks, the last 21 bytes
    assert start.tolist() == [0, 10] and end.tolist() == [9, 30]


def test_gpfs_issue_24_example_owner():
    """81 bytes at 1,519,010,267, 63 aggregators, 1 MiB blocks: gpfs_lb = 1448 MiB, gpfs_ub = 1449 MiB - 1,
    one block, naggs_large = 1: current ROMIO gives it to aggregator 0 (fd_size[0] = 1 MiB - 672,219 covers
    the region), older ROMIO to aggregator 62 (fd_size[62] = 1 MiB - 376,276 from min_st - 672,219)."""
    offset, length = 1_519_010_267, 81
    start, end = gpfs_file_domains(offset, offset + length - 1, 63, 2**20)
    assert (start[0], end[0]) == (offset, offset + 2**20 - 672_219 - 1)
    assert end[62] == start[62] - 376_276 - 1
    inst = platform(4, 63, 2**20, (offset, length))
    for large_first, owner in ((True, 0), (False, 62)):
        doms, res = extents(inst, "gpfs", large_first=large_first)
        assert [a for a, d in enumerate(doms) if d] == [owner] and doms[owner] == [[offset, offset + length]]
        assert res.info["large_first"] is large_first


def test_gpfs_many_more_aggregators_than_blocks():  # ROMIO's comment: 1000 blocks over 2064 aggregators
    start, end = gpfs_file_domains(0, 1000 * 16 - 1, 2064, 16)
    sizes = end - start + 1
    assert (sizes[:1000] == 16).all() and (sizes[1000:] == 0).all()
    start, end = gpfs_file_domains(0, 1000 * 16 - 1, 2064, 16, large_first=False)
    sizes = end - start + 1
    assert (sizes[:1064] == 0).all() and (sizes[1064:] == 16).all()


def test_gpfs_default_block_is_the_token_block_else_1_mib():
    assert iosched.solve("filedomain", load("example:gpfs"), "gpfs").info["block_size"] == 4 * 2**20
    assert iosched.solve("filedomain", load("sweep:4:3"), "gpfs").info["block_size"] == 2**20


# --- ROMIO's Lustre driver -------------------------------------------------------------------------

def test_lustre_aggregators_romio_comments():
    assert lustre_aggregators(42, 20, 3) == 40  # "stripe_count=20, nprocs_for_coll=42 and CO=3 -> 40"
    assert lustre_aggregators(8, 60) == 6  # "stripe_count=60 and nprocs_for_coll=8 -> 6"
    assert lustre_aggregators(5, 7) == 1 and lustre_aggregators(16, 8, 1) == 8 and lustre_aggregators(16, 8, 4) == 16


@given(st.integers(1, 300), st.integers(1, 300))
def test_lustre_below_s_is_the_largest_divisor(cb, S):
    if cb < S:
        assert lustre_aggregators(cb, S) == max(d for d in range(1, cb + 1) if S % d == 0)


def test_lustre_method_uses_a_aggregators():
    doms, res = extents(load("paper:fig2d"), "lustre")  # cb_nodes = P = 5 >= S = 3: A = 3
    assert len(doms) == 3 and res.info["aggregators_used"] == 3
    assert res.evaluation.conflicts == 0 and res.evaluation.aggregators_per_server == 1
    assert doms[0] == [[k * 2**20, (k + 1) * 2**20] for k in (0, 3, 6, 9)]
    _, res = extents(platform(8, 12, 2**20, (0, 64 * 2**20)), "lustre", cb_nodes=12, co_ratio=2)
    assert res.info["aggregators_used"] == 8  # 8 min(12 // 8, 2)


# --- the seed's Figure 2 -----------------------------------------------------------------------------

def test_static_cyclic_p_multiple_of_s_puts_each_aggregator_on_one_server():
    _, res = extents(paper_figure2(6), "static-cyclic")
    assert res.evaluation.servers_per_aggregator == 1
    assert res.evaluation.server_conflicts == [3, 3, 3]  # P0 and P3 interleave on S0, ...


def test_static_cyclic_p_factor_of_s_gives_each_server_one_aggregator():
    _, res = extents(platform(6, 3, 2**20, (0, 36 * 2**20)), "static-cyclic")
    assert res.evaluation.aggregators_per_server == 1 and res.evaluation.conflicts == 0


@pytest.mark.parametrize("S, P, rounds", [(3, 6, 4), (4, 8, 6), (4, 2, 5), (8, 16, 3), (8, 4, 2), (2, 6, 9)])
def test_group_cyclic_reaches_max_0_p_minus_s(S, P, rounds):
    inst = platform(S, P, 2**20, (0, rounds * P * 2**20))
    _, res = extents(inst, "group-cyclic")
    ev = res.evaluation
    assert ev.conflicts == max(0, P - S)
    assert max(ev.aggregator_bytes) - min(ev.aggregator_bytes) <= 2**20  # balanced within one stripe


def test_group_cyclic_misaligned_counts_more():
    _, res = extents(load("paper:fig2d"), "group-cyclic")
    assert res.evaluation.conflicts > max(0, 5 - 3)


def test_transpose_figure_2d():
    inst = load("paper:fig2d")
    owner = transpose_owner(12, 3, 5)
    assert owner.tolist() == [0, 1, 3, 0, 1, 3, 0, 2, 4, 1, 2, 4]
    assert [k for k in range(12) if owner[k] == 0] == [0, 3, 6]  # the first three stripes of S0
    assert [k for k in range(12) if owner[k] == 1] == [1, 4, 9]  # the fourth of S0, then S1's
    _, res = extents(inst, "transpose")
    assert res.evaluation.server_conflicts == [1, 1, 1]


def test_even_unaligned_has_false_sharing_stripe_aligned_none():
    inst = paper_figure2(5)
    _, even = extents(inst, "even")
    _, aligned = extents(inst, "stripe-aligned")
    assert even.evaluation.false_sharing == 4 and aligned.evaluation.false_sharing == 0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_stripe_aligned_never_shares_and_stripe_size_io_only_adds_grants(seed):
    inst = generate(seed, requests=seed % 3 == 0, locking="token" if seed % 4 == 0 else "extent")
    aligned = iosched.solve("filedomain", inst, "stripe-aligned")
    size_io = iosched.solve("filedomain", inst, "stripe-size-io")
    assert aligned.evaluation.false_sharing == 0
    assert size_io.solution.io == "stripe"
    assert [np.asarray(d).tolist() for d in size_io.solution.domains] == \
        [np.asarray(d).tolist() for d in aligned.solution.domains]
    assert size_io.evaluation.conflicts == aligned.evaluation.conflicts
    assert size_io.evaluation.acquisitions >= aligned.evaluation.acquisitions
    assert size_io.objective >= aligned.objective


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(HEURISTICS))
def test_every_method_passes_the_evaluator_and_respects_the_bound(seed, method):
    inst = generate(seed, requests=seed % 2 == 0, locking="token" if seed % 3 == 0 else "extent")
    res = iosched.solve("filedomain", inst, method)
    assert res.evaluation.feasible and res.status.value in ("feasible", "optimal")
    assert res.objective >= res.bound * (1 - 1e-12)
    assert len(res.solution.domains) <= inst.aggregators


@pytest.mark.parametrize("method, params, fragment", [
    ("even", {"striping_unit": -1}, "striping_unit"), ("even", {"striping_unit": "abc"}, "'abc'"),
    ("even", {"striping_unit": 1.5}, "1.5"), ("even", {"min_fd_size": True}, "min_fd_size"),
    ("even", {"min_fd_size": 2**31}, "min_fd_size"), ("lustre", {"cb_nodes": 0}, "cb_nodes"),
    ("lustre", {"cb_nodes": 7}, "cb_nodes"), ("lustre", {"co_ratio": 0}, "co_ratio"),
    ("gpfs", {"block_size": 0}, "block_size"), ("gpfs", {"block_size": float("nan")}, "nan"),
    ("transpose", {"rounds": 2}, "rounds"),
])
def test_bad_parameters(method, params, fragment):
    with pytest.raises(ParameterError, match=fragment):
        iosched.solve("filedomain", load("paper:fig2d"), method, **params)


def test_cyclic_methods_refuse_too_many_extents():
    inst = platform(4, 8, 1, (0, 2**30))
    with pytest.raises(ParameterError, match="region.length / striping.stripe_size"):
        iosched.solve("filedomain", inst, "static-cyclic")
    assert iosched.solve("filedomain", inst, "stripe-aligned").evaluation.feasible  # contiguous: fine


# --- time limits (issue 21) -------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["even", "stripe-aligned", "stripe-size-io", "static-cyclic", "group-cyclic",
                                    "transpose", "lustre", "gpfs"])
def test_every_heuristic_takes_a_checked_time_limit(method):
    with pytest.raises(ParameterError, match="time_limit"):
        iosched.solve("filedomain", "paper:fig2", method, time_limit=-1)
    with pytest.raises(ParameterError, match="time_limit"):
        iosched.solve("filedomain", "paper:fig2", method, time_limit="soon")
    late = iosched.solve("filedomain", "sweep:4:20000", method, time_limit=1e-9)  # gone before its first step
    assert late.status.value == "time_limit"
    ok = iosched.solve("filedomain", "paper:fig2", method, time_limit=30)
    assert ok.status.value in ("feasible", "optimal") and ok.evaluation.feasible


def test_a_million_aggregators():
    """Issue 21: even with 10^6 aggregators ran past 60 s; every step is a whole-array one now, and the
    evaluator checks a method's arrays as one (10^6 domains, mostly empty)."""
    inst = load("sweep:4:1000000")
    for method in ("even", "group-cyclic", "gpfs"):
        res = iosched.solve("filedomain", inst, method)
        assert res.status.value in ("feasible", "optimal") and res.evaluation.feasible
        assert len(res.solution.domains) == 10**6


def test_group_cyclic_owner_by_hand():
    # 10 stripes, S = 3, P = 5: counts 2,2,2,2,2; groups {0,1,2} (6 stripes) and {3,4} (4 stripes)
    assert group_cyclic_owner(10, 3, 5).tolist() == [0, 1, 2, 0, 1, 2, 3, 4, 3, 4]
