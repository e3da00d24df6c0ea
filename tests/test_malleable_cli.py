"""The command line on the malleable problem: every method, bound, model, generate, show, list, reproduce, bench."""

import json

import pytest

from iosched.cli import main
from iosched.instances.malleable import MalleableInstance
from iosched.instances.malleable_presets import generate

GRID = "random:1:3:grid"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_dmr_json_and_plot(capsys, tmp_path):
    plot = tmp_path / "dmr.png"
    code, out, _ = run(capsys, "solve", "malleable", "paper:50", "--method", "dmr", "--json", "--plot", str(plot))
    assert code == 0
    d = json.loads(out)
    assert d["status"] == "feasible" and d["evaluation"]["feasible"] is True
    assert d["objective"] == d["evaluation"]["mean_completion"] >= d["bound"] > 0
    assert len(d["solution"]["jobs"]) == 50 and d["info"]["checks"] > 0
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("method, extra", [
    ("rigid-fcfs", []), ("rigid-backfill", ["--param", "depth=5"]), ("dmr", ["--param", "scheduler=fcfs"]),
    ("rigid-optimal", ["--profile", "quick"]), ("cpsat", ["--profile", "quick", "--param", "segments=2"]),
    ("milp", ["--profile", "quick"]),
])
def test_every_method_through_the_cli(capsys, method, extra):
    instance = "random:1:2:grid" if method == "milp" else GRID  # the MILP proves 2 jobs in about a second
    code, out, _ = run(capsys, "solve", "malleable", instance, "--method", method, "--json", *extra)
    assert code == 0
    d = json.loads(out)
    assert d["evaluation"]["feasible"] and d["objective"] >= d["bound"] - 1e-9
    if method in ("cpsat", "rigid-optimal", "milp"):
        assert d["info"]["scope"].startswith("schedules of") and d["info"]["model_bound"] is not None


def test_summary_output(capsys):
    code, out, _ = run(capsys, "solve", "malleable", GRID, "--method", "dmr")
    assert code == 0 and "mean_completion (min)" in out and "feasible: True" in out and "utilization" in out


def test_bound_show_list(capsys):
    code, out, _ = run(capsys, "bound", "malleable", "paper:50", "--json")
    b = json.loads(out)["bounds"]
    assert code == 0 and b["mean_completion"] >= b["mean_completion_per_job"] > 0 and b["jobs"] == 50
    code, out, _ = run(capsys, "show", "malleable", "paper:50")
    assert MalleableInstance.from_dict(json.loads(out)) == MalleableInstance.from_dict(json.loads(out))
    assert len(json.loads(out)["jobs"]) == 50
    code, out, _ = run(capsys, "list")
    for name in ("dmr", "rigid-fcfs", "rigid-backfill", "rigid-optimal", "cpsat", "milp", "paper:400"):
        assert name in out


def test_generate_then_solve_the_file(capsys, tmp_path):
    path = tmp_path / "w.json"
    code, _, _ = run(capsys, "generate", "malleable", "--seed", "4", "--param", "jobs=6", "--param", "kind=grid",
                     "-o", str(path))
    assert code == 0 and MalleableInstance.from_json(path) == generate(4, 6, "grid")
    code, out, _ = run(capsys, "solve", "malleable", str(path), "--method", "rigid-backfill", "--json")
    assert code == 0 and json.loads(out)["instance"] == "random:4:6:grid"


def test_model_writes_both_formats(capsys, tmp_path):
    code, out, _ = run(capsys, "model", "malleable", GRID, "--name", "cpsat", "--param", "segments=2",
                       "--write", str(tmp_path / "m.pb.txt"))
    assert code == 0 and "CP-SAT" in out and (tmp_path / "m.pb.txt").stat().st_size > 1000
    code, out, _ = run(capsys, "model", "malleable", GRID, "--name", "milp", "--write", str(tmp_path / "m.lp"))
    assert code == 0 and "malleable-milp" in out and "\nmin \nobj:" in (tmp_path / "m.lp").read_text()


def test_reproduce_json(capsys):
    code, out, err = run(capsys, "reproduce", "malleable", "--param", "sizes=[50]", "--param", "draws=1", "--json")
    assert code == 0
    d = json.loads(out)
    table4 = [r for r in d["rows"] if not r.get("saturation")]
    assert d["ok"] and [r["version"] for r in table4] == ["fixed", "flexible"]
    assert len(d["rows"]) == 2 + 4  # and the saturation measurement's rows
    assert d["rows"][0]["paper_mean_completion"] == 4735.28
    assert "What differs in the setting" in d["notes"]


def test_reproduce_table_and_progress(capsys):
    code, out, err = run(capsys, "reproduce", "malleable", "--param", "sizes=[20, 40]", "--param", "draws=1",
                         "--param", "gaps=1", "--progress")
    assert code == 0 and "| 20 | fixed |" in out and "wait cut" in out and "rigid-optimal" in out
    assert "workload sizes" in err  # the progress bar asked for goes to stderr (not a terminal: only when asked)


def test_bench_and_report(capsys, tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text('name = "m"\nproblem = "malleable"\nprofile = "quick"\n[[instances.generate]]\nseeds = [0]\n'
                     'jobs = 3\nkind = "grid"\n[[methods]]\nname = "dmr"\n[[methods]]\nname = "rigid-optimal"\n')
    code, out, _ = run(capsys, "bench", str(suite), "--out", str(tmp_path / "out"), "--workers", "1")
    assert code == 0 and "2 run (0 failed)" in out
    code, out, _ = run(capsys, "report", str(tmp_path / "out"))
    assert code == 0 and "dmr" in out and "rigid-optimal" in out


@pytest.mark.parametrize("argv, message", [
    (["solve", "malleable", "paper:0", "--method", "dmr"], "paper:JOBS"),
    (["solve", "malleable", "random:1:3:cloud", "--method", "dmr"], "kind"),
    (["solve", "malleable", GRID, "--method", "sjf"], "unknown method"),
    (["solve", "malleable", GRID, "--method", "dmr", "--profile", "quick"], "runs no solver"),
    (["solve", "malleable", GRID, "--method", "cpsat", "--param", "segments=0"], "segments"),
    (["solve", "malleable", GRID, "--method", "cpsat", "--param", "unit=3"], "unit"),
    (["solve", "malleable", GRID, "--method", "dmr", "--param", "depth=abc"], "depth"),
    (["generate", "malleable", "--seed", "1", "--param", "kind=cloud"], "kind"),
    (["generate", "malleable", "--seed", "1", "--param", "jobs=0"], "jobs"),
    (["model", "malleable", GRID, "--name", "lp"], "unknown model"),
    (["model", "malleable", GRID, "--name", "cpsat", "--write", "m.lp"], ".pb"),
    (["reproduce", "malleable", "--param", "sizes=[0]"], "sizes"),
    (["reproduce", "malleable", "--param", "draws=0"], "draws"),
    (["reproduce", "malleable", "--param", "sizes=50"], "sizes"),
])
def test_bad_input_exits_2_with_a_message(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err, err
