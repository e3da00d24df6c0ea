"""Malleable instances: the seed's presets, run-time models, JSON round trips, generators, bad input, load."""

import copy
import json
import math

import numpy as np
import pytest
from edits import assert_round_trips, drop_at, json_paths, set_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iosched.errors import InstanceError
from iosched.instances.malleable import Job, MalleableInstance, Runtime, ladder
from iosched.instances.malleable_presets import BUILTIN, app_job, generate, load, paper_workload

# --- the seed's Table 1 and the run-time models -----------------------------------------------------


@pytest.mark.parametrize("app, sizes, preferred, work, period", [
    ("cg", (2, 4, 8, 16, 32), 8, 10_000, 15.0),
    ("jacobi", (2, 4, 8, 16, 32), 8, 10_000, 15.0),
    ("nbody", (1, 2, 4, 8, 16), 1, 25, 28.0),
    ("fs", (1, 2, 4, 8, 16), None, 25, 15.0),  # max 20 is off the factor-2 ladder from 1
])
def test_presets_follow_table_1(app, sizes, preferred, work, period):
    job = app_job(app, "x", 0.0)
    assert job.sizes == sizes and job.preferred == preferred and job.work == work and job.period == period
    assert job.submit == sizes[-1]  # launched with the maximum
    assert job.factor == 2 and job.reconfig_s == pytest.approx(0.42)


@pytest.mark.parametrize("app, ratio", [("cg", 1.5), ("jacobi", 1.56), ("nbody", 1.49)])
def test_preset_preferred_over_maximum_is_about_table_4s_ratio(app, ratio):
    job = app_job(app, "x", 0.0)
    assert job.time(job.preferred) / job.time(job.sizes[-1]) == pytest.approx(ratio, abs=0.01)
    assert list(job.times) == sorted(job.times, reverse=True)  # more nodes, never slower


def test_runtime_models_by_hand():
    assert Runtime("amdahl", seconds_1=100.0, serial=0.2).time(4) == pytest.approx(100 * (0.2 + 0.8 / 4))
    assert Runtime("linear", seconds_1=96.0, up_to=4).time(2) == 48.0
    assert Runtime("linear", seconds_1=96.0, up_to=4).time(8) == 24.0  # flat beyond up_to
    table = Runtime("table", seconds=((2, 50.0), (4, 30.0)))
    assert table.time(4) == 30.0
    job = Job("t", 0, 1, table, 2, 4)
    assert job.times == (50.0, 30.0) and job.time(2) == 50.0


def test_ladder_and_costs():
    assert ladder(2, 32, 2) == (2, 4, 8, 16, 32)
    assert ladder(1, 20, 2) == (1, 2, 4, 8, 16)
    assert ladder(3, 30, 3) == (3, 9, 27)
    assert ladder(5, 5, 2) == (5,)
    job = Job("c", 0, 1, Runtime("linear", seconds_1=8.0, up_to=8), 1, 8, reconfig_s=1.0, redistribute_s=4.0)
    assert job.cost(2, 8) == 1.0 + 4.0 / 2 and job.cost(8, 2) == job.cost(2, 8)
    assert job.cost(4, 8) == 2.0


# --- JSON round trips -----------------------------------------------------------------------------------

TABLE_JOB = Job("tab", 3.5, 7, Runtime("table", seconds=((2, 50.0), (4, 30.0), (8, 21.0))), 2, 8, factor=2,
                submit=4, preferred=2, request=8, period=5.0, reconfig_s=0.5, redistribute_s=1.0, timeout=3.0,
                app="mine")
ROUND_TRIP = {
    "paper": lambda: paper_workload(50),
    "feitelson": lambda: generate(3, 40, "feitelson"),
    "grid": lambda: generate(4, 6, "grid"),
    "table": lambda: MalleableInstance(32, (TABLE_JOB, app_job("fs", "f", 1.0)), name="tab"),
}


@pytest.mark.parametrize("key", ROUND_TRIP)
def test_json_round_trip(key, tmp_path):
    inst = ROUND_TRIP[key]()
    back = assert_round_trips(inst, MalleableInstance, load, tmp_path)
    assert [j.times for j in back.jobs] == [j.times for j in inst.jobs]


def test_from_file_without_name_takes_the_stem(tmp_path):
    d = generate(1, 3, "grid").to_dict()
    del d["name"]
    path = tmp_path / "my_jobs.json"
    path.write_text(json.dumps(d))
    assert MalleableInstance.from_json(path).name == "my_jobs"


