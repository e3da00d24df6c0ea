"""The command line on forwarding instances: solve (every method), plot, generate, bound, show, list, model,
reproduce, and bad input (exit 2 naming the field or parameter)."""

import json

import pytest

from iosched.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("method", ["fixed", "round-robin", "dfra", "mckp", "search", "milp-dfra-space", "milp-max"])
def test_solve_every_method_json(capsys, method):
    extra = ["--profile", "quick"] if method.startswith("milp") else []
    extra += ["--param", "scope=dfra-space"] if method == "milp-max" else []
    code, out, _ = run(capsys, "solve", "forwarding", "random:4:30", "--method", method, "--json", *extra)
    assert code == 0
    d = json.loads(out)
    assert d["evaluation"]["feasible"] and d["status"] in ("feasible", "optimal", "time_limit")
    assert set(d["solution"]["jobs"]) == {f"j{i}" for i in range(1, 31)}
    assert d["objective"] >= d["bound"] * (1 - 1e-9)
    assert d["objective_name"] == ("max_io_time" if method == "milp-max" else "total_io_time")


def test_solve_summary_plot_and_file_instance(capsys, tmp_path):
    code, _, _ = run(capsys, "generate", "forwarding", "--seed", "5", "--param", "n_jobs=8", "--param",
                     "pool_nodes=20", "-o", str(tmp_path / "i.json"))
    assert code == 0
    plot = tmp_path / "a.png"
    code, out, _ = run(capsys, "solve", "forwarding", str(tmp_path / "i.json"), "--method", "dfra", "--param",
                       "v_min=10", "--param", "rule=pairs", "--plot", str(plot))
    assert code == 0 and "feasible: True" in out and "rules:" in out
    assert plot.read_bytes()[:4] == b"\x89PNG" and plot.stat().st_size > 20_000


def test_bound_show_list_model(capsys, tmp_path):
    code, out, _ = run(capsys, "bound", "forwarding", "testbed:shentu", "--json")
    b = json.loads(out)["bounds"]
    assert code == 0 and b["total_io_time"] == pytest.approx(200 / (1024 * 2.5 / 32))
    code, out, _ = run(capsys, "show", "forwarding", "pair:wrf1:awp")
    assert code == 0 and json.loads(out)["jobs"][1]["mode"] == "N-1"
    code, out, _ = run(capsys, "list")
    assert "forwarding: instances testbed:cesm" in out and "round-robin" in out and "milp-max" in out
    code, out, _ = run(capsys, "model", "forwarding", "random:1:20", "--name", "milp-dfra-space", "--write",
                       str(tmp_path / "m.lp"))
    assert code == 0 and "integer" in out
    text = (tmp_path / "m.lp").read_text()
    assert "one_config" in text and "pool" in text
    code, out, _ = run(capsys, "model", "forwarding", "random:1:20", "--name", "milp-dfra-space", "--param",
                       "objective=max_io_time")
    assert code == 0 and "forwarding-max_io_time" in out
    code, out, err = run(capsys, "model", "forwarding", "random:1:20")  # every allocation: too large, refused
    assert code == 2 and "configurations" in err and "milp-dfra-space" in err


@pytest.mark.parametrize("argv, message", [
    (["solve", "forwarding", "testbed:nope", "--method", "dfra"], "testbed application must be one of"),
    (["solve", "forwarding", "random:1:5", "--method", "round-robin", "--param", "k=0"], "k must be"),
    (["solve", "forwarding", "random:1:5", "--method", "dfra", "--param", "rule=magic"], "rule must be one of"),
    (["solve", "forwarding", "random:1:5", "--method", "dfra", "--profile", "quick"], "runs no solver"),
    (["solve", "forwarding", "random:1:5", "--method", "milp", "--param", "objective=speed"], "objective"),
    (["generate", "forwarding", "--seed", "1", "--param", "n_jobs=0"], "n_jobs"),
    (["generate", "forwarding", "--seed", "1", "--param", "occupancy=2"], "occupancy"),
    (["model", "forwarding", "random:1:5", "--param", "objective=x"], "objective"),
    (["reproduce", "forwarding", "--param", "online_hours=-1"], "online_hours"),
])
def test_bad_input_exits_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err, err


def test_bad_json_file_names_the_field(capsys, tmp_path):
    code, _, _ = run(capsys, "generate", "forwarding", "--seed", "2", "--param", "n_jobs=3", "-o",
                     str(tmp_path / "i.json"))
    d = json.loads((tmp_path / "i.json").read_text())
    d["forwarding_nodes"][7]["bandwidth"] = -2.5
    (tmp_path / "bad.json").write_text(json.dumps(d))
    code, _, err = run(capsys, "solve", "forwarding", str(tmp_path / "bad.json"), "--method", "fixed")
    assert code == 2 and "forwarding_nodes[7].bandwidth" in err and "-2.5" in err


def test_reproduce_prints_the_tables(capsys):
    code, out, _ = run(capsys, "reproduce", "forwarding", "--param", "online_hours=0", "--param", "milp=false")
    assert code == 0
    shentu = next(line for line in out.splitlines() if line.startswith("| shentu | 1024"))
    assert "16.00x" in shentu and "18.90" in shentu
    assert "Table 3" in out and "| wrf1 | awp | (50.00, 1.00) | (50, 1) |" in out
    code, out, _ = run(capsys, "reproduce", "forwarding", "--param", "online_hours=0", "--param", "milp=false",
                       "--json")
    d = json.loads(out)
    assert d["ok"] and {r["table"] for r in d["rows"]} == {"apps", "table3", "figure4", "figure7", "figure11",
                                                           "figure12", "figure13", "figure15"}
