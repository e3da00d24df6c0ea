"""The vectorised periodic evaluator against the loop it replaced (kept here as the reference):
same violations in the same order, same amounts, same objectives, on PerSched and MILP patterns
and on patterns broken at random."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.evaluate import Violation
from iosched.evaluate.periodic import Evaluation, Instance, Pattern, dilation, evaluate, sys_efficiency
from iosched.fluid import Segment, cyclic_load, overlap
from iosched.instances.periodic import Application, PeriodicInstance, Platform, paper_set

REL_TOL = 1e-5


# --- the reference: the evaluator's loop before vectorisation (commit 37f7cdc), unchanged ------

def reference(instance: PeriodicInstance, pattern: Pattern, rel_tol: float = REL_TOL) -> Evaluation:
    """Check ``pattern`` against ``instance`` and compute SysEfficiency and Dilation.

    SysEfficiency = Σ_k β_k n_k w_k / (N T); Dilation = max_k ρ_k T / (n_k w_k).
    """
    T = pattern.period
    bad: list[Violation] = []
    if not T > 0:
        return Evaluation(False, [Violation("period", "period", T)])
    if len(pattern.applications) != len(instance.applications):
        return Evaluation(False, [Violation(
            "applications", f"{len(pattern.applications)} given, {len(instance.applications)} expected",
            abs(len(pattern.applications) - len(instance.applications)))])
    t_tol = rel_tol * T
    B = instance.platform.bandwidth
    all_segments: list[Segment] = []
    for app, insts in zip(instance.applications, pattern.applications):
        name = app.name
        if not insts:
            bad.append(Violation("no_instance", name, 1))
            continue
        cap = app.processors * instance.platform.processor_bandwidth
        order = sorted(range(len(insts)), key=lambda i: insts[i].compute_start)
        computes = []
        for i in order:
            c = insts[i].compute_start
            if not 0 <= c < T:
                bad.append(Violation("compute_start", f"{name}#{i}", c))
            computes.append(Segment(c, c + app.work, 1.0))
        if app.work > T:
            bad.append(Violation("compute_overlap", f"{name}: work {app.work} > period", app.work - T))
        n = len(computes)
        # equal-length intervals sorted by start: any overlap shows between cyclic neighbours
        for a, b in [(a, (a + 1) % n) for a in range(n)] if n > 2 else [(0, 1)] if n == 2 else []:
            ov = overlap(computes[a], computes[b], T)
            if ov > t_tol:
                bad.append(Violation("compute_overlap", f"{name}#{order[a]}/#{order[b]}", ov))
        for pos, i in enumerate(order):
            inst = insts[i]
            window_start = inst.compute_start + app.work
            nxt = insts[order[(pos + 1) % len(order)]].compute_start
            window_end = nxt + T if nxt <= inst.compute_start else nxt
            if len(order) == 1:
                window_end = inst.compute_start + T
            moved = 0.0
            for s, e, r in inst.io:
                seg = Segment(s, e, r)
                if e < s or r < 0 or e - s > T + t_tol:
                    bad.append(Violation("segment", f"{name}#{i} [{s}, {e}] rate {r}",
                                         max(s - e, -r, (e - s) - T)))
                    continue
                moved += r * (e - s)
                if r > cap * (1 + rel_tol):
                    bad.append(Violation("app_rate", f"{name}#{i} [{s:.6g}, {e:.6g}]", r - cap))
                outside = _outside(s, e, window_start, window_end, T)
                if outside > t_tol:
                    bad.append(Violation("io_window", f"{name}#{i} [{s:.6g}, {e:.6g}]", outside))
                all_segments.append(seg)
            if abs(moved - app.io_volume) > rel_tol * app.io_volume:
                bad.append(Violation("volume", f"{name}#{i}", moved - app.io_volume))
    for start, end, load in cyclic_load(all_segments, T):
        if load > B * (1 + rel_tol) and end - start > t_tol:
            bad.append(Violation("capacity", f"[{start:.6g}, {end:.6g}]", load - B))
    counts = pattern.counts()
    ev = Evaluation(not bad, bad, counts=counts)
    if min(counts) > 0:
        ev.sys_efficiency, ev.dilation = sys_efficiency(instance, counts, T), dilation(instance, counts, T)
    return ev


def _outside(s: float, e: float, lo: float, hi: float, T: float) -> float:
    """Length of [s, e] (mod T) outside the window [lo, hi] (hi - lo <= T, mod T)."""
    inside = max(overlap(Segment(s, e, 1.0), Segment(lo, hi, 1.0), T), 0.0)
    return max((e - s) - inside, 0.0)



# --- the comparison ------------------------------------------------------------------------------


def _same(inst, pattern):
    new, old = evaluate(inst, pattern), reference(inst, pattern)
    assert new.feasible == old.feasible
    assert [(v.constraint, v.where) for v in new.violations] == [(v.constraint, v.where) for v in old.violations]
    for a, b in zip(new.violations, old.violations):
        assert a.amount == pytest.approx(b.amount, rel=1e-9, abs=1e-12)
    assert new.counts == old.counts
    assert new.sys_efficiency == old.sys_efficiency
    assert new.dilation == old.dilation


@pytest.mark.parametrize("k", [1, 5, 7, 9])
def test_paper_patterns(k):
    inst = paper_set(k)
    _same(inst, iosched.solve("periodic", inst, "persched").solution)


@st.composite
def broken(draw):
    n = draw(st.integers(1, 3))
    apps = tuple(Application(f"A{i}", draw(st.sampled_from([1, 2, 4])), draw(st.floats(1.0, 60.0)),
                             draw(st.floats(0.5, 40.0))) for i in range(n))
    inst = PeriodicInstance(Platform(16, 1.0, draw(st.floats(1.0, 8.0))), apps)
    found = iosched.solve("periodic", inst, "persched", k_prime=3, eps=0.05)
    if found.solution is None:
        return inst, None
    p = found.solution
    apps = [list(a) for a in p.applications]
    for _ in range(draw(st.integers(0, 4))):  # break it: move a start, stretch a segment, change a rate
        k = draw(st.integers(0, len(apps) - 1))
        if not apps[k]:
            continue
        i = draw(st.integers(0, len(apps[k]) - 1))
        inst_ = apps[k][i]
        how = draw(st.sampled_from(["start", "segment", "drop", "extra"]))
        delta = draw(st.floats(-p.period, p.period))
        if how == "start":
            apps[k][i] = Instance(inst_.compute_start + delta, inst_.io)
        elif how == "drop":
            del apps[k][i]
        elif how == "extra":
            apps[k].append(Instance((inst_.compute_start + abs(delta)) % p.period, inst_.io))
        elif inst_.io:
            j = draw(st.integers(0, len(inst_.io) - 1))
            s, e, r = inst_.io[j]
            seg = (s, e + delta / 3, r * draw(st.floats(0.0, 3.0)))
            apps[k][i] = Instance(inst_.compute_start, inst_.io[:j] + (seg,) + inst_.io[j + 1:])
    period = p.period * draw(st.sampled_from([1.0, 1.0, 0.7, 1.3]))
    return inst, Pattern(period, tuple(tuple(a) for a in apps))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken())
def test_random_patterns_broken_at_random(case):
    inst, pattern = case
    if pattern is not None:
        _same(inst, pattern)


def test_milp_pattern():
    two = PeriodicInstance(Platform(4, 1.0, 2.0), (Application("A", 2, 4.0, 4.0), Application("B", 1, 2.0, 2.0)))
    res = iosched.solve("periodic", two, "milp", periods=[12.0], slots=24, profile="quick")
    _same(two, res.solution)
    assert not math.isnan(res.objective)
