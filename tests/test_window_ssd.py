"""The SSD extension of the window problem (four objectives, the 4x rule)."""

import itertools

import pytest

import iosched
from iosched.evaluate.window import FrontPoint, Selection, evaluate, ssd_placement
from iosched.heuristics.window import decide
from iosched.instances.window import Capacity, Job, SSDClass, WindowInstance, generate
from iosched.models.window import pareto_front

CLASSES = (SSDClass(128, 2), SSDClass(256, 2))
HAND = WindowInstance(Capacity(4, 100, CLASSES),
                      (Job("A", 1, 10, 200), Job("B", 2, 20, 100), Job("C", 1, 30, 50), Job("D", 2, 0, 250)))


def test_placement_by_hand():
    # A (200 GB) must take a 256 node; B (2 x 100) the two 128 nodes; C (50) the last 256 node
    assert ssd_placement(HAND, [0, 1, 2]) == (0, 200 + 200 + 50, 56 + 2 * 28 + 206)
    # A and D both need 256 GB nodes: 3 nodes for 2 such nodes -> one unplaced
    assert ssd_placement(HAND, [0, 3])[0] == 1


def _brute_placement(inst, chosen):
    """Every way to put each node on a class (within the class sizes): least waste, or None."""
    nodes = [inst.jobs[i].ssd_per_node for i in chosen for _ in range(inst.jobs[i].nodes)]
    classes = inst.capacity.ssd_classes
    best = None
    for assign in itertools.product(range(len(classes)), repeat=len(nodes)):
        if any(classes[c].ssd < need for c, need in zip(assign, nodes)):
            continue
        if any(assign.count(c) > classes[c].nodes for c in range(len(classes))):
            continue
        waste = sum(classes[c].ssd - need for c, need in zip(assign, nodes))
        best = waste if best is None else min(best, waste)
    return best


@pytest.mark.parametrize("seed", range(30))
def test_greedy_placement_is_optimal(seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    classes = tuple(SSDClass(int(s), int(rng.integers(0, 3))) for s in sorted(rng.choice([64, 128, 256, 512], 3,
                                                                                           replace=False)))
    total = sum(c.nodes for c in classes)
    jobs = tuple(Job(f"j{i}", int(rng.integers(1, 3)), 0, int(rng.integers(0, classes[-1].ssd + 1)))
                 for i in range(3))
    inst = WindowInstance(Capacity(total, 0, classes), jobs)
    for r in range(1, 4):
        for chosen in itertools.combinations(range(3), r):
            if sum(jobs[i].nodes for i in chosen) > 6:
                continue
            unplaced, _, waste = ssd_placement(inst, list(chosen))
            brute = _brute_placement(inst, chosen)
            assert (unplaced == 0) == (brute is not None)
            if brute is not None:
                assert waste == brute


def test_evaluator_reports_ssd():
    ev = evaluate(HAND, Selection(("A", "B", "C")))
    assert ev.feasible
    assert ev.ssd_utilization == pytest.approx(450 / (2 * 128 + 2 * 256))
    assert ev.wasted_ssd == pytest.approx(318 / (2 * 128 + 2 * 256))
    bad = evaluate(HAND, Selection(("A", "D")))
    assert [v.constraint for v in bad.violations] == ["ssd"] and bad.violations[0].amount == 1
    lying = evaluate(HAND, Selection(("A",), (FrontPoint(1, 10, ("A",), 200, 0),)))
    assert [v.constraint for v in lying.violations] == ["front_sums"]  # A wastes 56 GB, not 0


def _brute_front(inst):
    w = len(inst.jobs)
    vectors = set()
    for mask in range(1 << w):
        chosen = [i for i in range(w) if mask >> i & 1]
        n = sum(inst.jobs[i].nodes for i in chosen)
        b = sum(inst.bb(i) for i in chosen)
        unplaced, ssd, waste = ssd_placement(inst, chosen)
        if n <= inst.capacity.nodes and b <= inst.capacity.burst_buffer and not unplaced:
            vectors.add((n, b, ssd, -waste))
    return sorted(v for v in vectors
                  if not any(all(u[k] >= v[k] for k in range(4)) and u != v for u in vectors))


@pytest.mark.parametrize("seed", range(20))
def test_exact_four_objective_front_is_brute_force(seed):
    inst = generate(seed, 9, ssd=True, load=0.05 + 0.02 * (seed % 5))
    front = pareto_front(inst)
    assert sorted(p.vector() for p in front) == _brute_front(inst)
    assert evaluate(inst, Selection(front[0].jobs, tuple(front))).feasible


@pytest.mark.parametrize("seed", range(12))
def test_exact_front_is_brute_force_on_the_ssd_mixes_and_three_classes(seed):
    import numpy as np

    if seed < 6:
        inst = generate(seed, 10, mix=("S6", "S7")[seed % 2], load=0.05 + 0.02 * (seed % 3))
    else:  # three classes, jobs needing no SSD at all, small sizes: many equal sums
        rng = np.random.default_rng(seed)
        classes = (SSDClass(64, 3), SSDClass(128, 2), SSDClass(512, 2))
        jobs = tuple(Job(f"j{i}", int(rng.integers(1, 4)), int(rng.integers(0, 4)) * 5,
                         int(rng.choice([0, 30, 64, 100, 128, 300, 512]))) for i in range(10))
        inst = WindowInstance(Capacity(7, 20, classes), jobs)
    front = pareto_front(inst)
    assert sorted(p.vector() for p in front) == _brute_front(inst)
    assert evaluate(inst, Selection(front[0].jobs, tuple(front))).feasible


def test_four_times_rule_by_hand():
    inst = WindowInstance(Capacity(100, 100, (SSDClass(100, 100),)), (Job("x", 1, 0, 1),))
    first = FrontPoint(100, 0, ("a",), 0, 0)
    exactly_4x = FrontPoint(90, 20, ("b",), 2000, 0)  # gains 0.2 + 0.2 = 0.4 = 4 x 0.1: not more
    more = FrontPoint(90, 20, ("c",), 2100, 0)  # 0.41 > 0.4
    less_waste = FrontPoint(95, 0, ("d",), 0, -2500)  # waste 'reduced' by 0.25 > 4 x 0.05
    assert decide(inst, [first, exactly_4x]) == first
    assert decide(inst, [first, exactly_4x, more]) == more
    assert decide(inst, [first, more, less_waste]) == more  # both qualify: the larger sum (0.41 vs 0.25)


@pytest.mark.parametrize("method", sorted(iosched.methods("window")))
def test_every_method_is_feasible_with_ssd(method):
    inst = generate(5, 10, ssd=True)
    params = {"generations": 30} if method in ("bbsched-ga", "nsga2") else {}
    res = iosched.solve("window", inst, method, **params)
    assert res.evaluation.feasible, res.evaluation.violations
    assert res.objective <= res.bound * (1 + 1e-9)
    exact = [p.vector() for p in pareto_front(inst)]
    for p in res.solution.front:  # an approximate front never beats the exact one
        assert any(all(e[k] >= p.vector()[k] for k in range(4)) for e in exact)


def test_ssd_only_where_it_applies():
    with pytest.raises(iosched.ParameterError, match="dp engine only"):
        pareto_front(generate(1, 6, ssd=True), "cpsat", "quick")
    with pytest.raises(iosched.ParameterError, match="ssd_classes"):
        iosched.solve("window", iosched.load_instance("window", "paper:example"), "constrained-ssd")
