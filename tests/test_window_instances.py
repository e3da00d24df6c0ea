"""Window instances: the paper's example, JSON round trips, the generator, rounding, bad input, load."""

import copy
import json

import numpy as np
import pytest
from edits import drop_at, set_at

import iosched
from iosched.errors import InstanceError
from iosched.evaluate.window import Selection, evaluate
from iosched.instances.window import Capacity, Job, Machine, SSDClass, WindowInstance
from iosched.instances.window_presets import (
    MIXES,
    PAPER_EXAMPLE,
    PAPER_PARETO,
    THETA_BB_GB,
    THETA_NODES,
    generate,
    load,
)

# --- the paper's example --------------------------------------------------------------------------


def test_paper_example_matches_table_1a():
    assert PAPER_EXAMPLE.capacity == Capacity(100, 100)
    assert [(j.id, j.nodes, j.burst_buffer) for j in PAPER_EXAMPLE.jobs] == [
        ("J1", 80, 20), ("J2", 10, 85), ("J3", 40, 5), ("J4", 10, 0), ("J5", 20, 0)]
    assert PAPER_EXAMPLE.granularity == 1
    assert not PAPER_EXAMPLE.has_ssd
    assert PAPER_EXAMPLE.nodes().tolist() == [80, 10, 40, 10, 20]
    assert PAPER_EXAMPLE.bbs().tolist() == [20, 85, 5, 0, 0]


def test_paper_pareto_is_table_1b_solutions_2_and_3():
    assert PAPER_PARETO == [(100, 20, ("J1", "J5")), (80, 90, ("J2", "J3", "J4", "J5"))]
    for nodes, bb, ids in PAPER_PARETO:  # each listed subset really gives its point and fits
        ev = evaluate(PAPER_EXAMPLE, Selection(ids))
        assert ev.feasible
        assert (ev.nodes, ev.burst_buffer) == (nodes, bb)


# --- JSON round trips -----------------------------------------------------------------------------

ROUND_TRIP = {
    "paper": lambda: PAPER_EXAMPLE,
    "random_S1": lambda: generate(1, 15, mix="S1"),
    "random_S4_load": lambda: generate(2, 25, mix="S4", load=0.2),
    "random_ssd": lambda: generate(3, 20, ssd=True),
    "granularity": lambda: WindowInstance(Capacity(50, 60), (Job("a", 3, 21), Job("b", 4, 0, 7)),
                                          name="gran", granularity=10),
}


@pytest.mark.parametrize("key", ROUND_TRIP)
def test_json_round_trip_text(key):
    inst = ROUND_TRIP[key]()
    text = inst.to_json()
    json.loads(text)  # valid JSON
    back = WindowInstance.from_json(text)
    assert back == inst
    assert back.to_json() == text


@pytest.mark.parametrize("key", ROUND_TRIP)
def test_json_round_trip_file(key, tmp_path):
    inst = ROUND_TRIP[key]()
    path = tmp_path / "win.json"
    inst.to_json(path)
    assert WindowInstance.from_json(path) == inst  # a Path
    assert WindowInstance.from_json(str(path)) == inst  # a string naming a file
    assert load(str(path)) == inst


def test_json_ssd_fields_survive():
    inst = generate(5, 30, ssd=True)
    d = json.loads(inst.to_json())
    assert [c["ssd"] for c in d["capacity"]["ssd_classes"]] == [128, 256]
    back = WindowInstance.from_json(inst.to_json())
    assert back.has_ssd
    assert [j.ssd_per_node for j in back.jobs] == [j.ssd_per_node for j in inst.jobs]
    assert all(j.ssd_per_node > 0 for j in back.jobs)


def test_from_file_without_name_takes_the_stem(tmp_path):
    d = PAPER_EXAMPLE.to_dict()
    del d["name"]
    path = tmp_path / "my_window.json"
    path.write_text(json.dumps(d))
    assert WindowInstance.from_json(path).name == "my_window"
    assert WindowInstance.from_json(json.dumps(d)).name == "window"


# --- the generator --------------------------------------------------------------------------------


