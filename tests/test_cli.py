"""The command line contract that scripts rely on."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iosched.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_json_contract(capsys, tmp_path):
    plot = tmp_path / "p.png"
    code, out, _ = run(capsys, "solve", "periodic", "paper:set1", "--method", "persched", "--json",
                       "--plot", str(plot))
    assert code == 0
    d = json.loads(out)
    for key in ("problem", "instance", "method", "status", "objective", "bound", "gap", "wall_time_s",
                "params", "evaluation", "solution"):
        assert key in d
    assert d["status"] == "feasible" and d["evaluation"]["feasible"] is True
    assert d["objective"] == pytest.approx(0.0973, rel=1e-3)
    assert d["evaluation"]["dilation"] == pytest.approx(1.896, rel=1e-3)
    assert d["bound"] == pytest.approx(0.0977, abs=1e-4) and d["gap"] > 0
    assert len(d["solution"]["applications"]) == 10
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_solve_params_and_file_instance(capsys, tmp_path):
    code, out, _ = run(capsys, "generate", "periodic", "--seed", "3", "--param", "n_apps=3",
                       "-o", str(tmp_path / "i.json"))
    assert code == 0 and (tmp_path / "i.json").exists()
    code, out, _ = run(capsys, "solve", "periodic", str(tmp_path / "i.json"), "--method", "persched-mindil",
                       "--param", "k_prime=2", "--param", "eps=0.05", "--json")
    d = json.loads(out)
    assert code == 0 and d["params"] == {"k_prime": 2, "eps": 0.05}
    assert d["evaluation"]["feasible"] and d["objective"] == d["evaluation"]["dilation"]
    assert d["objective"] >= d["bound"] * (1 - 1e-9)


def test_summary_bound_show_list(capsys):
    code, out, _ = run(capsys, "solve", "periodic", "paper:set10", "--method", "persched")
    assert code == 0 and "sys_efficiency" in out and "feasible: True" in out
    code, out, _ = run(capsys, "bound", "periodic", "paper:set1", "--json")
    b = json.loads(out)["bounds"]
    assert b["lp_sys_efficiency"] == pytest.approx(0.0977, abs=1e-4)
    assert b["paper_sys_efficiency"] == pytest.approx(0.1725, abs=1e-4)
    assert b["lp_dilation"] == pytest.approx(1.765, abs=1e-3)
    code, out, _ = run(capsys, "show", "periodic", "paper:set2")
    assert json.loads(out)["t_min"] == 16000
    code, out, _ = run(capsys, "list")
    assert "persched-mindil" in out and "paper:set10" in out
    assert "random:SEED[:SIZE[:MIX[:ssd]]]" in out  # the spec forms, not only the named instances


def test_compile_readies_every_kernel_ahead_of_a_solve(capsys):
    code, out, _ = run(capsys, "compile")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and all(" ready in " in line for line in lines)
    assert "periodic/persched," in lines[0] and "periodic/trace-compact" in lines[0]
    assert lines[1].startswith("window/constrained-bb, ") and "window/weighted: ready" in lines[1]
    code, out, _ = run(capsys, "solve", "periodic", "paper:set9", "--method", "persched")
    assert code == 0 and "before it, the method's preparation" in out


def test_compile_says_which_preparation_failed_and_exits_1(capsys, monkeypatch):
    from iosched.core import METHODS, register

    def broken():
        raise RuntimeError("no compiler")

    monkeypatch.setitem(METHODS, "window/_test", None)
    register("window", "_test", objective="hypervolume", prepare=broken)(lambda instance: None)
    code, out, err = run(capsys, "compile")
    assert code == 1 and "window/_test: failed: RuntimeError: no compiler" in err
    assert "periodic/persched," in out and "window/exact" in out  # the others were still readied


@pytest.mark.parametrize("argv, message", [
    (["solve", "periodic", "paper:set42", "--method", "persched"], "paper set must be 1..10"),
    (["solve", "periodic", "nope.json", "--method", "persched"], "no such instance file"),
    (["solve", "periodic", "paper:set1", "--method", "magic"], "unknown method 'magic'"),
    (["solve", "periodic", "paper:set1", "--method", "persched", "--param", "eps=-1"], "eps"),
    (["solve", "periodic", "paper:set1", "--method", "persched", "--param", "bogus=1"], "bogus"),
    (["solve", "periodic", "paper:set1", "--method", "persched", "--profile", "quick"], "runs no solver"),
    (["solve", "nosuch", "x", "--method", "exact"], "unknown problem 'nosuch'"),
    (["solve", "window", "paper:example", "--method", "exact", "--param", "engine=simplex"],
     "engine must be one of dp, milp, cpsat, got 'simplex'"),
])
def test_bad_input_exits_2_with_a_message(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err


def test_bad_json_file_names_the_field(capsys, tmp_path):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({"platform": {"processors": 8, "processor_bandwidth": 1, "bandwidth": -2},
                             "applications": [{"name": "a", "processors": 1, "work": 1, "io_volume": 1}]}))
    code, _, err = run(capsys, "solve", "periodic", str(f), "--method", "persched")
    assert code == 2 and "platform.bandwidth" in err and "-2" in err


def test_reproduce_prints_the_table(capsys):
    code, out, _ = run(capsys, "reproduce", "periodic", "--sets", "1", "10")
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| 1 ") or line.startswith("| 10 ")]
    assert len(rows) == 2 and "0.0973" in rows[0] and "True" in rows[0]


def test_model_writes_lp_and_mps(capsys, tmp_path):
    code, out, _ = run(capsys, "model", "periodic", "paper:set10", "--param", "period=126680", "--param", "slots=60",
                       "--write", str(tmp_path / "m.lp"))
    assert code == 0 and "120 integer" in out
    assert "x(1_59)" in (tmp_path / "m.lp").read_text()
    code, out, _ = run(capsys, "model", "periodic", "paper:set1", "--name", "longrun", "--write",
                       str(tmp_path / "m.mps"))
    assert code == 0 and "NAME periodic-longrun-sys_efficiency" in (tmp_path / "m.mps").read_text()
    code, _, err = run(capsys, "model", "periodic", "paper:set1", "--param", "perio=3")
    assert code == 2 and "period" in err
    code, _, err = run(capsys, "model", "periodic", "paper:set1", "--name", "lp2")
    assert code == 2 and "unknown model 'lp2'" in err
    code, _, err = run(capsys, "model", "periodic", "paper:set1")
    assert code == 2 and "'period' (give it as --param NAME=VALUE)" in err
    code, out, err = run(capsys, "model", "periodic", "paper:set1", "--name", "longrun", "--write",
                         str(tmp_path / "m.txt"))
    assert code == 2 and out == "" and "--write takes a .lp or .mps file" in err  # refused before the build


def test_list_suites(capsys):
    """docs/harness.md points to it: every built-in suite with its problem, size and first comment."""
    from iosched.harness.suite import builtin_suites

    code, out, _ = run(capsys, "list", "--suites")
    assert code == 0
    for name in builtin_suites():
        assert f"\n{name} " in f"\n{out}"
    assert "window-random      window" in out and "tasks, profile quick" in out
    code, _, err = run(capsys, "list", "periodic", "--suites")
    assert code == 2 and "takes no problem" in err


def test_solve_milp_reports_solver_statuses(capsys):
    code, out, _ = run(capsys, "solve", "periodic", "paper:set10", "--method", "milp", "--param", "periods=[126680]",
                       "--param", "slots=60", "--profile", "quick", "--json")
    d = json.loads(out)
    assert code == 0 and d["evaluation"]["feasible"]
    run_ = d["info"]["periods"][0]
    assert run_["restriction"]["status"] in ("optimal", "time_limit")
    assert d["objective"] <= run_["relaxation"]["bound"] * (1 + 1e-9) <= d["bound"] * (1 + 1e-9)


def test_bound_window_beyond_the_dp_is_absent(capsys, tmp_path):
    """Burst buffer 10^17 units fine: the bound and its front are absent, not an error."""
    path = tmp_path / "fine.json"
    path.write_text('{"capacity": {"nodes": 100, "burst_buffer": 100000000000000000}, "jobs": ['
                    '{"id": "a", "nodes": 10, "burst_buffer": 30000000000000000}, '
                    '{"id": "b", "nodes": 20, "burst_buffer": 70000000000000001}]}')
    code, out, _ = run(capsys, "bound", "window", str(path))
    assert code == 0 and "hypervolume: " in out and "front: " in out


def test_reproduce_window_matches_table_1b(capsys):
    code, out, _ = run(capsys, "reproduce", "window")
    assert code == 0
    table_1b = out.split("Simulated")[0]  # the tables after it (the simulation, Figures 9-11) have rows too
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in table_1b.splitlines() if line.startswith("| ") and not line.startswith("| method")}
    for method in ("first-fit", "bin-packing", "constrained-cpu", "weighted (0.8 / 0.2)"):
        assert rows[method][1] == rows[method][2]  # the solution we pick is the paper's
    assert rows["naive"][0] == "J1"  # the paper's naive stops at J2; Table 1b's J4 is EASY backfilling
    assert rows["exact"][0] == "J2 J3 J4 J5" and rows["exact"][5] == "2"


def test_json_output_has_no_nan_and_copies_nothing_it_need_not():
    """JSON has no NaN or infinity: they are written as null; a structure without them is written as it
    is, not copied (PerSched's 200-application pattern is 84 MB of JSON)."""
    import io
    import json
    import math

    from iosched.cli import _stream
    from iosched.commands.common import json_safe

    finite = {"a": [1.0, (2, 3.5)], "b": "x"}
    assert json_safe(finite) is finite
    odd = {"a": [1.0, math.nan, (math.inf, 2)], "b": {"c": -math.inf}, "d": 4}
    assert json_safe(odd) == {"a": [1.0, None, [None, 2]], "b": {"c": None}, "d": 4}
    out = io.StringIO()
    _stream(json_safe(odd), out)
    assert json.loads(out.getvalue()) == json_safe(odd) and out.getvalue().endswith("\n")


def test_generated_instance_names_from_reports_load(capsys):
    """iosched report names generated instances as the suites do, generate:SEED:{size JSON}; solve takes them."""
    code, out, _ = run(capsys, "solve", "window", 'generate:0:{"size": 20}', "--method", "naive", "--json")
    assert code == 0 and json.loads(out)["instance"] == "random:0:20:S2"
    for bad, message in (("generate:x:{}", "generate:SEED:{size JSON}"), ("generate:0:[1]", "must be a JSON object"),
                         ('generate:0:{"sise": 2}', "size parameters: size")):
        code, _, err = run(capsys, "solve", "window", bad, "--method", "naive")
        assert code == 2 and message in err


@pytest.mark.parametrize("flag, bars", [(None, False), ("--progress", True)])
def test_bench_progress_bars_stay_out_of_a_redirected_stderr_unless_asked(tmp_path, flag, bars):
    """``iosched bench ... 2> log`` wrote every tqdm update into the log (issue 40: about 120 for a suite);
    bars are drawn on a terminal only, and into a file or a pipe with --progress."""
    suite = tmp_path / "s.toml"
    suite.write_text('problem = "window"\nprofile = "quick"\n[instances]\nnames = ["paper:example"]\n'
                     '[[methods]]\nname = "naive"\n')
    argv = [sys.executable, "-m", "iosched.cli", "bench", str(suite), "--out", str(tmp_path / "out"), "--workers", "1"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run(argv + ([flag] if flag else []), capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1 run (0 failed)" in proc.stdout
    assert ("1/1 [" in proc.stderr) == bars, proc.stderr


@pytest.mark.parametrize("capacity, jobs, why", [
    ({"nodes": 10, "burst_buffer": 0}, [(4, 0), (8, 0), (2, 5)], "capacity.burst_buffer = 0"),
    ({"nodes": 0, "burst_buffer": 100}, [(4, 10), (8, 20)], "no job fits"),
])
def test_a_window_where_every_answer_is_trivially_optimal_is_said_so(capsys, tmp_path, capacity, jobs, why):
    """No burst buffer or no nodes: every selection's hypervolume is 0, so every method meets the bound and
    is called optimal (issue 40: naive's 4 nodes as optimal as exact's 8); a warning on stderr and in info."""
    from iosched.core import TrivialInstanceWarning, solve

    window = {"capacity": capacity, "jobs": [{"id": f"j{i}", "nodes": n, "burst_buffer": b}
                                             for i, (n, b) in enumerate(jobs)]}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(window))
    for method in ("naive", "exact"):
        code, out, err = run(capsys, "solve", "window", str(path), "--method", method, "--json")
        result = json.loads(out)
        assert code == 0 and result["status"] == "optimal" and result["objective"] == 0
        assert why in result["info"]["trivial"] and f"iosched: warning: {result['info']['trivial']}" in err
    with pytest.warns(TrivialInstanceWarning, match=why):
        solve("window", window, "first-fit")
    code, out, err = run(capsys, "solve", "window", "paper:example", "--method", "naive", "--json")
    assert "trivial" not in json.loads(out)["info"] and "warning" not in err


def test_an_empty_folder_solves_with_the_packaged_profiles(tmp_path):
    """No solvers.toml in the folder and none named: the package's own profiles are in force (a wheel
    installed anywhere solves), and `iosched solvers` says which file that is."""
    env = {k: v for k, v in os.environ.items() if k != "IOSCHED_SOLVERS"}
    iosched_cmd = str(Path(sys.executable).parent / "iosched")
    out = subprocess.run([iosched_cmd, "solvers"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0 and "(iosched's own)" in out.stdout.splitlines()[0], out
    res = subprocess.run([iosched_cmd, "solve", "window", "paper:example", "--method", "exact", "--profile", "quick"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert res.returncode == 0 and "optimal" in res.stdout.splitlines()[0], res
    (tmp_path / "solvers.toml").write_text("[default]\ntime_limit = 5\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    out = subprocess.run([iosched_cmd, "solvers"], cwd=tmp_path, env=env, capture_output=True, text=True)
    first = out.stdout.splitlines()[0]  # the folder's own file overrides them (a solve warns: test_solvers)
    assert first == f"solver profiles: {tmp_path.resolve() / 'solvers.toml'} (the working folder's)", out


def test_output_file_keeps_the_summary_on_stdout(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "window", "paper:example", "--method", "naive", "-o",
                       str(tmp_path / "r.json"))
    assert code == 0 and out.startswith("window / paper:example / naive: feasible")
    assert json.loads((tmp_path / "r.json").read_text())["method"] == "naive"


def test_a_library_name_without_lib_gets_a_hint(capsys):
    code, _, err = run(capsys, "solve", "forwarding", "forwarding/figure4", "--method", "dfra")
    assert code == 2 and "did you mean 'lib:forwarding/figure4'?" in err
    code, _, err = run(capsys, "solve", "forwarding", "figure4x", "--method", "dfra")
    assert code == 2 and "did you mean" not in err