def test_optional_job_fields_take_defaults():
    d = {"nodes": 8, "jobs": [{"id": "a", "arrival": 0, "work": 1, "min_nodes": 1, "max_nodes": 4,
                               "runtime": {"model": "linear", "seconds_1": 8, "up_to": 4}}]}
    job = MalleableInstance.from_dict(d).jobs[0]
    assert (job.factor, job.submit, job.preferred, job.request, job.period, job.timeout) == (2, 4, None, None,
                                                                                             15.0, 40.0)


# --- generators --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["paper", "feitelson", "grid"])
def test_generate_reproducible_and_seed_dependent(kind):
    assert generate(5, 30, kind) == generate(5, 30, kind)
    assert len({generate(s, 30, kind).jobs for s in range(4)}) == 4
    assert generate(5, 30, kind).jobs[0].arrival == 0


def test_paper_recipe():
    inst = generate(2, 3000, "paper")
    assert inst.nodes == 64
    apps = [j.app for j in inst.jobs]
    assert {a: apps.count(a) for a in set(apps)} == {"cg": 1000, "jacobi": 1000, "nbody": 1000}
    assert apps[:30] != ["cg", "jacobi", "nbody"] * 10  # randomly sorted
    gaps = np.diff([j.arrival for j in inst.jobs])
    assert gaps.mean() == pytest.approx(10.0, rel=0.06) and gaps.std() == pytest.approx(10.0, rel=0.1)
    assert paper_workload(50) == load("paper:50") and paper_workload(50, 3) == load("paper:50:3")
    assert paper_workload(50).name == "paper:50" and BUILTIN == ["paper:50", "paper:100", "paper:200", "paper:400"]


def test_feitelson_sizes_and_runtimes():
    inst = generate(1, 3000, "feitelson")
    sizes = np.array([j.submit for j in inst.jobs])
    assert sizes.max() <= 128 and sizes.min() >= 1
    pow2 = (sizes & (sizes - 1)) == 0
    assert pow2.mean() > 0.6  # powers of two emphasised
    assert (sizes == 1).sum() > (sizes == 2).sum() > (sizes == 16).sum() > (sizes == 128).sum()  # harmonic
    assert (sizes == 8).sum() > 3 * (sizes == 7).sum()
    runs = np.array([j.time(j.submit) for j in inst.jobs])
    assert runs.std() / runs.mean() > 1  # highly variable (hyperexponential)
    big = runs[sizes >= 32].mean()
    small = runs[sizes == 1].mean()
    assert big > small  # larger jobs run longer
    for j in inst.jobs:
        assert j.max_nodes == j.submit and j.preferred is None and j.sizes[-1] == j.submit
        assert j.min_nodes in (j.submit, j.submit / 2, j.submit / 4)


def test_grid_workloads_are_on_the_grid():
    for seed in range(20):
        inst = generate(seed, 6, "grid")
        for j in inst.jobs:
            assert float(j.arrival).is_integer() and j.period == 8 and j.reconfig_s == 4
            assert set(j.sizes) <= {1, 2, 4} and j.max_nodes == 4
            assert all(float(t).is_integer() for t in j.times) and j.runtime.seconds_1 % 4 == 0


def test_generate_overrides_name_round_trip():
    inst = generate(3, 10, "feitelson", nodes=64, arrival_mean_s=30)
    assert inst.nodes == 64 and load(inst.name) == inst


@pytest.mark.parametrize("kwargs, field", [
    (dict(jobs=0), "jobs"), (dict(jobs=True), "jobs"), (dict(jobs=2.5), "jobs"), (dict(kind="x"), "kind"),
    (dict(nodes=16), "nodes"), (dict(nodes=0), "nodes"), (dict(kind="grid", nodes=3), "nodes"),
    (dict(arrival_mean_s=-1), "arrival_mean_s"), (dict(arrival_mean_s=math.nan), "arrival_mean_s"),
    (dict(jobs=10**7), "jobs"), (dict(reconfig_s=-1), "reconfig_s"), (dict(reconfig_s="4"), "reconfig_s"),
])
def test_generate_bad_arguments(kwargs, field):
    with pytest.raises(InstanceError, match=field):
        generate(1, **kwargs)


def test_generate_bad_seed():
    with pytest.raises(InstanceError, match="seed"):
        generate(-1)


# --- bad input -----------------------------------------------------------------------------------------------


def _base() -> dict:
    return MalleableInstance(16, (TABLE_JOB, app_job("nbody", "nb", 1.0)), name="base").to_dict()


