"""Filedomain instances: JSON round trips, the data of requests, built-in names, the generator, bad input."""

import copy
import json

import numpy as np
import pytest
from edits import assert_round_trips, drop_at, json_paths, set_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iosched.errors import InstanceError
from iosched.instances.filedomain import MAX_OFFSET, FileDomainInstance, MiB
from iosched.instances.filedomain_presets import generate, load, paper_figure2, platform, sweep

BUILT = ["paper:fig2", "paper:fig2d", "example:gpfs", "example:requests", "sweep:4:6", "sweep:8:3:2",
         "random:0", "random:5:3", "random:9:4:7", "random:2:3:4:10:token", "random:6:5:2:64:extent:requests"]


@pytest.mark.parametrize("name", BUILT)
def test_json_round_trip(name, tmp_path):
    assert_round_trips(load(name), FileDomainInstance, load, tmp_path)


def test_figure2_layout():
    inst = paper_figure2()
    assert (inst.stripe_count, inst.aggregators, inst.stripes, inst.region_offset) == (3, 6, 12, 0)
    assert paper_figure2(5).aggregators == 5 and load("paper:fig2d").name == "paper:fig2d"


def test_requests_union_and_region():
    inst = platform(2, 2, 100, requests=[[(50, 30), (10, 20)], [(25, 10), (200, 0), (120, 5)], []])
    assert (inst.region_offset, inst.region_length) == (10, 115)
    assert inst.data.tolist() == [[10, 35], [50, 80], [120, 125]]
    assert inst.data_bytes == 25 + 30 + 5 and not inst.full
    assert platform(2, 2, 100, (7, 50)).data.tolist() == [[7, 57]]


