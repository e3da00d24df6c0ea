"""Suites and results folders handed over by others (issue 49.6-49.9): every mistake is exit 2 naming the file
and the field (with its line where it has one), never a traceback or a hang; a fuzz of suites and of result
records, each ending in a Suite, an exit-2 error or a refused record."""

import contextlib
import json
import math
import os
import signal
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iosched.cli import main
from iosched.errors import InstanceError, ParameterError
from iosched.harness.suite import load_suite

SUITE = """name = "s"
problem = "window"
profile = "quick"
[instances]
names = ["paper:example"]
[[instances.generate]]
seeds = [0, 1]
size = 5
[[methods]]
name = "naive"
[[methods]]
name = "weighted"
params = { node_weight = 0.5 }
"""


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@contextlib.contextmanager
def within(seconds: int):
    """Fail (not hang) if the block takes longer than ``seconds``."""
    def alarm(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("old, new, message, line", [
    ('[instances]\nnames = ["paper:example"]\n[[instances.generate]]\nseeds = [0, 1]\nsize = 5\n', "instances = 5\n",
     "instances must be a table ([instances] with names", 4),
    ('[[methods]]\nname = "naive"\n[[methods]]\nname = "weighted"\nparams = { node_weight = 0.5 }\n',
     'TOP methods = ["naive"]\n', "methods must be an array of tables ([[methods]] with name = ...), got ['naive']", 1),
    ('[[instances.generate]]\nseeds = [0, 1]\nsize = 5\n', 'generate = ["x"]\n',
     "instances.generate must be an array of tables ([[instances.generate]]", 6),
    ("params = { node_weight = 0.5 }", 'params = "x"', "params of method weighted must be a table", 13),
    ('names = ["paper:example"]', 'names = "paper:example"',
     "names must be a list of instance names, files or globs, got 'paper:example'", 5),
    ('names = ["paper:example"]', 'names = ["paper:example", 5]', "names must be a list", 5),
    ('name = "naive"', "name = 5", "a [[methods]] entry needs name = \"METHOD\" (a string), got 5", 10),
    ('name = "naive"', 'nam = "naive"', "unknown key 'nam' in a [[methods]] entry", 10),
    ('problem = "window"', "problem = [1]", "problem must be a problem's name, got [1]", 2),
    ('name = "s"', "name = 5", "name must be a non-empty string, got 5", 1),
    ("size = 5", "size = 1979-05-27", "bad generator parameters", 6),
    ("params = { node_weight = 0.5 }", "params = { node_weight = 1979-05-27 }", "node_weight", 13),
    ('[[methods]]\nname = "naive"\n[[methods]]\nname = "weighted"\nparams = { node_weight = 0.5 }\n',
     "TOP methods = []\n", "the suite has no methods", 1),
])
def test_a_suite_of_the_wrong_shape_is_exit_2_naming_the_file_the_field_and_its_line(capsys, tmp_path, old, new,
                                                                                    message, line):
    path = tmp_path / "suite.toml"
    assert old in SUITE
    top = new.startswith("TOP ")  # a top-level key: before the first table
    path.write_text(new[4:] + SUITE.replace(old, "") if top else SUITE.replace(old, new))
    code, out, err = run(capsys, "bench", path, "--out", tmp_path / "out", "--quiet")
    assert code == 2 and f"{path}, line {line}: " in err and message in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, message", [
    ("a = " + "[" * 100_000 + "]" * 100_000, "not valid TOML: nested too deeply"),
    ("a = " + "{b = " * 5_000 + "1" + "}" * 5_000, "not valid TOML"),
    (b'problem = "window"\n# \xff\xfe\n', "not UTF-8 text (byte 21)"),
    ("a = 1" + "0" * 5000, "not valid TOML"),
])
def test_a_suite_python_cannot_read_is_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "suite.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = run(capsys, "bench", path, "--out", tmp_path / "out")
    assert code == 2 and f"{path}: {message}" in err and "Traceback" not in err, err


def test_a_fifo_or_a_folder_as_the_suite_is_refused_without_hanging(capsys, tmp_path):
    fifo = tmp_path / "suite.toml"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        with within(60):
            code, _, err = run(capsys, "bench", path, "--out", tmp_path / "out")
        assert code == 2 and f"{str(path)!r} is not a regular file" in err