def test_generate_reproducible_and_seed_dependent():
    assert generate(7, 30) == generate(7, 30)
    assert generate(7, 30, mix="S3", load=0.3, ssd=True) == generate(7, 30, mix="S3", load=0.3, ssd=True)
    windows = [generate(s, 30).jobs for s in range(6)]
    assert len(set(windows)) == 6


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_generate_mixes(mix):
    share, smallest = {"S1": (0.5, 5000), "S2": (0.75, 5000), "S3": (0.5, 20000), "S4": (0.75, 20000),
                       "S5": (0.75, 5000), "S6": (0.75, 5000), "S7": (0.75, 5000)}[mix]
    inst = generate(11, 4000, mix=mix)
    bbs = np.array([j.burst_buffer for j in inst.jobs])
    with_bb = bbs[bbs > 0]
    assert abs(len(with_bb) / len(bbs) - share) < 0.04
    assert with_bb.min() >= smallest
    assert with_bb.min() < smallest + 2000  # the range really starts there
    assert with_bb.max() <= 285_000
    assert inst.name == f"random:11:4000:{mix}"


def test_generate_sizes_are_powers_of_two_skewed_small():
    inst = generate(4, 3000)
    sizes = np.array([j.nodes for j in inst.jobs])
    assert all(s > 0 and (s & (s - 1)) == 0 for s in sizes.tolist())
    assert sizes.max() <= THETA_NODES
    assert len(set(sizes.tolist())) >= 8
    assert (sizes == 1).sum() > (sizes == 64).sum() > (sizes == 4096).sum()
    small = generate(4, 500, nodes=100, burst_buffer=100_000, max_request=9000, mix="S1")
    assert all(j.nodes in (1, 2, 4, 8, 16, 32, 64) for j in small.jobs)


@pytest.mark.parametrize("load_", [0.05, 0.5, 1.0])
def test_generate_capacity_is_load_times_machine(load_):
    inst = generate(0, 10, load=load_)
    assert inst.capacity.nodes == int(THETA_NODES * load_)
    assert inst.capacity.burst_buffer == int(THETA_BB_GB * load_)


def test_generate_ssd():
    inst = generate(9, 2000, ssd=True)
    classes = inst.capacity.ssd_classes
    assert [c.ssd for c in classes] == [128, 256]
    assert sum(c.nodes for c in classes) == inst.capacity.nodes
    need = np.array([j.ssd_per_node for j in inst.jobs])
    assert need.min() >= 1 and need.max() <= 256
    assert abs((need <= 128).mean() - 0.8) < 0.05
    assert not generate(9, 20).has_ssd


@pytest.mark.parametrize("mix,big", [("S5", 0.2), ("S6", 0.5), ("S7", 0.8)])
def test_generate_ssd_mixes(mix, big):
    """The paper's S5-S7: S2's burst buffer, and 20 / 50 / 80 % of jobs need 129-256 GB of SSD per node."""
    inst = generate(9, 3000, mix=mix)
    assert inst.has_ssd and [c.ssd for c in inst.capacity.ssd_classes] == [128, 256]
    need = np.array([j.ssd_per_node for j in inst.jobs])
    assert need.min() >= 1 and need.max() <= 256
    assert abs((need > 128).mean() - big) < 0.04
    assert inst.name == f"random:9:3000:{mix}"


@pytest.mark.parametrize("kwargs", [{}, dict(mix="S6"), dict(mix="S7", load=0.3), dict(mix="S3", ssd=True),
                                    dict(mix="S1", nodes=100, burst_buffer=100_000, max_request=9000),
                                    dict(load=1), dict(load=0.1 + 0.2), dict(mix="S5", burst_buffer=0)])
def test_generated_names_load_back(kwargs):
    """A generated window's name, given to load (and so to every command), is that same window."""
    inst = generate(3, 12, **kwargs)
    assert load(inst.name) == inst
    assert iosched.load_instance("window", inst.name) == inst


@pytest.mark.parametrize("spec", ["random:1:5:S2:load", "random:1:5:S2:size=3", "random:1:5:S2:load=x",
                                  "random:1:5:S2:load=0.3:load=0.4", "random:1:5:S2:load=0.3:ssd"])
def test_bad_random_names(spec):
    with pytest.raises(InstanceError, match="random windows|load"):
        load(spec)


def test_machine_round_trip_and_checks():
    inst = generate(2, 10, load=0.3)
    assert inst.machine == Machine(THETA_NODES, THETA_BB_GB)
    assert WindowInstance.from_json(inst.to_json()) == inst
    d = PAPER_EXAMPLE.to_dict()
    assert "machine" not in d and WindowInstance.from_dict(d).machine is None
    with pytest.raises(InstanceError, match="machine.nodes = 50 is less than the free capacity.nodes = 100"):
        WindowInstance.from_dict({**d, "machine": {"nodes": 50, "burst_buffer": 100}})
    for bad, field in (({"nodes": 1.5, "burst_buffer": 100}, "machine.nodes"),
                       ({"nodes": 100, "burst_buffer": -1}, "machine.burst_buffer"),
                       ({"nodes": 100}, "burst_buffer"), ("big", "machine")):
        with pytest.raises(InstanceError, match=field):
            WindowInstance.from_dict({**d, "machine": bad})


