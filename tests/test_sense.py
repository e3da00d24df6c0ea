"""An objective's sense is a Sense (issue 50): each problem lists the objectives it scores, an unknown name is an
error naming it (it used to become "min" silently, ranking a misspelt maximised objective backwards), and the
JSON and text still say "min" and "max"."""

import json

import pytest

import iosched
from iosched.core import METHODS, PROBLEMS, Sense
from iosched.errors import ParameterError
from iosched.formulations.registry import FORMULATIONS
from iosched.harness.records import BadRecord, check_fields
from iosched.validate import OneOf, declared_checks

SENSES = {("periodic", "sys_efficiency"): "max", ("periodic", "dilation"): "min",
          ("window", "hypervolume"): "max", ("forwarding", "total_io_time"): "min",
          ("forwarding", "max_io_time"): "min", ("malleable", "mean_completion"): "min",
          ("malleable", "makespan"): "min", ("malleable", "utilization"): "max",
          ("filedomain", "time"): "min", ("filedomain", "bandwidth"): "max", ("filedomain", "conflicts"): "min"}


@pytest.mark.parametrize("problem, objective", sorted(SENSES))
def test_each_objective_has_the_sense_it_had(problem, objective):
    sense = PROBLEMS[problem].sense(objective)
    assert isinstance(sense, Sense) and sense == SENSES[problem, objective]


def _objectives(problem: str) -> set[str]:
    """Every objective a method or a formulation of ``problem`` can report."""
    out = set()
    for m in METHODS.values():
        if m.problem == problem and not m.name.startswith("_"):
            out.add(m.objective)
            checks = declared_checks(m.run).get("objective", ([], False))[0]
            out.update(o for c in checks if isinstance(c, OneOf) for o in c.options)
    for f in FORMULATIONS.get(problem, {}).values():
        if isinstance(f.objective, str):
            out.add(f.objective)
    return out


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_every_objective_a_method_or_formulation_reports_is_known_to_its_problem(problem):
    for objective in _objectives(problem):
        assert PROBLEMS[problem].sense(objective) in (Sense.MIN, Sense.MAX), objective
    assert set(PROBLEMS[problem].objectives) >= _objectives(problem)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_an_unknown_objective_is_an_error_naming_it(problem):
    with pytest.raises(ParameterError, match=f"{problem} has no objective 'sys_efficency'; its objectives: "):
        PROBLEMS[problem].sense("sys_efficency")


def test_a_method_registered_for_an_unknown_objective_stops_before_it_runs():
    from iosched.core import MethodOutput, register

    ran = []

    @register("window", "_sense_probe", objective="hypervolum")
    def probe(instance):
        ran.append(1)
        return MethodOutput(None)

    try:
        with pytest.raises(ParameterError, match="window has no objective 'hypervolum'"):
            iosched.solve("window", "paper:example", "_sense_probe")
    finally:
        METHODS.pop("window/_sense_probe", None)
    assert not ran


def test_the_result_says_min_and_max_as_plain_strings():
    res = iosched.solve("periodic", "paper:set1", "persched", time_limit=10)
    assert res.sense is Sense.MAX
    data = res.to_dict(res.instance_data)
    assert type(data["sense"]) is str and json.dumps(data["sense"]) == '"max"'
    assert f"({res.sense})" == "(max)"


def test_a_record_with_an_objective_its_problem_does_not_score_is_refused():
    from iosched.harness.suite import Task

    task = Task("window", "paper:example", "naive", {}, None)
    record = {**task.to_dict(), "key": task.key, "status": "OK", "objective_name": "hypervolum",
              "sense": "max", "objective": 0.5, "feasible": True}
    with pytest.raises(BadRecord, match=r"objective_name 'hypervolum' is not an objective of window \(its "
                                        r"objectives: hypervolume, nodes, burst_buffer\)"):
        check_fields(record, task.key)
    check_fields({**record, "objective_name": "hypervolume"}, task.key)  # the same record, rightly named, passes
