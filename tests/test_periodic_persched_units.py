"""PerSched on platforms whose bandwidth is a small fraction of one processor card.

The kernel counts volumes in card-seconds; an instance used to be placed once less than
``precision`` card-seconds were left. With B far below one card (bandwidth 2, processor
bandwidth 1e5: B = 2e-5 cards) that is a few percent of an instance's volume, and the kernel
placed instances whose I/O was cut short near the end of the period, which the evaluator
rejected (status ERROR). Now what may be left is also at most ``precision`` seconds of
transfer at the application's full rate.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_card_instances

import iosched
from iosched.evaluate.periodic import evaluate
from iosched.heuristics.periodic import build_pattern
from iosched.instances.periodic import PeriodicInstance

TINY_CARDS = {"platform": {"processors": 4, "processor_bandwidth": 100000.0, "bandwidth": 2.0},
              "applications": [{"name": "A", "processors": 2, "work": 4.0, "io_volume": 4.0},
                               {"name": "B", "processors": 1, "work": 2.0, "io_volume": 2.0}]}


def _assert_whole_volumes(inst, pattern):
    """The evaluator accepts the pattern (its volume rows: every instance moves its whole volume, within
    REL_TOL) and every application holds an instance."""
    ev = evaluate(inst, pattern)
    assert ev.feasible, [str(v) for v in ev.violations[:3]]
    assert min(pattern.counts()) >= 1


def test_regression_short_io_at_the_period_end():
    """Found by test_fuzz_persched: at T = 35.9505 the kernel placed A#4 with 3.9 of its 4 units."""
    inst = PeriodicInstance.from_dict(TINY_CARDS)
    res = iosched.solve("periodic", inst, "persched")
    assert res.status != iosched.Status.ERROR, res.info
    assert res.status in (iosched.Status.FEASIBLE, iosched.Status.OPTIMAL)
    assert res.evaluation.feasible, res.evaluation.violations[:3]
    _assert_whole_volumes(inst, res.solution)
    # the period the downward refinement used to choose: fewer instances, each whole
    pattern = build_pattern(inst, 35.95050178217822)
    _assert_whole_volumes(inst, pattern)
    assert pattern.counts()[0] < 6


@pytest.mark.parametrize("processor_bandwidth", [1.0, 1e3, 1e5, 1e9])
def test_same_instance_in_other_units(processor_bandwidth):
    """The instance above with the processors' bandwidth from 1 (B = 2 cards) to 1e9 (B = 2e-9 cards)."""
    d = {**TINY_CARDS, "platform": {**TINY_CARDS["platform"], "processor_bandwidth": processor_bandwidth}}
    inst = PeriodicInstance.from_dict(d)
    res = iosched.solve("periodic", inst, "persched")
    assert res.status in (iosched.Status.FEASIBLE, iosched.Status.OPTIMAL), res.info
    _assert_whole_volumes(inst, res.solution)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_card_instances(), st.sampled_from(["persched", "persched-mindil"]))
def test_persched_never_rejected_by_the_evaluator(inst, method):
    res = iosched.solve("periodic", inst, method, k_prime=4, eps=0.02)
    assert res.status != iosched.Status.ERROR, res.info
    if res.solution is not None:
        _assert_whole_volumes(inst, res.solution)

