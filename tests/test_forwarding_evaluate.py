"""Forwarding evaluator: hand-computed fluid cases, every violation, non-finite numbers, the bound."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import InstanceError
from iosched.evaluate.forwarding import Allocation, dedicated_time, evaluate, node_times
from iosched.instances.forwarding import ForwardingInstance, ForwardingNode, Interference, Job
from iosched.instances.forwarding_presets import generate
from iosched.models.forwarding import lower_bound

BF = 2.5
BC = BF / 32


def machine(jobs, running=(), anomalous=(), pool=4, **kw):
    """1024 compute nodes, two default nodes (0: [0, 512), 1: [512, 1024)), ``pool`` pool nodes 2.."""
    nodes = tuple(ForwardingNode(i, BF, i in anomalous, "default" if i < 2 else "pool") for i in range(2 + pool))
    return ForwardingInstance(1024, 512, nodes, tuple(jobs), tuple(running), **kw)


def job(jid, start, nodes, io=None, bw=BC, volume=10.0, **kw):
    return Job(jid, start, nodes, nodes if io is None else io, bw, volume, **kw)


def default(inst):
    return Allocation({j.id: inst.default_groups(j) for j in inst.jobs})


# --- hand-computed fluid model ------------------------------------------------------------------------


def test_one_job_alone_is_limited_by_the_node_or_its_links():
    inst = machine([job("a", 0, 256, volume=100.0)])  # links 256 x 2.5/32 = 20 GB/s > 2.5
    ev = evaluate(inst, default(inst))
    assert ev.feasible
    assert ev.job_times["a"] == pytest.approx(100 / 2.5)
    slow = machine([job("a", 0, 256, io=16, bw=0.05, volume=100.0)])  # links 0.8 GB/s < 2.5
    assert evaluate(slow, default(slow)).job_times["a"] == pytest.approx(100 / 0.8)


def test_max_min_fair_share_between_a_light_and_a_heavy_job():
    light = job("light", 0, 256, io=10, bw=0.05, volume=1.0)  # cap 0.5 GB/s
    heavy = job("heavy", 256, 256, volume=30.0)  # cap 20 GB/s
    inst = machine([light, heavy])
    ev = evaluate(inst, default(inst))
    assert ev.job_times["light"] == pytest.approx(1.0 / 0.5)
    assert ev.job_times["heavy"] == pytest.approx(30.0 / 2.0)  # what the light job leaves
    assert ev.total_io_time == pytest.approx(2 + 15)
    assert ev.max_io_time == pytest.approx(15)
    assert ev.forwarding_nodes_used == 1


def test_two_bandwidth_bound_jobs_halve_each_other_and_no_extra_factor():
    a = job("a", 0, 256, volume=10.0, bandwidth="high")
    b = job("b", 256, 256, volume=10.0, bandwidth="high")
    inst = machine([a, b])
    ev = evaluate(inst, default(inst))
    assert ev.job_times == pytest.approx({"a": 10 / 1.25, "b": 10 / 1.25})  # the seed's "about 2x"


def test_n1_aggressor_slows_a_low_job_fifty_fold_and_not_the_reverse():
    low = job("low", 0, 256, io=1, volume=1.0, mode="1-1")  # cap 2.5/32
    awp = job("awp", 256, 256, io=256, bw=0.001, volume=1.0, mode="N-1")  # cap 0.256
    inst = machine([low, awp])
    ev = evaluate(inst, default(inst))
    assert ev.job_times["low"] == pytest.approx(1.0 / BC * 50)
    assert ev.job_times["awp"] == pytest.approx(1.0 / 0.256)


def test_high_bandwidth_slows_high_iops_tenfold_not_the_reverse():
    apt = job("apt", 0, 256, bw=0.001, volume=1.0, iops="high")
    mpi = job("mpi", 256, 256, volume=10.0, bandwidth="high")
    inst = machine([apt, mpi])
    ev = evaluate(inst, default(inst))
    assert ev.job_times["apt"] == pytest.approx(1.0 / 0.256 * 10)
    assert ev.job_times["mpi"] == pytest.approx(10.0 / (2.5 - 0.256))


def test_users_table_replaces_the_defaults():
    rows = list(map(list, Interference().slowdown))
    rows[4][0] = 3.0  # low victim, n1 aggressor
    low = job("low", 0, 256, io=1, volume=1.0, mode="1-1")
    awp = job("awp", 256, 256, io=256, bw=0.001, volume=1.0, mode="N-1")
    inst = machine([low, awp], interference=Interference(32.0, tuple(map(tuple, rows))))
    assert evaluate(inst, default(inst)).job_times["low"] == pytest.approx(1.0 / BC * 3)


def test_metadata_heavy_threshold_comes_from_the_instance():
    meta = job("meta", 0, 256, bw=0.001, volume=1.0, metadata_wait=40.0)
    low = job("low", 256, 256, io=1, volume=1.0, mode="1-1")
    inst = machine([meta, low])
    assert evaluate(inst, default(inst)).job_times["low"] == pytest.approx(1.0 / BC * 2.4)
    calm = machine([meta, low], interference=Interference(metadata_wait=50.0))
    assert evaluate(calm, default(calm)).job_times["low"] == pytest.approx(1.0 / BC)


def test_anomalous_node_delivers_its_fraction():
    inst = machine([job("a", 0, 256, volume=10.0)], anomalous=(0,))
    assert evaluate(inst, default(inst)).job_times["a"] == pytest.approx(10 / 0.25)
    inst = machine([job("a", 0, 256, volume=10.0)], anomalous=(0,), anomalous_fraction=0.07)
    assert evaluate(inst, default(inst)).job_times["a"] == pytest.approx(10 / (2.5 * 0.07))


def test_barrier_the_slowest_part_decides():
    neighbour = job("r", 0, 256, volume=10.0, bandwidth="high")  # running, bandwidth-bound on node 0
    a = job("a", 256, 512, volume=20.0)  # 256 on node 0 (shared), 256 on node 1 (alone)
    inst = machine([a], running=[neighbour])
    ev = evaluate(inst, default(inst))
    part = 20.0 * 256 / 512
    assert ev.job_times["a"] == pytest.approx(part / 1.25)  # not the node-1 part's 10 / 2.5
    assert ev.running_delay == pytest.approx(10 / 1.25 - 10 / 2.5)
    assert ev.total_io_time == pytest.approx(ev.job_times["a"] + ev.running_delay)
    assert ev.neighbour_slowdown == pytest.approx(2.0)


def test_even_split_over_dedicated_nodes():
    a = job("a", 0, 256, volume=100.0)
    inst = machine([a])
    alloc = Allocation({"a": ((2, 86), (3, 85), (4, 85))}, frozenset({"a"}), True)
    ev = evaluate(inst, alloc)
    assert ev.feasible and ev.pool_nodes_used == 3
    assert ev.job_times["a"] == pytest.approx(100 * 86 / 256 / 2.5)
    assert ev.job_times["a"] == pytest.approx(dedicated_time(a, 3, 2.5))
    # the slowdown sum: time over the solo run on its default number (1) of dedicated nodes
    assert ev.total_slowdown == pytest.approx(ev.job_times["a"] / (100 / 2.5))


def test_node_times_matches_the_formula():
    inst = machine([job("a", 0, 512)])
    a, b = job("a", 0, 100, io=50, bw=0.01, volume=5.0), job("b", 100, 100, volume=5.0, iops="high")
    t = node_times(inst, 0, [(a, 100), (b, 40)])
    assert t[0] == pytest.approx(5.0 / 0.5)  # a's cap 0.5 GB/s, low beside iops: no factor
    assert t[1] == pytest.approx(5.0 * 40 / 100 / 2.0)  # b gets 2.5 - 0.5


# --- violations ------------------------------------------------------------------------------------------


def two_jobs():
    return machine([job("a", 0, 256), job("b", 256, 256)], running=[job("r", 512, 64)], anomalous=(5,))


BAD_ALLOCATIONS = {
    "missing_job": (Allocation({"a": ((0, 256),)}), "missing_job"),
    "unknown_job": (Allocation({"a": ((0, 256),), "b": ((0, 256),), "zz": ((0, 1),)}), "unknown_job"),
    "running_remapped": (Allocation({"a": ((0, 256),), "b": ((0, 256),), "r": ((1, 64),)}), "running_job_remapped"),
    "unknown_node": (Allocation({"a": ((99, 256),), "b": ((0, 256),)}), "unknown_forwarding_node"),
    "short": (Allocation({"a": ((0, 200),), "b": ((0, 256),)}), "compute_nodes"),
    "zero_group": (Allocation({"a": ((0, 256), (1, 0)), "b": ((0, 256),)}), "mapping"),
    "float_count": (Allocation({"a": ((0, 256.0),), "b": ((0, 256),)}), "mapping"),
    "bool_node": (Allocation({"a": ((True, 256),), "b": ((0, 256),)}), "mapping"),
    "nan": (Allocation({"a": ((0, math.nan),), "b": ((0, 256),)}), "mapping"),
    "inf": (Allocation({"a": ((math.inf, 256),), "b": ((0, 256),)}), "mapping"),
    "huge": (Allocation({"a": ((0, 10**400),), "b": ((0, 256),)}), "mapping"),
    "empty": (Allocation({"a": (), "b": ((0, 256),)}), "mapping"),
    "not_pairs": (Allocation({"a": ((0, 256, 1),), "b": ((0, 256),)}), "mapping"),
    "string_groups": (Allocation({"a": "0:256", "b": ((0, 256),)}), "mapping"),
    "dedicated_shared": (Allocation({"a": ((2, 256),), "b": ((2, 256),)}, frozenset({"a"})), "dedicated"),
    "dedicated_default_shared": (Allocation({"a": ((0, 256),), "b": ((0, 256),)}, frozenset({"b"})), "dedicated"),
    "dedicated_of_running": (Allocation({"a": ((6, 256),), "b": ((0, 256),)}), "dedicated"),
    "dedicated_unknown": (Allocation({"a": ((0, 256),), "b": ((0, 256),)}, frozenset({"q"})), "unknown_job"),
    "anomalous_claimed": (Allocation({"a": ((5, 256),), "b": ((0, 256),)}, frozenset(), True), "anomalous"),
    "avoid_not_bool": (Allocation({"a": ((0, 256),), "b": ((0, 256),)}, frozenset(), "yes"), "allocation"),
    "dedicated_not_set": (Allocation({"a": ((0, 256),), "b": ((0, 256),)}, [["a"]]), "allocation"),
}


@pytest.mark.parametrize("key", BAD_ALLOCATIONS)
def test_bad_allocations_are_violations_not_exceptions(key):
    alloc, kind = BAD_ALLOCATIONS[key]
    inst = two_jobs()
    if key == "dedicated_of_running":  # a running job holding pool node 6 to itself
        inst = machine([job("a", 0, 256), job("b", 256, 256)],
                       running=[Job("r", 512, 64, 64, BC, 1.0, forwarding=((6, 64),), dedicated=True)], pool=5)
    ev = evaluate(inst, alloc)
    assert not ev.feasible
    assert kind in [v.constraint for v in ev.violations], ev.violations
    assert all(v.amount > 0 for v in ev.violations)


def test_the_same_allocation_unclaimed_is_fine():
    inst = two_jobs()
    ok = evaluate(inst, Allocation({"a": ((5, 256),), "b": ((0, 256),)}))  # anomalous, not claimed avoided
    assert ok.feasible and ok.job_times["a"] == pytest.approx(10 / 0.25)


@pytest.mark.parametrize("solution", [None, 3, "x", [1], {"jobs": 3}, {"jobs": {"a": {"mapping": 4}}}, {},
                                      # a flag that is not true or false (NaN was read as false, and feasible)
                                      {"jobs": {"a": {"mapping": [[0, 256]], "dedicated": math.nan}}},
                                      {"jobs": {"a": {"mapping": [[0, 256]]}}, "avoid_anomalous": "yes"}])
def test_malformed_json_solutions_are_refused_naming_what_is_wrong(solution):
    with pytest.raises(InstanceError, match="solution must be|allocation"):
        iosched.evaluate("forwarding", two_jobs(), solution)


def test_json_solution_round_trip():
    inst = two_jobs()
    alloc = Allocation({"a": ((2, 128), (3, 128)), "b": ((0, 256),)}, frozenset({"a"}), True)
    d = alloc.to_dict(inst)
    assert Allocation.from_dict(d) == alloc
    assert iosched.evaluate("forwarding", inst, d).to_dict() == evaluate(inst, alloc).to_dict()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["a", "b"]), st.integers(0, 1), st.sampled_from([math.nan, math.inf, -math.inf, 1e400]))
def test_any_non_finite_number_is_infeasible(jid, pos, bad):
    inst = two_jobs()
    groups = {"a": [2, 256], "b": [0, 256]}
    groups[jid][pos] = bad
    alloc = Allocation({k: (tuple(v),) for k, v in groups.items()})
    assert not evaluate(inst, alloc).feasible


# --- the bound is valid for every allocation ------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.sampled_from(["fixed", "round-robin", "dfra", "mckp"]))
def test_no_method_beats_the_bound(seed, n, method):
    inst = generate(seed, n, compute_nodes=4096, default_nodes=8, pool_nodes=4)
    r = iosched.solve("forwarding", inst, method)
    assert r.evaluation.feasible
    for name in ("total_io_time", "max_io_time", "total_slowdown", "forwarding_nodes_used"):
        assert getattr(r.evaluation, name) >= lower_bound(inst, name) * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["N-N", "N-1", "1-1"]), st.sampled_from(["high", "low"]),
                          st.sampled_from(["high", "low"]), st.floats(0, 60), st.integers(1, 64)),
                min_size=1, max_size=6))
def test_node_rates_take_the_largest_pairwise_factor(users):
    """The evaluator's trait counting equals the definition: max over the other users of Interference.factor."""
    from iosched.evaluate.forwarding import node_rates
    from iosched.fluid import max_min_fair

    jobs = [(Job(f"u{k}", 0, 64, 1 if mode == "1-1" else io, BC, 1.0, mode, meta, iops, band), io)
            for k, (mode, iops, band, meta, io) in enumerate(users)]
    inst = machine([job("a", 0, 8)])
    shares = max_min_fair([c * j.io_nodes / j.nodes * j.node_bandwidth for j, c in jobs], BF)
    for u, ((j, _), rate) in enumerate(zip(jobs, node_rates(inst, 0, jobs))):
        slow = max((inst.interference.factor(inst.traits(j), inst.traits(k)) for i, (k, _) in enumerate(jobs)
                    if i != u), default=1.0)
        assert rate == pytest.approx(shares[u] / slow)