@pytest.mark.parametrize("kwargs", [dict(size=0), dict(mix="S8"), dict(load=0.0), dict(load=1.5)])
def test_generate_bad_arguments(kwargs):
    with pytest.raises(InstanceError):
        generate(1, **kwargs)


def test_generate_max_request_below_smallest():
    with pytest.raises(InstanceError, match="max_request"):
        generate(1, 5, mix="S1", max_request=300)


# --- granularity ----------------------------------------------------------------------------------


def test_granularity_rounds_up():
    inst = WindowInstance(Capacity(10, 45), (Job("a", 1, 21), Job("b", 1, 20), Job("c", 1, 0), Job("d", 1, 1)),
                          granularity=10)
    assert [inst.bb(i) for i in range(4)] == [30, 20, 0, 10]
    assert inst.bbs().tolist() == [30, 20, 0, 10]
    # raw 21 + 20 = 41 would fit 45; rounded 30 + 20 = 50 does not
    ev = evaluate(inst, Selection(("a", "b")))
    assert not ev.feasible and ev.burst_buffer == 50
    assert evaluate(inst, Selection(("a", "c", "d"))).burst_buffer == 40
    assert WindowInstance(inst.capacity, inst.jobs).bb(0) == 21  # granularity 1: unchanged


# --- bad input ------------------------------------------------------------------------------------


SSD_CAP = {"nodes": 100, "burst_buffer": 100, "ssd_classes": [{"ssd": 128, "nodes": 50}, {"ssd": 256, "nodes": 50}]}

BAD = {  # modification of the paper example's dict -> fragments the message must contain
    "missing_capacity": (drop_at(["capacity"]), ["capacity"]),
    "missing_jobs": (drop_at(["jobs"]), ["jobs"]),
    "missing_capacity_bb": (drop_at(["capacity", "burst_buffer"]), ["capacity.burst_buffer"]),
    "missing_job_nodes": (drop_at(["jobs", 0, "nodes"]), ["jobs[0].nodes"]),
    "missing_job_id": (drop_at(["jobs", 3, "id"]), ["jobs[3].id"]),
    "negative_nodes": (set_at(["jobs", 1, "nodes"], -3), ["jobs[J2].nodes", "-3"]),
    "zero_nodes": (set_at(["jobs", 1, "nodes"], 0), ["jobs[J2].nodes", "0"]),
    "negative_bb": (set_at(["jobs", 2, "burst_buffer"], -1), ["jobs[J3].burst_buffer", "-1"]),
    "float_bb": (set_at(["jobs", 1, "burst_buffer"], 1.5), ["jobs[J2].burst_buffer", "1.5"]),
    "bool_nodes": (set_at(["jobs", 0, "nodes"], True), ["jobs[J1].nodes", "True"]),
    "bool_capacity": (set_at(["capacity", "burst_buffer"], False), ["capacity.burst_buffer", "False"]),
    "string_nodes": (set_at(["jobs", 0, "nodes"], "80"), ["jobs[J1].nodes", "'80'"]),
    "negative_capacity": (set_at(["capacity", "nodes"], -1), ["capacity.nodes", "-1"]),
    "duplicate_ids": (set_at(["jobs", 1, "id"], "J1"), ["J1", "unique"]),
    "empty_jobs": (set_at(["jobs"], []), ["jobs", "[]"]),
    "jobs_not_list": (set_at(["jobs"], {"J1": 1}), ["jobs"]),
    "empty_id": (set_at(["jobs", 0, "id"], ""), ["id", "''"]),
    "unknown_top": (set_at(["walltime"], 3), ["walltime"]),
    "unknown_capacity": (set_at(["capacity", "cores"], 3), ["capacity.cores"]),
    "unknown_job": (set_at(["jobs", 2, "walltime"], 3), ["jobs[2].walltime"]),
    "zero_granularity": (set_at(["granularity"], 0), ["granularity", "0"]),
    "ssd_sum": (set_at(["capacity"], {**SSD_CAP, "ssd_classes": [{"ssd": 128, "nodes": 50},
                                                                {"ssd": 256, "nodes": 40}]}),
                ["ssd_classes", "90", "100"]),
    "ssd_above_every_class": (lambda d: (set_at(["capacity"], copy.deepcopy(SSD_CAP))(d),
                                         set_at(["jobs", 4, "ssd_per_node"], 300)(d)),
                              ["jobs[J5].ssd_per_node", "300", "256"]),
    "ssd_class_zero": (set_at(["capacity"], {**SSD_CAP, "ssd_classes": [{"ssd": 0, "nodes": 100}]}),
                       ["ssd", "0"]),
    "huge_capacity": (set_at(["capacity", "nodes"], 10**400), ["capacity.nodes", "1000000"]),
    "capacity_nodes_beyond_any_machine": (set_at(["capacity", "nodes"], 10**10), ["capacity.nodes", "10000000000"]),
    "job_bb_beyond_int64": (set_at(["jobs", 0, "burst_buffer"], 2**63), ["jobs[J1].burst_buffer"]),
    "bb_sum_beyond_int64": (lambda d: [j.update(burst_buffer=2**61) for j in d["jobs"]], ["burst_buffer", "2^62"]),
    "name_list": (set_at(["name"], ["x"]), ["name", "['x']"]),
    "id_list": (set_at(["jobs", 0, "id"], ["J1"]), ["id", "['J1']"]),
    "nan_nodes": (set_at(["jobs", 0, "nodes"], float("nan")), ["jobs[J1].nodes", "nan"]),
    "ssd_class_unknown_field": (set_at(["capacity"], {**SSD_CAP, "ssd_classes": [{"ssd": 1, "nodes": 100,
                                                                                 "x": 1}]}),
                                ["capacity.ssd_classes[0].x"]),
}


