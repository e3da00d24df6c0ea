"""Issue 14 for periodic: PerSched never crashes, hangs or runs away; the evaluator never
certifies garbage; every parameter is checked before anything runs; the exact methods keep
the profile's limit for the whole method; sizes beyond the machine are refused.

Cases that crashed, hung or ate memory on the old code run in a child process with a
memory cap and a timeout, so that a regression fails the test instead of the test run.
"""

import json
import math
import resource
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.core import get_method
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance, Pattern, Trace, evaluate, evaluate_any, evaluate_trace
from iosched.heuristics.periodic import MAX_APPS, compile_kernel, persched
from iosched.heuristics.periodic_persched import PRECISION_SHARE
from iosched.instances.periodic import Application, PeriodicInstance, Platform, generate, paper_set
from iosched.models.periodic import persched_compact
from iosched.solvers import Profile


def _isolated(code: str, timeout: float = 120, memory_gb: float = 3) -> dict:
    """Run ``code`` in a fresh interpreter under a memory cap; it prints one JSON object."""
    limit = int(memory_gb * 2**30)

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {timeout} s")
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


CASES = """
import json, time
import iosched
from iosched.core import get_method
from iosched.errors import InstanceError, ParameterError
from iosched.heuristics.periodic import persched
from iosched.instances.periodic import paper_set, PeriodicInstance

def variant(k, field, value, t_min=True):
    d = paper_set(k).to_dict()
    d["applications"][0][field] = value
    if not t_min:
        del d["t_min"]
    return PeriodicInstance.from_dict(d)

def outcome(fn):
    start = time.perf_counter()
    try:
        out = fn()
        what = out.status.value
    except (InstanceError, ParameterError) as e:
        what = f"{type(e).__name__}: {e}"
    return {"what": what, "seconds": time.perf_counter() - start}
"""


@pytest.fixture(scope="module")
def runaway():
    """Every case that crashed, hung or grew without bound, in one child process."""
    return _isolated(CASES + """
from iosched.heuristics.periodic_persched import _card_units, kernel
res = {v: outcome(lambda: persched(variant(2, "io_volume", float(v)))) for v in ("1e-6", "1e-9", "1e-20")}
# the kernel alone, below the checks, at the period where it used to write past its arrays
units, B = _card_units(variant(2, "io_volume", 1e-6))
res["kernel"] = int(kernel()(16484.816, B, 1.5625e-12, *units, 500_000, 6_000_000, 0)[0])
res["eps"] = outcome(lambda: persched(paper_set(2), eps=1e-9))
res["t_min"] = outcome(lambda: persched(PeriodicInstance.from_dict({**paper_set(2).to_dict(), "t_min": 1e-4})))
res["k_prime"] = outcome(lambda: persched(PeriodicInstance.from_dict({**paper_set(2).to_dict(), "k_prime": 1e6})))
res["io_volume"] = outcome(lambda: persched(variant(2, "io_volume", 1e-12)))
res["work"] = outcome(lambda: persched(variant(2, "work", 1e18, t_min=False)))
print(json.dumps(res))
""")


def test_persched_tiny_io_volumes_do_not_crash_the_kernel(runaway):
    """paper:set2 with one io_volume of 1e-6, 1e-9 or 1e-20 segfaulted in the numba kernel: its
    dates could not resolve the I/O at 160,000 s and a loop ran past its arrays."""
    for v in ("1e-6", "1e-9", "1e-20"):
        assert runaway[v]["what"].startswith(f"InstanceError: applications[T2-1].io_volume = {float(v)!r}")
        assert runaway[v]["seconds"] < 1
    assert runaway["kernel"] in (0, 2)  # built, or abandoned as broken: never a crash


def test_persched_never_runs_away(runaway):
    """eps=1e-9 and an instance t_min=1e-4 grew past 3 GB (the grid stopped advancing);
    k_prime=1e6, io_volume=1e-12 and work=1e18 ran for minutes inside compiled code."""
    assert runaway["eps"]["what"].startswith("ParameterError: eps = 1e-09 with the instance's k_prime = 10")
    # periods up to 1e-3 s hold no 76.8 s compute: the instance itself is refused (its period cap)
    assert runaway["t_min"]["what"].startswith("InstanceError: k_prime = 10: the period cap K' t_min = 10 x 0.0001 s")
    assert runaway["k_prime"]["what"].startswith("ParameterError: the instance's k_prime = 1000000.0")
    assert "k_prime <= " in runaway["k_prime"]["what"]
    assert runaway["io_volume"]["what"].startswith("InstanceError: applications[T2-1].io_volume = 1e-12")
    assert runaway["work"]["what"].startswith("InstanceError: t_min (by default max_k work + I/O time)")
    assert all(runaway[k]["seconds"] < 5 for k in ("eps", "t_min", "k_prime", "io_volume", "work")), runaway


