"""Periodic instances: the paper's sets, JSON round trips, the generator, bad input, load."""

import copy
import json
import math
import re

import pytest
from edits import drop_at, set_at

from iosched.errors import InstanceError
from iosched.instances.periodic import (
    Application,
    PeriodicInstance,
    Platform,
    generate,
    load,
    paper_set,
)

# --- the paper's sets -----------------------------------------------------------------------------

TYPES = ("T1", "T2", "AP", "PP")
REF_APPS = {  # (w s, vol GB, β)
    "T1": (4480.0, 128.2, 512),
    "T2": (76.8, 235.8, 64),
    "AP": (15360.0, 423.4, 128),
    "PP": (483456.0, 34304.0, 512),
}
REF_SETS = {  # set: ((T1, T2, AP, PP), t_min)
    1: ((0, 10, 0, 0), 900),
    2: ((0, 8, 1, 0), 16000),
    3: ((0, 6, 2, 0), 16000),
    4: ((0, 4, 3, 0), 16000),
    5: ((0, 2, 0, 1), 495000),
    6: ((0, 2, 4, 0), 16000),
    7: ((1, 2, 0, 0), 4544),
    8: ((0, 0, 1, 1), 495000),
    9: ((0, 0, 5, 0), 16000),
    10: ((1, 0, 1, 0), 16000),
}


@pytest.mark.parametrize("k", range(1, 11))
def test_paper_set_matches_reference(k):
    inst = paper_set(k)
    counts, t_min = REF_SETS[k]
    assert inst.platform == Platform(640, 0.01, 3.0)
    assert inst.t_min == t_min
    types = [a.name.split("-")[0] for a in inst.applications]
    assert tuple(types.count(t) for t in TYPES) == counts
    assert len(inst.applications) == sum(counts)
    for a in inst.applications:
        w, vol, beta = REF_APPS[a.name.split("-")[0]]
        assert (a.work, a.io_volume, a.processors) == (w, vol, beta)
    assert sum(a.processors for a in inst.applications) == 640
    assert len({a.name for a in inst.applications}) == len(inst.applications)


def test_paper_set_derived_quantities():
    # T2 on Jupiter: min(64 · 0.01, 3) = 0.64 GB/s; time_io = 235.8 / 0.64; PP capped by B = 3
    inst = paper_set(5)
    t2 = next(k for k, a in enumerate(inst.applications) if a.name.startswith("T2"))
    pp = next(k for k, a in enumerate(inst.applications) if a.name.startswith("PP"))
    assert inst.max_rate(t2) == pytest.approx(0.64)
    assert inst.time_io(t2) == pytest.approx(235.8 / 0.64)
    assert inst.rho(t2) == pytest.approx(76.8 / (76.8 + 235.8 / 0.64))
    assert inst.max_rate(pp) == 3.0
    assert inst.default_t_min() == pytest.approx(483456 + 34304 / 3)


@pytest.mark.parametrize("k", [0, 11, -1])
def test_paper_set_out_of_range(k):
    with pytest.raises(InstanceError, match=rf"1\.\.10, got {k}"):
        paper_set(k)


# --- JSON round trip ------------------------------------------------------------------------------

ROUND_TRIP = [paper_set(k) for k in range(1, 11)] + [generate(s, n) for s, n in
                                                     [(0, 1), (1, 4), (7, 3), (42, 10), (3, 64)]]
RT_IDS = [i.name for i in ROUND_TRIP]


@pytest.mark.parametrize("inst", ROUND_TRIP, ids=RT_IDS)
def test_json_round_trip_file(inst, tmp_path):
    path = tmp_path / "inst.json"
    text = inst.to_json(path)
    assert json.loads(path.read_text()) == json.loads(text)
    assert PeriodicInstance.from_json(path) == inst
    assert PeriodicInstance.from_json(str(path)) == inst
    assert PeriodicInstance.from_dict(json.loads(text)) == inst


@pytest.mark.parametrize("inst", [i for i in ROUND_TRIP if len(i.to_json()) >= 4096],
                         ids=[i.name for i in ROUND_TRIP if len(i.to_json()) >= 4096])
def test_json_round_trip_long_string(inst):
    assert PeriodicInstance.from_json(inst.to_json()) == inst


def test_json_round_trip_short_string():
    inst = PeriodicInstance(Platform(4, 1.0, 2.0), (Application("a", 1, 1.0, 1.0),), name="s")
    text = json.dumps(inst.to_dict())  # compact: < 256 characters
    assert len(text) < 256
    assert PeriodicInstance.from_json(text) == inst


@pytest.mark.parametrize("inst", [i for i in ROUND_TRIP if len(i.to_json()) < 4096][:3],
                         ids=[i.name for i in ROUND_TRIP if len(i.to_json()) < 4096][:3])
