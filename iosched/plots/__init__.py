"""Pictures of solutions, one module per problem.

Each module's ``plot(instance, solution, path=None, title="")`` draws the solution on a new
:class:`matplotlib.figure.Figure` (no pyplot state, no backend switched: a notebook shows the
figure it returns) and, given ``path``, also saves it there, the format from the extension.
:func:`iosched.plot` and :meth:`iosched.Result.plot` are the front doors.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from iosched.core import get_problem
from iosched.errors import ParameterError
from iosched.files import save_figure


def plot(problem: str, instance, solution, path=None, title: str = "") -> Figure:
    """The picture of ``solution`` (an object or its JSON dict) on ``instance`` (anything
    ``iosched.load_instance`` takes), saved to ``path`` too when given."""
    prob = get_problem(problem)
    if prob.draw is None:
        raise ParameterError(f"problem {problem!r} has no picture")
    instance, solution = prob.read_instance(instance), prob.read_solution(solution)
    return prob.draw(instance, solution, path, title)


def figure(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (6.4, 4.8), **subplots):
    """A new Figure and its axes (``Figure.subplots``' arguments)."""
    fig = Figure(figsize=figsize)
    return fig, fig.subplots(nrows, ncols, **subplots)


def finish(fig: Figure, path=None, dpi: int = 120) -> Figure:
    """Lay ``fig`` out, save it to ``path`` if given (whole or not at all), and return it."""
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi)
    return fig
