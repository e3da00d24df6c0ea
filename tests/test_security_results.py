"""Result files handed over, edited or broken (issue 49.5-49.7): ``report`` and ``bench`` re-check each one,
name on stderr the file and what is wrong with it, leave it out of the report and run its task again; never a
traceback or a hang."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iosched.cli import main
from iosched.harness import report
from iosched.harness.records import load_checked
from iosched.harness.runner import pending, run_suite
from iosched.harness.suite import load_suite

IOSCHED = [sys.executable, "-m", "iosched.cli"]
SUITE = """problem = "window"
profile = "quick"
[instances]
names = ["paper:example", "random:0:10"]
[[methods]]
name = "naive"
[[methods]]
name = "exact"
"""


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A results folder of four real runs (window: naive and exact on two instances), and its suite."""
    root = tmp_path_factory.mktemp("pristine")
    (root / "suite.toml").write_text(SUITE)
    suite = load_suite(str(root / "suite.toml"))
    assert run_suite(suite, root / "out", workers=1, progress=False) == {"done": 4, "failed": 0, "skipped": 0}
    return root


@pytest.fixture()
def folder(pristine, tmp_path):
    """A copy of the pristine folder to tamper with; (suite path, out, {(method, instance): result path})."""
    shutil.copytree(pristine, tmp_path / "copy")
    out = tmp_path / "copy" / "out"
    files = {}
    for p in (out / "results").glob("*.json"):
        r = json.loads(p.read_text())
        files[r["method"], r["instance"]] = p
    return tmp_path / "copy" / "suite.toml", out, files


def _edit(path: Path, **changes) -> None:
    record = json.loads(path.read_text())
    for key, value in changes.items():
        if value is ...:
            record.pop(key)
        else:
            record[key] = value
    path.write_text(json.dumps(record))


def _report(capsys, out):
    code = main(["report", str(out), "--plots", str(out / "plots")])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_untouched_results_all_hold(folder):
    _, out, files = folder
    good, bad = load_checked(sorted(files.values()))
    assert len(good) == 4 and not bad


def test_an_objective_edited_past_the_bound_is_named_left_out_and_run_again(folder, capsys):
    """The issue's case: naive's 0.16 on paper:example edited to 0.99 beside the exact bound 0.76."""
    suite_path, out, files = folder
    victim = files["naive", "paper:example"]
    assert json.loads(victim.read_text())["objective"] == pytest.approx(0.16)
    _edit(victim, objective=0.99)
    code, text, err = _report(capsys, out)
    assert code == 0 and f"skipped {victim}: it" in err and "is not what its solution re-scores to" in err
    assert "0.99" not in text  # left out: the best value of paper:example stays the exact 0.76
    rows = report.per_instance(report.load_results(out))
    assert {r["instance"]: r["value"] for r in rows}["paper:example"] == pytest.approx(0.76)
    suite = load_suite(str(suite_path))
    assert [t.key for t in pending(suite, out)] == [victim.stem]
    bench = subprocess.run([*IOSCHED, "bench", str(suite_path), "--out", str(out), "--quiet"], capture_output=True,
                           text=True, timeout=300)
    assert bench.returncode == 0 and "1 run (0 failed), 3 already done" in bench.stdout
    assert str(victim) in bench.stderr and "its task runs again" in bench.stderr
    assert json.loads(victim.read_text())["objective"] == pytest.approx(0.16)


def test_a_solution_edited_with_its_objective_still_re_scores(folder, capsys):
    """A forged solution that is feasible is a real solution: its value is what the evaluator gives (and
    the record with it holds); a selection the instance cannot hold is refused."""
    _, out, files = folder
    naive, exact = json.loads(files["naive", "paper:example"].read_text()), files["exact", "paper:example"]
    _edit(files["naive", "paper:example"], solution={**naive["solution"], "selected": ["J1", "J2", "J3", "J4", "J5"]})
    code, _, err = _report(capsys, out)
    assert code == 0 and "its solution re-scores infeasible" in err  # five jobs do not fit
    _edit(exact, solution={"selected": ["nope"], "front": []})
    assert load_checked([exact])[1][exact] == "feasible is True, but its solution re-scores infeasible"
    _edit(exact, solution=[1, 2])
    assert "its solution is not a window solution of its instance: InstanceError" in load_checked([exact])[1][exact]


def test_a_bound_a_stored_solution_beats_is_named(folder, capsys):
    _, out, files = folder
    victim = files["exact", "random:0:10"]
    value = json.loads(files["exact", "random:0:10"].read_text())["objective"]
    _edit(victim, bound=value * 0.5)  # a maximum's bound below a feasible value: no valid bound can be
    code, _, err = _report(capsys, out)
    assert code == 0 and f"skipped {victim}: it" in err
    assert f"is beaten by the value {value!r} that" in err


@pytest.mark.parametrize("changes, message", [
    ({"sense": "sideways"}, "sense must be 'max' for window's hypervolume, got 'sideways'"),
    ({"objective": float("nan")}, "objective must be a number, got nan"),
    ({"objective": "abc"}, "objective must be a number or null, got 'abc'"),
    ({"bound": float("inf")}, "bound must be a finite number, got inf"),
    ({"method": ...}, "has no 'method'"),
    ({"method": "exact"}, "are not the task its key names"),
    ({"params": {"profile": "thorough"}}, "are not the task its key names"),
    ({"status": "DONE"}, "status must be one of OK, TIME_LIMIT"),
    ({"key": "0123456789abcdef"}, "is not its file's name"),
    ({"feasible": "yes"}, "feasible must be true, false or null, got 'yes'"),
    ({"solution": ...}, "claims an objective but stores no solution"),
    ({"objective_name": "speed"}, "objective_name 'speed' is not an objective of window"),
    ({"columns": {"x": "y"}}, "columns.x must be a number"),
    ({"problem": "nope"}, "problem: unknown problem 'nope'"),
    ({"seed": 1.5}, "seed must be an integer or null"),
])
def test_a_malformed_record_is_named_and_not_done(folder, capsys, changes, message):
    suite_path, out, files = folder
    victim = files["naive", "random:0:10"]
    _edit(victim, **changes)
    code, _, err = _report(capsys, out)
    assert code == 0 and f"skipped {victim}: it" in err and message in err and "Traceback" not in err, err
    assert [t.key for t in pending(load_suite(str(suite_path)), out)] == [victim.stem]


