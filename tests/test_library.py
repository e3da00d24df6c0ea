"""The instance library (iosched.library, issue 39): CI re-checks every stored instance, solution,
bound, status and summary, and `iosched library check` gives each of its five verdicts."""

import json
import shutil

import pytest

import iosched
from iosched import library
from iosched.cli import main
from iosched.core import get_problem
from iosched.library import verdicts

ENTRIES = sorted(library.catalog().values(), key=lambda e: e.name)
SUMMARY = library.summary()


def test_at_least_twenty_per_problem_and_a_hundred_in_all():
    counts = {p: len(library.catalog(p)) for p in library.PROBLEMS}
    assert all(n >= 20 for n in counts.values()), counts
    assert sum(counts.values()) >= 100
    assert set(SUMMARY) == {e.name for e in ENTRIES}


def test_the_whole_library_is_far_under_fifty_megabytes():
    total = sum(p.stat().st_size for p in library.DATA.rglob("*") if p.is_file())
    assert total < 5 * 2**20, f"{total / 2**20:.1f} MB"  # the ceiling is 50 MB: keep it far smaller


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.name)
def test_each_instance_regenerates_to_its_hash_and_loads_by_name(e):
    """Its spec (a built-in, or the generator with its seed and parameters) makes the same instance
    today: a changed generator fails here."""
    prob = get_problem(e.problem)
    assert library.instance_hash(prob.read_instance(e.spec).to_dict()) == e.hash
    assert library.instance_hash(library.read_json_gz(e.instance_path)) == e.hash
    inst = iosched.load_instance(e.problem, f"lib:{e.name}")
    assert inst.name == f"lib:{e.name}" and library.instance_hash(inst.to_dict()) == e.hash
    assert iosched.load_instance(e.problem, f"lib:{e.short}").to_dict() == inst.to_dict()


def test_a_changed_generator_changes_the_hash(monkeypatch):
    e = library.entry("window/small-0")
    import iosched.instances.window_presets as w

    original = w.generate
    monkeypatch.setattr(get_problem("window"), "generate",
                        lambda seed, **size: original(seed + 1, **size))  # a generator that draws differently
    assert library.instance_hash(get_problem("window").read_instance(e.spec).to_dict()) != e.hash


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.name)
def test_each_stored_solution_reproduces_its_value_and_respects_every_bound(e):
    """The stored solution re-scores to the summary's value, strictly (the evaluator's tolerances at float
    noise), and matches; every value the history holds is past no bound it holds by more than the numeric
    tolerance (what record allows), the stored solution by no more than its margin; status and gap."""
    rec = SUMMARY[e.name]
    prob = get_problem(e.problem)
    inst = library.load(e.name)
    data = library.read_json_gz(e.solution_path)
    assert library.content_hash(data) == rec["solution_hash"]
    ev = prob.evaluate(inst, prob.read_solution(data))
    assert ev.feasible, ev.violations[:3]
    value = prob.objective(ev, e.objective)
    assert library.relative_gap(rec["best_known"], value) <= e.tolerance, (value, rec["best_known"])
    a = verdicts.check(e.name, data)
    assert a["verdict"] == "matches" and a["strict"] and "contradicts_bound" not in a, a
    history = [r for r in library.read_history(e.problem) if r["instance"] == e.name]
    kinds = [r["kind"] for r in history]
    since = len(kinds) - kinds[::-1].index("restate") if "restate" in kinds else 0  # solutions voided before
    values = [r["value"] for r in history[since:] if r["kind"] == "solution"] + [value]
    for b in (r["value"] for r in history if r["kind"] == "bound"):
        for v in values:  # a bound is at most (min) / at least (max) every value found
            past = b - v if e.sense == "min" else v - b
            assert past <= e.tolerance * max(abs(v), 1e-12), (b, v)
        assert (b - value if e.sense == "min" else value - b) <= a["margin"]
    assert rec["bound"] is not None, "every instance has a bound"
    if rec["status"] == "optimal":
        assert library.relative_gap(rec["best_known"], rec["bound"]) <= e.tolerance
    else:
        assert rec["status"] == "open" and rec["gap"] > e.tolerance