def test_json_round_trip_string(inst):
    assert PeriodicInstance.from_json(inst.to_json()) == inst


def test_from_json_file_name_is_default_name(tmp_path):
    d = paper_set(10).to_dict()
    del d["name"], d["t_min"]
    path = tmp_path / "my-set.json"
    path.write_text(json.dumps(d))
    inst = PeriodicInstance.from_json(path)
    assert inst.name == "my-set"
    assert inst.t_min is None
    assert inst.applications == paper_set(10).applications
    assert "t_min" not in inst.to_dict()


def test_round_trip_distinguishes_instances():
    a, b = paper_set(3).to_dict(), paper_set(3).to_dict()
    b["applications"][0]["io_volume"] = 235.9
    assert PeriodicInstance.from_dict(a) != PeriodicInstance.from_dict(b)


# --- generate ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed, n", [(0, 1), (1, 4), (2, 7), (5, 20), (9, 640)])
def test_generate_reproducible_and_valid(seed, n):
    inst = generate(seed, n)
    assert generate(seed, n) == inst
    assert generate(seed + 1, n) != inst
    assert len(inst.applications) == n
    assert sum(a.processors for a in inst.applications) <= inst.platform.processors
    for a in inst.applications:
        assert a.processors & (a.processors - 1) == 0  # a power of two
        assert 10 <= a.work <= 1e4
        assert a.io_volume > 0 and math.isfinite(a.io_volume)
    # re-validates through the constructor and JSON
    assert PeriodicInstance.from_dict(json.loads(inst.to_json())) == inst


def test_generate_io_share():
    for seed in range(20):
        inst = generate(seed, 5)
        for k in range(5):
            share = inst.time_io(k) / (inst.applications[k].work + inst.time_io(k))
            assert 0.02 - 1e-3 <= share <= 0.5 + 1e-3


def test_generate_small_platform():
    plat = Platform(5, 0.5, 1.0)
    for seed in range(10):
        inst = generate(seed, 3, platform=plat)
        assert inst.platform == plat
        assert sum(a.processors for a in inst.applications) <= 5


@pytest.mark.parametrize("n, match", [(0, "n_apps must be positive and finite, got 0"),
                                      (641, "n_apps = 641 exceeds platform.processors = 640"),
                                      (2.0, "n_apps must be an integer, got 2.0")])
def test_generate_bad_n_apps(n, match):
    with pytest.raises(InstanceError, match=re.escape(match)):
        generate(0, n)


# --- bad input --------------------------------------------------------------------------------------

def good():
    return {
        "name": "g",
        "platform": {"processors": 8, "processor_bandwidth": 0.5, "bandwidth": 2.0},
        "applications": [
            {"name": "a", "processors": 4, "work": 10.0, "io_volume": 1.0},
            {"name": "b", "processors": 2, "work": 5.0, "io_volume": 3.0},
        ],
        "t_min": 20.0,
    }


def edit(path, value):
    """good() with the item at ``path`` (a tuple of keys) set to ``value`` (or deleted if DEL)."""
    d = copy.deepcopy(good())
    (drop_at(path) if value is DEL else set_at(path, value))(d)
    return d


DEL = object()

