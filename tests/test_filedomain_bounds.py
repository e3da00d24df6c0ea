"""The safe bounds of issue 47: every bound below every partition, by enumeration of every partition of tiny
regions byte by byte; the certificate's two answers; the library's five closures from the stored data."""

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iosched import library
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import MiB
from iosched.instances.filedomain_presets import load, platform
from iosched.models import filedomain_relax as relax
from iosched.models.filedomain_bounds import (
    byte_time,
    caps_at,
    cheap_bound,
    counting_bound,
    data_bound,
    next_down,
    next_up,
    rates,
)
from iosched.models.filedomain_certify import certify
from iosched.models.filedomain_relax import time_bound

SLOW_GB = 1e-6  # 1000 bytes/s: a byte takes 1 ms, beside lock costs of milliseconds


def every_partition(inst):
    """Every partition of the region among the aggregators: each byte's owner enumerated, runs of one owner
    as one extent (built here, not by the package's helpers)."""
    r0, n, P = inst.region_offset, inst.region_length, inst.aggregators
    for owners in itertools.product(range(P), repeat=n):
        doms = [[] for _ in range(P)]
        start = 0
        for i in range(1, n + 1):
            if i == n or owners[i] != owners[start]:
                doms[owners[start]].append([r0 + start, r0 + i])
                start = i
        yield Domains(tuple(doms))


def brute_optimum(inst) -> tuple[float, float]:
    """(the least evaluated time over every partition, the second least distinct time, inf if none)."""
    times = sorted({evaluate(inst, d).time for d in every_partition(inst)})
    return times[0], times[1] if len(times) > 1 else math.inf


@st.composite
def tiny_instances(draw):
    """2-3 aggregators (bandwidths 1-3 kB/s, nodes sometimes slower than two of them), 1-3 servers, stripes
    of 2-3 bytes, regions of at most 3^7 byte-owner assignments, extent or token locking (blocks of one or
    two stripes), lock costs of 0-4 ms, holes between requests sometimes."""
    P = draw(st.integers(2, 3))
    S, w = draw(st.integers(1, 3)), draw(st.integers(2, 3))
    n = draw(st.integers(2, 7 if P == 3 else 10))
    offset = draw(st.integers(0, 2 * w))
    locking = draw(st.sampled_from(["extent", "token"]))
    block = draw(st.sampled_from([w, 2 * w])) if locking == "token" else None
    agg = tuple(draw(st.sampled_from([1.0, 2.0, 3.0])) * SLOW_GB for _ in range(P))
    nodes = draw(st.sampled_from([None, [0] * P, [0] + [1] * (P - 1)]))
    reqs = None
    if n >= 4 and draw(st.booleans()):  # a hole in the middle
        cut = draw(st.integers(1, n - 3))
        reqs = [[(offset, cut)], [(offset + cut + 1, n - cut - 1)]]
    inst = platform(S, P if nodes is None else nodes, w, None if reqs else (offset, n), reqs, 1.0, SLOW_GB,
                    1.5 * SLOW_GB if nodes is not None else None, locking, block,
                    draw(st.sampled_from([0.0, 1e-3, 4e-3])), draw(st.sampled_from([0.0, 2e-3, 3e-3])),
                    draw(st.integers(0, S - 1)))
    return replace(inst, bandwidth=replace(inst.bandwidth, aggregator=agg))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_every_bound_is_below_every_partition(inst):
    """The bounds are in the evaluator's own arithmetic: never above the least evaluated time, with no
    tolerance at all; the certificate proves that least time a bound and finds it from just above."""
    best, second = brute_optimum(inst)
    lo = cheap_bound(inst)
    assert data_bound(inst) <= best and counting_bound(inst) <= best and lo <= best
    found = relax.count_bound(inst, lo, best, wall_s=math.inf)
    assert lo <= found.value <= best, found
    assert found.exact or found.note
    assert time_bound(inst, best) <= best
    result, domains = certify(inst, best, 600)
    assert (result, domains) == ("infeasible", None)  # no partition takes less than the optimum
    if second < math.inf:  # below the second time, the optimum is found
        result, domains = certify(inst, second, 600)
        assert result == "feasible" and evaluate(inst, domains).time == best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.data())
