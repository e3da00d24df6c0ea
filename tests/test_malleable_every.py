"""malleable/exact, exact over every schedule: against an independent brute force on 3-job workloads, the
hand-computed grid3-0, the library's instances it closes, the other methods, and its parts' proofs."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.core import Status, get_problem, solve
from iosched.errors import ParameterError
from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import generate
from iosched.models.malleable_skeleton import job_data, shape, skeletons
from iosched.models.rational_lp import RationalLP
from iosched.solvers import Deadline

ROOMY = "roomy"  # a profile of 600 s: the largest case here takes about 5 s of CPU, more on a busy machine's clock


@pytest.fixture(scope="module", autouse=True)
def roomy(tmp_path_factory):
    path = tmp_path_factory.mktemp("profiles") / "solvers.toml"
    path.write_text("[default]\ntime_limit = 60\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n\n"
                    f"[{ROOMY}]\ntime_limit = 600\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n\n"
                    "[quick]\ntime_limit = 10\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IOSCHED_SOLVERS", str(path))
        yield


# --- the brute force: every schedule on a time grid, written without the method's code ---------------------


def _plans(job: Job, limit: Fraction, unit: Fraction) -> list[tuple[Fraction, tuple]]:
    """Every schedule of ``job`` alone whose C - a is at most ``limit``, with its start and stalls on multiples
    of ``unit`` (reconfigurations at their cost): (C - a, intervals), least first. At each of its checks a
    running job may resize to any other ladder size (a shrink holds the old size while it reconfigures, an
    expansion the new one, after a stall of any length up to its timeout holding the old)."""
    a, P, tau = Fraction(job.arrival), Fraction(job.period), Fraction(job.timeout)
    t = {p: Fraction(x) for p, x in zip(job.sizes, job.times)}
    out = []

    def walk(start, now, p, work, ivs):
        finish = now + (1 - work) * t[p]
        if finish - a <= limit:
            out.append((finish - a, tuple(ivs + [(now, finish, p, "run")])))
        k = math.floor((now - start) / P) + 1  # checks after this run began: the run before an action is > 0
        while start + k * P < finish and start + k * P - a <= limit:
            check = start + k * P
            done = work + (check - now) / t[p]
            for q in job.sizes:
                if q == p:
                    continue
                cost = Fraction(job.reconfig_s) + Fraction(job.redistribute_s) / min(p, q)
                stalls = [unit * n for n in range(int(tau / unit) + 1)] if q > p else [Fraction(0)]
                for stall in stalls:
                    new = ivs + [(now, check, p, "run")]
                    if stall:
                        new.append((check, check + stall, p, "stall"))
                    if cost:
                        new.append((check + stall, check + stall + cost, max(p, q), "reconfig"))
                    walk(start, check + stall + cost, q, done, new)
            k += 1

    start = a
    while start - a <= limit:
        for p in job.sizes:
            walk(start, start, p, Fraction(0), [])
        start += unit
    return sorted(out, key=lambda plan: plan[0])


def _fits(nodes: int, plans) -> bool:
    """The nodes held never exceed ``nodes`` (half-open intervals: releases before takes at one instant)."""
    events = sorted((iv[e], e == 0, iv[2] if e == 0 else -iv[2]) for plan in plans for iv in plan for e in (0, 1))
    load = 0
    for _, _, delta in events:
        load += delta
        if load > nodes:
            return False
    return True


def brute_force(instance: MalleableInstance, unit: Fraction) -> tuple[Fraction, Schedule]:
    """The least sum of C_j - a_j over every schedule of 3 jobs on the grid of ``unit`` (:func:`_plans`), and
    one schedule reaching it. Jobs one after another at their fastest size bound it first."""
    jobs = instance.jobs
    tmin = [min(Fraction(x) for x in j.times) for j in jobs]
    free, best = None, Fraction(0)
    for j in sorted(jobs, key=lambda j: j.arrival):
        begin = Fraction(j.arrival) if free is None else max(Fraction(j.arrival), free)
        free = begin + min(Fraction(x) for x in j.times)
        best += free - Fraction(j.arrival)
    lists = [_plans(j, best - (sum(tmin) - tm), unit) for j, tm in zip(jobs, tmin)]
    arg = None
    for f0, p0 in lists[0]:
        if f0 + tmin[1] + tmin[2] > best:
            break
        for f1, p1 in lists[1]:
            if f0 + f1 + tmin[2] > best:
                break
            if not _fits(instance.nodes, (p0, p1)):
                continue
            for f2, p2 in lists[2]:
                if f0 + f1 + f2 > best:
                    break
                if _fits(instance.nodes, (p0, p1, p2)):
                    if arg is None or f0 + f1 + f2 < best:
                        best, arg = f0 + f1 + f2, (p0, p1, p2)
                    break
    assert arg is not None  # the serial schedule is on the grid: some schedule reaches its value
    schedule = Schedule({j.id: tuple(Interval(float(s), float(e), p, k) for s, e, p, k in plan)
                         for j, plan in zip(jobs, arg)})
    return best, schedule


def _workload(draw, timeout: int) -> MalleableInstance:
    """One long job (ladder 2, 4) and two short ones on 4 nodes, period 4, resizes of 4 s: a long job that
    shrinks or expands around the short ones is sometimes best (2 of 10 such draws)."""
    jobs = [Job("long", draw(st.integers(0, 2)), 1, Runtime("linear", seconds_1=16 * draw(st.integers(3, 5)), up_to=4),
                2, 4, 2, period=4, reconfig_s=4, timeout=timeout)]
    for i in range(2):
        low = draw(st.sampled_from([1, 2]))
        high = draw(st.sampled_from([low, 2 * low]))
        jobs.append(Job(f"short{i}", draw(st.integers(0, 6)), 1,
                        Runtime("linear", seconds_1=4 * draw(st.integers(2, 6)), up_to=draw(st.sampled_from([2, 4]))),
                        low, high, 2, period=4, reconfig_s=4, timeout=timeout))
    return MalleableInstance(4, tuple(jobs), "brute")


@st.composite
def without_stalls(draw):
    return _workload(draw, 0)


@st.composite
def with_stalls(draw):
    return _workload(draw, draw(st.sampled_from([2, 4])))


@settings(max_examples=6, deadline=None)
@given(without_stalls())
def test_exact_is_the_brute_force_optimum_without_stalls(instance):
    """Without stalls (timeout 0) every tuple's LP has difference rows only (a network matrix) whose
    constants are whole seconds here (period 4 and resizes of 4 s make every run but the last a multiple of
    4 s, and the last one t_m (1 - sum l_i / t_i) with t_m / t_i in {1/4 .. 4}: whole), so
    its optimum lies on whole seconds and the brute force on the 1 s grid reaches the optimum over every
    schedule: exact's value AND its bound meet it."""
    best, schedule = brute_force(instance, Fraction(1))
    assert evaluate(instance, schedule).feasible  # the brute force's own schedule passes the evaluator
    mean = float(best / 3)
    assert evaluate(instance, schedule).mean_completion == pytest.approx(mean, abs=1e-9)
    res = solve("malleable", instance, "exact", attach_bound=False, profile=ROOMY)
    assert res.evaluation.feasible and res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(mean, rel=1e-12, abs=1e-12)
    assert res.bound <= mean * (1 + 1e-12) and res.bound >= mean * (1 - 1e-9)


