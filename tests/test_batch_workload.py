"""Extended SWF: round trips, bad lines rejected by line and field, capacities, the generator and the mixes."""


import numpy as np
import pytest
from shared_data import theta

from iosched.batch import apply_mix, generate, make_trace, read_swf, write_swf
from iosched.batch.workload import MIXES
from iosched.errors import InstanceError, ParameterError

THETA = theta()
LINE = "1 0 5 100 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0"


def _write(tmp_path, text, name="t.swf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_round_trip_generated_with_mix(tmp_path):
    trace = apply_mix(generate(3, jobs=300), "S4", seed=1)
    write_swf(trace, tmp_path / "a.swf")
    back = read_swf(tmp_path / "a.swf")
    assert np.array_equal(back.fields, trace.fields)
    assert np.array_equal(back.burst_buffer, trace.burst_buffer)
    assert (back.nodes, back.bb_capacity) == (trace.nodes, trace.bb_capacity)
    write_swf(back, tmp_path / "b.swf")
    assert (tmp_path / "a.swf").read_text() == (tmp_path / "b.swf").read_text()


@pytest.mark.skipif(not THETA.is_file(), reason="the Theta log is not here")
def test_theta_reads_and_round_trips(tmp_path):
    trace = read_swf(THETA, nodes=4392)
    assert len(trace) == 23_911 and not trace.dropped
    assert trace.job_nodes.min() == 128 and trace.job_nodes.max() == 4048
    head = trace.head(500)
    write_swf(head, tmp_path / "h.swf")
    back = read_swf(tmp_path / "h.swf")
    assert np.array_equal(back.fields, head.fields) and back.nodes == 4392
    # the fork's header (4,360 nodes) drops the wider jobs, and says which
    narrow = read_swf(THETA, nodes=4360)
    assert len(narrow) == 23_911 - len(narrow.dropped) and not narrow.dropped  # widest job is 4,048 nodes


def test_header_capacities_and_dropped_jobs(tmp_path):
    text = ("; MaxNodes: 8\n; BurstBuffer: 50\n" + LINE + " 10\n"
            "2 1 5 100 9 -1 -1 9 120 -1 1 -1 -1 -1 -1 -1 -1 0 0\n"
            "3 2 5 100 2 -1 -1 2 120 -1 1 -1 -1 -1 -1 -1 -1 0 60\n")
    trace = read_swf(_write(tmp_path, text))
    assert (trace.nodes, trace.bb_capacity) == (8, 50)
    assert trace.ids.tolist() == [1]
    assert dict(trace.dropped) == {2: "9 nodes > 8", 3: "burst buffer 60 GB > 50"}


@pytest.mark.parametrize("line, message", [
    ("1 0 5 100 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1", "line 2: 17 fields"),
    ("1 0 5 1x0 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0", "line 2 field 4 (run): expected an integer, got '1x0'"),
    ("1 0 5 100.5 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0", "line 2 field 4 (run)"),
    ("1 -3 5 100 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0", "line 2 field 2 (submit): -3 is negative"),
    ("1 0 5 0 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0", "line 2 field 4 (run): 0"),
    ("1 0 5 10 -1 -1 -1 -1 120 -1 1 -1 -1 -1 -1 -1 -1 0", "line 2 field 8 (requested)"),
    ("1 0 5 10 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0 -7", "line 2 field 19 (burst_buffer): -7 is negative"),
    ("1 0 5 10 4 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 0 1 2 3", "line 2: 21 fields"),
])
def test_bad_lines_name_line_and_field(tmp_path, line, message):
    with pytest.raises(InstanceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_swf(_write(tmp_path, "; MaxNodes: 8\n" + line + "\n"))


def test_bad_traces(tmp_path):
    with pytest.raises(InstanceError, match="job number 1 appears twice"):
        read_swf(_write(tmp_path, LINE + "\n" + LINE + "\n"), nodes=8)
    with pytest.raises(InstanceError, match="line 3: 19 fields, earlier lines have 18"):
        read_swf(_write(tmp_path, "; MaxNodes: 8\n" + LINE + "\n" + LINE.replace("1 0", "2 0", 1) + " 4\n"))
    with pytest.raises(InstanceError, match="MaxNodes"):
        read_swf(_write(tmp_path, LINE + "\n"))
    with pytest.raises(InstanceError, match="line 1 \\(MaxNodes\\): expected an integer"):
        read_swf(_write(tmp_path, "; MaxNodes: many\n" + LINE + "\n"))
    with pytest.raises(InstanceError, match="no jobs"):
        read_swf(_write(tmp_path, "; MaxNodes: 8\n"))
    with pytest.raises(InstanceError, match="no such trace file"):
        read_swf(tmp_path / "missing.swf")
    with pytest.raises(InstanceError, match="every job asks for more"):
        read_swf(_write(tmp_path, LINE + "\n"), nodes=2)


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_mixes_share_and_range(mix):
    trace = apply_mix(generate(0, jobs=4000), mix, seed=2)
    share, smallest = MIXES[mix]
    has = trace.burst_buffer > 0
    assert abs(has.mean() - share) < 0.03
    assert trace.burst_buffer[has].min() >= smallest and trace.burst_buffer.max() <= 285_000
    assert np.array_equal(apply_mix(generate(0, jobs=4000), mix, seed=2).burst_buffer, trace.burst_buffer)


@pytest.mark.parametrize("mix, big", [("S5", 0.2), ("S6", 0.5), ("S7", 0.8)])
def test_ssd_mixes(mix, big, tmp_path):
    trace = apply_mix(generate(0, jobs=4000), mix)
    assert abs((trace.ssd_per_node > 128).mean() - big) < 0.03
    assert trace.ssd_per_node.min() >= 1 and trace.ssd_per_node.max() <= 256
    assert abs((trace.burst_buffer > 0).mean() - 0.75) < 0.03  # on top of S2 (Section 6)
    assert trace.burst_buffer[trace.burst_buffer > 0].min() >= 5_000
    has, big_ssd = trace.burst_buffer > 0, trace.ssd_per_node > 128  # two independent draws
    assert abs(big_ssd[has].mean() - big_ssd[~has].mean()) < 0.06
    write_swf(trace, tmp_path / "s.swf")
    assert np.array_equal(read_swf(tmp_path / "s.swf").ssd_per_node, trace.ssd_per_node)


def test_generator_model():
    trace = generate(5, jobs=3000, nodes=1024, load=0.8)
    run, req, size = trace.run, trace.requested_time, trace.job_nodes
    assert (req >= run).all() and (req % 60 == 0).all()
    assert run.min() >= 60 and run.max() <= 86_400
    assert set(np.unique(size)) <= {2**k for k in range(11)}
    offered = float(np.sum(size * run)) / (1024 * (trace.submit.max() - trace.submit.min()))
    assert 0.65 < offered < 0.95  # the load asked for, up to sampling noise
    with pytest.raises(InstanceError, match="load"):
        generate(0, load=0)
    with pytest.raises(InstanceError, match="mix"):
        apply_mix(trace, "S9")


def test_make_trace_checks():
    with pytest.raises(InstanceError, match="field 4 \\(run\\)"):
        make_trace([(0, 0, 10, 1, 0)], nodes=4)
    with pytest.raises(ParameterError, match="policy"):
        from iosched.batch import simulate

        simulate(make_trace([(0, 5, 10, 1, 0)], nodes=4), policy="sjf")
