"""``iosched simulate``: records, summary and plots in --out; bad input exits 2 naming it."""

import json

from iosched.cli import main


def test_simulate_writes_records_summary_and_plots(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["simulate", "generate:1:300", "--nodes", "512", "--mix", "S2", "--burst-buffer", "600000",
                 "--policy", "wfp", "--window", "weighted", "--param", "node_weight=0.8", "--out", str(out),
                 "--quiet"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    # the paper's normalisation (shares of the whole machine) unless --param says otherwise
    assert summary["config"]["params"] == {"node_weight": 0.8, "normalise": "machine"}
    assert summary["config"]["policy"] == "wfp"
    assert 0 < summary["node_usage"] <= 1 and 0 < summary["bb_usage"] <= 1
    assert {r["bin"] for r in summary["breakdowns"]["nodes"]}
    lines = (out / "jobs.csv").read_text().splitlines()
    assert len(lines) == 301 and lines[0].startswith("job_id,submit,start,end,nodes,burst_buffer")
    assert all((out / f).stat().st_size > 0 for f in ("utilisation.png", "wait_by_size.png", "wait_by_bb.png"))
    assert "node usage" in capsys.readouterr().out


def test_simulate_bad_input(tmp_path, capsys):
    assert main(["simulate", "generate:x", "--out", str(tmp_path / "a"), "--quiet"]) == 2
    assert "generate:SEED[:JOBS]" in capsys.readouterr().err
    assert main(["simulate", str(tmp_path / "none.swf"), "--out", str(tmp_path / "a"), "--quiet"]) == 2
    assert "no such trace file" in capsys.readouterr().err
    assert main(["simulate", "generate:1:50", "--window", "naive", "--param", "bogus=1", "--out",
                 str(tmp_path / "a"), "--quiet", "--no-plots"]) == 2
    assert "bogus" in capsys.readouterr().err
    assert main(["simulate", "generate:1:50", "--window-size", "0", "--window", "naive", "--out",
                 str(tmp_path / "a"), "--quiet"]) == 2
    assert "window_size" in capsys.readouterr().err
    # values a generated trace does not otherwise read are still checked (0 nodes was taken as the default)
    for option, value, name in (("--nodes", "0", "nodes"), ("--burst-buffer", "-1", "--burst-buffer")):
        assert main(["simulate", "generate:1:50", option, value, "--out", str(tmp_path / "a"), "--quiet",
                     "--no-plots"]) == 2
        assert name in capsys.readouterr().err
    (tmp_path / "x").write_text("")  # a file in the way of --out (a missing parent is made, as bench makes it)
    assert main(["simulate", "generate:1:50", "--out", str(tmp_path / "x" / "y"), "--quiet"]) == 2
    assert f"{str(tmp_path / 'x')!r} is a file" in capsys.readouterr().err