@pytest.mark.parametrize("content, message", [
    ("[" * 200_000 + "]" * 200_000, "holds JSON nested too deeply"),
    ('{"key": 1' + "0" * 5000 + "}", "holds a number Python will not read"),
    (b"\xff\xfe\x00garbage", "is not UTF-8 text"),
    ('{"key": ', "is not valid JSON (truncated or garbled"),
    ("[1, 2]", "holds a JSON list, not a result object"),
])
def test_a_result_file_python_cannot_read_is_named_not_a_traceback(folder, capsys, content, message):
    suite_path, out, files = folder
    victim = files["naive", "random:0:10"]
    victim.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = _report(capsys, out)
    assert code == 0 and f"skipped {victim}: it {message}" in err and "Traceback" not in err, err
    suite = load_suite(str(suite_path))
    assert run_suite(suite, out, workers=1, progress=False)["done"] == 1
    assert f"skipped {victim}: it {message}" in capsys.readouterr().err  # said by the bench too
    assert "skipped" not in _report(capsys, out)[2]


def test_a_fifo_or_a_symlink_named_json_in_results_is_refused_without_hanging(folder):
    suite_path, out, files = folder
    fifo = files["exact", "paper:example"]
    fifo.unlink()
    os.mkfifo(fifo)  # opening it to read would block until a writer comes
    victim = files["naive", "random:0:10"]
    victim.unlink()
    victim.symlink_to(files["exact", "random:0:10"])
    for argv in (["report", str(out), "--plots", str(out / "plots")],
                 ["bench", str(suite_path), "--out", str(out), "--quiet"]):
        done = subprocess.run([*IOSCHED, *argv], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert f"{fifo}: it is not a regular file (a FIFO, a device or a socket)" in done.stderr
        assert f"{victim}: it is a symbolic link, not a result file" in done.stderr
    assert "2 run (0 failed), 2 already done" in done.stdout
    assert fifo.is_file() and victim.is_file() and not victim.is_symlink()  # results written in their place


def test_only_bad_results_is_exit_2_naming_them(folder, capsys):
    _, out, files = folder
    for path in files.values():
        _edit(path, sense="sideways")
    code, _, err = _report(capsys, out)
    assert code == 2 and err.count("sense must be 'max'") == 4 and "no results in" in err


SMALL = {"periodic": "paper:set1", "window": "random:0:8", "forwarding": "testbed:cesm", "filedomain": "paper:fig2",
         "malleable": "generate:0:{\"jobs\": 6}"}


def _every_method():
    from iosched.core import METHODS

    return sorted((m.problem, m.name) for m in METHODS.values() if not m.name.startswith("_"))


@pytest.mark.parametrize("problem, method", _every_method())
def test_every_methods_stored_solution_scores_again_to_its_record(tmp_path, problem, method):
    """What the runner writes for each method (its solution's dict, JSON and back) is what the problem's
    evaluator scores to the same value: no honest result is ever refused."""
    import inspect

    from iosched.core import METHODS
    from iosched.harness.runner import _run_task, _write
    from iosched.harness.suite import Task

    accepted = inspect.signature(METHODS[f"{problem}/{method}"].run).parameters
    params = {k: v for k, v in (("time_limit", 2.0), ("profile", "quick")) if k in accepted}
    task = Task(problem, SMALL[problem], method, params, 0 if METHODS[f"{problem}/{method}"].randomized else None)
    record = {**task.to_dict(), "key": task.key, **_run_task(task.to_dict(), None)}
    (tmp_path / "results").mkdir()
    _write(tmp_path, record, {})
    good, bad = load_checked(list((tmp_path / "results").glob("*.json")))
    assert not bad and len(good) == 1, bad
    if record["status"] in ("OK", "TIME_LIMIT") and record["objective"] is not None:
        assert record["solution"] is not None and record["feasible"]


def test_a_large_solution_is_stored_compressed_and_a_bomb_is_refused(tmp_path):
    import base64
    import zlib

    from iosched.harness.records import INLINE_BYTES, MAX_BYTES, BadRecord, Rescorer, stored_solution

    small = {"selected": ["J1"], "front": []}
    assert stored_solution(small) == {"solution": small}
    big = {"selected": [f"j{i}" for i in range(INLINE_BYTES // 4)], "front": []}
    packed = stored_solution(big)
    assert set(packed) == {"solution_zlib"} and len(packed["solution_zlib"]) < INLINE_BYTES
    record = {"problem": "window", "instance": "paper:example", "feasible": True, "objective": 0.5, **packed}
    with pytest.raises(BadRecord, match="feasible is True, but its solution re-scores infeasible"):
        Rescorer().check(record)  # read back whole: the unknown jobs make it infeasible
    bomb = base64.b64encode(zlib.compress(b" " * (MAX_BYTES + 1024), 9)).decode()
    assert len(bomb) < 2**20
    for value, message in ((bomb, "solution_zlib holds more than 256 MiB"), ("@@@", "does not read back"),
                           (5, "solution_zlib must be a string")):
        with pytest.raises(BadRecord, match=message):
            Rescorer().check({**record, "solution_zlib": value})