@pytest.mark.parametrize("key", BAD)
def test_bad_input_names_field_and_value(key):
    mod, fragments = BAD[key]
    d = copy.deepcopy(PAPER_EXAMPLE.to_dict())
    mod(d)
    with pytest.raises(InstanceError) as e:
        WindowInstance.from_dict(d)
    for frag in fragments:
        assert frag in str(e.value), (frag, str(e.value))
    with pytest.raises(InstanceError):  # the same through JSON text
        WindowInstance.from_json(json.dumps(d))


def test_ssd_within_the_largest_class_is_accepted():
    d = copy.deepcopy(PAPER_EXAMPLE.to_dict())
    d["capacity"] = copy.deepcopy(SSD_CAP)
    d["jobs"][4]["ssd_per_node"] = 256
    inst = WindowInstance.from_dict(d)
    assert inst.has_ssd and inst.jobs[4].ssd_per_node == 256


@pytest.mark.parametrize("value", [5, None])
def test_ssd_classes_not_a_list(value):
    d = copy.deepcopy(PAPER_EXAMPLE.to_dict())
    d["capacity"]["ssd_classes"] = value
    with pytest.raises(InstanceError):
        WindowInstance.from_dict(d)


@pytest.mark.parametrize("text", ['{"capacity": ', "[1, 2]", "", "not json", '"a string"'])
def test_invalid_json_text(text):
    with pytest.raises(InstanceError):
        WindowInstance.from_json(text)


def test_invalid_json_file_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"capacity": {"nodes": 1,')
    with pytest.raises(InstanceError, match="broken.json"):
        WindowInstance.from_json(path)


def test_direct_construction_validates():
    with pytest.raises(InstanceError, match="nodes"):
        Job("a", 0)
    with pytest.raises(InstanceError, match="ssd"):
        SSDClass(0, 3)
    with pytest.raises(InstanceError, match="ssd_classes"):
        Capacity(10, 0, (SSDClass(128, 3),))


# --- load -----------------------------------------------------------------------------------------


def test_load_specs(tmp_path):
    assert load("paper:example") == PAPER_EXAMPLE
    assert load("random:3:12") == generate(3, 12)
    assert len(load("random:3:12").jobs) == 12
    assert load("random:3:12:S4") == generate(3, 12, "S4")
    assert load("random:3:12:S4") != load("random:3:12")
    assert load("random:3") == generate(3)
    for inst in (generate(3, 12, "S4"), generate(3, 12, "S1", ssd=True)):  # a generated window's name loads it back
        assert load(inst.name) == inst
    path = tmp_path / "w.json"
    generate(8, 9).to_json(path)
    assert load(str(path)) == generate(8, 9)


@pytest.mark.parametrize("spec", ["random:x", "random:", "random:3:12:S9", "random:3:12:S4:x", "random:3:12:S4:ssd:1",
                                  "random:3:0", "random:-1", "paper:other", "no/such/file.json", ""])
def test_load_bad_specs(spec):
    with pytest.raises(InstanceError):
        load(spec)
