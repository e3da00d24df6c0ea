"""BBSched's GA on windows of 50 jobs where it misses the exact front (issue 40, item 1)."""

import numpy as np

import iosched
from iosched.heuristics.window import initial_rows
from iosched.instances.window_presets import load
from iosched.models.window import pareto_front


def ratio(result) -> float:
    """The GA front's hypervolume as a share of the exact front's."""
    q = result.info["quality"]
    return q["hv"] / q["hv_reference"]


def test_the_papers_ga_misses_random_7_50_when_no_first_row_holds_the_2048_node_job():
    """random:7:50: the exact front's most-nodes point uses all 2,196 free nodes, 2,048 of them one job's
    (job 8). With seed 0 none of the 20 first-generation rows holds job 8. The paper's operators cannot
    bring it in: a child takes each gene from a parent, mutation (p_m = 0.05 %) flips job 8's gene about
    5 times in 500 generations, and each such child keeps the rest of a parent's selection, whose burst
    buffer leaves no room beside job 8 (measured: 5 flips, 0 children that fit). So the front stays at
    about 0.151 of the exact hypervolume, after all 500 generations (the paper's G; before issue 40 the
    GA stopped at 263 on patience 100). Seed 1's first generation holds job 8 and reaches 0.99; the same
    seed 0 with p_m = 2 % reaches 0.99 too: the mutation rate, not the selection, is the limit."""
    inst = load("random:7:50")
    big = int(np.argmax(inst.nodes()))
    top = max(pareto_front(inst), key=lambda p: p.nodes)
    assert inst.jobs[big].nodes == 2048 and top.nodes == inst.capacity.nodes == 2196
    assert inst.jobs[big].id in top.jobs
    assert not initial_rows(inst, 20, np.random.default_rng(0))[:, big].any()
    assert initial_rows(inst, 20, np.random.default_rng(1))[:, big].any()

    missed = iosched.solve("window", inst, "bbsched-ga", seed=0, compare="exact")
    assert missed.info["generations"] == 500 and "stopped" not in missed.info
    assert ratio(missed) < 0.2
    assert all(inst.jobs[big].id not in p.jobs for p in missed.solution.front)
    assert ratio(iosched.solve("window", inst, "bbsched-ga", seed=1, compare="exact")) > 0.99
    assert ratio(iosched.solve("window", inst, "bbsched-ga", seed=0, p_m=0.02, compare="exact")) > 0.99


def test_the_ga_runs_the_papers_500_generations_unless_given_patience():
    """random:8:50, seed 0: the 512-node job is in no first row; one of its 6 mutations fits, at generation
    421, long after patience 100 (the default before issue 40) had stopped the GA (at generation 190, 0.425
    of the exact hypervolume). The paper's G = 500, now the default, reaches 0.98; patience stays a parameter."""
    settled = iosched.solve("window", "random:8:50", "bbsched-ga", seed=0, patience=100, compare="exact")
    assert settled.info["generations"] < 500 and settled.info["stopped"].startswith("converged")
    full = iosched.solve("window", "random:8:50", "bbsched-ga", seed=0, compare="exact")
    assert full.info["generations"] == 500
    assert ratio(settled) < 0.5 < 0.95 < ratio(full)