def test_a_relaxed_test_never_refuses_a_partition(inst, data):
    """At the evaluated time of any partition, the count relaxation has a point (its test is a relaxation)."""
    seqs = relax.bound_sequences(inst)
    partitions = list(itertools.islice(every_partition(inst), 0, None, 97))
    d = data.draw(st.sampled_from(partitions))
    t = evaluate(inst, d).time
    result, point, _ = relax.relaxed_test(inst, seqs, t, 60.0, 600.0)
    assert result == "feasible" and point.value <= t


def test_counting_with_whole_bytes():
    """sweep:8:12: 128 MiB over 12 aggregators at 0.25 GB/s is 11,184,810.67 bytes each; whole bytes make
    some aggregator write ⌈D/12⌉ = 11,184,811, so the bound is that byte count's time exactly."""
    inst = load("sweep:8:12")
    assert data_bound(inst) == byte_time(11_184_811, 0.25e9) == 0.044739244
    assert cheap_bound(inst) == 0.044739244 > 128 * MiB / 12 / 0.25e9


def test_capacities_follow_the_evaluators_division():
    for r in (0.25e9, 1.06e9, 1.7e9, 3e-3):
        for T in (0.0209715, 0.02097152, 0.0193664258823529, 1.5):
            b = int(caps_at(np.array([r]), T, 2**40)[0])
            assert b / r <= T < (b + 1) / r or b == 2**40


def test_sweep_8_30_is_closed_by_counting_runs():
    """Issue 47's argument: below 5 MiB / 0.25 GB/s every aggregator holds < 5 MiB, each server then has 4
    runs of 4 whole stripes, one per aggregator, 32 > 30: no point just below, one at it."""
    inst = load("sweep:8:30")
    target = byte_time(5 * MiB, rates([0.25])[0])
    assert target == 0.02097152
    seqs = relax.bound_sequences(inst)
    assert relax.setting(inst, seqs, next_down(target)) is None  # the counting precheck alone refuses it
    result, point, _ = relax.relaxed_test(inst, seqs, target, 60.0, 600.0)
    assert result == "feasible" and point.value == target
    found = relax.count_bound(inst, cheap_bound(inst), 0.025, wall_s=math.inf)
    assert found.exact and found.value == target


def test_a_lock_level_closes_medium_4_style_servers():
    """A server of six 4 MiB stripes with 25 aggregators at 1.06 GB/s: one run holds at most 20.5 MB,
    so the server needs two runs, one conflict: its data time + 2 grants + 1 revocation is the bound."""
    inst = library.load("filedomain/medium-4")
    server = inst.server_bytes()
    base = float(server.max() / rates(inst.bandwidth.server)[0])
    level = base + (inst.acquire_s * 2 + inst.revoke_s * 1)
    found = relax.count_bound(inst, cheap_bound(inst), level * 1.01, wall_s=math.inf)
    assert found.exact and found.value == level


def test_the_search_is_stopped_by_its_budget_with_a_valid_bound():
    inst = load("sweep:8:30")
    lo = cheap_bound(inst)
    found = relax.count_bound(inst, lo, 0.025, wall_s=0.0)
    assert not found.exact and lo <= found.value <= 0.02097152 and found.note == "budget spent"
    assert not found.final  # a later call with more time may do better


def test_next_event_is_the_next_value_a_term_takes():
    inst = load("sweep:8:30")
    seqs = relax.bound_sequences(inst)
    x = byte_time(5 * MiB - 1, 0.25e9)
    assert relax.next_event(inst, seqs, x, 0.025) == byte_time(5 * MiB, 0.25e9)  # no lock level in between
    assert relax.event_below(inst, seqs, 0.02097152) == x
    level = relax.lock_levels(inst, seqs, 0.02, 0.025)[0]  # 16 MiB at 1 GB/s, 3 grants, 2 + 1 conflicts
    assert level == 0.016777216 + (1e-4 * 3 + 1e-3 * 3)
    assert relax.next_event(inst, seqs, 0.02, 0.025) == byte_time(5_000_001, 0.25e9)  # a byte event comes first
    assert relax.lock_levels(inst, seqs, x, 1.0) is None  # too many levels to list: the float above, then
    assert relax.next_event(inst, seqs, x, 1.0) == next_up(x)


