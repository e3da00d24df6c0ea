"""Forwarding heuristics: the issue's hand-built cases, every DFRA rule, round-robin, MCKP against brute force,
parameters, and properties on generated instances."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import evaluate
from iosched.heuristics.forwarding import interference_likely, mckp_choices, mckp_solve
from iosched.instances.forwarding import ForwardingInstance, ForwardingNode, History, Job
from iosched.instances.forwarding_presets import generate

BF = 2.5
BC = BF / 32
HEURISTICS = ["fixed", "round-robin", "dfra", "mckp"]


def machine(jobs, running=(), anomalous=(), pool=8, compute=1024):
    nodes = tuple(ForwardingNode(i, BF, i in anomalous, "default" if i < compute // 512 else "pool")
                  for i in range(compute // 512 + pool))
    return ForwardingInstance(compute, 512, nodes, tuple(jobs), tuple(running))


def hist(volume, io, meta=1.0):
    return History(volume, io, meta)


def nn(jid, start, nodes, volume=100.0, history=True, **kw):
    return Job(jid, start, nodes, nodes, BC, volume, "N-N", history=hist(volume, nodes) if history else None,
               bandwidth="high" if nodes * BC >= BF else "low", **kw)


def run(inst, method, **params):
    r = iosched.solve("forwarding", inst, method, **params)
    assert r.evaluation.feasible, r.evaluation.violations
    return r


def nodes_of(r, jid):
    return [f for f, _ in r.solution.mapping[jid]]


# --- the hand-built instances -----------------------------------------------------------------------


def test_one_nn_job_with_an_idle_pool():
    """256 I/O nodes at 2.5/32 GB/s: 20 GB/s of links behind one 2.5 GB/s node. S = 256 / 32 = 8."""
    inst = machine([nn("a", 0, 256)], pool=10)
    fixed, dfra, mckp = run(inst, "fixed"), run(inst, "dfra"), run(inst, "mckp")
    assert fixed.objective == pytest.approx(100 / 2.5)
    assert dfra.objective == pytest.approx(100 / 20) and len(nodes_of(dfra, "a")) == 8
    assert dfra.info["rules"]["a"].startswith("scale: 8 dedicated nodes")
    assert mckp.objective == pytest.approx(100 / 20) and len(nodes_of(mckp, "a")) == 8  # 8 of {0, 1, 2, 4, 8}
    assert dfra.status == "optimal"  # the job's own links: the bound is met
    small = machine([nn("a", 0, 256)], pool=5)  # fewer idle nodes than S: all of them
    assert len(nodes_of(run(small, "dfra"), "a")) == 5
    assert len(nodes_of(run(small, "mckp"), "a")) == 4


def test_n1_job_beside_a_high_iops_one():
    """AWP-like N-1 job and APT-like high-IOPS job on one node: 12.5x on APT; DFRA separates them."""
    awp = Job("awp", 0, 256, 256, 0.004, 5.0, "N-1", history=hist(5.0, 256))
    apt = Job("apt", 256, 256, 256, 0.001, 1.0, iops="high", history=hist(1.0, 256))
    inst = machine([awp, apt])
    fixed, dfra = run(inst, "fixed"), run(inst, "dfra")
    assert fixed.evaluation.job_times["apt"] == pytest.approx(1.0 / 0.256 * 12.5)
    assert dfra.info["rules"]["awp"].startswith("default")  # nobody on its node yet
    assert dfra.info["rules"]["apt"].startswith("isolate: interference likely with awp, 1 dedicated")
    assert dfra.evaluation.job_times["apt"] == pytest.approx(1.0 / 0.256)
    assert dfra.evaluation.job_times["awp"] == pytest.approx(5.0 / 1.024)


def test_anomalous_node_in_the_default_mapping():
    a = nn("a", 0, 64, volume=1.0)  # 64 nodes: links 5 GB/s; not eligible (1 GB)
    inst = machine([a], anomalous=(0, 2))
    fixed, dfra = run(inst, "fixed"), run(inst, "dfra")
    assert fixed.objective == pytest.approx(1.0 / 0.25) and not fixed.solution.avoid_anomalous
    assert dfra.info["rules"]["a"].startswith("anomaly")
    assert dfra.solution.avoid_anomalous and nodes_of(dfra, "a") == [3]  # 2 is anomalous: never used
    assert dfra.objective == pytest.approx(1.0 / 2.5)


def test_job_without_history_keeps_its_default_mapping():
    inst = machine([nn("a", 0, 256, history=False)])
    r = run(inst, "dfra")
    assert r.info["rules"]["a"].startswith("new") and nodes_of(r, "a") == [0]
    assert r.objective == run(inst, "fixed").objective


# --- DFRA's rules -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, rule", [
    ("volume", 20.0, "default"),  # not over V_min
    ("volume", 20.01, "scale"),
    ("io", 31, "default"),  # below N_min
    ("io", 32, "scale"),
    ("meta", 32.0, "default"),  # not under W_meta
    ("meta", 31.9, "scale"),
])
def test_dfra_eligibility_thresholds(field, value, rule):
    h = {"volume": 30.0, "io": 64, "meta": 1.0}
    h[field] = value
    job = Job("a", 0, 64, 64, BC, 30.0, history=History(h["volume"], h["io"], h["meta"]))
    r = run(machine([job]), "dfra")
    assert r.info["rules"]["a"].split(":")[0] == rule
    if rule == "scale":
        assert len(nodes_of(r, "a")) == -(-h["io"] // 32)


def test_dfra_thresholds_are_parameters():
    job = Job("a", 0, 64, 64, BC, 30.0, history=hist(30.0, 64))
    inst = machine([job])
    assert run(inst, "dfra", v_min=40.0).info["rules"]["a"].startswith("default")
    assert run(inst, "dfra", n_min=100).info["rules"]["a"].startswith("default")
    assert len(nodes_of(run(inst, "dfra", f=16.0), "a")) == 4
    assert len(nodes_of(run(inst, "dfra", f=1e-320), "a")) == 8  # S = 64 / f overflows: the whole pool
    meta = Job("a", 0, 64, 64, BC, 30.0, history=hist(30.0, 64, 10.0))
    assert run(machine([meta]), "dfra", w_meta=5.0).info["rules"]["a"].startswith("default")


def test_dfra_isolates_with_the_default_size_and_keeps_quiet_pairs_together():
    low = Job("r", 0, 256, 16, 0.01, 1.0)  # running, low in every dimension
    quiet = Job("q", 256, 700, 16, 0.01, 1.0, history=hist(1.0, 16))  # crosses nodes 0 and 1
    loud = Job("l", 256, 700, 16, 0.01, 1.0, iops="high", history=hist(1.0, 16))
    r = run(machine([quiet], running=[low]), "dfra")
    assert r.info["rules"]["q"].startswith("default")
    r = run(machine([loud], running=[low]), "dfra")
    assert r.info["rules"]["l"] == "isolate: interference likely with r, 2 dedicated nodes"  # D = 2 nodes
    assert r.solution.dedicated == {"l"}


def test_interference_rules_seed_and_pairs():
    inst = machine([nn("a", 0, 8)])
    base = dict(start=0, nodes=64, io_nodes=64, node_bandwidth=BC, volume=1.0)
    low, hbw = Job("x", **base), Job("y", **base, bandwidth="high")
    iops, n1 = Job("z", **base, iops="high"), Job("w", **base, mode="N-1")
    meta = Job("m", **base, metadata_wait=50.0)
    assert not interference_likely(inst, low, low, 32.0, "seed")
    assert interference_likely(inst, low, hbw, 32.0, "seed")  # the seed: either side high-bandwidth
    assert not interference_likely(inst, low, hbw, 32.0, "pairs")
    assert interference_likely(inst, hbw, iops, 32.0, "pairs") and interference_likely(inst, iops, hbw, 32.0, "pairs")
    for rule in ("seed", "pairs"):
        assert interference_likely(inst, low, n1, 32.0, rule) and interference_likely(inst, n1, low, 32.0, rule)
        assert interference_likely(inst, low, meta, 32.0, rule) and not interference_likely(inst, low, meta, 60.0, rule)


def test_dfra_runs_out_of_idle_nodes_and_says_so():
    jobs = [nn(f"j{i}", 128 * i, 128, volume=30.0) for i in range(4)]  # each S = 4
    r = run(machine(jobs, pool=6), "dfra")
    sizes = [len(r.solution.mapping[j.id]) if j.id in r.solution.dedicated else 0 for j in jobs]
    assert sizes == [4, 2, 0, 0]
    assert "no idle healthy node left" in r.info["rules"]["j2"] and r.info["idle_left"] == 0


def test_dfra_never_uses_an_anomalous_node():
    for seed in range(15):
        inst = generate(seed, 40, anomalous=30)
        r = run(inst, "dfra")
        used = {f for groups in r.solution.mapping.values() for f, _ in groups}
        anomalous = {f.id for f in inst.forwarding_nodes if f.anomalous}
        assert r.solution.avoid_anomalous == (not used & anomalous)
        if r.info["idle_left"] > 0:  # with idle nodes left every anomalous default node is screened out
            assert not used & anomalous


# --- round-robin and fixed ----------------------------------------------------------------------------------


def test_round_robin_deals_groups_of_k_over_the_default_nodes():
    inst = machine([nn("a", 16, 100)], compute=2048)  # 4 default nodes
    r = run(inst, "round-robin", k=32)
    assert r.solution.mapping["a"] == ((0, 16), (1, 32), (2, 32), (3, 20))
    r = run(inst, "round-robin", k=64)
    assert r.solution.mapping["a"] == ((0, 48), (1, 52))
    wrap = run(machine([nn("b", 100, 300)], compute=2048), "round-robin", k=32)
    assert [f for f, _ in wrap.solution.mapping["b"]] == [3, 0, 1, 2, 3, 0, 1, 2, 3, 0]


def test_fixed_is_the_default_mapping():
    inst = generate(3, 30)
    r = run(inst, "fixed")
    assert r.solution.mapping == {j.id: inst.default_groups(j) for j in inst.jobs}
    assert not r.solution.dedicated


# --- MCKP -----------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.floats(0, 100)), min_size=1, max_size=4), min_size=1,
                max_size=5), st.integers(0, 12))
def test_mckp_dp_matches_brute_force(items, capacity):
    items = [[(0, v0)] + rest for (_, v0), *rest in items]  # every item can take weight 0
    weights = [[w for w, _ in it] for it in items]
    values = [[v for _, v in it] for it in items]
    chosen, value = mckp_solve(weights, values, capacity)
    assert sum(w[i] for w, i in zip(weights, chosen)) <= capacity
    assert value == pytest.approx(sum(v[i] for v, i in zip(values, chosen)))
    best = max(sum(v[i] for v, i in zip(values, pick)) for pick in itertools.product(*[range(len(w)) for w in weights])
               if sum(w[i] for w, i in zip(weights, pick)) <= capacity)
    assert value == pytest.approx(best)


def test_mckp_values_and_choices():
    inst = machine([nn("a", 0, 256), Job("b", 256, 256, 1, BC, 1.0, "1-1")], pool=6)
    counts, values, bw = mckp_choices(inst, 6)
    assert counts == [[0, 1, 2, 4], [0, 1, 2, 4]] and bw == 2.5
    assert values[0] == pytest.approx([2.5 - BC, 2.5, 5.0, 10.0])
    assert values[1] == pytest.approx([BC] * 4)  # a 1-1 job gains nothing
    r = run(inst, "mckp")
    assert r.info["dedicated_nodes"] == {"a": 4} and r.info["total_bandwidth"] == pytest.approx(10 + BC)


# --- parameters -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method, params, name", [
    ("dfra", {"v_min": -1}, "v_min"), ("dfra", {"v_min": "abc"}, "v_min"), ("dfra", {"n_min": 2.5}, "n_min"),
    ("dfra", {"w_meta": float("nan")}, "w_meta"), ("dfra", {"f": 0}, "f"), ("dfra", {"rule": "magic"}, "rule"),
    ("round-robin", {"k": 0}, "k"), ("round-robin", {"k": "32"}, "k"), ("round-robin", {"k": 10**9}, "k"),
    ("dfra", {"bogus": 1}, "bogus"), ("mckp", {"k": 3}, "k"),
])
def test_bad_parameters_are_named(method, params, name):
    with pytest.raises(ParameterError, match=name):
        iosched.solve("forwarding", machine([nn("a", 0, 8)]), method, **params)


# --- properties -----------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40), st.integers(0, 40), st.sampled_from(HEURISTICS))
def test_every_heuristic_passes_the_evaluator(seed, n, anomalous, method):
    inst = generate(seed, n, anomalous=anomalous)
    r = iosched.solve("forwarding", inst, method)
    assert r.status in ("feasible", "optimal")
    ev = evaluate(inst, r.solution)
    assert ev.feasible and ev.to_dict() == r.evaluation.to_dict()
    assert set(r.solution.mapping) == {j.id for j in inst.jobs}


@pytest.mark.parametrize("method", ["fixed", "dfra", "mckp", "round-robin", "search"])
def test_every_heuristic_stops_at_its_time_limit_with_a_whole_allocation(method):
    """Issue 21: dfra on 90,000 jobs hung; every heuristic checks its time_limit in its loops and hands back
    a whole allocation (jobs not decided keep their default mapping) with status time_limit."""
    r = iosched.solve("forwarding", generate(3, 300, pool_nodes=16), method, time_limit=1e-6)
    assert r.status == "time_limit" and r.evaluation.feasible


def test_the_heuristics_are_linear_enough_for_a_large_machine():
    """90,000 jobs on 1,024,000 compute nodes: nominal_bandwidth was recomputed per job (quadratic in the
    evaluator). The methods finish, within a generous budget, and their allocations pass the evaluator."""
    inst = generate(0, 90_000, compute_nodes=1_024_000, default_nodes=2000, pool_nodes=4000)
    for method in ("dfra", "round-robin"):
        r = iosched.solve("forwarding", inst, method, time_limit=600)
        assert r.evaluation.feasible and r.status in ("feasible", "time_limit")