def test_persched_stops_at_its_time_limit():
    """A search of 232 periods whose larger patterns hold up to 170,000 instances (random:1:100,
    about 10 s of search even pruned) under a 1 s budget: the best pattern so far."""
    compile_kernel()
    inst = generate(1, 100)
    out = persched(inst, time_limit=1.0)
    assert out.status == iosched.Status.TIME_LIMIT and out.solution is not None
    assert "time limit (1 s)" in out.info["stopped"]
    assert out.info["periods_tried"] + out.info["periods_pruned"] < 232
    assert evaluate(inst, out.solution).feasible


def test_milp_keeps_the_profile_limit_for_the_whole_method():
    """Quick profile on set 1: six HiGHS calls of ~11.5 s each took 77.5 s."""
    profile = Profile("test", time_limit=4.0, rel_gap=1e-4, threads=1, seed=0)
    res = iosched.solve("periodic", paper_set(1), "milp", profile=profile)
    assert res.method_time_s < 4.0 * 1.5, (res.method_time_s, res.info)  # Pyomo's handover is estimated
    assert res.status == iosched.Status.TIME_LIMIT
    assert res.solution is None or res.evaluation.feasible
    assert any("skipped" in run for run in res.info["periods"])


def test_compact_keeps_the_profile_limit_including_the_search():
    """The PerSched search before the compaction LP had no limit at all."""
    profile = Profile("test", time_limit=1.0, rel_gap=1e-4, threads=1, seed=0)
    compile_kernel()
    start = time.perf_counter()
    out = persched_compact(paper_set(2), profile=profile, eps=1e-4)  # 23,000 periods of 0.1-2 ms
    assert time.perf_counter() - start < 2.5
    assert out.status == iosched.Status.TIME_LIMIT and out.solution is not None


def test_sizes_beyond_the_machine_are_refused_before_running():
    """persched-compact on 200 applications died with MemoryError at 8.9 GB after 12 minutes."""
    big = generate(1, 200)
    start = time.perf_counter()
    with pytest.raises(InstanceError, match=r"compaction LP of up to 1\.6\d*e\+07 variables"):
        persched_compact(big, profile="quick")
    with pytest.raises(ParameterError, match=r"slots = 200: 200 applications x 200 slots"):
        iosched.solve("periodic", big, "milp", periods=[20000.0], slots=200, profile="quick")
    many = PeriodicInstance(Platform(MAX_APPS + 1, 1.0, 10.0),
                            tuple(Application(f"a{i}", 1, 10.0, 1.0) for i in range(MAX_APPS + 1)))
    with pytest.raises(InstanceError, match=f"at most {MAX_APPS} applications"):
        persched(many)
    assert time.perf_counter() - start < 5


# --- the evaluator never certifies garbage ------------------------------------------------------

SET7 = paper_set(7)


@pytest.fixture(scope="module")
def pattern7():
    return iosched.solve("periodic", SET7, "persched").solution


@pytest.fixture(scope="module")
def trace7():
    return iosched.solve("periodic", SET7, "fairshare", cycles=3).solution


def _segments(p, f):
    return tuple(tuple(Instance(i.compute_start, tuple(f(s) for s in i.io)) for i in a) for a in p.applications)


@pytest.mark.parametrize("name, change", [
    ("rates NaN", lambda p: Pattern(p.period, _segments(p, lambda s: (s[0], s[1], math.nan)))),
    ("starts NaN", lambda p: Pattern(p.period, _segments(p, lambda s: (math.nan, s[1], s[2])))),
    ("period inf", lambda p: Pattern(math.inf, p.applications)),
    ("rates inf", lambda p: Pattern(p.period, _segments(p, lambda s: (s[0], s[1], math.inf)))),
    ("a segment of two numbers", lambda p: Pattern(p.period, _segments(p, lambda s: s[:2]))),
    ("a rate as text", lambda p: Pattern(p.period, _segments(p, lambda s: (s[0], s[1], "fast")))),
    ("period 10^400", lambda p: Pattern(10**400, p.applications)),
])
def test_garbage_patterns_are_infeasible(pattern7, name, change):
    """All-NaN rates were feasible with SysEfficiency 0.82; NaN starts and period = inf passed too."""
    assert evaluate(SET7, pattern7).feasible
    ev = evaluate(SET7, change(pattern7))
    assert not ev.feasible and ev.violations and ev.sys_efficiency == 0


