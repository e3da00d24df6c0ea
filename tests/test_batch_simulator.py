"""Hand-made traces whose schedules are worked out by hand, resource safety, WFP, the window plug-in
and its starvation bound."""

import importlib
from dataclasses import replace

import numpy as np
import pytest

from iosched.batch import apply_mix, generate, make_trace, simulate, summary
from iosched.batch.metrics import breakdown, write_records
from iosched.batch.simulator import SchedulerFault
from iosched.core import METHODS, Method, MethodOutput
from iosched.errors import ParameterError
from iosched.evaluate.window import Selection


def starts(trace, **kw):
    return simulate(trace, **kw).start.tolist()


# (submit, run, requested time, nodes, burst buffer)
def test_easy_backfills_a_short_job_without_delaying_the_wide_one():
    jobs = [(0, 100, 100, 6, 0), (1, 50, 60, 8, 0), (2, 50, 50, 4, 0)]
    trace = make_trace(jobs, nodes=10)
    # J2 (8 nodes) waits for J1 to end at 100; J3 (4 nodes, ends by 52) goes ahead of it
    assert starts(trace) == [0, 100, 2]
    assert starts(trace, backfill="none") == [0, 100, 150]


def test_easy_does_not_backfill_a_job_that_would_delay_the_reservation_nodes():
    # J3 would end (by its request) at 202 > 100 and J2 leaves only 2 nodes spare then: no backfill
    trace = make_trace([(0, 100, 100, 6, 0), (1, 50, 60, 8, 0), (2, 50, 200, 4, 0)], nodes=10)
    assert starts(trace) == [0, 100, 150]
    # a 2-node job fits in the spare nodes at the reservation: it may run past it
    trace = make_trace([(0, 100, 100, 6, 0), (1, 50, 60, 8, 0), (2, 50, 200, 2, 0)], nodes=10)
    assert starts(trace) == [0, 100, 2]


def test_easy_does_not_backfill_a_job_that_would_delay_the_reservation_burst_buffer():
    # nodes are plentiful; J2 needs 80 of 100 GB and waits for J1's 60 GB
    base = [(0, 100, 100, 10, 60), (1, 50, 60, 10, 80)]
    trace = make_trace(base + [(2, 50, 200, 10, 30)], nodes=100, bb_capacity=100)
    assert starts(trace) == [0, 100, 150]  # 30 GB free now, but only 20 GB spare at the reservation
    trace = make_trace(base + [(2, 50, 200, 10, 20)], nodes=100, bb_capacity=100)
    assert starts(trace) == [0, 100, 2]  # fits in the spare burst buffer
    trace = make_trace(base + [(2, 50, 60, 10, 30)], nodes=100, bb_capacity=100)
    assert starts(trace) == [0, 100, 2]  # ends (by its request, 62) before the reservation


def test_a_burst_buffer_bound_job_blocks():
    # J2 needs the burst buffer J1 holds: with FCFS and no backfilling the small J3 waits behind it
    trace = make_trace([(0, 100, 100, 1, 70), (1, 10, 10, 1, 50), (2, 10, 10, 1, 0)], nodes=100,
                       bb_capacity=100)
    assert starts(trace, backfill="none") == [0, 100, 100]
    assert starts(trace) == [0, 100, 2]


def test_reservation_waits_for_both_resources():
    # J2 needs 8 nodes (free when J1 ends, 50) and 90 GB (free when J3 ends, 120); J4 may use the gap
    jobs = [(0, 50, 50, 8, 0), (0, 120, 120, 1, 50), (1, 10, 10, 8, 90), (2, 60, 60, 1, 0), (3, 100, 100, 1, 0)]
    trace = make_trace(jobs, nodes=10, bb_capacity=100)
    got = starts(trace)
    # J3's reservation is 120 (J2's burst buffer), with 2 nodes and 10 GB spare then. J4 ends by 62: backfilled
    # at 2. J5 finds no node free at 3; at 50 (J1 ends) it fits, would run past 120, but in the spare nodes
    assert got == [0, 0, 120, 2, 50]


def test_wfp_orders_by_utility():
    # at 1000 the machine frees; queued: A (waited 900 of 1000 s requested, 2 nodes), B (waited 500 of 100 s,
    # 1 node). Utilities: A 0.9^3 * 2 = 1.458, B 5^3 * 1 = 125 -> B first; FCFS would pick A
    jobs = [(0, 1000, 1000, 4, 0), (100, 10, 1000, 4, 0), (500, 10, 100, 4, 0)]
    trace = make_trace(jobs, nodes=4)
    assert starts(trace, policy="fcfs", backfill="none") == [0, 1000, 1010]
    assert starts(trace, policy="wfp", backfill="none") == [0, 1010, 1000]