BAD = {  # modification -> fragments the message must contain
    "missing_nodes": (drop_at(["nodes"]), ["nodes"]),
    "missing_jobs": (drop_at(["jobs"]), ["jobs"]),
    "missing_arrival": (drop_at(["jobs", 0, "arrival"]), ["jobs[0].arrival"]),
    "missing_runtime": (drop_at(["jobs", 1, "runtime"]), ["jobs[1].runtime"]),
    "missing_id": (drop_at(["jobs", 1, "id"]), ["jobs[1].id"]),
    "unknown_top": (set_at(["walltime"], 3), ["walltime"]),
    "unknown_job_field": (set_at(["jobs", 0, "walltime"], 3), ["jobs[0].walltime"]),
    "negative_arrival": (set_at(["jobs", 0, "arrival"], -1), ["jobs[tab].arrival", "-1"]),
    "nan_arrival": (set_at(["jobs", 0, "arrival"], math.nan), ["jobs[tab].arrival", "nan"]),
    "inf_work": (set_at(["jobs", 0, "work"], math.inf), ["jobs[tab].work", "inf"]),
    "zero_work": (set_at(["jobs", 0, "work"], 0), ["jobs[tab].work", "0"]),
    "string_work": (set_at(["jobs", 0, "work"], "7"), ["jobs[tab].work", "'7'"]),
    "bool_min": (set_at(["jobs", 0, "min_nodes"], True), ["jobs[tab].min_nodes", "True"]),
    "float_max": (set_at(["jobs", 0, "max_nodes"], 8.0), ["jobs[tab].max_nodes", "8.0"]),
    "huge_nodes": (set_at(["nodes"], 10**400), ["nodes", "1000000"]),
    "zero_nodes": (set_at(["nodes"], 0), ["nodes", "0"]),
    "min_above_max": (set_at(["jobs", 0, "min_nodes"], 16), ["jobs[tab].min_nodes", "16", "max_nodes", "8"]),
    "max_above_cluster": (set_at(["nodes"], 4), ["jobs[tab].max_nodes", "8", "4"]),
    "preferred_off_ladder": (set_at(["jobs", 0, "preferred"], 3), ["jobs[tab].preferred", "3", "ladder"]),
    "submit_off_ladder": (set_at(["jobs", 0, "submit"], 6), ["jobs[tab].submit", "6", "ladder"]),
    "request_off_ladder": (set_at(["jobs", 1, "request"], 32), ["jobs[nb].request", "32"]),
    "factor_one": (set_at(["jobs", 0, "factor"], 1), ["jobs[tab].factor", "1"]),
    "table_missing_size": (set_at(["jobs", 0, "runtime", "seconds"], {"2": 50.0, "4": 30.0}),
                           ["jobs[tab].runtime.seconds", "8"]),
    "table_extra_size": (set_at(["jobs", 0, "runtime", "seconds"], {"2": 5.0, "4": 3.0, "8": 2.0, "6": 1.0}),
                         ["jobs[tab].runtime.seconds", "6"]),
    "table_bad_key": (set_at(["jobs", 0, "runtime", "seconds"], {"two": 5.0}), ["jobs[0].runtime.seconds", "two"]),
    "table_negative": (set_at(["jobs", 0, "runtime", "seconds", "4"], -3.0), ["jobs[tab].runtime.seconds[4]", "-3"]),
    "table_not_object": (set_at(["jobs", 0, "runtime", "seconds"], [1, 2]), ["jobs[0].runtime.seconds"]),
    "runtime_model": (set_at(["jobs", 0, "runtime"], {"model": "gustafson"}), ["jobs[0].runtime.model",
                                                                              "gustafson"]),
    "runtime_not_object": (set_at(["jobs", 0, "runtime"], 5), ["jobs[0].runtime", "5"]),
    "amdahl_serial": (set_at(["jobs", 1, "runtime", "serial"], 1.5), ["jobs[nb].runtime.serial", "1.5"]),
    "amdahl_extra_field": (set_at(["jobs", 1, "runtime", "up_to"], 4), ["jobs[1].runtime.up_to"]),
    "zero_period": (set_at(["jobs", 0, "period"], 0), ["jobs[tab].period", "0"]),
    "tiny_period": (set_at(["jobs", 0, "period"], 1e-6), ["jobs[tab].period", "checks"]),
    "negative_cost": (set_at(["jobs", 0, "reconfig_s"], -0.1), ["jobs[tab].reconfig_s", "-0.1"]),
    "negative_timeout": (set_at(["jobs", 0, "timeout"], -1), ["jobs[tab].timeout", "-1"]),
    "empty_app": (set_at(["jobs", 0, "app"], ""), ["jobs[tab].app", "''"]),
    "duplicate_ids": (set_at(["jobs", 1, "id"], "tab"), ["tab", "unique"]),
    "empty_jobs": (set_at(["jobs"], []), ["jobs", "[]"]),
    "jobs_not_list": (set_at(["jobs"], {"a": 1}), ["jobs"]),
    "job_not_object": (set_at(["jobs", 0], [1, 2]), ["jobs[0]"]),
    "empty_id": (set_at(["jobs", 0, "id"], ""), ["id", "''"]),
    "name_not_text": (set_at(["name"], 5), ["name", "5"]),
}