@pytest.mark.parametrize("old, new, message, line", [
    ('names = ["paper:example"]', 'names = ["paper:example", "paper:example"]',
     "instance 'paper:example' is named twice ('paper:example' and 'paper:example')", 5),
    ("seeds = [0, 1]", "seeds = [0, 1, 0]", "generated instance seed 0 with {'size': 5} is listed twice", 6),
    ('[[methods]]\nname = "naive"\n', '[[methods]]\nname = "naive"\n[[methods]]\nname = "naive"\n',
     "this [[methods]] entry repeats the one at line 9 (naive with the same params)", 11),
    ("params = { node_weight = 0.5 }", 'params = { node_weight = 0.5 }\n[[methods]]\nname = "weighted"\n'
     "params = { node_weight = 0.5 }", "this [[methods]] entry repeats the one at line 11 (weighted", 14),
])
def test_a_task_named_twice_is_refused_naming_the_line(tmp_path, old, new, message, line):
    """A duplicate entry made the same task run several times ('6 run' for one task, issue 49.8)."""
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.replace(old, new))
    with pytest.raises(ParameterError, match=None) as e:
        load_suite(str(path))
    assert f"line {line}: " in str(e.value) and message in str(e.value), str(e.value)


def test_a_glob_over_a_file_also_named_is_refused(tmp_path):
    from iosched.instances.window_presets import PAPER_EXAMPLE

    PAPER_EXAMPLE.to_json(tmp_path / "a.json")
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.replace('names = ["paper:example"]', f'names = ["{tmp_path}/a.json", "{tmp_path}/*.json"]'))
    with pytest.raises(ParameterError, match=r"line 5: instance '.*a\.json' is named twice"):
        load_suite(str(path))
    same_params_other_seed = SUITE.replace('name = "naive"\n', 'name = "naive"\n[[methods]]\nname = "first-fit"\n')
    path.write_text(same_params_other_seed)
    assert len(load_suite(str(path)).tasks) == 3 * 3  # different methods are different tasks


def test_a_bad_out_is_found_before_the_suite_is_loaded(capsys, tmp_path, monkeypatch):
    """A bad --out was said only after a 100,000-instance suite was generated (101.6 s, issue 49.8)."""
    import iosched.harness.suite

    monkeypatch.setattr(iosched.harness.suite, "load_suite", lambda *a: pytest.fail("the suite was loaded"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    (tmp_path / "ro").mkdir()
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "results").write_text("")
    for out, why in ((blocker / "out", "is not a folder"), (blocker, "is not a folder"),
                     (tmp_path / "res", "res/results' is not a folder")):
        code, _, err = run(capsys, "bench", "window-random", "--out", out)
        assert code == 2 and f"--out {str(out)!r} is not a writable directory" in err and why in err, err
    if os.geteuid() != 0:  # root may write anywhere
        (tmp_path / "ro").chmod(0o500)
        code, _, err = run(capsys, "bench", "window-random", "--out", tmp_path / "ro" / "x")
        assert code == 2 and "may not be written" in err


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_the_lock_file_is_never_followed_nor_a_fifo(tmp_path, kind):
    """A .lock symlinked to another file would have been truncated and written through (as root: any file)."""
    from iosched.harness.runner import run_suite

    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    target = tmp_path / "precious"
    target.write_text("keep me")
    if kind == "symlink":
        (out / ".lock").symlink_to(target)
    else:
        os.mkfifo(out / ".lock")
    with within(60), pytest.raises(ParameterError, match="lock file|is not a regular file"):
        run_suite(load_suite(str(path)), out, progress=False)
    assert target.read_text() == "keep me" and not list((out / "results").iterdir())


# the fuzz: a suite whose every field may be any TOML value

def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


SCALARS = st.one_of(st.integers(-10, 10**6), st.sampled_from([2**70, -(2**63)]), st.floats(allow_nan=True),
                    st.booleans(), st.text(string.printable, max_size=12),
                    st.sampled_from(["paper:example", "naive", "window", "quick", "random:0:5", "*", "../x"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["name", "params", "seeds", "size", "x", "node_weight"]), inner, max_size=3), max_leaves=6)
GOOD = {"name": '"s"', "problem": '"window"', "profile": '"quick"', "seeds": "1", "names": '["paper:example"]',
        "gseeds": "[0]", "size": "5", "method": '"naive"', "params": "{}", "jobs": "2"}
TEMPLATE = """name = {name}
problem = {problem}
profile = {profile}
seeds = {seeds}
[instances]
names = {names}
[[instances.generate]]
seeds = {gseeds}
size = {size}
[[methods]]
name = {method}
params = {params}
[slurm]
jobs = {jobs}
"""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(sorted(GOOD)), VALUES, min_size=1, max_size=3))
def test_fuzz_a_suite_is_a_suite_or_a_parameter_error(tmp_path, changes):
    path = tmp_path / "fuzz.toml"
    path.write_text(TEMPLATE.format(**{**GOOD, **{k: _toml(v) for k, v in changes.items()}}))
    with within(60):
        try:
            suite = load_suite(str(path))
        except (ParameterError, InstanceError) as e:
            assert str(path) in str(e)
            return
    keys = [t.key for t in suite.tasks]
    assert len(keys) == len(set(keys))  # no task twice


