"""Hypothesis strategies shared by several test files."""

from hypothesis import strategies as st

from iosched.instances.periodic import Application, PeriodicInstance, Platform


@st.composite
def periodic_instances(draw, max_apps: int = 4):
    """Small periodic instances: 1..max_apps applications on 32 processors of bandwidth 1."""
    n = draw(st.integers(1, max_apps))
    apps = tuple(Application(f"A{i}", draw(st.sampled_from([1, 2, 4, 8])), draw(st.floats(1.0, 100.0)),
                             draw(st.floats(0.5, 200.0))) for i in range(n))
    return PeriodicInstance(Platform(32, 1.0, draw(st.floats(1.0, 16.0))), apps)


@st.composite
def small_card_instances(draw):
    """Two or three applications on a platform of B from 1e-9 to 10 processor cards (bandwidths far below
    one processor's, where PerSched's tolerances in card-seconds once went wrong)."""
    n = draw(st.integers(2, 3))
    cards = 10.0 ** draw(st.integers(-9, 1))
    bandwidth = draw(st.floats(0.5, 8.0))
    apps = tuple(Application(f"A{i}", draw(st.sampled_from([1, 2, 4])), draw(st.floats(0.5, 20.0)),
                             draw(st.floats(0.25, 40.0))) for i in range(n))
    return PeriodicInstance(Platform(16, bandwidth / cards, bandwidth), apps)