def test_server_bytes_closed_form_matches_counting():
    inst = platform(3, 2, 10, requests=[[(5, 27), (40, 3)], [(61, 44)]], first_server=2)
    per_byte = np.zeros(3, dtype=int)
    for s, e in inst.data.tolist():
        for b in range(s, e):
            per_byte[(2 + b // 10) % 3] += 1
    assert inst.server_bytes().tolist() == per_byte.tolist()


def test_token_block_default_and_aggregator_nodes():
    inst = FileDomainInstance.from_dict({"region": {"offset": 0, "length": 10}, "striping": {
        "stripe_size": 4, "stripe_count": 2}, "aggregators": [0, 0, 1], "bandwidth": {
        "aggregator": [1, 2, 3], "server": 1, "node": [1, 1.5]}, "locking": "token"})
    assert inst.block_size == 4 and inst.nodes == 2 and inst.bandwidth.aggregator == (1.0, 2.0, 3.0)
    assert inst.to_dict()["aggregators"] == [0, 0, 1] and inst.to_dict()["bandwidth"]["node"] == [1.0, 1.5]


def test_generator_reproducible_and_sized():
    assert generate(3) == generate(3) and generate(3) != generate(4)
    inst = generate(5, servers=6, aggregators=9, max_stripes=20, locking="token", requests=True)
    assert (inst.stripe_count, inst.aggregators, inst.locking) == (6, 9, "token")
    assert inst.requests is not None and inst.stripes <= 21
    assert inst.name == "random:5:6:9:20:token:requests" and load(inst.name) == inst  # the name loads back
    drawn = generate(8)
    assert load(drawn.name) == drawn and drawn.name.count(":") == 3
    assert generate(8, servers=drawn.stripe_count) == drawn  # a given size keeps the other draws


def test_sweep_platform():
    inst = sweep(8, 5)
    assert inst.stripes == 128 and inst.stripe_size == MiB and inst.aggregators == 5
    assert load("sweep:8:5") == inst and load("sweep:8:5:2").stripes == 16


# --- bad input: every error names the field and the value ----------------------------------------

BASE = {"name": "t", "region": {"offset": 4096, "length": 10 * MiB},
        "striping": {"stripe_size": MiB, "stripe_count": 4, "first_server": 1},
        "aggregators": 6, "bandwidth": {"aggregator": 1.0, "server": [1, 1, 2, 2], "node": 5},
        "locking": "extent", "lock_costs": {"acquire_s": 1e-4, "revoke_s": 1e-3}}


DROP = object()
BAD = {
    "zero_stripe": (["striping", "stripe_size"], 0, ["striping.stripe_size", "0"]),
    "float_stripe": (["striping", "stripe_size"], 1.5, ["striping.stripe_size", "1.5"]),
    "bool_stripe": (["striping", "stripe_size"], True, ["striping.stripe_size", "True"]),
    "zero_servers": (["striping", "stripe_count"], 0, ["striping.stripe_count", "0"]),
    "first_server": (["striping", "first_server"], 4, ["striping.first_server", "4"]),
    "negative_length": (["region", "length"], -5, ["region.length", "-5"]),
    "zero_length": (["region", "length"], 0, ["region.length", "0"]),
    "negative_offset": (["region", "offset"], -1, ["region.offset", "-1"]),
    "past_file": (["region", "length"], MAX_OFFSET, ["region.length"]),
    "huge": (["region", "offset"], 10**400, ["region.offset"]),
    "string_offset": (["region", "offset"], "0", ["region.offset", "'0'"]),
    "p_zero": (["aggregators"], 0, ["aggregators", "0"]),
    "p_empty": (["aggregators"], [], ["aggregators", "[]"]),
    "p_node": (["aggregators"], [0, -1], ["aggregators[1]", "-1"]),
    "p_dict": (["aggregators"], {"n": 3}, ["aggregators", "{'n': 3}"]),
    "bw_nan": (["bandwidth", "aggregator"], float("nan"), ["bandwidth.aggregator", "nan"]),
    "bw_zero": (["bandwidth", "server"], [1, 0, 1, 1], ["bandwidth.server[1]", "0"]),
    "bw_len": (["bandwidth", "server"], [1, 1], ["bandwidth.server", "4", "2"]),
    "bw_inf": (["bandwidth", "node"], float("inf"), ["bandwidth.node", "inf"]),
    "bw_missing": (["bandwidth", "aggregator"], DROP, ["bandwidth.aggregator"]),
    "bw_list_of_str": (["bandwidth", "aggregator"], "fast", ["bandwidth.aggregator", "'fast'"]),
    "locking": (["locking"], "posix", ["locking", "posix"]),
    "block_extent": (["block_size"], 4096, ["block_size", "4096"]),
    "cost_negative": (["lock_costs", "acquire_s"], -1e-4, ["lock_costs.acquire_s", "-0.0001"]),
    "cost_nan": (["lock_costs", "revoke_s"], float("nan"), ["lock_costs.revoke_s", "nan"]),
    "cost_missing": (["lock_costs", "revoke_s"], DROP, ["lock_costs.revoke_s"]),
    "unknown_top": (["colour"], "red", ["colour"]),
    "unknown_region": (["region", "end"], 5, ["region.end"]),
    "missing_striping": (["striping"], DROP, ["striping"]),
    "region_list": (["region"], [0, 5], ["region", "[0, 5]"]),
    "requests_too": (["requests"], [[[0, 5]]], ["exactly one of region and requests"]),
}


@pytest.mark.parametrize("key", BAD)
def test_bad_input_names_field_and_value(key):
    path, value, fragments = BAD[key]
    d = copy.deepcopy(BASE)
    (drop_at(path) if value is DROP else set_at(path, value))(d)
    with pytest.raises(InstanceError) as err:
        FileDomainInstance.from_dict(d)
    for f in fragments:
        assert f in str(err.value), (key, str(err.value))


@pytest.mark.parametrize("requests, fragments", [
    ([[[5, -1]]], ["requests[0][0].length", "-1"]),
    ([[[-5, 10]]], ["requests[0][0].offset", "-5"]),
    ([[[MAX_OFFSET - 2, 10]]], ["requests[0][0].length", "10"]),  # outside the file
    ([[[0, 0]]], ["at least one piece"]),
    ([[0, 5]], ["requests[0]", "0"]),
    ([[[0, 5, 7]]], ["requests[0][0]", "[0, 5, 7]"]),
    ([], ["requests", "[]"]),
    ("all", ["requests", "'all'"]),
    ([[[0.5, 5]]], ["requests[0][0].offset", "0.5"]),
])
def test_bad_requests(requests, fragments):
    d = copy.deepcopy(BASE)
    del d["region"]
    d["requests"] = requests
    with pytest.raises(InstanceError) as err:
        FileDomainInstance.from_dict(d)
    for f in fragments:
        assert f in str(err.value)


@pytest.mark.parametrize("kwargs, field", [(dict(servers=0), "servers"), (dict(aggregators=0), "aggregators"),
                                           (dict(max_stripes=0), "max_stripes"), (dict(locking="nfs"), "locking"),
                                           (dict(requests=1), "requests"), (dict(servers=1.5), "servers")])
def test_generator_bad_sizes(kwargs, field):
    with pytest.raises(InstanceError, match=field):
        generate(1, **kwargs)


@pytest.mark.parametrize("spec", ["sweep:4", "sweep:a:b", "random:", "random:1:2:3:4:gpfs", "paper:fig3", "nope.json",
                                  "sweep:0:4", "random:1:2:3:4:token:all"])
def test_bad_names(spec):
    with pytest.raises(InstanceError):
        load(spec)


def _mutations():
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                     st.text(max_size=4), st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(
                         st.text(max_size=3), st.integers(), max_size=2))
    return st.lists(st.tuples(st.integers(0, 40), leaf), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations(), st.sampled_from(["paper:fig2d", "example:gpfs", "example:requests"]))
def test_mutated_json_raises_only_instance_error(mutations, name):
    d = json.loads(load(name).to_json())
    paths = json_paths(d)
    for index, value in mutations:
        *head, last = paths[index % len(paths)]
        target = d
        for k in head:
            target = target[k]
        target[last] = value
        paths = json_paths(d) or [("name",)]
    try:
        FileDomainInstance.from_dict(d)
    except InstanceError:
        pass


def test_instances_sit_below_the_evaluator():
    """The striping arithmetic (bytes per server) lives with the instances; the evaluator imports it
    from there and the instances import nothing from the evaluator (the arrows run one way)."""
    import ast
    import importlib
    import inspect

    ev = importlib.import_module("iosched.evaluate.filedomain")
    ins = importlib.import_module("iosched.instances.filedomain")

    tree = ast.parse(inspect.getsource(ins))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.startswith("iosched.evaluate") for m in imported), imported
    assert ev.bytes_per_server is ins.bytes_per_server
    inst = load("example:requests")
    assert inst.server_bytes().sum() == inst.data_bytes
