"""The simulator against references: AccaSim (an established simulator) for FCFS without backfilling,
and, for FCFS and EASY with burst buffer, a deliberately naive time-stepped scheduler written here
(one second at a time, EASY as "the head job's earliest start, found by scanning the future, must
not move"): the latter is a second implementation, not an outside reference."""

import collections
import collections.abc
import datetime
import json

import numpy as np
import pytest
from shared_data import theta

from iosched.batch import apply_mix, generate, make_trace, read_swf, simulate, write_swf

THETA = theta()


def _accasim_starts(trace, tmp_path) -> list[int]:
    """Start times (s) of AccaSim's FIFO dispatcher with its FirstFit allocator on the trace."""
    pytest.importorskip("accasim")
    # AccaSim 1.1.3 imports collections.Mapping, gone since Python 3.10: give it the abc's
    collections.Mapping = collections.abc.Mapping
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import FirstInFirstOut
    from accasim.base.simulator_class import Simulator

    origin = int(trace.submit.min())
    f = trace.fields.copy()
    f[:, 1] -= origin
    f[:, 3] = np.minimum(f[:, 3], trace.requested_time)  # the wall-time limit, as our simulator applies it
    f[:, 11:13] = 1  # user and group, which AccaSim's reader wants known
    f[:, 14] = 1
    lines = [" ".join(map(str, row)) for row in f.tolist()]
    (tmp_path / "w.swf").write_text("\n".join(lines) + "\n")
    config = {"groups": {"g0": {"core": 1}}, "resources": {"g0": trace.nodes},
              "equivalence": {"processor": {"core": 1}}, "start_time": 0}
    (tmp_path / "sys.config").write_text(json.dumps(config))
    sim = Simulator(str(tmp_path / "w.swf"), str(tmp_path / "sys.config"), FirstInFirstOut(FirstFit()),
                    RESULTS_FOLDER_PATH=str(tmp_path / "out"), show_statistics=False)
    sim.start_simulation()
    starts = {}
    for line in (tmp_path / "out" / "sched-w.swf").read_text().splitlines():
        head, _, rest = line.split("__")
        when = datetime.datetime.strptime(rest.split(";")[0], "%Y-%m-%d %H:%M:%S").timestamp()  # local, as written
        starts[int(head.split(";")[0])] = int(when) + origin
    return [starts[j] for j in trace.ids.tolist()]


def test_fcfs_matches_accasim_on_a_generated_trace(tmp_path):
    trace = generate(4, jobs=400, nodes=512, load=1.1)
    ours = simulate(trace, policy="fcfs", backfill="none").start.tolist()
    theirs = _accasim_starts(trace, tmp_path)
    assert ours == theirs
    assert sum(s > t for s, t in zip(ours, trace.submit.tolist())) > 100  # a queue formed: the check has teeth


@pytest.mark.skipif(not THETA.is_file(), reason="the Theta log is not here")
def test_fcfs_matches_accasim_on_the_theta_log(tmp_path):
    trace = read_swf(THETA, nodes=4392).head(600)
    ours = simulate(trace, policy="fcfs", backfill="none").start.tolist()
    assert ours == _accasim_starts(trace, tmp_path)


def _naive(trace, backfill: bool) -> list[int]:
    """FCFS (and EASY) one second at a time, usage recomputed from the job list at every step."""
    sub, run = trace.submit.tolist(), np.minimum(trace.run, trace.requested_time).tolist()
    req, nodes, bb = trace.requested_time.tolist(), trace.job_nodes.tolist(), trace.burst_buffer.tolist()
    n, start = len(sub), [None] * len(sub)

    def used(t, extra=()):  # nodes and BB held at time t by started jobs (by actual end) and `extra`
        on = [j for j in range(n) if start[j] is not None and start[j] <= t < start[j] + run[j]]
        return sum(nodes[j] for j in on) + sum(x[0] for x in extra), sum(bb[j] for j in on) + sum(x[1] for x in extra)

    def earliest(j, t, also=None):  # the first s >= t at which j fits, jobs running at t ending by their requests
        alive = [k for k in range(n) if start[k] is not None and start[k] <= t < start[k] + run[k]]
        s = t
        while True:
            on = [k for k in alive if s < start[k] + req[k]]
            if also is not None and also[0] <= s < also[0] + req[also[1]]:
                on.append(also[1])
            if (sum(nodes[k] for k in on) + nodes[j] <= trace.nodes
                    and sum(bb[k] for k in on) + bb[j] <= trace.bb_capacity):
                return s
            s += 1

    t = 0
    while any(s is None for s in start):
        queue = [j for j in range(n) if start[j] is None and sub[j] <= t]
        k = 0
        while k < len(queue):
            un, ub = used(t)
            if un + nodes[queue[k]] > trace.nodes or ub + bb[queue[k]] > trace.bb_capacity:
                break
            start[queue[k]] = t
            k += 1
        if backfill and k < len(queue) - 1:
            head = queue[k]
            for j in queue[k + 1:]:
                un, ub = used(t)
                if un + nodes[j] <= trace.nodes and ub + bb[j] <= trace.bb_capacity:
                    if earliest(head, t, also=(t, j)) == earliest(head, t):
                        start[j] = t
        t += 1
    return start


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("backfill", [False, True])
def test_matches_a_naive_time_stepped_scheduler(seed, backfill):
    base = generate(seed, jobs=40, nodes=16, load=1.3)
    rng = np.random.default_rng(seed)
    # times shrunk so that stepping one second at a time stays quick; 75 % of jobs take 5-60 of 100 GB
    rows = [(s // 400, max(r // 400, 1), max(q // 400, max(r // 400, 1)), k,
             int(rng.integers(5, 61)) if rng.random() < 0.75 else 0)
            for s, r, q, k in zip(base.submit.tolist(), base.run.tolist(), base.requested_time.tolist(),
                                  base.job_nodes.tolist())]
    small = make_trace(rows, nodes=16, bb_capacity=100)
    ours = simulate(small, policy="fcfs", backfill="easy" if backfill else "none").start.tolist()
    assert ours == _naive(small, backfill)


def test_make_trace_cases_match_the_naive_scheduler():
    jobs = [(0, 50, 50, 8, 0), (0, 120, 120, 1, 50), (1, 10, 10, 8, 90), (2, 60, 60, 1, 0), (3, 100, 100, 1, 0)]
    trace = make_trace(jobs, nodes=10, bb_capacity=100)
    assert simulate(trace).start.tolist() == _naive(trace, True)


def test_write_then_simulate_is_the_same(tmp_path):
    trace = apply_mix(generate(9, jobs=300, nodes=256), "S3", bb_capacity=400_000)
    write_swf(trace, tmp_path / "t.swf")
    again = read_swf(tmp_path / "t.swf")
    assert np.array_equal(simulate(trace, policy="wfp").start, simulate(again, policy="wfp").start)