def _capacity_never_exceeded(result):
    t = result.trace
    ran = result.start >= 0
    for s in np.unique(result.start[ran]):
        on = ran & (result.start <= s) & (s < result.end)
        assert t.job_nodes[on].sum() <= t.nodes
        assert t.burst_buffer[on].sum() <= t.bb_capacity


@pytest.mark.parametrize("kw", [dict(), dict(policy="wfp"), dict(backfill="none"), dict(window="naive"),
                                dict(window="constrained-bb", policy="wfp"), dict(window="bin-packing"),
                                dict(persistent_bb=1 / 3)])
def test_no_job_starts_without_its_resources(kw):
    trace = apply_mix(generate(1, jobs=400, nodes=256), "S4", seed=1, bb_capacity=600_000)
    res = simulate(trace, **kw)
    ran = res.start >= 0
    assert (res.start[ran] >= trace.submit[ran]).all()
    cap = trace.bb_capacity - int(kw.get("persistent_bb", 0) * trace.bb_capacity)
    assert list(res.left_out) == trace.ids[trace.burst_buffer > cap].tolist()
    assert ran.sum() == len(trace) - len(res.left_out)
    _capacity_never_exceeded(res)
    if "persistent_bb" in kw:
        ran = res.start >= 0
        for s in np.unique(res.start[ran]):
            on = ran & (res.start <= s) & (s < res.end)
            assert trace.burst_buffer[on].sum() <= cap


def _fake(monkeypatch, name, fn):
    monkeypatch.setitem(METHODS, f"window/{name}", Method("window", name, fn, "hypervolume", "test"))


def test_an_infeasible_selection_is_refused(monkeypatch):
    _fake(monkeypatch, "everything", lambda inst: MethodOutput(Selection(tuple(j.id for j in inst.jobs))))
    trace = make_trace([(0, 10, 10, 3, 0), (0, 10, 10, 3, 0)], nodes=4)
    with pytest.raises(SchedulerFault, match="infeasible"):
        simulate(trace, window="everything")
    # with an evaluator that lets it through, the simulator's own check still stops the start
    ev = importlib.import_module("iosched.evaluate.window")  # iosched.evaluate is also a function
    monkeypatch.setattr(importlib.import_module("iosched.batch.simulator"), "evaluate",
                        lambda inst, sel: ev.Evaluation(True))
    with pytest.raises(SchedulerFault, match="would start at 0 with 3 nodes .* 1 nodes and 0 GB"):
        simulate(trace, window="everything")


def test_starvation_bound(monkeypatch):
    # a method that never selects the window's first job: only the bound starts it
    def skip_first(inst):
        free_n, chosen = inst.capacity.nodes, []
        for j in inst.jobs[1:]:
            if j.nodes <= free_n:
                chosen.append(j.id)
                free_n -= j.nodes
        return MethodOutput(Selection(tuple(chosen)))

    _fake(monkeypatch, "skip-first", skip_first)
    jobs = [(t, 10, 10, 2, 0) for t in range(0, 100, 5)]
    trace = make_trace(jobs, nodes=4)
    res = simulate(trace, window="skip-first", starvation=3, backfill="none")
    assert (res.start >= 0).all() and res.forced >= 1
    _capacity_never_exceeded(res)
    # one job alone: declined at the passes at 0, 10, ..., 10 (s - 1) s; the bound starts it at the next
    for bound in (1, 3, 7):
        alone = simulate(make_trace([(0, 5, 5, 2, 0)], nodes=4), window="skip-first", starvation=bound)
        assert alone.start.tolist() == [10 * bound] and alone.forced == 1 and alone.plugin_calls == bound


def test_window_plugin_starts_the_methods_choice():
    # the paper's Table 1 at one instant: 100 nodes, 100 TB free; the window J1..J5 queued behind a blocker
    blocker = (0, 10, 10, 100, 0)
    window = [(1, 50, 50, 80, 20), (1, 50, 50, 10, 85), (1, 50, 50, 40, 5), (1, 50, 50, 10, 0), (1, 50, 50, 20, 0)]
    trace = make_trace([blocker] + window, nodes=100, bb_capacity=100)
    at_10 = {m: [k for k, s in enumerate(starts(trace, window=m, backfill="none")[1:], 1) if s == 10]
             for m in ("constrained-cpu", "constrained-bb", "exact")}
    assert at_10["constrained-cpu"] == [1, 5]  # Solution 2: J1, J5
    assert at_10["constrained-bb"] == [2, 3, 4, 5]  # Solution 3
    assert at_10["exact"] == [2, 3, 4, 5]  # the decision rule trades 20 % nodes for 70 % BB


