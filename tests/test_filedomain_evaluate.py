"""The filedomain evaluator: a hand-computed case, a per-byte reference model, every violation, speed-safe sizes."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import InstanceError
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import GB
from iosched.instances.filedomain_presets import platform


def naive(inst, owner_of, io="extent"):
    """The cost model computed byte by byte (independent of the evaluator's extent arithmetic).

    ``owner_of[b - region_offset]`` is the owner of byte b."""
    w, S, r0 = inst.stripe_size, inst.stripe_count, inst.region_offset
    data = [b for s, e in inst.data.tolist() for b in range(s, e)]
    owner = {b: int(owner_of[b - r0]) for b in data}
    P = inst.aggregators
    agg = np.bincount([owner[b] for b in data], minlength=P)
    server_of = {b: (inst.first_server + b // w) % S for b in data}
    srv = np.bincount([server_of[b] for b in data], minlength=S)
    pieces = []  # maximal runs of adjacent data bytes of one owner, in file order
    for b in data:
        if pieces and pieces[-1][1] == b and pieces[-1][2] == owner[b]:
            pieces[-1][1] = b + 1
        else:
            pieces.append([b, b + 1, owner[b]])

    def runs(seq):
        return sum(1 for i, o in enumerate(seq) if i == 0 or o != seq[i - 1])

    def extras(unit, bytes_):
        owners = {}
        for b in bytes_:
            owners.setdefault(b // unit, set()).add(owner[b])
        return {u: len(o) - 1 for u, o in owners.items() if len(o) > 1}

    bw = inst.bandwidth
    terms = [agg[a] / (bw.aggregator[a] * GB) for a in range(P)]
    if bw.node is not None:
        nodes = np.bincount(inst.aggregator_nodes, weights=agg, minlength=inst.nodes)
        terms += [nodes[n] / (bw.node[n] * GB) for n in range(inst.nodes)]
    out = {"false_sharing": len(extras(w, data))}
    if inst.locking == "extent":
        conflicts = grants = 0
        for s in range(S):
            mine = sorted((b for b in data if server_of[b] == s), key=lambda b: (b // w // S) * w + b % w)
            if not mine:
                continue
            r = runs([owner[b] for b in mine])
            ex = sum(extras(w, mine).values())
            if io == "extent":
                g = r
            else:
                g = sum(len({b // w for b in range(p0, p1) if server_of[b] == s}) for p0, p1, _ in pieces)
            conflicts += r - 1 + ex
            grants += g
            terms.append(srv[s] / (bw.server[s] * GB) + inst.acquire_s * g + inst.revoke_s * (r - 1 + ex))
    else:
        terms += [srv[s] / (bw.server[s] * GB) for s in range(S)]
        r = runs([owner[b] for b in data])
        conflicts = r - 1 + sum(extras(inst.block_size, data).values())
        if io == "extent":
            grants = r
        else:
            grants = sum(len({(b // w, b // inst.block_size) for b in range(p0, p1)}) for p0, p1, _ in pieces)
        terms.append(inst.acquire_s * grants + inst.revoke_s * conflicts)
    out.update(time=max(terms), conflicts=conflicts, acquisitions=grants, aggregator_bytes=agg.tolist(),
               server_bytes=srv.tolist())
    return out


def domains_of(inst, owner_of, io="extent"):
    """Domains (one extent per maximal run of one owner over the region) from a per-byte owner array."""
    r0 = inst.region_offset
    cuts = [0] + [i for i in range(1, len(owner_of)) if owner_of[i] != owner_of[i - 1]] + [len(owner_of)]
    starts = [r0 + c for c in cuts[:-1]]
    ends = [r0 + c for c in cuts[1:]]
    owners = [int(owner_of[c]) for c in cuts[:-1]]
    return Domains.from_owners(starts, ends, owners, inst.aggregators, io)


def test_hand_computed_two_aggregators():
    # S = 2, w = 10, region [0, 40): A = [0, 15), B = [15, 40)
    inst = platform(2, 2, 10, (0, 40), acquire_s=1e-6, revoke_s=1e-5)
    ev = evaluate(inst, Domains(([[0, 15]], [[15, 40]])))
    assert ev.feasible
    assert ev.aggregator_bytes == [15, 25] and ev.server_bytes == [20, 20]
    # server 0: stripes 0 (A), 2 (B): 2 runs; server 1: stripe 1 (A|B, shared), 3 (B): 2 runs + 1 shared
    assert ev.server_conflicts == [1, 2] and ev.conflicts == 3 and ev.acquisitions == 4 and ev.false_sharing == 1
    assert ev.time == pytest.approx(20e-9 + 2e-6 + 2e-5) and ev.bottleneck == "server 1"
    assert ev.fluid_time == pytest.approx(25e-9)
    stripe = evaluate(inst, Domains(([[0, 15]], [[15, 40]]), io="stripe"))
    assert stripe.acquisitions == 5 and stripe.conflicts == 3  # calls: A 0,1; B 1,2,3
    assert iosched.evaluate("filedomain", inst, {"domains": [[[0, 15]], [[15, 40]]]}).time == ev.time


def test_token_hand_computed():
    # blocks of 8, stripes of 10 on 2 servers; A = [0, 12), B = [12, 30), A = [30, 40)
    inst = platform(2, 2, 10, (0, 40), locking="token", block_size=8, acquire_s=1e-6, revoke_s=1e-5)
    ev = evaluate(inst, Domains(([[0, 12], [30, 40]], [[12, 30]])))
    # file order runs A B A: 2 moves; block 1 = [8, 16) split A|B: +1; block 3 = [24, 32) split B|A: +1
    assert ev.conflicts == 4 and ev.acquisitions == 3 and ev.false_sharing_blocks == 2
    assert ev.false_sharing == 1  # stripe [10, 20) only: [20, 30) is all B, [30, 40) all A
    assert ev.lock_time == [pytest.approx(3e-6 + 4e-5)] and ev.bottleneck == "token manager"


def test_holes_are_not_written_and_do_not_end_runs():
    inst = platform(1, 2, 100, requests=[[(0, 10)], [(50, 10)], [(90, 10)]])
    ev = evaluate(inst, Domains(([[0, 30], [60, 100]], [[30, 60]])))
    assert ev.aggregator_bytes == [20, 10] and ev.data_bytes == 30
    assert ev.conflicts == 2 + 1  # A B A on the one server, stripe 0 shared by both
    same = evaluate(inst, Domains(([[0, 100]], [])))
    assert same.conflicts == 0 and same.acquisitions == 1


@st.composite
def small_case(draw):
    S = draw(st.integers(1, 3))
    w = draw(st.integers(2, 9))
    P = draw(st.integers(1, 4))
    locking = draw(st.sampled_from(["extent", "token"]))
    holes = draw(st.booleans())
    block = draw(st.integers(2, 12)) if locking == "token" else None
    offset = draw(st.integers(0, 15))
    length = draw(st.integers(1, 60))
    if holes:
        reqs = [[(offset + draw(st.integers(0, length)), draw(st.integers(0, 12))) for _ in range(3)]]
        reqs[0].append((offset, 1))
        inst = platform(S, P, w, requests=reqs, locking=locking, block_size=block,
                        first_server=draw(st.integers(0, S - 1)), acquire_s=1e-7, revoke_s=3e-7)
    else:
        inst = platform(S, P, w, (offset, length), locking=locking, block_size=block,
                        first_server=draw(st.integers(0, S - 1)), acquire_s=1e-7, revoke_s=3e-7,
                        node_gbs=draw(st.sampled_from([None, 0.5])))
    owner_of = draw(st.lists(st.integers(0, P - 1), min_size=inst.region_length, max_size=inst.region_length))
    return inst, np.array(owner_of), draw(st.sampled_from(["extent", "stripe"]))


@settings(max_examples=150, deadline=None)
@given(small_case())
def test_evaluator_matches_the_per_byte_model(case):
    inst, owner_of, io = case
    ev = evaluate(inst, domains_of(inst, owner_of, io))
    ref = naive(inst, owner_of, io)
    assert ev.feasible
    assert ev.aggregator_bytes == ref["aggregator_bytes"] and ev.server_bytes == ref["server_bytes"]
    assert (ev.conflicts, ev.acquisitions, ev.false_sharing) == (ref["conflicts"], ref["acquisitions"],
                                                                 ref["false_sharing"])
    assert ev.time == pytest.approx(ref["time"], rel=1e-12)


def test_unmerged_and_unordered_extents_score_the_same():
    inst = platform(3, 2, 10, (5, 70))
    merged = evaluate(inst, Domains(([[5, 40]], [[40, 75]])))
    split = evaluate(inst, Domains(([[20, 40], [5, 12], [12, 20]], [[60, 75], [40, 60]])))
    assert split.to_dict() == merged.to_dict()


# --- violations ------------------------------------------------------------------------------------

INST = platform(2, 3, 10, (100, 60))
BAD = {
    "gap": (([[100, 130]], [[131, 160]]), "gap", 1),
    "overlap": (([[100, 131]], [[130, 160]]), "overlap", 1),
    "outside": (([[90, 130]], [[130, 160]]), "outside_region", 10),
    "past_end": (([[100, 130]], [[130, 170]]), "outside_region", 10),
    "empty": (([[100, 100], [100, 130]], [[130, 160]]), "empty_extent", 1),
    "reversed": (([[130, 100]], [[130, 160]]), "empty_extent", 1),
    "too_many": (([[100, 130]], [[130, 160]], [], []), "aggregators", 1),
    "float": (([[100.0, 130]], [[130, 160]]), "malformed", 1),
    "nan": (([[100, float("nan")]], [[130, 160]]), "malformed", 1),
    "inf": (([[100, 130]], [[130, math.inf]]), "malformed", 1),
    "bool": (([[100, 130]], [[130, True]]), "malformed", 1),
    "string": (([["100", 130]], [[130, 160]]), "malformed", 1),
    "triple": (([[100, 130, 5]], [[130, 160]]), "malformed", 1),
    "ragged": (([[100, 130], [130]], [[130, 160]]), "malformed", 1),
    "not_list": (("abc", [[130, 160]]), "malformed", 1),
    "dict": (({"a": 1}, [[130, 160]]), "malformed", 1),
    "huge": (([[100, 2**70]], [[130, 160]]), "malformed", 1),
    "negative": (([[-5, 130]], [[130, 160]]), "outside_file", 1),
    "nothing": ((), "gap", 60),
}


@pytest.mark.parametrize("key", BAD)
def test_violations(key):
    domains, constraint, amount = BAD[key]
    ev = evaluate(INST, Domains(domains))
    assert not ev.feasible and ev.violations[0].constraint == constraint
    assert ev.violations[0].amount == amount
    assert ev.to_dict()["time"] is None


@pytest.mark.parametrize("solution", [{"domains": "all"}, {"domain": []}, [1, 2],
                                      {"domains": [[[100, 160]]], "extra": 1}])
def test_malformed_json_is_refused_naming_what_is_wrong(solution):
    with pytest.raises(InstanceError, match="solution|domains|unknown field"):
        iosched.evaluate("filedomain", INST, solution)


def test_an_unknown_io_mode_in_json_is_infeasible():
    ev = iosched.evaluate("filedomain", INST, {"domains": [[[100, 160]]], "io": "pipelined"})
    assert not ev.feasible and ev.violations


def test_numpy_input_and_types():
    ok = evaluate(INST, Domains((np.array([[100, 130]]), np.array([[130, 160]], dtype=np.uint64))))
    assert ok.feasible
    assert not evaluate(INST, Domains((np.array([[100.0, 130.0]]), np.array([[130, 160]])))).feasible
    assert not evaluate(INST, Domains((np.array([[True, False]]),))).feasible
    assert not evaluate(INST, "domains").feasible


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(0, 1), st.sampled_from([math.nan, math.inf, -math.inf]))
def test_any_non_finite_number_is_infeasible(dom, side, bad):
    domains = [[[100, 120]], [[120, 140]], [[140, 160]]]
    if dom < 3:
        domains[dom][0][side] = bad
    else:
        domains.append([[bad, 0]])
    assert not evaluate(INST, Domains(tuple(domains))).feasible
    assert not iosched.evaluate("filedomain", INST, {"domains": domains}).feasible  # the same as JSON


def test_large_region_extent_count_is_independent_of_size():
    inst = platform(64, 1024, 2**20, (0, 2**40))
    bounds = np.linspace(0, 2**40, 1025).astype(np.int64)
    ev = evaluate(inst, Domains(tuple(np.array([[bounds[a], bounds[a + 1]]]) for a in range(1024))))
    assert ev.feasible and ev.data_bytes == 2**40 and sum(ev.server_bytes) == 2**40
