"""The public entry points carry numpydoc sections (issue 50 item 4): every parameter of the signature under
Parameters, a Returns section where something is returned, and a Raises section. They are read with the
parser the documentation site uses (sphinx.ext.napoleon, docs/conf.py), so a section napoleon would not see
(a misspelt heading, a parameter written under another name) fails here, not silently on the site."""

from __future__ import annotations

import inspect
import re

import pytest
from sphinx.ext.napoleon import Config
from sphinx.ext.napoleon.docstring import NumpyDocstring

import iosched
import iosched.library
import iosched.library.verdicts
import iosched.solvers
from iosched.batch import workload
from iosched.importers import darshan
from iosched.instances import filedomain_darshan, forwarding_darshan
from iosched.instances import periodic as periodic_instances
from iosched.solvers.lp import LP

# iosched.__all__ names without such sections: a version string, an enum (Status: its members are documented
# under Attributes, test_status_documents_each_member) and the exceptions
NOT_CALLABLE_ENTRY_POINTS = {"__version__", "Status", "InstanceError", "ParameterError"}

ENTRY_POINTS = [
    *(getattr(iosched, n) for n in iosched.__all__ if n not in NOT_CALLABLE_ENTRY_POINTS and n != "Result"),
    iosched.solvers.load_profile, iosched.solvers.solve_pyomo, LP, LP.add_rows, LP.add_cols, LP.solve,
    iosched.library.catalog, iosched.library.entry, iosched.library.load, iosched.library.summary,
    iosched.library.write_summary, iosched.library.solution_of,
    iosched.library.verdicts.check, iosched.library.verdicts.record, iosched.library.verdicts.record_bound,
    iosched.library.verdicts.restate, iosched.library.verdicts.record_run,
    darshan.read, darshan.logs_in, darshan.job_io, periodic_instances.from_darshan, forwarding_darshan.from_darshan,
    filedomain_darshan.from_darshan, workload.read_swf, workload.write_swf,
]


def _rest(obj) -> str:
    """``obj``'s docstring as napoleon turns it into reST for the site."""
    return str(NumpyDocstring(inspect.getdoc(obj) or "", Config(napoleon_use_param=True, napoleon_use_rtype=True)))


def _documented(rest: str) -> set[str]:
    names = set()
    for field in re.findall(r"^:param ([^:]+):", rest, flags=re.M):
        names.update(n.strip().lstrip("\\*").replace("\\", "").lstrip("*") for n in field.split(","))
    return names


def _name(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


@pytest.mark.parametrize("obj", [pytest.param(obj, id=_name(obj)) for obj in ENTRY_POINTS])
def test_each_entry_point_documents_every_parameter_what_it_returns_and_raises(obj):
    rest = _rest(obj)
    signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    wanted = {p for p in signature.parameters if p != "self"}
    missing = wanted - _documented(rest)
    assert not missing, f"{_name(obj)}: parameters not under Parameters: {sorted(missing)}"
    returns = signature.return_annotation not in ("None", None) and not inspect.isclass(obj)
    assert not returns or ":returns:" in rest, f"{_name(obj)} has no Returns section"
    # one returned value, its type line first: without it napoleon reads the description as a type, or its
    # lines as several values (a bullet list on the site)
    assert not returns or (":rtype:" in rest and ":returns: * " not in rest), \
        f"{_name(obj)}: the Returns section needs a type line, then the description indented under it"
    raises = ":raises" in rest
    assert raises or obj in (iosched.methods, workload.write_swf), f"{_name(obj)} has no Raises section"


def test_the_reader_sees_a_missing_parameter():
    """The check above fails where a parameter is left out (a reader that found every name would pass)."""

    def f(a: int, b: int) -> int:
        """Sum.

        Parameters
        ----------
        a : int
            One.

        Returns
        -------
        int
            The sum.
        """
        return a + b

    assert _documented(_rest(f)) == {"a"}
    assert ":returns:" in _rest(f)


@pytest.mark.parametrize("name", sorted(set(iosched.__all__) - {"__version__"}))
def test_every_name_of_all_has_its_own_docstring(name):
    """A docstring of its own, not one inherited from a base class (an exception's, an enum's)."""
    obj = getattr(iosched, name)
    own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    assert own and own.strip(), name


def test_result_documents_its_attributes():
    rest = _rest(iosched.Result)
    for name in ("status", "objective", "bound", "gap", "solution", "evaluation", "info", "wall_time_s"):
        assert re.search(rf"\b{name}\b", rest.partition("Attributes")[2] or rest), name


def test_status_documents_each_member():
    """Each Status member under Attributes, and the one rule for optimal (a bound valid for every solution)."""
    rest = _rest(iosched.Status)
    for member in iosched.Status:
        assert f".. attribute:: {member.name}\n" in rest, member.name
    assert "valid for every solution" in rest and "settle" in rest