def test_params_pass_through_and_are_checked():
    trace = apply_mix(generate(2, jobs=60, nodes=128), "S2", bb_capacity=600_000)
    a = simulate(trace, window="weighted", params={"node_weight": 0.8})
    b = simulate(trace, window="weighted", params={"node_weight": 0.2})
    assert a.config["params"] == {"node_weight": 0.8, "normalise": "machine"}  # the paper's normalisation
    c = simulate(trace, window="weighted", params={"node_weight": 0.8, "normalise": "free"})
    assert c.config["params"]["normalise"] == "free"
    assert not np.array_equal(a.start, b.start)
    with pytest.raises(ParameterError, match="node_weight"):
        simulate(trace, window="weighted", params={"node_weight": 3})
    with pytest.raises(ParameterError, match="unexpected keyword"):
        simulate(trace, window="naive", params={"nope": 1})
    with pytest.raises(ParameterError, match="unknown method"):
        simulate(trace, window="nope")


def test_metrics_by_hand(tmp_path):
    # 4 nodes, 10 GB; the measured period (no warm-up or cool-down) is the submit span [0, 100]
    trace = make_trace([(0, 100, 100, 2, 5), (50, 100, 100, 4, 0), (100, 50, 50, 2, 10)], nodes=4, bb_capacity=10)
    res = simulate(trace, backfill="none")
    assert res.start.tolist() == [0, 100, 200]
    m = summary(res, warmup=0, cooldown=0)
    assert m["node_usage"] == pytest.approx(2 * 100 / 400)  # J2 starts at the period's end
    assert m["bb_usage"] == pytest.approx(5 * 100 / 1000)
    assert m["avg_wait_s"] == pytest.approx((0 + 50 + 100) / 3)
    assert m["avg_bounded_slowdown"] == pytest.approx((1 + 150 / 100 + 150 / 50) / 3)
    half = summary(res, warmup=0.5, cooldown=0)  # [50, 100]: J1 alone, 2 of 4 nodes
    assert half["node_usage"] == pytest.approx(0.5) and half["jobs_measured"] == 2
    rows = breakdown(res, "nodes", warmup=0, cooldown=0)
    assert rows[0]["jobs"] == 3
    path = write_records(res, tmp_path / "jobs.csv")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("job_id,submit,start,end,nodes,burst_buffer")
    assert lines[3] == "3,100,200,250,2,10,50,100"
    pq = pytest.importorskip("pyarrow.parquet")
    write_records(res, tmp_path / "jobs.parquet")
    assert pq.read_table(tmp_path / "jobs.parquet").column("start").to_pylist() == [0, 100, 200]


def _with_ssd(jobs, ssd, nodes):
    """A hand-made trace whose jobs need ``ssd`` GB of local SSD per node."""
    return replace(make_trace(jobs, nodes=nodes), ssd_per_node=np.array(ssd, dtype=np.int64), extra=2)


def test_ssd_jobs_take_the_smallest_class_they_may_use():
    # 2 nodes of 128 GB, 2 of 256 GB. J1 (2 x 100 GB) takes both 128s, J2 (1 x 200 GB) one 256, J3 (2 x 200 GB)
    # finds one 256 left and waits for J2; J4 (1 x 50 GB, ends before J3's reservation) takes the last 256 at once
    trace = _with_ssd([(0, 100, 100, 2, 0), (0, 50, 50, 1, 0), (0, 10, 10, 2, 0), (0, 40, 40, 1, 0)],
                      [100, 200, 200, 50], nodes=4)
    res = simulate(trace, ssd_classes=((256, 2), (128, 2)))
    assert res.start.tolist() == [0, 0, 50, 0]
    assert res.wasted_ssd.tolist() == [2 * 28, 56, 2 * 56, 206]
    assert res.ssd_classes == ((128, 2), (256, 2))
    # measured over [0, 100] s (the submit span): J1 200 GB and its waste 56 GB for 100 s, J2 from 100 s
    s = summary(simulate(_with_ssd([(0, 100, 100, 2, 0), (100, 50, 50, 1, 0)], [100, 200], nodes=4)), 0, 0)
    assert s["ssd_usage"] == pytest.approx(200 / 768) and s["wasted_ssd"] == pytest.approx(56 / 768)


def test_a_result_has_wasted_ssd_exactly_with_ssd_classes():
    res = simulate(_with_ssd([(0, 10, 10, 2, 0)], [100], nodes=4))
    with pytest.raises(ValueError, match="wasted_ssd is given exactly when ssd_classes are"):
        replace(res, wasted_ssd=None)  # summary and job_records read the SSD columns from wasted_ssd
    with pytest.raises(ValueError, match="wasted_ssd"):
        replace(simulate(make_trace([(0, 10, 10, 2, 0)], nodes=4)), wasted_ssd=np.zeros(1, dtype=np.int64))