# --- item 5: the closures of item 2 reproduced from the stored data -----------------------------------------

CLOSED = ["small-4", "medium-4", "token-1", "sweep-8-12", "sweep-8-30"]


@pytest.mark.parametrize("name", CLOSED)
def test_the_library_closures_from_the_stored_solutions(name):
    """Each stored best known, re-scored by the evaluator, equals a bound proved for every partition: the
    count relaxation's (its search given the stored value as the upper end) or the certificate's."""
    e = library.entry(f"filedomain/{name}")
    inst = library.load(e.name)
    value = evaluate(inst, Domains.from_dict(library.read_json_gz(e.solution_path))).time
    lo = cheap_bound(inst)
    assert lo <= value
    found = relax.count_bound(inst, lo, value, wall_s=math.inf)
    assert found.value <= value
    if name != "token-1":  # contiguity of runs closes token-1: the certificate's segments
        assert found.exact and found.value == value
    else:
        assert found.value < value and certify(inst, value, 600) == ("infeasible", None)


@pytest.mark.parametrize("name", CLOSED)
def test_moving_a_boundary_of_a_stored_optimum_never_beats_its_bound(name):
    """No tolerance to game (item 5): filedomain's evaluator checks partitions exactly and its times come
    from integers, so a stored optimum with any boundary moved by a few bytes evaluates at or above the
    bound, itself computed in the evaluator's arithmetic."""
    e = library.entry(f"filedomain/{name}")
    inst = library.load(e.name)
    starts, ends, owners = Domains.from_dict(library.read_json_gz(e.solution_path)).owners()
    order = np.argsort(starts)
    starts, ends, owners = starts[order], ends[order], owners[order]
    value = evaluate(inst, Domains.from_owners(starts, ends, owners, inst.aggregators)).time
    bound = relax.count_bound(inst, cheap_bound(inst), value, wall_s=math.inf).value
    if name == "token-1":
        bound = value if certify(inst, value, 600)[0] == "infeasible" else bound
    assert bound == value
    rng = np.random.default_rng(0)
    for i in rng.choice(len(starts) - 1, size=min(12, len(starts) - 1), replace=False):
        for shift in (-4096, -1, 1, 4096):
            s2, e2 = starts.copy(), ends.copy()
            e2[i] += shift
            s2[i + 1] += shift
            if e2[i] <= s2[i] or e2[i + 1] <= s2[i + 1]:
                continue
            ev = evaluate(inst, Domains.from_owners(s2, e2, owners, inst.aggregators))
            assert ev.feasible and ev.time >= bound, (i, shift, ev.time, bound)


def test_the_exact_method_certifies_its_optimum_in_integers():
    """token-1: the segment search proves its optimum within HiGHS's tolerances only (a bound deflated by
    BOUND_SLACK); the certificate then proves no partition takes less, and the bound is the value itself."""
    import iosched

    res = iosched.solve("filedomain", "lib:filedomain/token-1", "exact")
    assert res.status.value == "optimal" and res.bound == res.objective, res.info
    assert res.info["certificate"][-1]["result"] == "infeasible"


def test_no_stored_filedomain_value_is_below_the_cheap_bound():
    """Every stored solution re-scored is at least the cheap bound, with no tolerance (item 5)."""
    for name, rec in library.summary("filedomain").items():
        e = library.entry(name)
        inst = library.load(name)
        value = evaluate(inst, Domains.from_dict(library.read_json_gz(e.solution_path))).time
        assert value == rec["best_known"] and cheap_bound(inst) <= value, name
        assert rec["bound"] <= value * (1 + e.tolerance), name
