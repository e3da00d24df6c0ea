"""forwarding/exact, exact over every allocation: its value equals an independent enumeration of every
allocation on pools small enough to enumerate, its bound is below every method's value, figure4 is closed
at 189.6875, and every heuristic scores at least its value."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.evaluate.forwarding import Allocation, evaluate, node_times
from iosched.instances.forwarding import ForwardingInstance, ForwardingNode, Job
from iosched.instances.forwarding_presets import generate, load
from iosched.models.forwarding import lower_bound, shared_or_alone
from iosched.models.forwarding_configs import node_classes, part_times, users
from iosched.models.forwarding_cover import cover
from iosched.models.forwarding_exact import core_bound, own_best, threshold_search
from iosched.models.forwarding_polish import best_move, polish
from iosched.solvers import Deadline

BF = 2.5
BC = BF / 32
MODES = ("N-N", "N-1", "1-1")
HEURISTICS = ("fixed", "dfra", "mckp", "round-robin", "search")


def compositions(n, k):
    """Every way to write n as k non-negative parts, in order."""
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        b = (-1,) + cut + (n + k - 1,)
        yield tuple(b[i + 1] - b[i] - 1 for i in range(k))


def every_allocation(inst):
    """Every split of every job's compute nodes over every node that is not dedicated to a running job."""
    banned = {f for r in inst.running if r.dedicated for f, _ in r.forwarding}
    nodes = [f.id for f in inst.forwarding_nodes if f.id not in banned]
    for pick in itertools.product(*[list(compositions(j.nodes, len(nodes))) for j in inst.jobs]):
        yield Allocation({j.id: tuple((f, c) for f, c in zip(nodes, p) if c) for j, p in zip(inst.jobs, pick)})


def enumerate_best(inst, objective="total_io_time"):
    """The least ``objective`` over every allocation, each scored by the evaluator."""
    best = None
    for alloc in every_allocation(inst):
        ev = evaluate(inst, alloc)
        assert ev.feasible
        best = getattr(ev, objective) if best is None else min(best, getattr(ev, objective))
    return best


@st.composite
def pools(draw, max_jobs=3, max_nodes=3):
    """Two to four usable forwarding nodes (slower or anomalous ones among them), one to three jobs of one to
    three compute nodes with every mode and trait, and up to two running jobs on given nodes (one maybe
    dedicated to its own pool node)."""
    n_fwd = draw(st.integers(2, 4))
    speeds = [draw(st.sampled_from([BF, BF, BF / 2])) for _ in range(n_fwd)]
    bad = draw(st.sampled_from([None, 0, 1]))
    nodes = [ForwardingNode(i, speeds[i], i == bad, "default" if i < 2 else "pool") for i in range(n_fwd)]
    jobs, pos = [], 0
    for k in range(draw(st.integers(1, max_jobs))):
        n, mode = draw(st.integers(1, max_nodes)), draw(st.sampled_from(MODES))
        jobs.append(Job(f"j{k}", pos, n, 1 if mode == "1-1" else n, draw(st.sampled_from([BC, 0.5, 1.0, 3.0])),
                        draw(st.floats(0.5, 20)), mode, draw(st.sampled_from([0.0, 0.0, 50.0])),
                        draw(st.sampled_from(["low", "high"])), draw(st.sampled_from(["low", "high"]))))
        pos += n
    running = []
    for k in range(draw(st.integers(0, 2))):
        mode = draw(st.sampled_from(MODES[:2]))
        groups = tuple((f, 1) for f in sorted(draw(st.sets(st.integers(0, n_fwd - 1), min_size=1, max_size=2))))
        running.append(Job(f"r{k}", 600 + 8 * k, len(groups), len(groups), draw(st.sampled_from([0.2, 1.5])),
                           draw(st.floats(0.5, 20)), mode, draw(st.sampled_from([0.0, 50.0])),
                           draw(st.sampled_from(["low", "high"])), draw(st.sampled_from(["low", "high"])),
                           forwarding=groups))
    if draw(st.booleans()):  # a running job with its own pool node, which no job to place may use
        nodes.append(ForwardingNode(n_fwd, BF, False, "pool"))
        running.append(Job("own", 700, 2, 2, 1.0, 3.0, forwarding=((n_fwd, 2),), dedicated=True))
    return ForwardingInstance(1024, 512, tuple(nodes), tuple(jobs), tuple(running))