@pytest.mark.parametrize("name, change", [
    ("horizon NaN", lambda t: Trace(math.nan, t.applications)),
    ("horizon inf", lambda t: Trace(math.inf, t.applications)),
    ("rates NaN", lambda t: Trace(t.horizon, _segments(t, lambda s: (s[0], s[1], math.nan)))),
    ("one application short", lambda t: Trace(t.horizon, t.applications[:-1])),
])
def test_garbage_traces_are_infeasible(trace7, name, change):
    assert evaluate_trace(SET7, trace7).feasible
    assert not evaluate_trace(SET7, change(trace7)).feasible


@pytest.mark.parametrize("solution", [None, {}, [], "pattern", 3.0])
def test_evaluate_any_takes_anything(solution):
    ev = evaluate_any(SET7, solution)
    assert not ev.feasible and ev.violations[0].constraint == "structure"


def _numbers(solution):
    """Paths to every number of a pattern or trace: ("period",) or (k, i, "c") or (k, i, j, x)."""
    yield ("top",)
    for k, insts in enumerate(solution.applications):
        for i, inst in enumerate(insts):
            yield (k, i, "c")
            for j in range(len(inst.io)):
                for x in range(3):
                    yield (k, i, j, x)


def _poison(solution, path, bad):
    if path == ("top",):
        return type(solution)(bad, solution.applications)
    k, i, *rest = path
    apps = [list(a) for a in solution.applications]
    inst = apps[k][i]
    if rest == ["c"]:
        apps[k][i] = Instance(bad, inst.io)
    else:
        j, x = rest
        seg = list(inst.io[j])
        seg[x] = bad
        apps[k][i] = Instance(inst.compute_start, inst.io[:j] + (tuple(seg),) + inst.io[j + 1:])
    top = solution.period if isinstance(solution, Pattern) else solution.horizon
    return type(solution)(top, tuple(tuple(a) for a in apps))


@st.composite
def small_instances(draw):
    n = draw(st.integers(1, 3))
    apps = tuple(Application(f"A{i}", draw(st.sampled_from([1, 2, 4])), draw(st.floats(1.0, 100.0)),
                             draw(st.floats(0.5, 50.0))) for i in range(n))
    return PeriodicInstance(Platform(16, 1.0, draw(st.floats(1.0, 8.0))), apps)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(), st.sampled_from(["persched", "persched-mindil", "fairshare", "online-fcfs"]),
       st.data(), st.sampled_from([math.nan, math.inf, -math.inf]))
def test_a_non_finite_number_anywhere_is_infeasible(inst, method, data, bad):
    res = iosched.solve("periodic", inst, method, k_prime=3, eps=0.05) if method.startswith("persched") \
        else iosched.solve("periodic", inst, method, cycles=3)
    if res.solution is None:
        return
    paths = list(_numbers(res.solution))
    path = data.draw(st.sampled_from(paths))
    assert not evaluate_any(inst, _poison(res.solution, path, bad)).feasible


# --- every parameter checked before anything runs -----------------------------------------------

