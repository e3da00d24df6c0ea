"""What users hand the CLI and the API: bad files, odd types, impossible paths. Never a traceback:
exit 2 (or InstanceError / ParameterError) naming what is wrong."""

import json
import os
from pathlib import Path

import pytest

import iosched
from iosched.cli import main
from iosched.errors import InstanceError, ParameterError
from iosched.instances.window_presets import PAPER_EXAMPLE


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return path


@pytest.mark.parametrize("name, content, message", [
    ("binary.json", b"\x00\xff\xfe\x01", "not a UTF-8 text file"),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("list.json", "[1, 2]", "must be a JSON object"),
    ("huge.json", json.dumps({**PAPER_EXAMPLE.to_dict(), "capacity": {"nodes": 10**400, "burst_buffer": 1}}),
     "capacity.nodes"),
    ("name.json", json.dumps({**PAPER_EXAMPLE.to_dict(), "name": ["x"]}), "name must be a non-empty string"),
])
def test_bad_instance_files_exit_2(capsys, tmp_path, name, content, message):
    code, out, err = run(capsys, "solve", "window", _file(tmp_path, name, content), "--method", "naive")
    assert code == 2 and message in err and "Traceback" not in err and out == ""


def test_a_directory_a_device_or_a_fifo_is_not_an_instance(capsys, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would block forever
    for spec, what in ((tmp_path, "is a directory"), ("/dev/zero", "is not a regular file"),
                       (fifo, "is not a regular file")):
        code, out, err = run(capsys, "solve", "window", spec, "--method", "naive")
        assert code == 2 and f"{str(spec)!r} {what}" in err and out == ""


@pytest.mark.parametrize("problem", ["periodic", "window", "forwarding", "filedomain", "malleable"])
def test_a_number_of_100000_digits_is_refused_not_a_traceback(capsys, tmp_path, problem):
    path = _file(tmp_path, "big.json", '{"name": "x", "a": 1' + "0" * 100_000 + "}")
    code, out, err = run(capsys, "show", problem, path)
    assert code == 2 and "holds a number of more than 4300 digits" in err and "Traceback" not in err
    code, out, err = run(capsys, "solve", "window", "paper:example", "--method", "weighted",
                         "--param", "time_limit=1" + "0" * 5000)
    assert code == 2 and "--param time_limit: a number of more than 4300 digits" in err


@pytest.mark.parametrize("argv, message", [
    (["solve", "window", "paper:example", "--method", "naive", "--seed", "-5"], "seed must be an integer in [0, "),
    (["solve", "window", "paper:example", "--method", "bbsched-ga", "--seed", str(2**64)],
     "seed must be an integer in [0, 9223372036854775807], got 18446744073709551616"),
    (["solve", "window", "paper:example", "--method", "weighted", "--param", "time_limit=5", "--param",
      "time_limit=abc"], "--param time_limit is given twice (5 and 'abc')"),
    (["generate", "window", "--seed", "1", "--param", "size=5", "--param", "size=6"], "--param size is given twice"),
    (["solve", "window", "paper:example", "--method", "exact", "--param", "foo=1"],
     "window/exact: unknown parameter 'foo'; its parameters: engine, decision, profile"),
])
def test_seeds_repeated_and_unknown_parameters_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and out == ""


@pytest.mark.parametrize("argv, message", [
    (["generate", "periodic", "--seed", "1", "--param", "napps=3"], "unexpected keyword argument 'napps'"),
    (["generate", "window", "--seed", "-1"], "seed must be an integer in [0"),
    (["generate", "window", "--seed", "1", "--param", "size=abc"], "size must be an integer, got 'abc'"),
    (["generate", "window", "--seed", "1", "--param", "load=2"], "load must be in (0, 1]"),
    (["solve", "window", "paper:example", "--method", "naive", "--plot", "x.xyz"], "--plot takes a file ending"),
    (["solve", "window", "paper:example", "--method", "naive", "-o", "/nonexistent/x.json"], "cannot write"),
    (["generate", "window", "--seed", "1", "-o", "/nonexistent/x.json"], "cannot write"),
    (["model", "window", "paper:example", "--write", "/nonexistent/m.lp"], "cannot write"),
    (["bench", "window-random", "--out", "/tmp/iosched-never", "--workers", "-1"], "--workers must be an integer"),
    (["bench", "window-random", "--out", "/tmp/iosched-never", "--memory-mb", "10"], "--memory-mb must be"),
    (["solve", "window", "paper:example", "--method", "weighted", "--param", "node_weight=abc"],
     "node_weight must be a number, got 'abc'"),
    (["solve", "window", "paper:example", "--method", "nsga2", "--param", "population=1"],
     "population must be an integer in [2"),
    (["solve", "window", "paper:example", "--method", "bbsched-ga", "--param", "p_m=2"], "p_m must be in [0, 1]"),
    (["solve", "window", "paper:example", "--method", "bbsched-ga", "--param", "generations=0"], "generations"),
    (["solve", "window", "paper:example", "--method", "exact", "--param", "compare=yes"], "compare must be one of"),
    (["solve", "window", "paper:example", "--method", "exact", "--param", "decision=x"], "decision must be one of"),
    (["solve", "window", "paper:example", "--method", "exact", "--profile", "nope"], "unknown solver profile"),
])
def test_bad_options_exit_2_before_any_work(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err, err
    assert "Traceback" not in err and out == ""
    assert not Path("/tmp/iosched-never").exists()


def test_json_output_parses_whatever_the_solver_prints(capsys):
    """HiGHS through Pyomo on random:4:50 (the ε-constraint reaches a trivial constraint) used to print a
    Pyomo error on stdout, so --json output did not parse."""
    code, out, _ = run(capsys, "solve", "window", "random:4:12", "--method", "exact", "--param", "engine=milp",
                       "--profile", "quick", "--json")
    d = json.loads(out)
    assert code == 0 and d["status"] == "optimal" and d["evaluation"]["feasible"]


def test_the_api_takes_paths_dicts_and_json_text(tmp_path):
    path = tmp_path / "w.json"
    PAPER_EXAMPLE.to_json(path)
    for spec in (path, str(path), PAPER_EXAMPLE.to_dict(), PAPER_EXAMPLE.to_json(), PAPER_EXAMPLE):
        inst = iosched.load_instance("window", spec)
        assert inst.jobs == PAPER_EXAMPLE.jobs
    res = iosched.solve("window", PAPER_EXAMPLE.to_dict(), "naive")
    assert res.evaluation.feasible
    again = iosched.evaluate("window", PAPER_EXAMPLE.to_dict(), res.solution.to_dict())
    assert again.feasible and again.nodes == res.evaluation.nodes


@pytest.mark.parametrize("call, message", [
    (lambda: iosched.load_instance("window", None), "got NoneType"),
    (lambda: iosched.load_instance("window", 42), "got int"),
    (lambda: iosched.load_instance("window", ""), "got str"),
    (lambda: iosched.evaluate("window", PAPER_EXAMPLE, None), "window solution must be"),
    (lambda: iosched.evaluate("window", PAPER_EXAMPLE, {"chosen": []}), "not a window selection"),
    (lambda: iosched.solve("window", {"capacity": {}}, "naive"), "missing field .jobs."),
    (lambda: iosched.solve("periodic", PAPER_EXAMPLE, "persched"), "periodic instance must be a PeriodicInstance"),
])
def test_the_api_names_what_it_cannot_take(call, message):
    with pytest.raises((InstanceError, ParameterError), match=message):
        call()


def test_a_bound_past_a_feasible_value_is_dropped(monkeypatch):
    # HiGHS's presolve once proved a filedomain relaxation bound 1.6 % above a solution's evaluated time,
    # and the result said optimal: a bound no valid bound can be is dropped, and so is the claim
    from iosched.core import METHODS, MethodOutput, register

    monkeypatch.setitem(METHODS, "filedomain/_test", None)
    fixed = iosched.solve("filedomain", "paper:fig2", "stripe-aligned")

    @register("filedomain", "_test", objective="time")
    def claims_too_much(instance):
        return MethodOutput(fixed.solution, iosched.Status.OPTIMAL, bound=fixed.objective * 1.01)

    r = iosched.solve("filedomain", "paper:fig2", "_test")
    assert r.status == "feasible" and r.bound < fixed.objective and "method's bound" in r.info["bound_error"]


def test_a_methods_preparation_runs_before_its_clock_and_a_failing_one_is_an_error(monkeypatch):
    # a JIT compilation (PerSched's kernel: seconds on the first run) must not count as the method's time
    import time

    from iosched.core import METHODS, MethodOutput, register

    monkeypatch.setitem(METHODS, "filedomain/_test", None)
    fixed = iosched.solve("filedomain", "paper:fig2", "stripe-aligned")
    calls = []

    def slow_prepare():
        calls.append("prepare")
        time.sleep(0.5)

    @register("filedomain", "_test", objective="time", prepare=slow_prepare)
    def method(instance):
        calls.append("run")
        return MethodOutput(fixed.solution)

    r = iosched.solve("filedomain", "paper:fig2", "_test")
    assert calls == ["prepare", "run"] and r.status == "feasible"
    assert r.prepare_time_s >= 0.5 > r.wall_time_s >= r.method_time_s
    assert r.to_dict()["prepare_time_s"] == r.prepare_time_s

    def broken_prepare():
        raise RuntimeError("no compiler")

    register("filedomain", "_test", objective="time", prepare=broken_prepare)(method)
    r = iosched.solve("filedomain", "paper:fig2", "_test")
    assert r.status == "error" and r.info["error"] == "the method's preparation failed: RuntimeError: no compiler"
    assert calls.count("run") == 1 and r.prepare_time_s is not None


@pytest.mark.parametrize("argv", [
    ["solve", "window", "paper:example", "--method", "naive", "-o", "{dir}/out.json"],
    ["generate", "window", "--seed", "1", "-o", "{dir}/out.json"],
    ["solve", "window", "paper:example", "--method", "naive", "--plot", "{dir}/out.png"],
])
def test_a_full_disk_leaves_no_file_and_exits_2_naming_the_path(capsys, tmp_path, monkeypatch, argv):
    import errno

    import iosched.files

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(iosched.files.os, "replace", full)  # every write dies at its last step
    code, _, err = run(capsys, *[a.format(dir=tmp_path) for a in argv])
    assert code == 2 and f"cannot write '{tmp_path}/out." in err and "No space left on device" in err
    assert not list(tmp_path.iterdir())  # neither the file nor a temporary one


def _swf(jobs, header="; MaxNodes: 4392\n"):
    """An SWF text: ``jobs`` as (number, submit), each 4 nodes for 100 s."""
    return header + "".join(f"{i} {s} 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 -1 -1 -1\n" for i, s in jobs)


def test_simulate_out_folder_is_checked_before_the_simulation(capsys, tmp_path, monkeypatch):
    """A results folder that cannot be written fails before any simulation, exit 2, and a folder
    the failing command made is removed (issue 21: /proc failed after the whole run)."""
    import iosched.batch

    monkeypatch.setattr(iosched.batch, "simulate", lambda *a, **k: pytest.fail("simulated"))
    code, _, err = run(capsys, "simulate", "generate:0:50", "--out", "/proc/iosched-out", "--quiet", "--no-plots")
    assert code == 2 and "/proc/iosched-out" in err
    code, _, err = run(capsys, "simulate", _file(tmp_path, "bad.swf", _swf([(1, 2**63)])), "--out",
                       tmp_path / "out", "--quiet", "--no-plots")
    assert code == 2 and "2^53" in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, message", [
    (_swf([(1, 2**63)]), "field 2 (submit): 9223372036854775808 is beyond 2^53"),
    (_swf([(1, 0)], "; MaxNodes: 9223372036854775808\n"), "MaxNodes"),
    (_swf([(1, 0)], f"; MaxNodes: {2**40}\n"), "nodes must be an integer in [1, 2147483647]"),
])
def test_swf_sizes_beyond_exact_arithmetic_are_refused(capsys, tmp_path, content, message):
    code, _, err = run(capsys, "simulate", _file(tmp_path, "t.swf", content), "--out", tmp_path / "o", "--quiet",
                       "--no-plots")
    assert code == 2 and message in err