@pytest.mark.parametrize("problem", library.PROBLEMS)
def test_the_class_names_what_closed_an_optimal_instance_and_is_open_exactly_when_the_status_is(problem):
    """Issue 47: periodic/paper-set1 and paper-set9, forwarding/large-1 and medium-0..3 read optimal with
    class open (the class named only the exact method's first profile to reach the bound)."""
    for name, rec in library.summarize(problem)["instances"].items():
        assert (rec["class"] == "open") == (rec["status"] == "open"), (name, rec["class"], rec["status"])
        if rec["status"] == "optimal":
            closed = rec["closed_by"]
            assert rec["class"] == f"{closed['profile']}/{closed['method']}"
            history = [r for r in library.read_history(problem) if r["instance"] == name]
            assert any(r.get("method") == closed["method"] for r in history)
            assert closed["profile"] in library.PROFILES
    for name in {"periodic": ["paper-set1", "paper-set9"], "forwarding": ["large-1", "medium-0", "medium-3"]}.get(
            problem, []):
        rec = library.summarize(problem)["instances"][f"{problem}/{name}"]
        found = rec["found_by"]
        assert rec["status"] == "optimal" and rec["class"] == f"{found['profile']}/{found['method']}", rec["class"]


@pytest.mark.parametrize("problem", library.PROBLEMS)
def test_the_summary_is_what_the_history_says(problem):
    stored = json.loads(library.summary_path(problem).read_text())
    assert stored == json.loads(json.dumps(library.summarize(problem)))


# --- check and record: the five verdicts ------------------------------------------------------------

NAME = "window/small-0"


def _stored(name=NAME):
    return library.read_json_gz(library.entry(name).solution_path)


REAL_SOLUTION = _stored()  # read before any fixture points the library at a scratch copy


def test_the_stored_solution_matches():
    a = verdicts.check(NAME, _stored())
    assert a["verdict"] == "matches" and a["by"] <= 1e-12


def test_a_worse_solution_is_worse_by_how_much():
    res = iosched.solve("window", f"lib:{NAME}", "first-fit")
    a = verdicts.check(NAME, res.to_dict(res.instance_data))  # the whole result, as solve --json writes it
    assert a["verdict"] == "worse"
    assert a["by"] == pytest.approx(SUMMARY[NAME]["best_known"] - res.objective) and a["by"] > 0


def test_an_infeasible_solution_gives_the_evaluators_violations():
    jobs = [j["id"] for j in library.read_json_gz(library.entry(NAME).instance_path)["jobs"]]
    a = verdicts.check(NAME, {"selected": jobs})
    assert a["verdict"] == "infeasible" and a["violations"]


@pytest.mark.parametrize("data, field", [({"selected": 5}, "selected"), ({"chosen": []}, "selected"),
                                         ({"problem": "periodic", "solution": {}}, "problem")])