@settings(max_examples=5, deadline=None)
@given(with_stalls())
def test_exact_never_above_the_brute_force_with_stalls(instance):
    """With stalls the optimum may lie off any grid: exact is never above the best schedule on a 2 s grid
    (starts and stalls), and its bound never above any schedule the brute force found."""
    best, _ = brute_force(instance, Fraction(2))
    res = solve("malleable", instance, "exact", attach_bound=False, profile=ROOMY)
    assert res.evaluation.feasible and res.status == Status.OPTIMAL
    assert res.objective <= float(best / 3) + 1e-9
    assert res.bound <= res.objective


def test_a_resize_that_pays_by_brute_force():
    """A long job (80 s on 1 node, ladder 2, 4) from 1, a 2-node job of 4 s from 3 and a 1-node job of 20 s
    from 4, on 4 nodes. The brute force's best, 63: the long job starts at 8 on 2 nodes so that its check 24
    meets the 1-node job's end, expands (4 s) and ends at 40; without resizes the best is 67. exact proves 63
    optimal, with a resize."""
    jobs = (Job("long", 1, 1, Runtime("linear", seconds_1=80, up_to=4), 2, 4, period=4, reconfig_s=4, timeout=0),
            Job("one", 4, 1, Runtime("linear", seconds_1=20, up_to=4), 1, 1, period=4, reconfig_s=4, timeout=0),
            Job("two", 3, 1, Runtime("linear", seconds_1=8, up_to=4), 2, 2, period=4, reconfig_s=4, timeout=0))
    instance = MalleableInstance(4, jobs, "resize-pays")
    best, schedule = brute_force(instance, Fraction(1))
    assert best == 63 and any(iv.kind == "reconfig" for iv in schedule.jobs["long"])
    rigid = MalleableInstance(4, tuple(replace(j, reconfig_s=1000.0) for j in jobs), "rigid")
    assert brute_force(rigid, Fraction(1))[0] == 67
    res = solve("malleable", instance, "exact", attach_bound=False, profile=ROOMY)
    assert res.status == Status.OPTIMAL and res.objective == pytest.approx(21.0, abs=1e-12)
    assert res.bound == pytest.approx(21.0, abs=1e-12) and res.bound <= 21.0
    assert any(iv.kind == "reconfig" for iv in res.solution.jobs["long"])