BAD = [
    # (id, dict, words that must appear in the message)
    ("no_platform", edit(("platform",), DEL), ["missing field", "platform"]),
    ("no_applications", edit(("applications",), DEL), ["missing field", "applications"]),
    ("no_work", edit(("applications", 0, "work"), DEL), ["missing field", "applications[0].work"]),
    ("no_name", edit(("applications", 1, "name"), DEL), ["missing field", "applications[1].name"]),
    ("no_bandwidth", edit(("platform", "bandwidth"), DEL), ["missing field", "platform.bandwidth"]),
    ("neg_bandwidth", edit(("platform", "bandwidth"), -2.0), ["platform.bandwidth", "-2.0"]),
    ("zero_bandwidth", edit(("platform", "bandwidth"), 0), ["platform.bandwidth", "got 0"]),
    ("zero_proc_bw", edit(("platform", "processor_bandwidth"), 0.0),
     ["platform.processor_bandwidth", "0.0"]),
    ("inf_bandwidth", edit(("platform", "bandwidth"), float("inf")), ["platform.bandwidth", "inf"]),
    ("nan_work", edit(("applications", 0, "work"), float("nan")), ["applications[a].work", "nan"]),
    ("neg_volume", edit(("applications", 1, "io_volume"), -3.0), ["applications[b].io_volume", "-3.0"]),
    ("str_work", edit(("applications", 0, "work"), "10"), ["applications[a].work", "a number", "'10'"]),
    ("str_bandwidth", edit(("platform", "bandwidth"), "fast"), ["platform.bandwidth", "'fast'"]),
    ("null_work", edit(("applications", 0, "work"), None), ["applications[a].work", "None"]),
    ("bool_work", edit(("applications", 0, "work"), True), ["applications[a].work", "True"]),
    ("float_processors", edit(("applications", 1, "processors"), 2.5),
     ["applications[b].processors", "an integer", "2.5"]),
    ("float_platform_processors", edit(("platform", "processors"), 8.0),
     ["platform.processors", "an integer", "8.0"]),
    ("zero_processors", edit(("applications", 0, "processors"), 0), ["applications[a].processors", "got 0"]),
    ("too_many_processors", edit(("applications", 0, "processors"), 7),
     ["9 processors", "platform.processors", "8"]),
    ("empty_applications", edit(("applications",), []), ["applications", "non-empty", "[]"]),
    ("applications_not_list", edit(("applications",), {"a": 1}), ["applications", "list", "{'a': 1}"]),
    ("platform_not_object", edit(("platform",), [8, 0.5, 2.0]), ["platform", "object", "[8, 0.5, 2.0]"]),
    ("app_not_object", edit(("applications", 1), "b"), ["applications[1]", "object", "'b'"]),
    ("duplicate_names", edit(("applications", 1, "name"), "a"), ["unique", "['a', 'a']"]),
    ("empty_name", edit(("applications", 1, "name"), ""), ["name", "non-empty", "''"]),
    ("int_name", edit(("applications", 1, "name"), 7), ["name", "string", "7"]),
    ("unknown_app_field", edit(("applications", 0, "volume"), 1.0),
     ["unknown field", "applications[0].volume"]),
    ("unknown_platform_field", edit(("platform", "latency"), 1.0), ["unknown field", "platform.latency"]),
    ("zero_t_min", edit(("t_min",), 0.0), ["t_min", "0.0"]),
    ("str_t_min", edit(("t_min",), "900"), ["t_min", "'900'"]),
    ("str_k_prime", edit(("k_prime",), "10"), ["k_prime", "a number", "'10'"]),
    ("bool_k_prime", edit(("k_prime",), True), ["k_prime", "True"]),
    ("nan_k_prime", edit(("k_prime",), float("nan")), ["k_prime", "nan"]),
    ("inf_k_prime", edit(("k_prime",), float("inf")), ["k_prime", "inf"]),
    ("zero_k_prime", edit(("k_prime",), 0), ["k_prime", "got 0"]),
    ("below_one_k_prime", edit(("k_prime",), 0.5), ["k_prime", "at least 1", "0.5"]),
    ("huge_k_prime", edit(("k_prime",), 1e308), ["k_prime = 1e+308", "not a finite number"]),
    # the applications' cycles: 10 + 1/2 = 10.5 s (a) and 5 + 3/1 = 8 s (b); a cap of 10 x 1 s holds no a
    ("cap_below_cycle", edit(("t_min",), 1.0), ["k_prime = 10", "= 10.0 s", "shorter than", "10.5 s"]),
]