def test_swf_with_a_stray_byte_in_a_comment_is_read(capsys, tmp_path):
    trace = _file(tmp_path, "latin.swf", b"; MaxNodes: 4392\n; \xe9t\xe9\n" + _swf([(1, 0)], "").encode())
    code, _, _ = run(capsys, "simulate", trace, "--out", tmp_path / "o", "--quiet", "--no-plots")
    assert code == 0 and json.loads((tmp_path / "o" / "summary.json").read_text())["jobs"] == 1


def test_simulate_warns_when_the_measured_period_holds_few_jobs(capsys, tmp_path):
    """One job of 200 submitted at 10^6 s leaves every other in the warm-up: a warning on stderr
    and in summary.json, not silent zeros (issue 21)."""
    late = _file(tmp_path, "late.swf", _swf([(i, 10 * i) for i in range(1, 200)] + [(200, 10**6)]))
    code, _, err = run(capsys, "simulate", late, "--out", tmp_path / "o", "--quiet", "--no-plots")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert code == 0 and summary["jobs_measured"] == 0 and "0 of 200 jobs" in summary["warnings"][0]
    assert "warning: 0 of 200 jobs" in err
    even = _file(tmp_path, "even.swf", _swf([(i, 10 * i) for i in range(1, 200)]))
    run(capsys, "simulate", even, "--out", tmp_path / "o2", "--quiet", "--no-plots")
    assert not json.loads((tmp_path / "o2" / "summary.json").read_text())["warnings"]