# the fuzz: a result record whose fields may be any JSON value

@pytest.fixture(scope="module")
def record_folder(tmp_path_factory):
    from iosched.harness.runner import run_suite

    root = tmp_path_factory.mktemp("records")
    (root / "s.toml").write_text('problem = "window"\n[instances]\nnames = ["paper:example"]\n'
                                 '[[methods]]\nname = "naive"\n')
    run_suite(load_suite(str(root / "s.toml")), root / "out", workers=1, progress=False)
    (path,) = (root / "out" / "results").glob("*.json")
    return path


JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
                                     st.sampled_from(["max", "min", "OK", "naive", "window", "hypervolume"])),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)
CRITICAL = ("problem", "instance", "method", "params", "seed", "key", "status", "objective", "objective_name",
            "sense", "feasible", "solution", "bound")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(CRITICAL + ("solve_s", "columns", "starved", "message", "host")),
                               JSON_VALUES, min_size=1, max_size=3))
def test_fuzz_a_result_record_holds_only_if_it_is_what_its_run_wrote(tmp_path, record_folder, changes):
    from iosched.harness.records import load_checked

    original = json.loads(record_folder.read_text())
    path = tmp_path / record_folder.name
    path.write_text(json.dumps({**original, **changes}))
    with within(60):
        good, bad = load_checked([path])
    assert len(good) + len(bad) == 1
    if good:  # what holds is the run's record in every field that counts
        changed = {k for k, v in changes.items() if json.dumps(v) != json.dumps(original.get(k))}
        assert not changed & {"problem", "instance", "method", "params", "seed", "key", "objective",
                              "objective_name", "sense", "feasible", "solution"}, changed
        record = good[path]
        assert record["sense"] == "max" and record["objective"] == original["objective"]


def test_fuzzed_report_and_bench_end_in_0_or_2(capsys, tmp_path, record_folder):
    """The CLI over a folder of fuzzed records: exit 0 or 2, never a traceback."""
    import random

    rng = random.Random(7)
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    original = json.loads(record_folder.read_text())
    values = [None, 5, "x", [], {}, float("nan"), 10**20, True, [[[]]], {"a": {"b": 1}}]
    for i in range(20):
        record = dict(original)
        for key in rng.sample(list(CRITICAL), 2):
            record[key] = rng.choice(values)
        (out / "results" / f"{i:016x}.json").write_text(json.dumps(record))
    (out / "results" / record_folder.name).write_text(record_folder.read_text())
    with within(300):
        code, _, err = run(capsys, "report", out, "--plots", tmp_path / "plots")
    assert code == 0 and err.count("iosched: skipped") == 20 and "Traceback" not in err
    Path(out / "results" / record_folder.name).unlink()
    code, _, err = run(capsys, "report", out)
    assert code == 2 and "no results in" in err
    suite = record_folder.parent.parent.parent / "s.toml"
    own = out / "results" / record_folder.name  # the suite's one task, its file fuzzed: bench runs it again
    for _ in range(4):
        record = dict(original)
        for key in rng.sample(list(CRITICAL), 2):
            record[key] = rng.choice(values)
        own.write_text(json.dumps(record))
        with within(300):
            code, text, err = run(capsys, "bench", suite, "--out", out, "--workers", "1", "--quiet")
        assert code == 0 and "Traceback" not in err
        assert ("1 run (0 failed)" in text and f"skipped {own}: it" in err) or "1 already done" in text, (text, err)
        assert json.loads(own.read_text())["objective"] == original["objective"] or "1 already done" in text