@pytest.mark.parametrize("d, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_dict(d, words):
    with pytest.raises(InstanceError) as exc:
        PeriodicInstance.from_dict(d)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


@pytest.mark.parametrize("d, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_json_file(d, words, tmp_path):
    # the same errors come through from_json / load on a file (NaN/inf as JSON extensions)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(InstanceError) as exc:
        load(str(path))
    for w in words:
        assert w in str(exc.value)


def test_good_dict_is_good():
    inst = PeriodicInstance.from_dict(good())
    assert inst.name == "g" and inst.t_min == 20.0
    assert [a.name for a in inst.applications] == ["a", "b"]


@pytest.mark.parametrize("d", [None, [], "x", 3], ids=["None", "list", "str", "int"])
def test_not_an_object(d):
    with pytest.raises(InstanceError, match=f"JSON object, got {type(d).__name__}"):
        PeriodicInstance.from_dict(d)


@pytest.mark.parametrize("text", ["{", "not json", '{"platform": }', "[1, 2,]", "   "])
def test_invalid_json_text(text):
    with pytest.raises(InstanceError, match="is not valid JSON"):
        PeriodicInstance.from_json(text)


def test_empty_json_text():
    with pytest.raises(InstanceError, match="is not valid JSON"):
        PeriodicInstance.from_json("")


def test_invalid_json_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"platform": {"processors": 8,')
    with pytest.raises(InstanceError, match=re.escape(f"{path} is not valid JSON")):
        PeriodicInstance.from_json(path)


def test_constructors_validate_directly():
    with pytest.raises(InstanceError, match=r"platform\.bandwidth must be positive and finite, got -1"):
        Platform(4, 1.0, -1)
    with pytest.raises(InstanceError, match=r"applications\[x\]\.work must be positive and finite, got nan"):
        Application("x", 1, float("nan"), 1.0)
    with pytest.raises(InstanceError, match=r"applications must be a non-empty list, got \[\]"):
        PeriodicInstance(Platform(4, 1.0, 1.0), ())


# --- the period cap K' t_min --------------------------------------------------------------------------

def test_period_cap_defaults_to_the_papers():
    """K' = 10 unless given; t_min is the instance's where given, else max_k (w_k + time_io_k)."""
    inst = PeriodicInstance.from_dict(good())  # t_min 20 s; cycles 10 + 1/2 = 10.5 and 5 + 3/1 = 8 s
    assert inst.k_prime == 10 and inst.search_t_min() == 20.0 and inst.period_cap() == 200.0
    d = good()
    del d["t_min"]
    inst = PeriodicInstance.from_dict(d)
    assert inst.search_t_min() == inst.default_t_min() == 10.5 and inst.period_cap() == 105.0
    d["k_prime"] = 2.5
    assert PeriodicInstance.from_dict(d).period_cap() == 2.5 * 10.5
    for k in range(1, 11):
        assert paper_set(k).k_prime == 10 and paper_set(k).period_cap() == 10 * REF_SETS[k][1]
    assert generate(3, 4).k_prime == 10 and generate(3, 4, k_prime=3).k_prime == 3


def test_k_prime_written_only_when_not_the_default():
    """A file without k_prime (every instance stored before the cap) reads as K' = 10 and writes back the
    same JSON, so its hash stays; any other K' is written and read back."""
    d = good()
    inst = PeriodicInstance.from_dict(d)
    assert "k_prime" not in inst.to_dict() and inst.to_dict() == {**d, "name": "g"}
    assert "k_prime" not in PeriodicInstance.from_dict({**d, "k_prime": 10}).to_dict()
    other = PeriodicInstance.from_dict({**d, "k_prime": 3})
    assert other.to_dict()["k_prime"] == 3 and PeriodicInstance.from_json(other.to_json()) == other
    assert other != inst


def test_k_prime_is_in_the_field_table_the_docs_print():
    """docs/formats/periodic.md and `iosched show` read periodic_fields.FIELDS: its k_prime row has the
    loader's default, and an instance with every optional field loads and writes back exactly the table's
    top-level keys (a key the loader takes but the table misses, or the other way round, fails here)."""
    from iosched.instances.periodic import K_PRIME
    from iosched.instances.periodic_fields import FIELDS

    row = FIELDS.by_path["k_prime"]
    assert row.default == K_PRIME == PeriodicInstance.from_dict(good()).k_prime and row.type == "number"
    assert "K' t_min" in row.meaning
    required, optional = FIELDS.keys()
    full = {**good(), "k_prime": 3, "provenance": {"source": "test"}}
    assert set(full) == set(required) | set(optional)
    assert set(PeriodicInstance.from_dict(full).to_dict()) == set(full)


def test_unknown_top_level_field():
    d = good()
    d["t_mni"] = d.pop("t_min")
    with pytest.raises(InstanceError, match="t_mni"):
        PeriodicInstance.from_dict(d)


# --- load -----------------------------------------------------------------------------------------

def test_load_paper():
    assert load("paper:set3") == paper_set(3)
    assert load("paper:set10").name == "paper:set10"


def test_load_random():
    inst = load("random:7:3")
    assert inst == generate(7, 3)
    assert len(inst.applications) == 3
    assert load("random:7") == generate(7)
    assert load("random:7") != inst


def test_load_path(tmp_path):
    path = tmp_path / "set7.json"
    paper_set(7).to_json(path)
    assert load(str(path)) == paper_set(7)
    assert load(str(path)).name == "paper:set7"


@pytest.mark.parametrize("spec, match", [
    ("paper:set11", "1..10, got 11"),
    ("paper:set0", "1..10, got 0"),
    ("paper:setX", "unknown built-in instance 'paper:setX'"),
    ("paper:set", "unknown built-in instance"),
    ("nope.json", "no such instance file or built-in name: 'nope.json'"),
    ("random:x", "random:SEED[:N_APPS] with integers >= 0, got 'random:x'"),
    ("random:1:0", "n_apps must be positive"),
])
def test_load_bad(spec, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # so that "nope.json" surely does not exist
    with pytest.raises(InstanceError, match=re.escape(match)):
        load(spec)


@pytest.mark.parametrize("spec", ["random:1:2:3", "random:-1:2"])
def test_load_bad_random_spec(spec):
    with pytest.raises(InstanceError):
        load(spec)