def exact(inst, **params):
    r = iosched.solve("forwarding", inst, "exact", **params)
    assert r.evaluation is not None and r.evaluation.feasible, r.info
    return r


# --- against the enumeration ------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(pools())
def test_exact_equals_the_enumeration_of_every_allocation(inst):
    r = exact(inst)
    best = enumerate_best(inst)
    assert r.status == "optimal", r.info
    assert r.objective == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert r.bound <= best * (1 + 1e-12)  # the method's bound holds for every allocation


@settings(max_examples=15, deadline=None)
@given(pools(max_jobs=2))
def test_the_bound_is_below_every_methods_value(inst):
    r = exact(inst)
    for method in HEURISTICS + ("milp-dfra-space",):
        other = iosched.solve("forwarding", inst, method, **({"profile": "quick"} if "milp" in method else {}))
        assert other.evaluation.feasible, method
        assert other.objective >= r.bound * (1 - 1e-12), method
        assert other.objective >= r.objective * (1 - 1e-9), method  # exact is never beaten
    assert lower_bound(inst) <= enumerate_best(inst) * (1 + 1e-12)


@settings(max_examples=10, deadline=None)
@given(pools())
def test_a_time_limited_run_keeps_a_valid_bound(inst):
    r = exact(inst, time_limit=1e-4)
    assert r.status in ("time_limit", "optimal")
    assert r.bound is None or r.bound <= enumerate_best(inst) * (1 + 1e-12)


# --- the pieces -------------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(pools(max_nodes=4), st.integers(0, 10**6))
def test_part_times_are_the_evaluators_bit_for_bit(inst, seed):
    rng = np.random.default_rng(seed)
    jobs = list(inst.jobs)
    for cls in node_classes(inst):
        configs = np.array([[rng.integers(0, j.nodes + 1) for j in jobs] for _ in range(20)])
        times = part_times(users(inst, jobs, cls), cls.capacity, inst.interference.slowdown, configs)
        for row, got in zip(configs, times):
            on = [(j, int(c)) for j, c in zip(jobs, row) if c] + list(cls.running)
            if on:
                want = node_times(inst, cls.nodes[0], on)
                where = [k for k, c in enumerate(row) if c] + list(range(len(jobs), len(jobs) + len(cls.running)))
                assert [got[k] for k in where] == want


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(
    st.lists(st.integers(0, 6), min_size=k, max_size=k),
    st.lists(st.tuples(st.integers(1, 2), st.lists(st.lists(st.integers(0, 4), min_size=k, max_size=k),
                                                   min_size=1, max_size=3)), min_size=1, max_size=3))))
def test_cover_matches_enumerating_one_configuration_per_node(case):
    need, classes = np.array(case[0]), [(m, np.array(c)) for m, c in case[1]]
    nodes = [c for m, c in classes for _ in range(m)]
    want = any((sum((c[p] for c, p in zip(nodes, pick) if p < len(c)), np.zeros(len(need), int)) >= need).all()
               for pick in itertools.product(*[range(len(c) + 1) for c in nodes]))
    assert bool(cover(need, classes)) == want
    if want:
        chosen = cover(need, classes, witness=True)
        assert (sum((c for _, c in chosen), np.zeros(len(need), int)) >= need).all()
        for cls, c in chosen:
            assert any((c == x).all() for x in classes[cls][1])
        assert all(sum(1 for cls, _ in chosen if cls == i) <= m for i, (m, _) in enumerate(classes))


# --- the paper's instances --------------------------------------------------------------------------------------


def test_figure4_is_closed_at_189_6875():
    """awp alone on one node (156.25 s: beside a high-bandwidth job it would take 1.3 x that), shentu 4 x 256
    (20 s), lammps 86/86/84 on three nodes (13.4375 s); the library's best known was 196.25."""
    r = exact(load("figure4"))
    assert r.status == "optimal" and r.objective == pytest.approx(189.6875, rel=1e-12)
    assert r.bound == pytest.approx(189.6875, rel=1e-9) and r.bound <= 189.6875
    times = r.evaluation.job_times
    assert times["awp"] == 156.25 and times["shentu"] == 20.0 and times["lammps"] == pytest.approx(13.4375)
    for method in HEURISTICS + ("milp-dfra-space",):
        other = iosched.solve("forwarding", "figure4", method, **({"profile": "quick"} if "milp" in method else {}))
        assert other.objective >= r.objective, method


