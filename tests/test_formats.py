"""The JSON formats (issue 51 item 4): each problem's field tables (iosched.instances.fields) are what its loaders
check and what its docs page prints; every key the package writes is in them, every key they list loads, an
unknown key is refused naming it; the page's example instance is the template ``iosched show P --template``
prints, and its example solution scores feasible."""

import copy
import json
import re
from pathlib import Path

import pytest

import iosched
from iosched.cli import main
from iosched.core import get_problem
from iosched.errors import InstanceError
from iosched.evaluate import filedomain as filedomain_eval
from iosched.evaluate import forwarding as forwarding_eval
from iosched.evaluate import malleable as malleable_eval
from iosched.evaluate import window as window_eval
from iosched.instances import filedomain, forwarding, forwarding_presets, malleable, periodic_fields, window
from iosched.instances.fields import Field, Fields

DOCS = Path(__file__).resolve().parents[1] / "docs" / "formats"
TABLES = {
    "periodic": (periodic_fields.FIELDS, periodic_fields.SOLUTION_FIELDS),
    "window": (window.FIELDS, window_eval.SOLUTION_FIELDS),
    "forwarding": (forwarding.FIELDS, forwarding_eval.SOLUTION_FIELDS),
    "filedomain": (filedomain.FIELDS, filedomain_eval.SOLUTION_FIELDS),
    "malleable": (malleable.FIELDS, malleable_eval.SOLUTION_FIELDS),
}
ALIASES = {"running[]": "jobs[]"}  # forwarding: a running job has a job's fields (and its own, in the table)
# instances that between them write every optional part of each format
EXAMPLES = {
    "periodic": ["paper:set1", "paper:set10"],
    "window": ["paper:example", "random:0:12:S5"],
    "forwarding": ["figure4", "random:0:8", "pair:wrf1:awp"],
    "filedomain": ["paper:fig2", "example:gpfs", "example:requests", "random:3:4:6:8:token:requests"],
    "malleable": ["paper:50", "random:0:6:grid", "random:1:6:feitelson"],
}
METHOD = {"periodic": "persched", "window": "nsga2", "forwarding": "dfra", "filedomain": "even", "malleable": "dmr"}


def _page(problem: str) -> str:
    return (DOCS / f"{problem}.md").read_text()


def _saved(problem: str) -> dict[str, dict]:
    return {m.group(1): json.loads(m.group(2))
            for m in re.finditer(r"saved as `([^`]+)`[^`]*?```json\n(.*?)```", _page(problem), re.S)}


def _walk(value, path: str, table: Fields, seen: set) -> None:
    """Every key of ``value`` (the JSON at ``path``) is a field of ``table``; the fields met go in ``seen``."""
    def has_children(p):
        return any(f.parent == p for f in table)

    if isinstance(value, list) and has_children(f"{path}[]"):
        for item in value:
            _walk(item, f"{path}[]", table, seen)
    elif isinstance(value, dict) and (f"{path}{{}}" in table.by_path or has_children(f"{path}{{}}")):
        for item in value.values():
            _walk(item, f"{path}{{}}", table, seen)
    elif isinstance(value, dict) and (path == "" or has_children(path) or has_children(ALIASES.get(path, "-"))):
        for key, item in value.items():
            child = f"{path}.{key}" if path else key
            if child not in table.by_path and path in ALIASES:
                child = f"{ALIASES[path]}.{key}"
            assert child in table.by_path, f"{table.label}: {child!r} is written but not in its field table"
            seen.add(child)
            _walk(item, child, table, seen)


def _at(doc, path: str):
    """The object at ``path`` in ``doc`` (its first item where the path crosses a list), or None."""
    node = doc
    for part in [p for p in path.split(".") if p]:
        key = part.replace("[]", "").replace("{}", "")
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
        if part.endswith("[]"):
            node = node[0] if isinstance(node, list) and node else None
        elif part.endswith("{}"):
            node = next(iter(node.values()), None) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _documents(problem: str) -> list[dict]:
    prob = get_problem(problem)
    return [prob.template().to_dict()] + [prob.read_instance(spec).to_dict() for spec in EXAMPLES[problem]]