def test_a_quarter_second_grid_when_run_times_are_not_in_step_with_the_checks():
    """Period 3 and 2 s resizes: the optimum's times are quarters of seconds (t_m / t_i in {1/4 .. 4}), so the
    brute force on a 1/4 s grid reaches it: exact meets it, value and bound."""
    jobs = (Job("a", 0, 1, Runtime("linear", seconds_1=12, up_to=4), 1, 2, period=3, reconfig_s=2, timeout=0),
            Job("b", 1, 1, Runtime("linear", seconds_1=8, up_to=2), 2, 4, period=3, reconfig_s=2, timeout=0),
            Job("c", 2, 1, Runtime("linear", seconds_1=12, up_to=4), 1, 2, period=4, reconfig_s=1, timeout=0))
    instance = MalleableInstance(4, jobs, "quarters")
    best, schedule = brute_force(instance, Fraction(1, 4))
    assert evaluate(instance, schedule).feasible
    res = solve("malleable", instance, "exact", attach_bound=False, profile=ROOMY)
    assert res.status == Status.OPTIMAL and res.evaluation.feasible
    assert res.objective == pytest.approx(float(best / 3), rel=1e-12)
    assert res.bound == pytest.approx(float(best / 3), rel=1e-9) and res.bound <= float(best / 3) * (1 + 1e-12)


# --- by hand and the library ------------------------------------------------------------------------------


def test_grid3_0_by_hand():
    """j1 on 4 nodes [0, 17); j2 on 2 nodes from 4, resized at its check 20 (4 s), 4 nodes [24, 33); j3 on 2
    nodes [4, 40): completions sum 17 + 29 + 36 = 82, mean 27.333333, which exact proves optimal."""
    instance = get_problem("malleable").read_instance("lib:malleable/grid3-0")
    by_hand = Schedule({"j1": (Interval(0, 17, 4),),
                        "j2": (Interval(4, 20, 2), Interval(20, 24, 4, "reconfig"), Interval(24, 33, 4)),
                        "j3": (Interval(4, 40, 2),)})
    ev = evaluate(instance, by_hand)
    assert ev.feasible and ev.mean_completion == pytest.approx(82 / 3, abs=1e-12)
    res = solve("malleable", instance, "exact", attach_bound=False, profile=ROOMY)
    assert res.status == Status.OPTIMAL and res.evaluation.feasible
    assert res.objective == pytest.approx(82 / 3, abs=1e-12)
    assert res.bound == pytest.approx(82 / 3, abs=1e-12) and res.bound <= 82 / 3
    assert res.info["exact_gap"] == 0 and res.info["found_by"] == "search"