@pytest.mark.parametrize("spec", ["pair:wrf1:awp", "testbed:awp", "testbed:cam", "testbed:shentu"])
def test_testbed_and_pair_instances_are_closed(spec):
    r = exact(load(spec))
    assert r.status == "optimal" and r.gap <= 1e-9
    for method in HEURISTICS:
        assert iosched.solve("forwarding", spec, method).objective >= r.objective * (1 - 1e-12), method


# --- the problem's bound: the interference split ------------------------------------------------------------


def test_the_bound_splits_on_whether_the_n1_job_shares_a_node():
    """figure4: AWP (N-1) beside a high-bandwidth job takes at least 1.3 x 156.25 s, so below that it is alone on
    at least one node and the other two share the 7 others (17.5 GB/s): the issue's 156.25 + (sqrt 200 +
    sqrt 100)^2 / 17.5 = 189.555, above the water-filling's 185.77 and below the optimum 189.6875."""
    inst = load("figure4")
    assert lower_bound(inst) == pytest.approx(156.25 + (200 ** 0.5 + 100 ** 0.5) ** 2 / 17.5, rel=1e-12)
    assert shared_or_alone(inst, [40.0, 200.0, 100.0], [0.256, 20.0, 20.0], [BF] * 8) == lower_bound(inst)


@settings(max_examples=40, deadline=None)
@given(pools(max_jobs=3, max_nodes=2), st.sampled_from(["N-1", "metadata"]))
def test_the_split_bound_is_below_every_allocation(inst, kind):
    """Pools whose first job is interference-prone (N-1, or metadata-heavy): the bound never passes the best
    allocation, for total I/O time and total slowdown."""
    first = inst.jobs[0]
    prone = Job(first.id, first.start, first.nodes, first.nodes if kind == "N-1" else first.io_nodes,
                first.node_bandwidth, first.volume, "N-1" if kind == "N-1" else first.mode,
                50.0 if kind == "metadata" else first.metadata_wait, first.iops, first.bandwidth)
    inst = ForwardingInstance(inst.compute_nodes, inst.default_ratio, inst.forwarding_nodes,
                              (prone,) + inst.jobs[1:], inst.running)
    for objective in ("total_io_time", "total_slowdown"):
        assert lower_bound(inst, objective) <= enumerate_best(inst, objective) * (1 + 1e-12), objective


# --- a stopped search -------------------------------------------------------------------------------------------


class CountDown:
    """A deadline that passes after ``calls`` questions (the search asks once per box)."""

    def __init__(self, calls):
        self.calls = calls

    def expired(self):
        self.calls -= 1
        return self.calls < 0


@pytest.mark.parametrize("calls", [3, 8, 15])
def test_a_stopped_search_reports_a_bound_below_the_optimum(calls):
    inst = load("figure4")
    classes = node_classes(inst)
    own = [own_best(inst, j, classes) for j in inst.jobs]
    found = threshold_search(inst, 196.25, own, lower_bound(inst), Deadline(600), 5_000_000)
    found.deadline = CountDown(calls)
    best, witness, bound, why = found.run(196.25)
    assert why == "time" and bound <= 189.6875
    assert best >= 189.6875 * (1 - 1e-12)


def test_own_best_is_the_jobs_least_time_alone():
    """shentu alone on figure4's 8 nodes: 128 compute nodes each, 128 x 200 / 1024 / 2.5 = 10 s; awp at its
    links, 40 / 0.256 = 156.25 s."""
    inst = load("figure4")
    classes = node_classes(inst)
    by_id = {j.id: j for j in inst.jobs}
    assert own_best(inst, by_id["shentu"], classes) == pytest.approx(10.0, rel=1e-12)
    assert own_best(inst, by_id["awp"], classes) == pytest.approx(156.25, rel=1e-12)  # within rounding


def test_too_large_tables_leave_the_start_and_a_valid_bound():
    r = iosched.solve("forwarding", "figure4", "exact", max_rows=1000)
    assert r.status == "feasible" and "max_rows" in r.info["full_search"]
    assert r.bound <= 189.6875 and r.objective >= 189.6875


