"""iosched: exact models, the papers' heuristics and one evaluator for HPC I/O scheduling.

    >>> import iosched
    >>> inst = iosched.load_instance("periodic", "paper:set1")
    >>> res = iosched.solve("periodic", inst, "persched")
    >>> res.objective, res.bound, res.gap, res.evaluation.feasible
"""

from iosched import library as _library  # noqa: F401  (adds lib:NAME to every problem's instance specs)
from iosched import problems as _problems  # noqa: F401  (registers problems and methods)
from iosched.core import METHODS, Result, Status, describe, get_problem, solve
from iosched.errors import InstanceError, ParameterError
from iosched.formulations import build_model, solve_model  # (iosched.formulations(...): the formulation study)
from iosched.version import __version__  # noqa: F401


def load_instance(problem: str, spec):
    """An instance of ``problem``, read and validated.

    Parameters
    ----------
    problem : str
        One of ``periodic``, ``window``, ``forwarding``, ``filedomain``, ``malleable``.
    spec : str, Path, dict or instance
        A built-in name (``paper:set3``, ``random:0:20``), a library name (``lib:periodic/paper-set4``),
        a JSON file (name or Path), a dict, JSON text, or an instance (returned as it is).

    Returns
    -------
    instance
        The problem's frozen instance dataclass (``iosched.instances.<problem>``).

    Raises
    ------
    InstanceError
        The spec names nothing, or a field is missing or out of range (the message names it).
    ParameterError
        The problem is unknown.

    Examples
    --------
    >>> import iosched
    >>> inst = iosched.load_instance("periodic", "paper:set1")
    >>> inst.name, len(inst.applications)
    ('paper:set1', 10)
    """
    return get_problem(problem).read_instance(spec)


def evaluate(problem: str, instance, solution):
    """The problem's one evaluator: the only place where feasibility is checked and objectives computed.

    Parameters
    ----------
    problem : str
        The problem's name.
    instance : instance, dict or spec
        As :func:`load_instance` takes it.
    solution : solution object or dict
        The problem's solution (a pattern, a selection, an allocation, file domains, a schedule), or its JSON dict.

    Returns
    -------
    Evaluation
        The problem's: ``feasible``, ``violations`` (each naming the constraint, where and by how much) and
        every objective.

    Raises
    ------
    InstanceError
        The instance or the solution cannot be read (not a solution of this instance's shape).
    ParameterError
        The problem is unknown.

    Notes
    -----
    An infeasible solution is no error: its Evaluation says ``feasible=False`` and lists the violations.

    Examples
    --------
    >>> import iosched
    >>> inst = iosched.load_instance("window", {"capacity": {"nodes": 8, "burst_buffer": 10},
    ...                                         "jobs": [{"id": "a", "nodes": 4, "burst_buffer": 6}]})
    >>> iosched.evaluate("window", inst, {"selected": ["a"]}).feasible
    True
    """
    prob = get_problem(problem)
    return prob.evaluate(prob.read_instance(instance), prob.read_solution(solution))


def plot(problem: str, instance, solution, path=None, title: str = ""):
    """The picture of ``solution`` on ``instance`` as a matplotlib Figure (see :mod:`iosched.plots`).

    Parameters
    ----------
    problem : str
        The problem's name.
    instance : instance, dict or spec
        As :func:`load_instance` takes it.
    solution : solution object or dict
        The problem's solution, or its JSON dict (as :func:`evaluate` takes it).
    path : str or Path, optional
        Where to save the picture too; its suffix chooses the format (png, svg, pdf ...).
    title : str
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The picture (not shown: display it in a notebook, or save it with ``path``).

    Raises
    ------
    ParameterError
        The problem is unknown.
    InstanceError
        The instance or the solution cannot be read.
    """
    from iosched.plots import plot as draw

    return draw(problem, instance, solution, path, title)


def methods(problem: str) -> list[str]:
    """Names of the registered methods of ``problem``, sorted (:func:`describe` tells each one's parameters).

    Parameters
    ----------
    problem : str
        The problem's name; an unknown one has no methods.

    Returns
    -------
    list of str
        The names :func:`solve` takes as ``method``.
    """
    return sorted(m.name for m in METHODS.values() if m.problem == problem)


__all__ = ["load_instance", "evaluate", "plot", "methods", "describe", "solve", "Result", "Status",
           "InstanceError", "ParameterError", "__version__", "build_model", "solve_model"]