LIBRARY = {"grid3-0": 82 / 3, "grid3-1": 61 / 3, "grid3-2": 23.0, "grid3-3": 24.0, "grid3-4": 46 / 3,
           "grid4-0": 26.25, "grid4-1": 25.25, "grid4-2": 26.25, "grid4-3": 21.25, "grid4-4": 28.75,
           "grid4-5": 18.75, "grid4-6": 26.75, "grid4-7": 29.75, "grid6-0": 155 / 6, "grid6-1": 70 / 3,
           "grid6-2": 206 / 6, "grid6-3": 70 / 3, "grid6-4": 56 / 3}  # grid6-0 and grid6-2: 12 and 18 s of CPU


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_the_library_instances_it_closes(name):
    """The library's best known of each is optimal over every schedule: exact reaches it, with a bound equal
    to it, and the Result is optimal (the bound it attaches is exact's own, the largest)."""
    res = solve("malleable", f"lib:malleable/{name}", "exact", profile=ROOMY)
    assert res.status == Status.OPTIMAL and res.evaluation.feasible, res.info.get("notes")
    assert res.objective == pytest.approx(LIBRARY[name], abs=1e-9)
    assert res.info["model_bound"] == pytest.approx(LIBRARY[name], abs=1e-9)
    assert res.info["model_bound"] <= res.objective


@pytest.mark.parametrize("seed", [0, 7])
def test_never_above_cpsat_and_its_bound_below_every_method(seed):
    instance = generate(seed, 3, "grid")
    res = solve("malleable", instance, "exact", profile=ROOMY)
    assert res.status == Status.OPTIMAL and res.evaluation.feasible
    bound = res.info["model_bound"]
    for method, params in (("cpsat", {"profile": "quick"}), ("rigid-optimal", {"profile": "quick"}),
                           ("milp", {"profile": "quick"}), ("rigid-list", {}), ("dmr", {}), ("rigid-fcfs", {})):
        other = solve("malleable", instance, method, attach_bound=False, **params)
        assert other.evaluation.feasible
        assert bound <= other.objective + 1e-9, method
        if method == "cpsat":
            assert res.objective <= other.objective + 1e-9


# --- limits and bad input -------------------------------------------------------------------------------------


def test_other_objectives_are_refused():
    with pytest.raises(ParameterError, match="objective"):
        solve("malleable", "random:0:3:grid", "exact", objective="makespan")