@pytest.mark.parametrize("params, name", [({"max_rows": 0}, "max_rows"), ({"time_limit": -1}, "time_limit"),
                                          ({"speed": 1}, "speed")])
def test_bad_parameters_are_refused(params, name):
    with pytest.raises(iosched.ParameterError, match=name):
        iosched.solve("forwarding", "figure4", "exact", **params)


# --- the start's polish and the core bound ---------------------------------------------------------------------


def test_make_room_moves_the_small_job_that_blocks_the_large_one():
    """Two nodes of 2.5 GB/s and an anomalous one (0.25): a high-bandwidth job of 5 GB/s of links starts on one
    node (4 s), a high-IOPS job that it would slow 10x holds the other. Moving the large job alone gains nothing;
    making room (the small job to the slow node, where its 0.1 GB/s fit) gives 2 s + 10 s, the optimum."""
    nodes = (ForwardingNode(0, BF), ForwardingNode(1, BF), ForwardingNode(2, BF, True, "pool"))
    big = Job("big", 0, 2, 2, 2.5, 10.0, bandwidth="high")
    small = Job("small", 2, 1, 1, 0.1, 1.0, "1-1", iops="high")
    inst = ForwardingInstance(1024, 512, nodes, (big, small), (), anomalous_fraction=0.1)
    start = Allocation({"big": ((1, 2),), "small": ((0, 1),)})
    assert evaluate(inst, start).total_io_time == pytest.approx(14.0)
    times = {j.id: t for j, t in zip(inst.jobs, (4.0, 10.0))}
    assert best_move(inst, dict(start.mapping), big, [0, 1, 2], times, 4.0 * (1 - 1e-12)) is None
    polished, moves = polish(inst, start, None, Deadline(60))
    assert evaluate(inst, polished).total_io_time == pytest.approx(12.0) == enumerate_best(inst)
    assert polished.mapping["small"] == ((2, 1),) and moves >= 1


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 12), st.sampled_from([0, 3, 16]))
def test_polish_passes_the_evaluator_and_never_loses(seed, n, pool):
    inst = generate(seed, n, compute_nodes=8192, default_nodes=16, pool_nodes=pool)
    start = iosched.solve("forwarding", inst, "dfra").solution
    polished, _ = polish(inst, start, None, Deadline(60))
    before, after = evaluate(inst, start), evaluate(inst, polished)
    assert after.feasible and after.total_io_time <= before.total_io_time * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(pools(), st.sampled_from(HEURISTICS[:4]))
def test_the_core_bound_is_below_every_allocation(inst, heuristic):
    """The core bound (the others' own bests plus the search over the jobs a heuristic leaves above theirs) is
    never above the enumeration's optimum, whatever the incumbent it starts from."""
    start = iosched.solve("forwarding", inst, heuristic).solution
    upper = evaluate(inst, start).total_io_time
    classes = node_classes(inst)
    own = [own_best(inst, j, classes) for j in inst.jobs]
    bound, info, better = core_bound(inst, start, upper, own, Deadline(60), 5_000_000)
    best = enumerate_best(inst)
    assert bound <= best * (1 + 1e-9) + 1e-12, info
    if better is not None:
        assert evaluate(inst, better[0]).feasible and better[1] < upper and better[1] >= best * (1 - 1e-12)


def test_a_core_inside_a_larger_instance_proves_figure4():
    """figure4 with two small 1-1 jobs beside it, tables of every job refused (max_rows): the core of the three
    figure4 jobs is searched alone and proves its 189.6875, so the bound is 189.6875 plus the small jobs' own
    bests (25.6 s and 38.4 s at their links)."""
    f4 = load("figure4")
    small = tuple(Job(f"small{k}", 1536 + 4 * k, 4, 1, BC, 2.0 + k, "1-1") for k in range(2))
    inst = ForwardingInstance(2048, 512, f4.forwarding_nodes, f4.jobs + small, (), name="figure4+small")
    r = iosched.solve("forwarding", inst, "exact", max_rows=200_000)
    assert r.evaluation.feasible and "max_rows" in r.info["full_search"]
    cores = r.info["core"]["cores"]
    assert any(c["jobs"] == ["awp", "shentu", "lammps"] and c["bound"] == pytest.approx(189.6875 + 64, rel=1e-9)
               for c in cores), cores
    assert r.bound <= r.objective