def test_simulate_says_when_the_trace_overloads_the_machine(capsys, tmp_path):
    """A generated day offering more node-seconds than the machine has: the offered load in the
    summary and a warning that the queue grows (issue 22: a 670,351 s average wait, no hint)."""
    code, _, err = run(capsys, "simulate", "generate:0:300", "--mix", "S2", "--out", tmp_path / "o", "--quiet",
                       "--no-plots")
    load = json.loads((tmp_path / "o" / "summary.json").read_text())["offered_load"]
    assert code == 0 and load["burst_buffer"] > 1 and "burst buffer" in err and "the queue grows" in err


def test_bench_on_a_full_disk_stops_with_exit_2_and_no_partial_result(capsys, tmp_path, monkeypatch):
    """A result that cannot be written stops the bench (exit 2 naming the file), no temporary or
    partial file left (the results folder it made, still without a result, removed), and the
    tasks not started are not run (issue 21)."""
    import errno

    import iosched.files

    replace = os.replace

    def full(src, dst):  # the suite's file is written, the first result is not
        if Path(dst).name != "suite.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        replace(src, dst)

    monkeypatch.setattr(iosched.files.os, "replace", full)
    code, _, err = run(capsys, "bench", "window-random", "--out", tmp_path / "b", "--workers", "1")
    assert code == 2 and "No space left on device" in err and "cannot write" in err and "results/" in err
    assert not (tmp_path / "b").exists()  # the folder it made, without a result, is gone
