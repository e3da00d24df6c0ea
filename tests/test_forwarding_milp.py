"""The forwarding MILP over DFRA's space (milp-dfra-space): its objective is the evaluator's score, it matches
brute force over its scope, it is never worse than the heuristics in its scope, and the bound holds."""

import itertools

import pyomo.environ as pe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import Allocation, evaluate
from iosched.instances.forwarding import ForwardingInstance, ForwardingNode, History, Job, even_groups
from iosched.instances.forwarding_presets import generate
from iosched.models.forwarding import SCOPE, build_milp, choices, lower_bound, read_allocation
from iosched.solvers import load_profile, solve_pyomo

BF = 2.5
BC = BF / 32
MODEL_OBJECTIVES = {"milp-dfra-space": "total_io_time", "milp-max": "max_io_time"}


def machine(jobs, running=(), anomalous=(), pool=4, compute=1024):
    nodes = tuple(ForwardingNode(i, BF, i in anomalous, "default" if i < compute // 512 else "pool")
                  for i in range(compute // 512 + pool))
    return ForwardingInstance(compute, 512, nodes, tuple(jobs), tuple(running))


def small(seed, n, pool, anomalous=1):
    return generate(seed, n, compute_nodes=4096, default_nodes=8, pool_nodes=pool, anomalous=anomalous)


def brute_force(inst, objective):
    """The best allocation of the scope by enumeration, scored by the evaluator."""
    data = choices(inst)
    best = None
    for pick in itertools.product(*[range(len(data.options[j.id]) + 1) for j in inst.jobs]):
        free = {b: list(ids) for b, ids in data.pool.items()}
        mapping, dedicated, ok = {}, set(), True
        for j, o in zip(inst.jobs, pick):
            if o == 0:
                mapping[j.id] = inst.default_groups(j)
                continue
            bw, k, _ = data.options[j.id][o - 1]
            if len(free[bw]) < k:
                ok = False
                break
            nodes = [free[bw].pop(0) for _ in range(k)]
            mapping[j.id], _ = even_groups(j.nodes, nodes), dedicated.add(j.id)
        if ok:
            ev = evaluate(inst, Allocation(mapping, frozenset(dedicated)))
            assert ev.feasible
            value = getattr(ev, objective)
            best = value if best is None else min(best, value)
    return best


def solved(inst, method="milp-dfra-space", **params):
    if method == "milp-max":
        params["scope"] = "dfra-space"
    r = iosched.solve("forwarding", inst, method, profile="quick", **params)
    assert r.evaluation is not None and r.evaluation.feasible, r.info
    assert r.info["scope"] == SCOPE
    return r


# --- hand-built: the best allocation is obvious ----------------------------------------------------------------


def test_one_nn_job_takes_enough_pool_nodes():
    job = Job("a", 0, 256, 256, BC, 100.0, history=History(100.0, 256, 1.0))
    r = solved(machine([job], pool=10))
    assert r.objective == pytest.approx(100 / 20)  # its own 20 GB/s of links
    assert r.info["dedicated_nodes"] == {"a": 8}  # more nodes than 8 are no faster: the model never takes them
    assert r.status == "optimal" and r.info["model_status"] == "optimal"  # certified by the bound


def test_separates_the_n1_job_from_the_high_iops_one():
    awp = Job("awp", 0, 256, 256, 0.004, 5.0, "N-1")
    apt = Job("apt", 256, 256, 256, 0.001, 1.0, iops="high")
    r = solved(machine([awp, apt], pool=1))
    assert r.objective == pytest.approx(5.0 / 1.024 + 1.0 / 0.256)
    assert len(r.solution.dedicated) == 1


def test_leaves_an_anomalous_default_node():
    r = solved(machine([Job("a", 0, 64, 64, BC, 1.0)], anomalous=(0,), pool=1))
    assert r.solution.mapping["a"] == ((2, 64),) and r.solution.avoid_anomalous


def test_moving_a_job_can_help_its_neighbour_only():
    """A low 1-1 job gains nothing from moving, but its running N-1 neighbour... is not hurt by it; the low job
    is hurt 50x by the neighbour and moves. A high-bandwidth job beside a running high-IOPS one moves to spare it."""
    n1 = Job("r", 0, 256, 256, 0.001, 1.0, "N-1")
    low = Job("low", 256, 256, 1, BC, 1.0, "1-1")
    r = solved(machine([low], running=[n1], pool=1))
    assert r.solution.dedicated == {"low"} and r.objective == pytest.approx(1.0 / BC)
    iops = Job("r", 0, 256, 256, 0.001, 1.0, iops="high")
    hbw = Job("h", 256, 256, 1, BC, 1.0, "1-1", bandwidth="high")  # slows its neighbour 10x, itself unharmed
    r = solved(machine([hbw], running=[iops], pool=1))
    assert r.solution.dedicated == {"h"}
    assert r.evaluation.running_delay == pytest.approx(0, abs=1e-9)


def test_scope_excludes_round_robin_which_can_win_without_a_pool():
    """With no idle node the scope holds only the default mapping; round-robin moves the low job away from
    its N-1 neighbour over the other default nodes -- an allocation outside the MILP's scope."""
    n1 = Job("r", 0, 32, 32, 0.001, 1.0, "N-1")
    low = Job("low", 32, 32, 1, BC, 1.0, "1-1")
    inst = machine([low], running=[n1], pool=0, compute=2048)
    r, rr = solved(inst), iosched.solve("forwarding", inst, "round-robin")
    assert r.info["model_status"] == "optimal" and r.objective == iosched.solve("forwarding", inst, "fixed").objective
    assert rr.objective < r.objective
    assert r.bound <= rr.objective  # the problem's bound holds for every allocation


# --- the model's objective is the evaluator's score -------------------------------------------------------------


@pytest.mark.parametrize("objective", ["total_io_time", "max_io_time", "total_slowdown"])
@pytest.mark.parametrize("seed", range(6))
def test_objective_equals_evaluator_and_brute_force(seed, objective):
    inst = small(seed, 3, pool=3)
    m = build_milp(inst, objective)
    out = solve_pyomo(m, load_profile("quick"))
    assert out.status == "optimal"
    alloc = read_allocation(inst, m)
    ev = evaluate(inst, alloc)
    assert ev.feasible
    assert out.objective == pytest.approx(getattr(ev, objective), rel=1e-7, abs=1e-7)
    assert out.objective == pytest.approx(brute_force(inst, objective), rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("objective", ["total_io_time", "max_io_time", "total_slowdown"])
def test_interchangeable_jobs_of_different_volumes_match_brute_force(objective):
    """Six one-node 1-1 jobs (one type: same cap, same traits) beside a running N-1 job, two pool nodes:
    which two move depends on their volumes, and the big-M rows must let the model see it."""
    n1 = Job("r", 0, 256, 256, 0.004, 3.0, "N-1")
    jobs = [Job(f"j{i}", 256 + i, 1, 1, BC, 0.5 + i, "1-1") for i in range(6)]
    inst = machine(jobs, running=[n1], pool=2)
    assert [len(t) for t in choices(inst).nodes[0].types] == [6]
    m = build_milp(inst, objective)
    out = solve_pyomo(m, load_profile("quick"))
    ev = evaluate(inst, read_allocation(inst, m))
    assert out.objective == pytest.approx(getattr(ev, objective), rel=1e-7)
    assert out.objective == pytest.approx(brute_force(inst, objective), rel=1e-7)


def test_milp_max_method_reports_max_io_time():
    inst = small(3, 4, pool=3)
    r = solved(inst, "milp-max")
    assert r.objective_name == "max_io_time" and r.objective == pytest.approx(brute_force(inst, "max_io_time"))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(0, 5), st.integers(0, 3), st.sampled_from(list(
    MODEL_OBJECTIVES)))
def test_milp_never_worse_than_heuristics_in_its_scope(seed, n, pool, anomalous, method):
    inst = small(seed, n, pool, anomalous)
    r = solved(inst, method)
    objective = MODEL_OBJECTIVES[method]
    assert r.info["model_objective"] == pytest.approx(r.objective, rel=1e-7, abs=1e-6)
    assert r.objective >= lower_bound(inst, objective) * (1 - 1e-9)
    if r.info["model_status"] != "optimal":
        return
    for h in ("fixed", "dfra", "mckp"):  # allocations inside the scope
        other = iosched.solve("forwarding", inst, h)
        assert r.objective <= getattr(other.evaluation, objective) * (1 + 1e-7) + 1e-9, h
    if r.status == "optimal":  # certified over every allocation: round-robin cannot beat it either
        rr = iosched.solve("forwarding", inst, "round-robin")
        assert r.objective <= getattr(rr.evaluation, objective) * (1 + 1e-7) + 1e-9


# --- model size and errors ---------------------------------------------------------------------------------------


def test_too_many_configurations_is_refused_naming_the_count():
    """A model over max_configurations is a ParameterError (exit 2) naming the count, not an
    error result (issue 21)."""
    jobs = [Job(f"j{i}", 8 * i, 8, 8, BC, 1.0, iops=("high", "low")[i % 2]) for i in range(6)]
    inst = machine(jobs, pool=2)  # two types of three interchangeable jobs: 4 x 4 configurations on node 0
    with pytest.raises(ParameterError, match="16 co-location configurations exceed max_configurations=15"):
        iosched.solve("forwarding", inst, "milp-dfra-space", max_configurations=15)
    ok = solved(inst, max_configurations=16)
    assert ok.info["configurations"] == 16 and ok.info["model_status"] == "optimal"
    assert ok.objective == pytest.approx(brute_force(inst, "total_io_time"))


def test_model_has_one_choice_per_job_and_pool_rows():
    inst = small(1, 5, pool=3)
    m = build_milp(inst)
    assert len(m.one) == 5 and len(m.pool) == 1
    assert all(v.is_binary() for v in m.y.values())
    for f, node in m.choices.nodes.items():  # continuous unless a type has several members
        assert all(m.z[f, s].is_binary() == any(len(t) > 1 for t in node.types) for s in range(len(node.configs)))


@pytest.mark.parametrize("params, name", [
    ({"objective": "makespan"}, "objective"), ({"max_configurations": 0}, "max_configurations"),
    ({"max_configurations": 2.5}, "max_configurations"), ({"profile": "nope"}, "nope")])
@pytest.mark.parametrize("method", ["milp", "milp-dfra-space"])
def test_bad_milp_parameters(params, name, method):
    with pytest.raises(iosched.ParameterError, match=name):
        iosched.solve("forwarding", small(1, 2, 2), method, **params)


def test_the_old_name_reaches_this_model_by_its_scope():
    inst = small(2, 3, pool=3)
    old, new = solved(inst, "milp", scope="dfra-space"), solved(inst)
    assert old.objective == pytest.approx(new.objective) and old.info["scope"] == SCOPE


def test_time_limit_keeps_the_incumbent(tmp_path, monkeypatch):
    (tmp_path / "s.toml").write_text("[default]\ntime_limit = 60\nrel_gap = 0\nthreads = 1\nseed = 0\n"
                                     "[tiny]\ntime_limit = 0.001\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(tmp_path / "s.toml"))
    r = iosched.solve("forwarding", generate(2, 60), "milp-dfra-space", profile="tiny")
    assert r.status in ("time_limit", "feasible", "optimal", "error")
    if r.solution is not None:
        assert r.evaluation.feasible
    assert pe  # the Pyomo model is public: build_milp returns it


@pytest.mark.slow
@pytest.mark.parametrize("pool", [160, 16])
@pytest.mark.parametrize("seed", range(3))
def test_taihulight_scale_milp_against_heuristics(seed, pool):
    """200 jobs on TaihuLight, default profile: the evaluator's score, and never worse than the scope's heuristics."""
    inst = generate(seed, 200, pool_nodes=pool)
    r = iosched.solve("forwarding", inst, "milp-dfra-space")
    assert r.evaluation.feasible and r.info["model_status"] == "optimal"
    assert r.info["model_objective"] == pytest.approx(r.objective, rel=1e-7)
    for h in ("fixed", "dfra", "mckp"):
        assert r.objective <= iosched.solve("forwarding", inst, h).objective * (1 + 1e-7)


def test_the_profile_limit_covers_configurations_build_and_handover(tmp_path, monkeypatch):
    # random:0:2000 under a 10 s profile ran 49 s: 16 s of configurations, 14 s of Pyomo build and
    # 26 s of handover were all outside HiGHS's limit
    solvers = tmp_path / "solvers.toml"
    solvers.write_text("[default]\ntime_limit = 10\nrel_gap = 0\nthreads = 1\nseed = 0\n"
                       "[short]\ntime_limit = 1\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(solvers))
    r = iosched.solve("forwarding", "random:0:2000", "milp-dfra-space", profile="short")
    assert r.status == "time_limit" and r.solution is None and "time limit" in r.info["error"]
    assert r.method_time_s < 5
