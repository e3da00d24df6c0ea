"""The study helpers and the simulated table of 'iosched reproduce window' (on a short slice)."""

import math

import pytest

from iosched.batch import study
from iosched.errors import InstanceError
from iosched.reproduce.paper_report import classify
from iosched.reproduce.window import (
    BREAKDOWNS,
    FIGURE14_METHODS,
    SIM_METHODS,
    figure14_comparisons,
    figures_9_11_comparisons,
    reproduce_figure14,
    reproduce_simulation,
)


def _theta_or_skip():
    try:
        return study.theta_log()
    except InstanceError:
        pytest.skip("the Theta log is not here")


def test_simulated_table_on_a_short_slice():
    _theta_or_skip()
    rows, text = reproduce_simulation(jobs=150)
    assert [r["method"] for r in rows] == list(SIM_METHODS) * 2
    assert {r["workload"] for r in rows} == {"theta-S2", "theta-S4"}
    for r in rows:
        assert 0 < r["node_usage"] <= 1 and 0 <= r["bb_usage"] <= 1
        assert math.isfinite(r["avg_wait_s"]) and r["avg_bounded_slowdown"] >= 1
        assert (r["plugin_calls"] > 0) == (r["method"] != "base")
    assert "| theta-S4 | exact |" in text and "best BB usage" in text and "8,847 s" in text
    for r in rows:  # Figures 9-11: one bin per edge pair, every measured job in one bin of each breakdown
        counts = {by: [b["jobs"] for b in r["breakdowns"][by]] for by in BREAKDOWNS}
        assert all(len(counts[by]) == len(edges) - 1 for by, edges in BREAKDOWNS.items())
        assert len({sum(c) for c in counts.values()}) == 1 and 0 < sum(counts["nodes"]) <= 150
    compared = figures_9_11_comparisons(rows, 150)
    assert len(compared) == 9 and all(classify(c) != "unexplained" for c in compared)


def test_figure_14_simulates_the_ssd_mixes_on_a_short_slice():
    _theta_or_skip()
    rows = reproduce_figure14(jobs=150)
    assert [r["method"] for r in rows] == [m[0] for m in FIGURE14_METHODS] * 3
    assert [r["workload"] for r in rows[::len(FIGURE14_METHODS)]] == ["theta-S5", "theta-S6", "theta-S7"]
    for r in rows:  # requested + wasted = the SSD of the nodes in use: 128-256 GB a node, 192 on average
        assert 0 < r["ssd_usage"] <= 1 and 0 < r["wasted_ssd"] < 1 and 0 < r["bb_usage"] <= 1
        assert 128 / 192 <= (r["ssd_usage"] + r["wasted_ssd"]) / r["node_usage"] <= 256 / 192
    compared = figure14_comparisons(rows, 150)
    assert len(compared) == 6 and all(classify(c) != "unexplained" for c in compared)


def test_findings_name_the_best_and_worst():
    rows = [{"workload": "w", "method": m, "node_usage": n, "bb_usage": b, "avg_wait_s": w,
             "avg_bounded_slowdown": s, "forced": 0, "plugin_time_s": 0.0}
            for m, n, b, w, s in [("base", 0.5, 0.5, 100, 2), ("a", 0.6, 0.7, 50, 1.5), ("b", 0.4, 0.3, 120, 3)]]
    (line,) = study.findings(rows)
    assert "best BB usage a (70.0%)" in line and "worst BB usage (window methods) b (30.0%)" in line
    assert "weakest overall (Kiviat sum, window methods) b" in line and "lowest average wait a (-50.0%" in line
    assert "| w | a | 60.0% | 70.0% | 0.01 | -50.0% | 1.50 |" in study.table(rows)


def test_workload_kinds():
    trace, policy = study.workload("generated", "S3", 100)
    assert policy == "fcfs" and len(trace) == 100 and trace.bb_capacity == 1_260_000
    with pytest.raises(Exception, match="kind"):
        study.workload("cori", "S1", 10)