@pytest.mark.parametrize("method, params, match", [
    ("persched", {"eps": "abc"}, "eps must be a number, got 'abc'"),
    ("persched", {"t_min": "abc"}, "t_min must be a number"),
    ("persched", {"t_min": -5}, r"t_min must be in \(0, inf\), got -5"),
    ("persched", {"t_min": math.nan}, "t_min must be a finite number, got nan"),
    ("persched", {"t_min": 0}, r"t_min must be in \(0, inf\), got 0"),
    ("persched", {"precision": -1}, "precision must be in"),
    ("persched", {"precision": 0}, "precision must be in"),
    ("persched", {"precision": 1e-30}, r"precision must be in \[9e-10"),
    ("persched", {"k_prime": "abc"}, "k_prime must be a number"),
    ("persched", {"workers": 0}, "workers must be an integer in"),
    ("persched", {"time_limit": 0}, "time_limit must be in"),
    ("persched-mindil", {"eps": 1}, r"eps must be in \(0, 1\), got 1"),
    ("milp", {"periods": "abc"}, "periods must be a number, got 'abc'"),
    ("milp", {"periods": []}, "periods must be one value or a non-empty list"),
    ("milp", {"periods": [900, -1]}, r"periods\[1\] must be in \(0, inf\), got -1"),
    ("milp", {"periods": [900], "slots": 0}, r"slots must be an integer in \[2, inf\], got 0"),
    ("milp", {"periods": [900], "slots": "abc"}, "slots must be an integer, got 'abc'"),
    ("milp-dilation", {"periods": [900], "eps": "abc"}, "eps must be a number"),
    ("persched-compact", {"eps": "abc"}, "eps must be a number"),
    ("persched-compact", {"workers": 0}, "workers must be an integer in"),
    ("persched-compact", {"profile": 3}, "profile must be the name"),
    ("fairshare", {"cycles": "abc"}, "cycles must be a number, got 'abc'"),
    ("fairshare", {"cycles": 0}, r"cycles must be in \[1, 1e\+06\], got 0"),
    ("online-minmax", {"gamma": "abc"}, "gamma must be a number, got 'abc'"),
    ("online-minmax", {"gamma": math.nan}, "gamma must be a finite number, got nan"),
])
def test_bad_parameters_are_refused_by_name(method, params, match):
    """eps=abc, t_min=abc, periods=abc, cycles=abc, gamma=abc gave a raw TypeError; t_min=-5, nan and
    precision=-1 reported 'infeasible'; t_min=0 and slots=0 were replaced by defaults. Refused before any
    search: under a second of CPU (CPU, not wall time, which a busy machine stretches), the kernel loaded first
    (its load is the method's preparation, which a check inside the method follows)."""
    prepare = get_method("periodic", method).prepare
    if prepare is not None:
        prepare()
    start = time.process_time()
    with pytest.raises(ParameterError, match=match):
        iosched.solve("periodic", paper_set(1), method, **params)
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize("seed", [4, 5, 7, 11, 12])
def test_the_largest_precision_allowed_keeps_patterns_valid(seed):
    """random:SEED at the ceiling of precision: the ceiling was 1e-3 of the shortest I/O time or work, and
    there these five seeds gave patterns the evaluator rejected (I/O left short or moved past the volume by
    up to 2.2e-4 of it; status ERROR). At PRECISION_SHARE (1e-6) what the kernel may leave is ten times
    inside the evaluator's tolerance; one step above the ceiling is refused."""
    inst = generate(seed)
    apps = inst.applications
    top = PRECISION_SHARE * min(min(inst.time_io(k) for k in range(len(apps))), min(a.work for a in apps))
    res = iosched.solve("periodic", inst, "persched", precision=top)
    assert res.status in (iosched.Status.FEASIBLE, iosched.Status.OPTIMAL), res.info.get("error")
    assert res.evaluation.feasible
    with pytest.raises(ParameterError, match="precision must be in"):
        iosched.solve("periodic", inst, "persched", precision=top * 1.001)


@pytest.mark.parametrize("method, params", [
    ("persched", {"eps": "abc"}), ("milp", {"slots": 0}), ("fairshare", {"cycles": 0}),
    ("persched", {"t_min": 0}), ("online-minmax", {"gamma": -1}),
])
def test_direct_calls_check_too(method, params):
    with pytest.raises(ParameterError):
        get_method("periodic", method).run(paper_set(1), **params)


def test_instance_numbers_beyond_floats_are_refused():
    d = paper_set(7).to_dict()
    for field, value in (("processors", 10**400), ("work", 10**400)):
        bad = json.loads(json.dumps(d))
        bad["applications"][0][field] = value
        with pytest.raises(InstanceError, match=field):
            PeriodicInstance.from_dict(bad)
    bad = json.loads(json.dumps(d))
    bad["platform"]["processor_bandwidth"] = 1e-300
    bad["applications"][0]["io_volume"] = 1e300
    with pytest.raises(InstanceError, match="not a finite positive time"):
        PeriodicInstance.from_dict(bad)


@pytest.mark.parametrize("inst", [paper_set(1), paper_set(5), generate(2, 6), generate(5, 30)],
                         ids=["set1", "set5", "random2x6", "random5x30"])
def test_longrun_bound_in_closed_form_is_the_lp_optimum(inst):
    """The bound on every result is the long-run LP's optimum computed without a solver (it cost
    2 s of Pyomo and HiGHS per result, and could be missing); HiGHS on the same LP agrees."""
    from iosched.models.periodic import build_longrun_model, longrun_bound
    from iosched.solvers import load_profile, solve_pyomo

    for objective in ("sys_efficiency", "dilation"):
        out = solve_pyomo(build_longrun_model(inst, objective), load_profile("default"), load=False)
        highs = out.objective if objective == "sys_efficiency" else 1 / out.objective
        assert longrun_bound(inst, objective) == pytest.approx(highs, rel=1e-9)


def test_a_work_of_1e300_does_not_reach_highs():
    """The fuzz tests found it: the period-capped bound's LP got a column bound of 1e-301 and HiGHS crashed
    the process (a segmentation fault). The bound is now refused by name and the solve goes on."""
    text = ('{"platform": {"processors": 4, "processor_bandwidth": 1.0, "bandwidth": 2.0}, "applications": ['
            '{"name": "A", "processors": 2, "work": 4.0, "io_volume": 4.0},'
            '{"name": "B", "processors": 1, "work": 1e+300, "io_volume": 2.0}]}')
    res = iosched.solve("periodic", iosched.load_instance("periodic", text), "persched", time_limit=0.3)
    assert res.bound is None and "count relaxation's LP" in res.info["bound_error"], res.info
