"""The LP proofs of iosched.models.rational_lp: the safe bound computed in floating point with its error
allowance never exceeds the same bound computed in exact arithmetic, and stays close to it."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.models.rational_lp import RationalLP, Session, float_safe_bound

# awkward rationals (1/3, 7/10: not floats) over 12 orders of magnitude, and zeros
NUMBERS = st.builds(lambda a, b, e: Fraction(a, b) * Fraction(10) ** e, st.integers(-999, 999), st.integers(1, 999),
                    st.integers(-6, 6))
DUALS = st.one_of(st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=True), st.just(0.0),
                  st.sampled_from([1 / 3, -2 / 3, 1e-300, -5e-324, 0.1]))


@st.composite
def lps(draw):
    """A small LP: n columns with finite bounds, m rows each with a lower side, an upper side or both equal
    (the LP backends take no ranged rows)."""
    n, m = draw(st.integers(1, 6)), draw(st.integers(0, 8))
    lower = [draw(NUMBERS) for _ in range(n)]
    upper = [lo + abs(draw(NUMBERS)) for lo in lower]
    rows = []
    for _ in range(m):
        cols = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        coefs = {j: draw(NUMBERS) for j in cols}
        coefs = {j: c for j, c in coefs.items() if c} or {cols[0]: Fraction(1, 3)}
        lo, hi = draw(st.sampled_from([(True, False), (False, True), (True, True)]))
        a = draw(NUMBERS)
        rows.append((coefs, a if lo else None, a if hi else None))
    return RationalLP([draw(NUMBERS) for _ in range(n)], draw(NUMBERS), lower, upper, rows)


@settings(max_examples=300, deadline=None)
@given(lps(), st.data())
def test_the_float_safe_bound_never_exceeds_the_exact_one(lp, data):
    """For any multipliers (any signs, tiny, huge, 1/3 as a float), the bound computed in floating point
    is at most the exact bound of the same multipliers (the float y as exact numbers), and within its
    allowance of it: at most 1e-12 of the magnitudes involved below."""
    y = data.draw(st.lists(DUALS, min_size=len(lp.rows), max_size=len(lp.rows)))
    session = Session(lp, "highs")
    floor = float_safe_bound(y, session.forms, session.cost, session.constant, session.lower, session.upper)
    exact = lp.safe_bound({r: Fraction(v) for r, v in enumerate(y) if v})
    assert floor <= exact
    size = abs(lp.constant) + sum(abs(Fraction(v)) * (abs(lo or 0) + abs(hi or 0))
                                  for v, (_, lo, hi) in zip(y, lp.rows))
    size += sum((abs(c) + sum(abs(Fraction(v) * row[0].get(j, 0)) for v, row in zip(y, lp.rows)))
                * max(abs(lo), abs(hi)) for j, (c, lo, hi) in enumerate(zip(lp.cost, lp.lower, lp.upper)))
    assert exact - Fraction(floor) <= Fraction(1, 10**12) * (size + 1)


@settings(max_examples=100, deadline=None)
@given(lps())
def test_a_nodes_floor_is_below_its_exact_optimum(lp):
    """HiGHS's duals at its optimum give a floor at most the LP's exact optimum (an exact optimal vertex where
    one is found, else any exactly feasible point's value bounds it from above); infeasibility claimed by
    HiGHS's ray is proven: the exact phase one finds no point with a negative violation either."""
    cert, exact_lp = Session(lp, "highs").solve([], 10.0)
    if cert.status == "optimal":
        exact_lp.certify_vertex(cert)
        assert math.isfinite(cert.floor)
        if cert.x is not None:
            assert Fraction(cert.floor) <= cert.value
    elif cert.status == "infeasible":
        assert lp.solve("highs", 10.0).status != "optimal"


def test_a_floor_on_a_small_lp_by_hand():
    """min x + y s.t. x + 2y >= 3, 2x + y >= 3, 0 <= x, y <= 10: optimum 2 at (1, 1), duals (1/3, 1/3). The
    floor is 2 less its allowance (about 1e-14), and x + y <= 1 added is infeasible, proven by the ray in
    floating point."""
    lp = RationalLP([Fraction(1), Fraction(1)], Fraction(0), [Fraction(0)] * 2, [Fraction(10)] * 2,
                    [({0: Fraction(1), 1: Fraction(2)}, Fraction(3), None),
                     ({0: Fraction(2), 1: Fraction(1)}, Fraction(3), None)])
    session = Session(lp, "highs")
    cert, _ = session.solve([], 10.0)
    assert cert.status == "optimal" and 2 - 1e-12 < cert.floor < 2
    cut = [({0: Fraction(1), 1: Fraction(1)}, None, Fraction(1))]
    cert, _ = session.solve(cut, 10.0)
    assert cert.status == "infeasible" and "in floats" in cert.message
    # 1e308 * 1e10 overflows: no bound, rather than an infinite or NaN one
    assert float_safe_bound([1e308], [(1e10, math.inf, [0], [1.0])], [0.0], 0.0, [0.0], [1.0]) == -math.inf
