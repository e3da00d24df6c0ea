"""The exact methods' driver (iosched.models.driver): its choice between the solver's solution and the start,
the statuses it gives each, the starts it ranks within the deadline and its build check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.core import Status
from iosched.models import driver
from iosched.solvers import Deadline, Profile, SolveOutcome

PROFILE = Profile("test", 10.0, 1e-4, 1, 0)


def run_from(start: float | None, sense: str = "min") -> driver.ExactRun:
    run = driver.ExactRun(PROFILE, score=lambda x: x, sense=sense, scope="a test scope", deadline=Deadline(10.0))
    run.begin(None if start is None else driver.Start("h", start, start))
    return run


def test_a_start_better_by_more_than_the_tie_is_returned_never_optimal():
    out = run_from(1.0).settle(2.0, Status.OPTIMAL, stopped=False)
    assert out.solution == 1.0 and out.status == Status.FEASIBLE and "worse" in out.info["incumbent"]
    out = run_from(1.0).settle(2.0, Status.TIME_LIMIT, stopped=True)
    assert out.solution == 1.0 and out.status == Status.TIME_LIMIT


def test_a_tie_within_1e_9_goes_to_the_solver():
    out = run_from(1.0).settle(1.0 + 5e-10, Status.OPTIMAL, stopped=False)
    assert out.solution == 1.0 + 5e-10 and out.status == Status.OPTIMAL and "incumbent" not in out.info
    assert run_from(1.0).settle(1.0 + 2e-9, Status.OPTIMAL, stopped=False).solution == 1.0


def test_maximising_the_larger_wins():
    assert run_from(3.0, "max").settle(2.0, Status.FEASIBLE, stopped=False).solution == 3.0
    assert run_from(1.0, "max").settle(2.0, Status.FEASIBLE, stopped=False).solution == 2.0


def test_without_a_solution_of_the_solvers():
    out = run_from(1.0).settle(None, Status.TIME_LIMIT, stopped=True)
    assert out.solution == 1.0 and out.status == Status.TIME_LIMIT and "no solution" in out.info["incumbent"]
    out = run_from(1.0).settle(None, Status.FEASIBLE, stopped=False)  # a solver error: the start, feasible
    assert out.solution == 1.0 and out.status == Status.FEASIBLE
    assert run_from(None).settle(None, Status.TIME_LIMIT, stopped=True).status == Status.TIME_LIMIT
    out = run_from(None).settle(None, Status.FEASIBLE, stopped=False)
    assert out.solution is None and out.status == Status.ERROR


@settings(deadline=None, max_examples=50)
@given(st.lists(st.floats(0.1, 1e6), min_size=1, max_size=6), st.sampled_from(["min", "max"]))
def test_pick_is_the_first_within_the_tie_of_the_best(values, sense):
    i = driver.pick(values, sense)
    best = min(values) if sense == "min" else max(values)
    assert not driver.better(best, values[i], sense)
    assert all(driver.better(best, v, sense) for v in values[:i])


def test_ranked_runs_the_first_always_and_the_others_only_within_the_deadline():
    ran = []

    def make(name, value):
        def f():
            ran.append(name)
            return value
        return f

    starts = driver.ranked([("a", make("a", 3.0)), ("b", make("b", 1.0))], lambda x: x, Deadline(0.0))
    assert ran == ["a"] and [s.heuristic for s in starts] == ["a"]
    starts = driver.ranked([("a", make("a", 3.0)), ("none", make("none", None)), ("b", make("b", 1.0)),
                            ("c", make("c", 1.0))], lambda x: x, Deadline(60.0))
    assert [s.heuristic for s in starts] == ["b", "c", "a"]  # best first, ties in order, None left out


def test_record_writes_the_shared_keys_and_the_backends_word_on_the_start():
    run = run_from(1.0)
    out = SolveOutcome(Status.OPTIMAL, 1.0, 0.9, 0.1, 0.5, True, "Optimal", start={"taken": True, "value": 1.0})
    run.record(out, bound=0.95)
    assert {k: run.info[k] for k in ("model_status", "model_objective", "model_bound", "solver_time_s", "message")} == {
        "model_status": "optimal", "model_objective": 1.0, "model_bound": 0.95, "solver_time_s": 0.5,
        "message": "Optimal"}
    assert run.info["start"] == {"heuristic": "h", "value": 1.0, "solver": "highs", "solver_taken": True,
                                 "solver_value": 1.0}
    assert run.info["scope"] == "a test scope"


def test_too_slow_names_the_estimate():
    run = run_from(None)
    assert run.too_slow(10, 1e-3, "model") is None
    why = run.too_slow(10**6, 1.0, "model of 1000000 cells")
    assert why is not None and "would take about 1e+06 s" in why and "s left of the 10 s limit" in why


def test_the_start_as_result_when_nothing_was_built():
    out = run_from(2.0).fall_back("the MILP was not built", error="too large")
    assert out.solution == 2.0 and out.status == Status.TIME_LIMIT and out.info["error"] == "too large"
    out = run_from(None).fall_back("the MILP was not built")
    assert out.solution is None and out.status == Status.TIME_LIMIT


@pytest.mark.parametrize("sense", ["min", "max"])
def test_better_is_strict_beyond_the_tie(sense):
    assert not driver.better(1.0, 1.0, sense)
    assert driver.better(0.5, 1.0, "min") and driver.better(2.0, 1.0, "max")


def test_a_runs_deadline_and_its_starts_limits_count_from_the_contexts_start():
    """With the run's context, the driver's deadline and the time_limit it gives a heuristic start both count from
    solve's clock (context.method_start), so the start, called with the same context, ends by the deadline;
    without one, from now."""
    import time

    from iosched.core import RunContext

    began = time.perf_counter() - 3.0  # solve started the clock 3 s ago (loading the instance, say)
    context = RunContext(method_start=began)
    run = driver.ExactRun(PROFILE, context=context)
    assert run.deadline.end == pytest.approx(began + PROFILE.time_limit)
    limit = driver.method_limit(run.deadline, context)
    assert limit == pytest.approx(PROFILE.time_limit)  # from the same origin: ends with the run
    assert Deadline.for_method(limit, context=context).end == pytest.approx(run.deadline.end)
    alone = driver.ExactRun(PROFILE)  # called directly: from now
    assert alone.deadline.remaining() > PROFILE.time_limit - 1.0
    assert driver.method_limit(run.deadline) == pytest.approx(run.deadline.remaining(), abs=0.1)
