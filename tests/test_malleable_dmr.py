"""The event simulator: hand-checked workloads, DMR's three modes, every decision follows a rule, properties."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.core import solve
from iosched.errors import ParameterError
from iosched.evaluate.malleable import Interval, evaluate
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import generate
from iosched.models.malleable import bound


def lin(seconds_1, up_to=64):
    return Runtime("linear", seconds_1=float(seconds_1), up_to=up_to)


def ivs(res, job):
    return [(iv.start, iv.end, iv.nodes, iv.kind) for iv in res.schedule.jobs[job]]


# --- hand-checked workloads ------------------------------------------------------------------------------------


def test_two_rigid_jobs_fcfs_and_backfill():
    # 4 nodes. A: 4 nodes for 10 s from 0. B (arrives 1): 4 nodes, 5 s. C (arrives 2): 1 node, 3 s.
    jobs = (Job("A", 0, 1, lin(40), 4, 4), Job("B", 1, 1, lin(20), 4, 4), Job("C", 2, 1, lin(3), 1, 1))
    inst = MalleableInstance(4, jobs)
    fcfs = simulate(inst, "rigid", "fcfs")
    assert ivs(fcfs, "A") == [(0, 10, 4, "run")] and ivs(fcfs, "B") == [(10, 15, 4, "run")]
    assert ivs(fcfs, "C") == [(15, 18, 1, "run")]
    easy = simulate(inst, "rigid", "easy")  # C cannot backfill: no node is free before A ends
    assert ivs(easy, "C") == [(15, 18, 1, "run")]
    ev = evaluate(inst, fcfs.schedule)
    assert ev.feasible and ev.mean_wait == pytest.approx((0 + 9 + 13) / 3) and ev.makespan == 18


def test_easy_backfills_without_delaying_the_head():
    # 4 nodes. A: 2 nodes for 10 s. B (arrives 1) needs 4: reserved at 10. C (arrives 2): 2 nodes, 8 s, ends at 10
    # -> backfilled. D (arrives 3): 2 nodes, 9 s, would end at 12 -> waits.
    jobs = (Job("A", 0, 1, lin(20), 2, 2), Job("B", 1, 1, lin(20), 4, 4), Job("C", 2, 1, lin(16), 2, 2),
            Job("D", 3, 1, lin(18), 2, 2))
    res = simulate(MalleableInstance(4, jobs), "rigid", "easy")
    assert ivs(res, "C") == [(2, 10, 2, "run")]
    assert ivs(res, "B") == [(10, 15, 4, "run")]
    assert ivs(res, "D")[0][0] == 15
    assert ivs(simulate(MalleableInstance(4, jobs), "rigid", "fcfs"), "C")[0][0] == 15


def test_a_shrink_lets_the_second_job_start():
    # the evaluator's hand schedule, produced by the policy: A (wide mode, on 4 nodes) shrinks to 2 at its first
    # check (2 s) for the queued B, which starts when the 1 s resize ends and goes first in the queue
    A = Job("A", 0, 1, lin(16, 4), 1, 4, period=2.0, reconfig_s=1.0)
    B = Job("B", 1, 1, lin(8, 4), 2, 2, period=2.0)
    res = simulate(MalleableInstance(4, (A, B)), "dmr")
    assert ivs(res, "A") == [(0, 2, 4, "run"), (2, 3, 4, "reconfig"), (3, 7, 2, "run")]
    assert ivs(res, "B") == [(3, 7, 2, "run")]
    (d,) = res.decisions
    assert (d.time, d.job, d.rule, d.old, d.new, d.favoured) == (2, "A", "wide: shrink", 4, 2, "B")
    assert res.rules == {"wide: shrink": 1, "wide: no action": 3}  # A at 4 and 6, B at 5


@pytest.mark.parametrize("with_c", [True, False])
def test_an_expansion_refused_because_a_queued_job_fits(with_c):
    # 8 nodes, FCFS. A (wide, ladder 2-4-8) starts on 2. B (arrives 1) needs 8: blocked. C (arrives 2) needs 2:
    # it fits in the 6 free nodes but waits behind B. At A's check (4 s) C fits: no expansion. Without C, A grows.
    A = Job("A", 0, 1, lin(64), 2, 8, submit=2, period=4.0)
    jobs = [A, Job("B", 1, 1, lin(64), 8, 8)] + ([Job("C", 2, 1, lin(8), 2, 2)] if with_c else [])
    res = simulate(MalleableInstance(8, tuple(jobs)), "dmr", "fcfs")
    first = [d for d in res.decisions if d.time == 4]
    if with_c:
        assert not first and res.rules["wide: no action"] >= 1
        assert ivs(res, "A")[0] == (0, 32, 2, "run")  # never resized while B and C wait
    else:
        assert [(d.rule, d.old, d.new) for d in first] == [("wide: expand", 2, 4)]


def test_preferred_mode_expands_on_an_empty_queue_and_shrinks_back_for_a_newcomer():
    # A prefers 2, submitted on 2, ladder 1..8, checks every 4 s, resizes cost 1 s. Alone at 4 s: the queue is
    # empty, so it grows to 8 (the maximum). B arrives at 5 needing 4: at the check at 8 A is above its preferred
    # size with a job queued, so it shrinks to 2, and B starts when the resize ends (9 s).
    A = Job("A", 0, 1, lin(64), 1, 8, submit=2, preferred=2, period=4.0, reconfig_s=1.0)
    B = Job("B", 5, 1, lin(16), 4, 4)
    res = simulate(MalleableInstance(8, (A, B)), "dmr")
    rules = [(d.time, d.rule, d.old, d.new) for d in res.decisions]
    assert rules[:2] == [(4, "preferred: expand, queue empty", 2, 8), (8, "preferred: shrink to it", 8, 2)]
    assert ivs(res, "B")[0][0] == 9
    assert evaluate(MalleableInstance(8, (A, B)), res.schedule).feasible


def test_preferred_mode_does_not_shrink_below_preferred_for_a_queued_job():
    # the seed's Figure 6: jobs at their preferred 8 nodes leave nodes idle while a 32-node job waits
    jobs = tuple(Job(f"p{i}", 0, 1, lin(800), 2, 32, submit=8, preferred=8, period=15.0) for i in range(5))
    big = Job("big", 1, 1, lin(800), 32, 32)
    res = simulate(MalleableInstance(64, (*jobs, big)), "dmr")
    assert not res.decisions and ivs(res, "big")[0][0] == pytest.approx(100)
    assert res.rules == {"preferred: at the preferred size": 5 * 6, "wide: no action": 1}  # big at 115


def test_request_waits_for_nodes_and_expands_when_they_come():
    # 4 nodes. A on 1 requests 4; B holds 2 until 4 s. A's check at 2: 1 node free, so it waits (holding 1, no
    # progress) at top priority; B's end at 4 frees the nodes within the 3 s timeout: A expands (free, cost 0).
    A = Job("A", 0, 1, lin(16, 4), 1, 4, submit=1, request=4, period=2.0, timeout=3.0)
    B = Job("B", 0, 1, lin(8, 4), 2, 2)
    res = simulate(MalleableInstance(4, (A, B)), "dmr")
    # 2 s on 1 node = 1/8 of the work; 7/8 on 4 nodes = 3.5 s
    assert ivs(res, "A") == [(0, 2, 1, "run"), (2, 4, 1, "stall"), (4, 7.5, 4, "run")]
    assert [d.rule for d in res.decisions] == ["request: wait", "request: expand"]
    ev = evaluate(MalleableInstance(4, (A, B)), res.schedule)
    assert ev.feasible and (ev.stalls, ev.expands, ev.abandoned) == (1, 1, 0)


def test_request_abandoned_after_the_timeout():
    # as above, but B holds its nodes until 12 s: the wait at 2 s is abandoned at 5 s; the check at 4 fell
    # during the wait, so the next is at 6, where A waits again (to 9), abandons, checks at 10 and gets the nodes
    # at 12 (then 1 s to resize).
    A = Job("A", 0, 1, lin(16, 4), 1, 4, submit=1, request=4, period=2.0, timeout=3.0, reconfig_s=1.0)
    B = Job("B", 0, 1, lin(24, 4), 2, 2)
    inst = MalleableInstance(4, (A, B))
    res = simulate(inst, "dmr")
    assert [(d.time, d.rule) for d in res.decisions] == [
        (2, "request: wait"), (5, "request: abandoned"), (6, "request: wait"), (9, "request: abandoned"),
        (10, "request: wait"), (12, "request: expand")]
    # on 1 node: [0, 2) + [5, 6) + [9, 10) = 4 s = 1/4 of the work; 3/4 on 4 nodes = 3 s
    assert ivs(res, "A")[-2:] == [(12, 13, 4, "reconfig"), (13, 16, 4, "run")]
    ev = evaluate(inst, res.schedule)
    assert ev.feasible and (ev.stalls, ev.abandoned, ev.expands) == (3, 2, 1)


def test_a_job_at_its_requested_size_is_left_alone():
    # alone on 8 nodes the wide optimisation would grow A; its request pins it at 2
    A = Job("A", 0, 1, lin(64), 1, 8, submit=2, request=2, period=4.0)
    res = simulate(MalleableInstance(8, (A,)), "dmr")
    assert not res.decisions and res.rules == {"request: at the requested size": 7}  # checks at 4, 8, ..., 28
    assert simulate(MalleableInstance(8, (A,)), "dmr", modes="wide").decisions[0].rule == "wide: expand"


# --- properties --------------------------------------------------------------------------------------------------


def test_asynchronous_mode_carries_out_each_action_one_check_late():
    """The hand-checked shrink above, asynchronous (the seed's Section 7.4), with a longer A: A decides the
    shrink for B at its check at 2 s and carries it out at its next check, 4 s; B starts when the resize
    ends (5 s), not at 3 s as in the synchronous mode."""
    A = Job("A", 0, 1, lin(32, 4), 1, 4, period=2.0, reconfig_s=1.0)  # 8 s at 4 nodes: still running at 4 s
    B = Job("B", 1, 1, lin(8, 4), 2, 2, period=2.0)
    res = simulate(MalleableInstance(4, (A, B)), "dmr", asynchronous=True)
    assert ivs(res, "A")[:2] == [(0, 4, 4, "run"), (4, 5, 4, "reconfig")] and ivs(res, "A")[2][::2] == (5, 2)
    assert ivs(res, "B")[0] == (5, 9, 2, "run")
    d = res.decisions[0]
    assert (d.time, d.rule, d.old, d.new, d.favoured) == (4, "wide: shrink (late)", 4, 2, "B")
    assert evaluate(MalleableInstance(4, (A, B)), res.schedule).feasible


def test_a_late_expansion_whose_nodes_were_taken_waits_then_gives_up():
    """8 nodes. A (preferred mode, queue empty) decides at 2 s to grow from 2 to 8 nodes; B arrives at 3 s
    and takes 4 of the 6 free nodes; at 4 s A's late expansion finds 2 free and waits (holding its 2 nodes,
    no progress) for its timeout of 3 s, then runs on at 2 nodes."""
    A = Job("A", 0, 1, lin(64, 8), 2, 8, submit=2, preferred=8, period=2.0, timeout=3.0)
    B = Job("B", 3, 1, lin(400, 4), 4, 4)
    inst = MalleableInstance(8, (A, B))
    res = simulate(inst, "dmr", asynchronous=True)
    late = [(d.time, d.rule) for d in res.decisions if "late" in d.rule or "abandoned" in d.rule]
    assert late[:2] == [(4, "preferred: expand, queue empty: wait (late)"), (7, "request: abandoned")]
    assert ivs(res, "A")[1] == (4, 7, 2, "stall")
    assert evaluate(inst, res.schedule).feasible


def _with_requests(inst: MalleableInstance, seed: int) -> MalleableInstance:
    """Give every third job a request (its largest size, or its smallest) to exercise mode 1."""
    jobs = []
    for i, j in enumerate(inst.jobs):
        if (i + seed) % 3 == 0:
            j = dataclasses.replace(j, request=j.sizes[-1] if i % 2 else j.sizes[0])
        jobs.append(j)
    return MalleableInstance(inst.nodes, tuple(jobs), inst.name + ":requests")


WORKLOADS = st.one_of(
    st.builds(lambda s, n: generate(s, n, "paper"), st.integers(0, 10**6), st.integers(1, 25)),
    st.builds(lambda s, n: generate(s, n, "feitelson", nodes=32), st.integers(0, 10**6), st.integers(1, 30)),
    st.builds(lambda s, n: generate(s, n, "grid"), st.integers(0, 10**6), st.integers(1, 12)),
    st.builds(lambda s, n: _with_requests(generate(s, n, "grid"), s), st.integers(0, 10**6), st.integers(1, 12)),
)
SIMS = [("dmr", "easy", "all"), ("dmr", "fcfs", "all"), ("dmr", "easy", "wide"), ("rigid", "easy", "all"),
        ("rigid", "fcfs", "all")]


def _follows_a_rule(inst: MalleableInstance, d) -> bool:
    """Whether the recorded decision meets the condition of the rule it names (module docstring of the sim)."""
    job = next(j for j in inst.jobs if j.id == d.job)
    sizes = job.sizes
    grow = d.new - d.old
    if d.rule == "wide: expand":
        return (d.new == d.old * job.factor and d.new in sizes and grow <= d.free
                and (d.smallest_queued is None or d.smallest_queued > d.free))
    if d.rule == "wide: shrink":
        fav = next(j for j in inst.jobs if j.id == d.favoured)
        one_less = d.new * job.factor  # a smaller shrink would not have let the favoured job start
        return (d.new in sizes and d.new < d.old and d.free < fav.submit <= d.free - grow
                and (one_less == d.old or d.free + d.old - one_less < fav.submit))
    if d.rule == "preferred: expand, queue empty":
        return d.queued == 0 and d.old < d.new <= job.max_nodes and grow <= d.free
    if d.rule == "preferred: shrink to it":
        return d.queued > 0 and d.new == job.preferred < d.old
    if d.rule == "preferred: expand towards it":
        return d.queued > 0 and d.old < d.new <= job.preferred and grow <= d.free
    if d.rule == "request: shrink":
        return d.new == job.request < d.old
    if d.rule == "request: expand":
        return d.new == job.request > d.old
    if d.rule == "request: wait":
        return d.new == job.request > d.old and grow > d.free
    if d.rule == "request: abandoned":
        return job.request is not None and d.new == d.old
    return False


@settings(max_examples=30, deadline=None)  # eight simulations an example: 94 s for 60 in a full run
@given(WORKLOADS)
def test_every_simulated_schedule_is_feasible_and_above_the_bound(inst):
    for policy, scheduler, modes, late in [(*sim, False) for sim in SIMS] + [("dmr", "easy", "all", True),
                                                                           ("dmr", "fcfs", "wide", True)]:
        res = simulate(inst, policy, scheduler, modes=modes, asynchronous=late)
        ev = evaluate(inst, res.schedule)
        assert ev.feasible, (policy, scheduler, modes, late, ev.violations[:3])
        assert ev.mean_completion >= bound(inst, "mean_completion") * (1 - 1e-9)
        assert ev.makespan >= bound(inst, "makespan") * (1 - 1e-9)
        if policy == "rigid":
            assert not res.decisions and ev.expands == ev.shrinks == 0
            assert all(ivs_[0].nodes == job.submit and len(ivs_) == 1
                       for job, ivs_ in zip(inst.jobs, res.schedule.jobs.values()))


@settings(max_examples=60, deadline=None)
@given(WORKLOADS)
def test_every_dmr_decision_follows_one_of_the_three_rules(inst):
    for modes in ("all", "wide"):
        res = simulate(inst, "dmr", modes=modes)
        for d in res.decisions:
            assert _follows_a_rule(inst, d), d
            if modes == "wide":
                assert d.rule.startswith("wide")
        ev = evaluate(inst, res.schedule)
        resizes = [d for d in res.decisions if d.rule in ("wide: expand", "wide: shrink", "request: expand",
                                                          "request: shrink") or d.rule.startswith("preferred")]
        assert ev.expands + ev.shrinks == len(resizes)
        assert ev.stalls == sum(d.rule == "request: wait" for d in res.decisions)


def test_same_workload_same_schedule():
    inst = generate(11, 60, "feitelson")
    assert simulate(inst, "dmr").schedule == simulate(inst, "dmr").schedule


def test_paper_workload_trend_on_50_jobs():
    # a trend, not a per-instance claim: on the seed's recipe flexible beats fixed on completion and wait
    inst = generate(0, 50, "paper")
    fixed = solve("malleable", inst, "rigid-backfill").evaluation
    flexible = solve("malleable", inst, "dmr").evaluation
    assert flexible.mean_completion < fixed.mean_completion and flexible.mean_wait < fixed.mean_wait
    assert flexible.mean_execution > fixed.mean_execution and flexible.utilization < fixed.utilization


def test_methods_through_solve_and_their_info():
    inst = generate(3, 20, "paper")
    res = solve("malleable", inst, "dmr")
    assert res.status.value == "feasible" and res.evaluation.feasible
    assert res.info["checks"] == sum(res.info["rules"].values())
    assert sum(res.info["actions"].values()) == len(res.info["decisions"]) + res.info.get("decisions_omitted", 0)
    assert res.bound == bound(inst, "mean_completion") and res.gap > 0
    for method in ("rigid-fcfs", "rigid-backfill"):
        r = solve("malleable", inst, method)
        assert r.evaluation.feasible and r.evaluation.expands == 0


@pytest.mark.parametrize("method, params, name", [
    ("dmr", {"scheduler": "sjf"}, "scheduler"), ("dmr", {"depth": 0}, "depth"), ("dmr", {"depth": "9"}, "depth"),
    ("dmr", {"modes": "some"}, "modes"), ("rigid-backfill", {"depth": -1}, "depth"),
    ("rigid-backfill", {"depth": True}, "depth"), ("dmr", {"nope": 1}, "nope"),
])
def test_bad_parameters(method, params, name):
    with pytest.raises(ParameterError, match=name):
        solve("malleable", generate(0, 3, "grid"), method, **params)


def test_interval_ends_close_exactly():
    res = simulate(generate(5, 40, "feitelson"), "dmr")
    for job_ivs in res.schedule.jobs.values():
        assert all(isinstance(iv, Interval) and iv.end > iv.start for iv in job_ivs)
        assert all(a.end == b.start for a, b in zip(job_ivs, job_ivs[1:]))


@pytest.mark.parametrize("method", ["dmr", "rigid-fcfs", "rigid-backfill"])
def test_simulated_methods_stop_at_their_time_limit(method):
    """Past its time limit (counted from solve's clock, loading included) a simulated policy stops
    with status time_limit and no schedule: a partial run is not one (issue 21: dmr on 200,000
    jobs ran 114 s)."""
    res = solve("malleable", "random:0:3000", method, time_limit=1e-6, attach_bound=False)
    assert res.status.value == "time_limit" and res.solution is None
    assert res.info["events"] > 0
    whole = solve("malleable", "random:0:30", method)
    assert whole.status.value in ("feasible", "optimal") and whole.evaluation.feasible


def test_simulator_deadline_is_checked_in_its_event_loop():
    from iosched.heuristics.malleable_sim import CHECK_EVERY
    from iosched.solvers import Deadline

    res = simulate(generate(1, 3000), "dmr", deadline=Deadline(0.0))
    assert res.stopped and res.schedule is None and res.events == CHECK_EVERY
    assert not simulate(generate(1, 30), "dmr", deadline=Deadline(60.0)).stopped
