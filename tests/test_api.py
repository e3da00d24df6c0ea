"""The Python front door beyond solve: plotting results and solutions, whole-or-nothing files."""

import errno
from dataclasses import replace
from pathlib import Path

import pytest
from matplotlib.figure import Figure

import iosched
from iosched.errors import OutputError
from iosched.files import write_text

CASES = [("periodic", "paper:set1", "persched"), ("window", "paper:example", "exact"),
         ("forwarding", "random:0:12", "dfra"), ("filedomain", "paper:fig2", "transpose"),
         ("malleable", "random:0:4", "dmr")]


@pytest.mark.parametrize("problem,instance,method", CASES)
def test_result_plot_returns_the_figure_and_saves_it(problem, instance, method, tmp_path):
    res = iosched.solve(problem, instance, method)
    fig = res.plot(tmp_path / "a.png")
    assert isinstance(fig, Figure)
    assert method in fig.axes[0].get_title() and res.status.value in fig.axes[0].get_title()
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert [p.name for p in tmp_path.iterdir()] == ["a.png"]  # no temporary file left beside it
    assert isinstance(res.plot(), Figure)  # no path: drawn, nothing written
    # the same picture from the JSON forms of instance and solution
    again = iosched.plot(problem, iosched.load_instance(problem, instance).to_dict(),
                         res.to_dict(res.instance_data)["solution"], tmp_path / "b.svg", title="t")
    assert again.axes[0].get_title().startswith("t") and (tmp_path / "b.svg").read_text().startswith("<?xml")


def test_nothing_to_plot_is_said_not_drawn(tmp_path):
    res = replace(iosched.solve("window", "paper:example", "exact"), solution=None, status=iosched.Status.TIME_LIMIT)
    with pytest.raises(iosched.ParameterError, match="without a solution: nothing to plot"):
        res.plot(tmp_path / "x.png")
    with pytest.raises(iosched.InstanceError, match="must be a solution object or its JSON dict, got NoneType"):
        iosched.plot("window", "paper:example", None, tmp_path / "x.png")
    assert not list(tmp_path.iterdir())


def test_a_problem_without_a_picture_says_so(monkeypatch, tmp_path):
    from iosched.core import PROBLEMS

    monkeypatch.setitem(PROBLEMS, "window", replace(PROBLEMS["window"], draw=None))
    res = iosched.solve("window", "paper:example", "exact")
    with pytest.raises(iosched.ParameterError, match="problem 'window' has no picture"):  # was a TypeError
        iosched.plot("window", "paper:example", res.solution, tmp_path / "x.png")
    assert not list(tmp_path.iterdir())


def test_a_failed_write_leaves_no_file_and_names_path_and_cause(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    write_text(target, "old\n")

    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OutputError, match=r"cannot write '.*out\.json': No space left on device"):
        write_text(target, "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"  # the old file whole, no temporary beside it
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    with pytest.raises(OutputError, match="cannot write"):
        write_text(tmp_path / "no" / "such" / "folder.json", "x")


def test_a_solve_without_the_problems_bound():
    full = iosched.solve("malleable", "random:0:4", "dmr")
    bare = iosched.solve("malleable", "random:0:4", "dmr", attach_bound=False)
    assert full.bound is not None and bare.bound is None and bare.gap is None
    assert bare.objective == full.objective and bare.evaluation.feasible


@pytest.mark.parametrize("problem, instance, method", [
    ("window", "paper:example", "exact"), ("window", "random:3:20", "naive"), ("periodic", "paper:set1", "persched"),
    ("forwarding", "random:0:20", "dfra"), ("filedomain", "paper:fig2", "even"), ("malleable", "random:0:5", "dmr")])
def test_objectives_and_bounds_are_python_floats(problem, instance, method):
    """One type for every problem's numbers (window's came back as numpy.float64, issue 22)."""
    r = iosched.solve(problem, instance, method)
    assert type(r.objective) is float and (r.bound is None or type(r.bound) is float)


def test_every_method_says_what_it_is_exact_over():
    """iosched list and the docs' one table print it: every solution, a heuristic, or a named scope."""
    from iosched.core import EVERY_SOLUTION, HEURISTIC, METHODS

    for key, m in METHODS.items():
        assert isinstance(m.exact_over, str) and m.exact_over.strip(), key
        assert m.exact_over in (EVERY_SOLUTION, HEURISTIC) or len(m.exact_over.split()) >= 3, (key, m.exact_over)
    assert "exact over: every solution" in str(iosched.describe("window", "exact"))