def test_easy_backfill_leaves_the_head_its_ssd_class():
    # 1 node of 128 GB, 3 of 256 GB. A holds two 256s until 100; the head H needs three 256s (reservation 100).
    # C (1 x 200 GB, past 100) would take the last free 256 and delay H: it waits, although one node is spare
    # at the reservation by count; D (1 x 50 GB, past 100) takes the 128 and backfills
    jobs = [(0, 100, 100, 2, 0), (1, 10, 10, 3, 0), (2, 500, 500, 1, 0), (3, 500, 500, 1, 0)]
    res = simulate(_with_ssd(jobs, [200, 200, 200, 50], nodes=4), ssd_classes=((128, 1), (256, 3)))
    assert res.start.tolist() == [0, 100, 110, 3]
    assert simulate(make_trace(jobs, nodes=4)).start.tolist() == [0, 100, 2, 110]  # without classes C backfills


def test_ssd_classes_are_checked_and_jobs_that_cannot_fit_are_left_out():
    trace = _with_ssd([(0, 10, 10, 2, 0), (0, 10, 10, 3, 0)], [100, 200], nodes=4)
    with pytest.raises(ParameterError, match="ssd_classes hold 3 nodes"):
        simulate(trace, ssd_classes=((128, 1), (256, 2)))
    with pytest.raises(ParameterError, match="distinct positive"):
        simulate(trace, ssd_classes=((128, 2), (128, 2)))
    res = simulate(trace)  # the paper's split: 2 x 128 GB, 2 x 256 GB; J2 needs three 256s
    assert res.ssd_classes == ((128, 2), (256, 2)) and res.left_out == (2,) and res.start.tolist() == [0, -1]


@pytest.mark.parametrize("kw", [dict(), dict(policy="wfp"), dict(window="exact"), dict(window="constrained-ssd"),
                                dict(window="bin-packing", policy="wfp"), dict(window="weighted")])
def test_no_job_holds_nodes_without_a_large_enough_ssd(kw):
    """Hall's condition at every start: the jobs running that need class k or larger hold no more nodes
    than those classes have; each job's waste lies between its nodes all on the smallest class it may
    use and all on the largest."""
    trace = apply_mix(apply_mix(generate(2, jobs=300, nodes=256), "S2", seed=2, bb_capacity=600_000), "S6", seed=3)
    res = simulate(trace, **kw)
    sizes = np.array([128, 256])
    cat = np.searchsorted(sizes, trace.ssd_per_node)
    ran = res.start >= 0
    assert list(res.left_out) == trace.ids[(cat == 1) & (trace.job_nodes > 128)].tolist()
    assert ran.sum() == len(trace) - len(res.left_out)
    _capacity_never_exceeded(res)
    for t in np.unique(res.start[ran]):
        on = ran & (res.start <= t) & (t < res.end)
        assert trace.job_nodes[on & (cat >= 1)].sum() <= 128
    need, n = trace.ssd_per_node, trace.job_nodes
    lo, hi = n * (sizes[cat] - need), n * (sizes[-1] - need)
    assert ((lo <= res.wasted_ssd) & (res.wasted_ssd <= hi))[ran].all()


def test_backfill_looks_at_the_next_backfill_depth_jobs_only():
    """Slurm's bf_max_job_test: with a depth of 2 the short job third behind the head waits; with
    3 it backfills; a depth covering the queue gives the same start times as an unlimited one."""
    jobs = [(0, 100, 100, 8, 0), (1, 10, 10, 10, 0), (2, 50, 500, 4, 0), (3, 50, 500, 4, 0), (4, 20, 20, 2, 0)]
    trace = make_trace(jobs, nodes=10)
    shallow, deep = simulate(trace, backfill_depth=2), simulate(trace, backfill_depth=3)
    assert shallow.start[4] > 4 and deep.start[4] == 4  # submitted at 4
    assert simulate(trace, backfill_depth=10**6).start.tolist() == deep.start.tolist()
    with pytest.raises(ParameterError, match="backfill_depth"):
        simulate(trace, backfill_depth=0)


@pytest.mark.parametrize("policy, window", [("fcfs", None), ("fcfs", "naive"), ("wfp", None), ("wfp", "naive")])
def test_a_long_burst_buffer_bound_queue_is_cheap_per_pass(policy, window):
    """With the queue growing without bound (burst-buffer-bound S4), a deep enough depth gives the
    start times of scanning the whole queue, and the default depth stays feasible (issue 25)."""
    trace = apply_mix(generate(3, 600), "S4", seed=3)
    whole = simulate(trace, policy=policy, window=window, backfill_depth=10**6)
    assert simulate(trace, policy=policy, window=window, backfill_depth=600).start.tolist() == whole.start.tolist()
    default = simulate(trace, policy=policy, window=window)
    assert (default.start >= trace.submit).all() and default.config["backfill_depth"] == 100