def test_a_malformed_solution_is_invalid_naming_the_field(data, field):
    a = verdicts.check(NAME, data)
    assert a["verdict"] == "invalid" and field in a["error"]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A copy of the window library where small-0's best known is first-fit's (what an improvement beats)."""
    shutil.copytree(library.DATA / "window", tmp_path / "window")
    monkeypatch.setattr(library, "DATA", tmp_path)
    library.refresh()
    e = library.entry(NAME)
    res = iosched.solve("window", f"lib:{NAME}", "first-fit")
    sol = get_problem("window").solution_to_dict(res.solution, res.instance_data)
    library.write_json_gz(e.solution_path, sol)
    kept = [r for r in library.read_history("window") if not (r["instance"] == NAME and r["kind"] == "solution")]
    library.history_path("window").write_text("".join(json.dumps(r) + "\n" for r in kept))
    library.append_history("window", [{"instance": NAME, "kind": "solution", "value": res.objective,
                                       "method": "first-fit", "params": {}, "solver": "none", "version": "0",
                                       "date": library.now(), "machine": "test", "time_s": 0.0,
                                       "solution_hash": library.content_hash(sol)}])
    library.write_summary("window")
    yield res.objective
    library.refresh()


def test_an_improving_solution_is_recorded_and_the_history_only_grows(scratch, tmp_path, capsys):
    before = library.history_path("window").read_text()
    a = verdicts.check(NAME, REAL_SOLUTION)
    assert a["verdict"] == "improves" and a["by"] == pytest.approx(SUMMARY[NAME]["best_known"] - scratch)
    path = tmp_path / "better.json"
    path.write_text(json.dumps(REAL_SOLUTION))
    assert main(["library", "record", NAME, str(path), "--method", "exact", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recorded"] is True
    after = library.history_path("window").read_text()
    assert after.startswith(before) and after.count("\n") == before.count("\n") + 1
    now = library.summary("window")[NAME]
    assert now["best_known"] == pytest.approx(SUMMARY[NAME]["best_known"]) and now["found_by"]["method"] == "exact"
    assert library.content_hash(library.read_json_gz(library.entry(NAME).solution_path)) == now["solution_hash"]
    assert now == json.loads(json.dumps(library.summarize("window")["instances"][NAME]))
    assert main(["library", "record", NAME, str(path)]) == 1  # the same again only matches: not recorded


def test_an_improvement_past_the_bound_says_the_bound_is_wrong_and_is_not_recorded(scratch):
    kept = [r for r in library.read_history("window") if not (r["instance"] == NAME and r["kind"] == "bound")]
    library.history_path("window").write_text("".join(json.dumps(r) + "\n" for r in kept))
    library.append_history("window", [{"instance": NAME, "kind": "bound", "value": scratch * 1.01,
                                       "backed_by": "a wrong bound", "scope": "every solution", "method": "test",
                                       "version": "0", "date": library.now()}])
    library.write_summary("window")
    a = verdicts.record(NAME, REAL_SOLUTION)
    assert a["verdict"] == "improves" and "a wrong bound" in a["contradicts_bound"] and a["recorded"] is False


# --- the command line ----------------------------------------------------------------------------------

def test_cli_list_json_gives_the_fields(capsys):
    assert main(["library", "list", "window", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(library.catalog("window"))
    assert {"name", "problem", "status", "best_known", "bound"} <= set(rows[0])
    assert main(["library", "list", "--tag", "paper", "--status", "open", "--json"]) == 0
    assert all(r["status"] == "open" and "paper" in r["tags"] for r in json.loads(capsys.readouterr().out))


def test_cli_check_verdicts_and_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(REAL_SOLUTION))
    assert main(["library", "check", f"lib:{NAME}", str(good)]) == 0
    assert "matches" in capsys.readouterr().out
    jobs = [j["id"] for j in library.read_json_gz(library.entry(NAME).instance_path)["jobs"]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"selected": jobs}))
    assert main(["library", "check", NAME, str(bad), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "infeasible"
    bad.write_text("{not json")
    assert main(["library", "check", NAME, str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main(["library", "show", "window/no-such"]) == 2
    assert "no library instance" in capsys.readouterr().err


def test_a_library_name_solves_by_name():
    res = iosched.solve("window", "lib:window/paper-example", "exact")
    assert res.instance == "lib:window/paper-example"
    assert res.objective == pytest.approx(SUMMARY["window/paper-example"]["best_known"])


@pytest.mark.parametrize("problem", library.PROBLEMS)
def test_the_docs_table_has_a_row_per_instance(problem, monkeypatch):
    import importlib
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "_ext" / "iosched_library.py"
    monkeypatch.syspath_prepend(str(path.parent))  # as docs/conf.py puts docs/_ext on the path for Sphinx
    ext = importlib.import_module("iosched_library")
    rows = ext.library_rows(problem)
    assert [r[0] for r in rows] == sorted(e.short for e in library.catalog(problem).values())
    assert all(len(r) == len(ext.HEADER) and r[5] in ("optimal", "open") for r in rows)
    assert (path.parents[1] / f"library-{problem}.md").read_text().count(f"{{iosched-library}} {problem}") == 1


def test_the_report_measures_gaps_against_the_librarys_best_known_and_bound():
    from iosched.harness import report

    rec = SUMMARY[NAME]
    row = {"instance": f"lib:{NAME}", "problem": "window", "method": "first-fit", "params": {}, "seed": None,
           "objective_name": "hypervolume", "sense": "max", "objective": rec["best_known"] / 2, "bound": None,
           "feasible": True, "status": "OK", "solve_s": 0.0}
    assert report.best_known([row])[(f"lib:{NAME}", "hypervolume")] == {
        "sense": "max", "value": rec["best_known"], "bound": rec["bound"]}
    assert report.summarize([row])[0]["mean_gap_value"] == pytest.approx(1.0)  # half the best known: 100 % gap