@pytest.mark.parametrize("problem", list(TABLES))
def test_every_key_written_is_in_the_table_and_every_field_is_written(problem):
    table = TABLES[problem][0]
    seen: set = set()
    for doc in _documents(problem):
        _walk(doc, "", table, seen)
    prob = get_problem(problem)
    template = prob.template()
    solution = iosched.solve(problem, template, METHOD[problem], attach_bound=False).solution
    solutions = [prob.solution_to_dict(solution, template), _saved(problem)[_solution_file(problem)]]
    solution_seen: set = set()
    for doc in solutions:
        _walk(doc, "", TABLES[problem][1], solution_seen)
    # the examples write every required field (the optional ones are written where they differ from absence)
    assert all(not table.by_path[p].required for p in {f.path for f in table if not f.items} - seen)
    assert {f.path for f in TABLES[problem][1] if f.required and not f.items} <= solution_seen


def _solution_file(problem: str) -> str:
    return {"periodic": "pattern.json", "window": "selection.json", "forwarding": "allocation.json",
            "filedomain": "domains.json", "malleable": "schedule.json"}[problem]


@pytest.mark.parametrize("problem", list(TABLES))
def test_an_unknown_key_anywhere_is_refused_naming_it(problem):
    """Each object of the format (the document, capacity, jobs[], jobs[].history ...) refuses a key beyond the
    table, so a field cannot be accepted without being in the table that documents it."""
    table = TABLES[problem][0]
    objects = {""} | {f.parent for f in table if f.parent}
    docs = _documents(problem)
    prob = get_problem(problem)
    for path in sorted(objects):
        if path.startswith(("interference.slowdown", "jobs[].runtime")):  # checked by their own tables of keys
            continue
        doc = next((copy.deepcopy(d) for d in docs if _at(d, path) is not None), None)
        if doc is None and path in table.by_path and "." not in path:  # an optional object no example writes
            doc = {**copy.deepcopy(docs[0]), path: {}}
        assert doc is not None, f"no example holds {path!r}"
        _at(doc, path)["bogus_key"] = 1
        with pytest.raises(InstanceError, match="bogus_key"):
            prob.read_instance(doc)
    if problem != "periodic":  # Pattern.from_dict (evaluate/periodic.py) reads what it knows: not yet checked
        solution = _saved(problem)[_solution_file(problem)]
        for path in sorted({""} | {f.parent for f in TABLES[problem][1] if f.parent}):
            doc = copy.deepcopy(solution)
            if _at(doc, path) is None:
                continue
            _at(doc, path)["bogus_key"] = 1
            with pytest.raises(InstanceError, match="bogus_key|not a window selection"):
                prob.read_solution(doc)


@pytest.mark.parametrize("problem", list(TABLES))
def test_the_page_example_is_the_template_and_its_solution_is_feasible(problem, capsys):
    prob = get_problem(problem)
    saved = _saved(problem)
    assert set(saved) == {f"{problem}.json", _solution_file(problem)}
    template = prob.template()
    assert type(template).from_dict(saved[f"{problem}.json"]) == template
    assert main(["show", problem, "--template"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed) == saved[f"{problem}.json"] and len(printed) < 2000  # small: a page, not 120 KB
    evaluation = iosched.evaluate(problem, template, saved[_solution_file(problem)])
    assert evaluation.feasible, evaluation.violations
    page = _page(problem)
    assert page.count("```{iosched-fields}") == 2
    assert f"iosched show {problem} --template" in page


def test_show_takes_an_instance_or_the_template(capsys):
    assert main(["show", "window"]) == 2
    assert "an instance or --template" in capsys.readouterr().err
    assert main(["show", "window", "paper:example", "--template"]) == 2


def test_fields_tables():
    table = Fields("thing", Field("a", "object", "", "an object"), Field("a.b", "integer", "", "required"),
                   Field("a.c", "integer", "", "optional", 3), Field("xs", "list", "", "items", []),
                   Field("xs[]", "object", "", "an item"), Field("xs[].y", "string", "", "y"))
    assert table.keys() == (("a",), ("xs",)) and table.keys("a") == (("b",), ("c",))
    assert table.keys("xs[]") == (("y",), ())
    assert table.get({}, "a.c") == 3 and table.get({"c": 5}, "a.c") == 5
    table.check({"a": {"b": 1}})
    with pytest.raises(InstanceError, match="missing field 'a' in thing"):
        table.check({"xs": []})
    with pytest.raises(InstanceError, match=r"unknown field xs\[2\].z"):
        table.check({"y": "", "z": 1}, "xs[]", "xs[2]")
    with pytest.raises(ValueError, match="a path appears twice"):
        Fields("dup", Field("a", "integer", "", ""), Field("a", "integer", "", ""))


def test_forwarding_template_is_in_the_presets():
    assert get_problem("forwarding").template is forwarding_presets.template