@pytest.mark.parametrize("key", BAD)
def test_bad_input_names_field_and_value(key):
    mod, fragments = BAD[key]
    d = _base()
    mod(d)
    with pytest.raises(InstanceError) as e:
        MalleableInstance.from_dict(d)
    for frag in fragments:
        assert frag in str(e.value), (frag, str(e.value))


def test_direct_construction_validates():
    with pytest.raises(InstanceError, match="runtime"):
        Job("a", 0, 1, {"model": "linear"}, 1, 2)
    with pytest.raises(InstanceError, match="jobs"):
        MalleableInstance(4, [TABLE_JOB])
    with pytest.raises(InstanceError, match="up_to"):
        Runtime("linear", seconds_1=1.0, up_to=0).check("r")


@pytest.mark.parametrize("text", ['{"nodes": ', "[1, 2]", "", "not json", '"a string"', "null"])
def test_invalid_json_text(text):
    with pytest.raises(InstanceError):
        MalleableInstance.from_json(text)


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                 st.text(max_size=5), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3),
                                                                                             st.integers(), max_size=2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_json_raises_only_instance_error(data):
    d = _base()
    paths = list(json_paths(d))
    path = data.draw(st.sampled_from(paths))
    target = d
    for k in path[:-1]:
        target = target[k]
    if data.draw(st.booleans()):
        target[path[-1]] = data.draw(JUNK)
    else:
        del target[path[-1]]
    text = json.dumps(copy.deepcopy(d))
    try:
        inst = MalleableInstance.from_json(text)
    except InstanceError:
        return
    assert isinstance(inst, MalleableInstance)  # a harmless mutation: still a valid instance


# --- load ------------------------------------------------------------------------------------------------------


def test_load_specs():
    assert load("random:3") == generate(3)
    assert load("random:3:12") == generate(3, 12)
    assert load("random:3:12:grid") == generate(3, 12, "grid")
    assert load("random:3:12:grid:16:2.5:0") == generate(3, 12, "grid", nodes=16, arrival_mean_s=2.5, reconfig_s=0)
    assert generate(3, 12, "grid", reconfig_s=0).jobs[0].reconfig_s == 0
    assert load(generate(3, 12, "grid").name) == generate(3, 12, "grid")


@pytest.mark.parametrize("spec", ["random:x", "random:", "random:3:12:zzz", "random:3:0", "random:3:12:grid:x:1:0",
                                  "random:3:12:grid:8:y:0", "random:3:12:grid:8", "random:3:12:grid:8:1",
                                  "random:3:12:grid:8:1:z", "random:3:12:grid:8:1:-1", "paper:", "paper:x", "paper:0",
                                  "paper:5:x", "no/such/file.json", ""])
def test_load_bad_specs(spec):
    with pytest.raises(InstanceError):
        load(spec)


def test_run_times_too_short_to_check_are_refused_at_load():
    """A run time under 1 ms at any size, or under 1e-6 of the last arrival, is refused naming the
    job (issue 21: a 1e-300 s run made every method return intervals its evaluator rejects)."""
    tiny = Runtime("amdahl", seconds_1=1e-300, serial=0.5)
    with pytest.raises(InstanceError, match=r"jobs\[a\]\.runtime .* at least 0.001 s"):
        Job("a", 0.0, 1.0, tiny, 1, 4)
    short = Runtime("amdahl", seconds_1=2.0, serial=1.0)
    late = [Job("a", 0.0, 1.0, short, 1, 4), Job("b", 1e7, 1.0, short, 1, 4)]
    with pytest.raises(InstanceError, match=r"jobs\[a\] runs 2 s .* last arrival"):
        MalleableInstance(8, tuple(late))
    MalleableInstance(8, (late[0], Job("b", 1e6, 1.0, short, 1, 4)))  # 2 s >= 1e-6 x 1e6 s