def test_a_time_limit_keeps_the_best_found_and_a_valid_bound(tmp_path, monkeypatch):
    """With 0.3 s the search stops early: status time_limit, the start's schedule (or better), and the bound
    of the regions closed so far and the unexplored ones' least own minima, below the optimum."""
    path = tmp_path / "solvers.toml"
    path.write_text("[default]\ntime_limit = 60\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n\n"
                    "[short]\ntime_limit = 0.3\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(path))
    res = solve("malleable", "lib:malleable/grid6-3", "exact", attach_bound=False, profile="short")
    assert res.status == Status.TIME_LIMIT and res.evaluation.feasible
    assert res.bound is not None and res.bound <= 70 / 3 + 1e-9 and res.bound <= res.objective


def test_a_short_limit_on_an_instance_too_hard_for_it_is_honoured(tmp_path, monkeypatch):
    """grid6-2 under 3 s (since the float-safe bounds and the branching change it closed within a 10 s limit
    on a quiet machine): the starts leave an incumbent of 206 or more, and with it 13,000 to 40,000
    skeletons for one job; listing them, pricing them and the search over them all check the deadline
    (under the default profile of 60 s it once ran 509.6 s: the frontier's suffix minima were quadratic in
    the skeletons, the prices' evaluation checked no deadline). Status time_limit, the evaluator's objective,
    a bound at most the best known (206/6) and stopped within the limit plus 20 s: on its CPU seconds always
    (the work it does, whatever the load), on its wall clock unless the machine starved it (under a quarter
    of its wall clock in CPU, as the harness counts a starved run)."""
    limit, slack = 3.0, 20.0
    path = tmp_path / "solvers.toml"
    path.write_text("[default]\ntime_limit = 60\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n\n"
                    f"[short]\ntime_limit = {limit}\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(path))
    res = solve("malleable", "lib:malleable/grid6-2", "exact", attach_bound=False, profile="short")
    assert res.status == Status.TIME_LIMIT and res.evaluation.feasible
    assert res.objective == res.evaluation.mean_completion
    assert res.bound is not None and res.bound <= 206 / 6 + 1e-9 and res.bound <= res.objective
    assert res.method_cpu_s <= limit + slack, res.info
    starved = res.method_cpu_s < 0.25 * res.method_time_s
    assert starved or res.method_time_s <= limit + slack, res.info


def test_a_deadline_past_after_the_listing_stops_the_pricing_and_the_search_at_once():
    """The path of the 509.6 s run, whatever the load: grid6-2 from rigid-list's start (sum 208 or so) lists
    more than 10,000 skeletons for one job; with the deadline then past, pricing falls back to the own minima
    (g = F, no charge) and the enumeration stops at its first step, its bound the frontier's (every job's
    least F summed), between the jobs' shortest runs and the best known 206. Before the fix these two steps
    took about 50 s of CPU (the suffix minima quadratic, the prices unbounded); 20 s is a generous margin."""
    import time

    from iosched.heuristics.malleable_list import rigid_list
    from iosched.models.malleable_exact import Search, Start

    instance = get_problem("malleable").read_instance("lib:malleable/grid6-2")
    schedule = rigid_list(instance).solution
    total = sum(Fraction(schedule.jobs[j.id][-1].end) - Fraction(j.arrival) for j in instance.jobs)
    assert evaluate(instance, schedule).feasible and total >= 206
    search = Search(instance, Start("rigid-list", schedule, total, 0.0), "highs", Deadline(600.0), 10**6)
    assert max(search.listed) > 10_000
    search.deadline = Deadline(0.0)
    began = time.process_time()
    search.price()
    search.run()
    cpu = time.process_time() - began
    assert search.stopped and search.counts["tuples"] == 0 and search.charge == 0
    assert all(g <= float(s.own) for lst, gs in zip(search.lists, search.g) for s, g in zip(lst, gs))
    least = sum(min(s.own for s in lst) for lst in search.lists)
    assert search.lower == least and sum(j.fastest for j in search.jobs) <= least <= 206
    assert cpu < 20.0


class _AfterChecks(Deadline):
    """A deadline that passes at its ``n``-th check, whatever the clock: the search stops at a chosen point."""

    def __init__(self, n: int):
        super().__init__(600.0)
        self.left = n

    def expired(self) -> bool:
        self.left -= 1
        return self.left < 0

    def remaining(self) -> float:
        return 0.0 if self.left < 0 else 600.0


@pytest.mark.parametrize("name", ["grid3-0", "grid4-0"])
def test_the_bound_past_the_deadline_is_valid_wherever_it_falls(name):
    """Stopped at its n-th deadline check (n from 1 until the search ends by itself): listing, pricing, the
    enumeration's frontier and the tuples' open nodes; the bound kept (the least of the regions' and the
    answer's, as exact returns it) is at most the optimum, and equals it once the search ends unstopped."""
    from iosched.heuristics.malleable_list import rigid_list
    from iosched.models.malleable_exact import Search, Start

    instance = get_problem("malleable").read_instance(f"lib:malleable/{name}")
    optimum = Fraction(LIBRARY[name]).limit_denominator(100) * len(instance.jobs)
    schedule = rigid_list(instance).solution
    total = sum(Fraction(schedule.jobs[j.id][-1].end) - Fraction(j.arrival) for j in instance.jobs)
    assert total >= optimum  # (grid4-0's start is optimal already: the search proves it)
    stops, n = [], 1
    while True:
        try:
            search = Search(instance, Start("rigid-list", schedule, total, 0.0), "highs", _AfterChecks(n), 10**6)
        except TimeoutError:  # stopped while listing: exact's bound is then the jobs' shortest runs
            n *= 2
            continue
        search.price()
        search.run()
        found = search.best[1] if search.best else total
        bound = min(search.lower, found)
        assert bound <= optimum, (n, bound)
        if not search.stopped:
            assert bound == optimum == found
            break
        stops.append((n, float(bound)))
        n *= 2
    assert len(stops) >= 3 and stops[-1][1] > stops[0][1]  # stopped at several points, later ones higher


def test_too_many_skeletons_are_refused_by_name():
    with pytest.raises(ParameterError, match="skeletons"):
        solve("malleable", "lib:malleable/grid6-2", "exact", profile="quick", max_skeletons=10)


# --- the parts' proofs ----------------------------------------------------------------------------------------


def test_a_skeletons_own_minimum_and_shape_by_hand():
    """Ladder 2, 4 (T(1) = 68 s: 34 s at 2, 17 s at 4), period 8, resize 4 s: at 2 nodes, resized at check 2
    (16 s) to 4: 16 / 34 done, the rest 17 (18 / 34) = 9 s after the 4 s resize: F = 16 + 4 + 9 = 29; the
    blocks: 2 nodes from S, 4 from S + 16 + stall (the expansion takes its nodes as its reconfiguration
    begins), the completion S + 29 + stall (a stall before the last resize delays the end one for one)."""
    job = Job("j2", 4, 100, Runtime("linear", seconds_1=68, up_to=4), 2, 4, period=8, reconfig_s=4, timeout=8)
    data = job_data(job)
    found = {(s.sizes, s.checks): s for s in skeletons(data, Fraction(40))}
    sk = found[((2, 4), (2,))]
    assert sk.own == 29 and found[((4,), ())].own == 17
    sh = shape(data, sk)
    assert sh.stalls == (1,) and sh.stall_max == (8,) and sh.demand == (2, 4) and sh.work is None
    assert sh.points[1] == (16, ((0, 1), (1, 1))) and sh.points[2] == (29, ((0, 1), (1, 1)))
    assert all(s.own <= 40 for s in found.values())
    assert [s.own for s in skeletons(data, Fraction(40))] == sorted(s.own for s in found.values())


def test_a_dominated_size_is_dropped_only_where_resizes_cost_the_same():
    """Linear up to 2 nodes: 4 nodes run no faster than 2, so with constant costs 4 never helps; with a
    redistribution cost (cheaper resizes to 4) it stays."""
    flat = Job("a", 0, 1, Runtime("linear", seconds_1=40, up_to=2), 1, 4, period=8, reconfig_s=4)
    assert job_data(flat).sizes == (1, 2)
    costly = Job("a", 0, 1, Runtime("linear", seconds_1=40, up_to=2), 1, 4, period=8, reconfig_s=4,
                 redistribute_s=8)
    assert job_data(costly).sizes == (1, 2, 4)


def test_the_safe_bound_and_the_exact_vertex():
    """min x + y s.t. x + 2y >= 3, 2x + y >= 3, 0 <= x, y <= 10: optimum 2 at (1, 1). The exact vertex and its
    multipliers prove it; any multipliers of the right signs give a bound below it (1/2, 0: 3/2); wrong signs
    count as 0."""
    lp = RationalLP([Fraction(1), Fraction(1)], Fraction(0), [Fraction(0)] * 2, [Fraction(10)] * 2,
                    [({0: Fraction(1), 1: Fraction(2)}, Fraction(3), None),
                     ({0: Fraction(2), 1: Fraction(1)}, Fraction(3), None)])
    cert = lp.solve("highs", 10.0)
    assert cert.status == "optimal" and cert.exact and cert.x == [1, 1] and cert.value == cert.lower == 2
    assert lp.safe_bound({0: Fraction(1, 2)}) == Fraction(3, 2)
    assert lp.safe_bound({0: Fraction(-1)}) == 0  # a negative multiplier on a >= row counts as 0
    infeasible = lp.with_rows([({0: Fraction(1), 1: Fraction(1)}, None, Fraction(1))])  # x + y <= 1
    assert infeasible.solve("highs", 10.0).status == "infeasible"


def test_the_priced_bound_never_exceeds_a_tuples_minimum():
    """The Lagrangian bound of a tuple (sum of its skeletons' priced g less the charge) is at most the
    tuple's least sum of completions wherever that is below the cut (the bound's claim), checked on every
    tuple of grid3-0 whose own minima leave it below a loose cut (jobs one after another)."""
    import itertools

    from iosched.models.malleable_capacity import TupleModel, solve_tuple
    from iosched.models.malleable_exact import Search, Start, serial_schedule

    instance = get_problem("malleable").read_instance("lib:malleable/grid3-0")
    serial = serial_schedule(instance)
    total = sum(Fraction(serial.jobs[j.id][-1].end) - Fraction(j.arrival) for j in instance.jobs)
    search = Search(instance, Start("serial", serial, total, 0.0), "highs", Deadline(120.0), 10**6)
    search.price()
    assert search.priced_bound > sum(j.fastest for j in search.jobs)  # the prices raise the bound
    checked = 0
    for picks in itertools.islice(itertools.product(*(range(len(lst)) for lst in search.lists)), 300):
        chosen = [lst[k] for lst, k in zip(search.lists, picks)]
        _, shapes = search.shapes_of(chosen)
        model = TupleModel(search.jobs, shapes, instance.nodes, search.cut)
        res = solve_tuple(model, search.cut, "highs", Deadline(60.0), model.lp.objective)
        if res.value is not None:
            assert sum(g[k] for g, k in zip(search.g, picks)) - search.charge <= res.value + 1e-9
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("solver", ["scip", "gurobi"])
def test_the_lps_run_on_the_profiles_backend(solver):
    """Another backend solves the node LPs (one LP built per node through iosched.solvers.lp.LP, where HiGHS
    keeps one model per tuple): the same optimum, proven the same way."""
    res = solve("malleable", "lib:malleable/grid4-7", "exact", attach_bound=False, profile=f"{ROOMY}:{solver}")
    assert res.status == Status.OPTIMAL and res.info["solver"] == solver
    assert res.objective == pytest.approx(29.75, abs=1e-12) and res.bound == pytest.approx(29.75, abs=1e-12)
    assert res.info["lps"] >= 1 and res.info["unresolved"] == 0


def test_a_start_that_refuses_the_instance_is_skipped():
    """Resizes of 10^12 s: cpsat's grid refuses the instance (a ParameterError), exact goes on from rigid-list,
    and with no resize worth its cost the best rigid schedule of grid3-0's jobs (83/3) is optimal."""
    base = generate(0, 3, "grid")
    instance = MalleableInstance(base.nodes, tuple(replace(j, reconfig_s=1e12) for j in base.jobs), "huge-resizes")
    res = solve("malleable", instance, "exact", attach_bound=False, profile=ROOMY)
    tried = {row["heuristic"]: row for row in res.info["start"]["tried"]}
    assert "horizon" in tried["cpsat"]["error"] and tried["cpsat"]["value"] is None
    assert res.status == Status.OPTIMAL and res.objective == pytest.approx(83 / 3, abs=1e-12)
    assert res.bound <= 83 / 3 and res.bound == pytest.approx(83 / 3, abs=1e-12)


def test_the_branching_set_is_the_smallest_over_the_overloaded_instants():
    """Five blocks of 1 node over [0, 10) and blocks of 4 and 2 nodes over [20, 30) on 4 nodes: both instants
    are overloaded; the branching set is the second's 2 blocks (2 children), not the first's 5 (20 children),
    in floating point and exactly; a point without overload has none."""
    from iosched.models.malleable_capacity import Block, TupleModel

    spans = [(0, 10, 1)] * 5 + [(20, 30, 4), (20, 30, 2)]
    model = TupleModel.__new__(TupleModel)
    model.nodes = 4
    model.blocks = [Block(k, 0, p, (Fraction(s), ()), (Fraction(e), ()), (float(s), ()), (float(e), ()))
                    for k, (s, e, p) in enumerate(spans)]
    model._before, model._overlap = {}, {}
    assert model.overload([], False) == model.overload([], True) == [5, 6]
    assert len(model.children([5, 6], [])) == 2
    model.blocks = model.blocks[:4] + model.blocks[5:6]  # 4 of 1 node, then 4 nodes alone
    assert model.overload([], False) is None
