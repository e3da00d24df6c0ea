"""`iosched reproduce --report DIR`: the records, their verdicts and the files written."""

import json

import pytest

from iosched.cli import main
from iosched.reproduce import COMPARISON_KEYS, Reproduction, comparison
from iosched.reproduce.paper_report import classify, counts, write


def test_comparison_records_and_verdicts():
    close = comparison("P", "Table 1", "a", "x", 100.0, 109.0, "s")
    assert set(close) == set(COMPARISON_KEYS) and close["relative_difference"] == pytest.approx(0.09)
    far = comparison("P", "Table 1", "a", "y", 100.0, 50.0, "s")
    explained = comparison("P", "Table 1", "a", "z", 100.0, 250.0, "s", note="with B = 2 GB/s: 104 s")
    missing = comparison("P", "Figure 2", "a", "z", None, 3.0)
    zero = comparison("P", "Table 1", "b", "x", 0, 0)
    assert far["relative_difference"] == -0.5 and explained["relative_difference"] == 1.5
    same = comparison("P", "Table 1b", "exact", "choice", "2 and 3", "2 and 3")
    other = comparison("P", "Table 1b", "naive", "choice", "1", "2")
    assert (same["relative_difference"], other["relative_difference"]) == (0.0, 1.0)
    assert [classify(e) for e in (close, far, explained, missing, zero, same, other)] == [
        "within", "unexplained", "explained", "not comparable", "within", "within", "unexplained"]
    assert counts([close, far, explained, missing]) == {"within": 1, "explained": 1, "unexplained": 1,
                                                        "not comparable": 1}


def test_the_report_folder_holds_markdown_json_and_figures(tmp_path):
    def draw(folder):
        path = folder / "fig1.png"
        path.write_bytes(b"\x89PNG")
        return [path]

    rep = Reproduction("demo: a paper beside ours", [], "| a |\n|---|\n| 1 |", True, "a note",
                       [comparison("P", "Table 1", "r", "c", 2.0, 3.0, "GB", note="B halved: 2.1")], draw)
    written = write({"demo": rep}, tmp_path / "out")
    records = json.loads(written["json"].read_text())
    assert records == [{"problem": "demo", **rep.comparisons[0]}]
    text = written["report"].read_text()
    assert "## demo: a paper beside ours" in text and "| Table 1 | r | c | 2 | 3 | GB | +50.0% | explained |" in text
    assert "![fig1](figures/fig1.png)" in text and (tmp_path / "out" / "figures" / "fig1.png").exists()
    with pytest.raises(ValueError, match="expected"):
        write({"demo": Reproduction("t", [], "", True, comparisons=[{"paper": "P"}])}, tmp_path / "bad")


def test_reproduce_report_from_the_command_line(capsys, tmp_path):
    assert main(["reproduce", "filedomain", "--report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "figures compared" in out and "report.md" in out
    assert (tmp_path / "r" / "report.md").read_text().startswith("# iosched: the papers' tables")
    (tmp_path / "file").write_text("x")
    assert main(["reproduce", "filedomain", "--report", str(tmp_path / "file")]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err


def test_problems_reproduced_in_processes_of_their_own_give_the_same_report(capsys, tmp_path):
    args = ["reproduce", "filedomain", "malleable", "--report"]
    assert main([*args, str(tmp_path / "par"), "--processes", "2"]) == 0
    assert main([*args, str(tmp_path / "seq"), "--processes", "1"]) == 0
    par, seq = ((tmp_path / d / "comparisons.json").read_text() for d in ("par", "seq"))
    assert par == seq and {r["problem"] for r in json.loads(par)} == {"filedomain", "malleable"}
    out = capsys.readouterr().out
    assert out.index("filedomain:") < out.index("malleable:")  # in the problems' order, whichever ends first
    assert main(["reproduce", "filedomain", "--processes", "0"]) == 2
    assert "--processes" in capsys.readouterr().err


def test_a_reproduction_run_apart_draws_its_figures_and_pickles(tmp_path):
    import pickle

    from iosched.cli import _reproduce_one

    own = {"online_hours": 0, "milp": False}
    rep = _reproduce_one("forwarding", own, 1, False, str(tmp_path))
    again = pickle.loads(pickle.dumps(rep))  # what a worker process hands back
    paths = again.figures(tmp_path)
    assert paths and all(p.parent == tmp_path and p.stat().st_size > 1000 for p in paths)
    bare = pickle.loads(pickle.dumps(_reproduce_one("forwarding", own, 1, False, None)))  # no report: no figures
    assert bare.figures is None and bare.rows == rep.rows


def test_window_table_1b_is_reproduced_figure_for_figure():
    """Every utilisation, every method's choice and the Pareto set of the paper's example match Table 1b."""
    from iosched.reproduce.window import reproduce

    rep = reproduce(simulate=False, figure2=False, ga_misses=False)
    assert len(rep.comparisons) == 13 and counts(rep.comparisons)["within"] == 13
    assert {c["row"] for c in rep.comparisons} >= {"exact", "bbsched-ga", "nsga2", "first-fit", "bin-packing"}


def test_window_table_3_comparisons_name_the_missing_workload():
    from iosched.reproduce.window import PAPER_TABLE3, table3_comparisons

    row = {"workload": "theta-S4", "method": "exact", "node_usage": 0.8, "bb_usage": 0.9, "avg_wait_s": 9000.0,
           "avg_bounded_slowdown": 8.0}
    records = table3_comparisons([row], 20, "exact", 1000)
    assert [r["paper_value"] for r in records] == list(PAPER_TABLE3[20])
    assert [r["ours"] for r in records] == [80.0, 90.0, 9000.0, 8.0]
    assert all("2018 Theta log" in r["note"] and tuple(r) == COMPARISON_KEYS for r in records)
    assert table3_comparisons([{**row, "workload": "theta-S2"}], 20, "exact", 1000) == []


def test_window_figures_9_to_11_compare_the_numbers_the_paper_gives(tmp_path):
    """Figures 9-11 from hand-made breakdowns: the wait cuts and changes computed against the baseline,
    the paper's numbers beside them, every difference beyond 10 % with a note, the figure drawn."""
    from iosched.reproduce.paper_report import classify
    from iosched.reproduce.window import BREAKDOWNS, draw_figures_9_11, figures_9_11_comparisons

    def row(method, sizes, bbs, runs):
        waits = {"nodes": sizes, "burst_buffer": bbs, "run": runs}
        return {"workload": "theta-S4", "method": method, "avg_wait_s": 7200.0, "breakdowns": {
            by: [{"bin": str(k), "jobs": 1, "avg_wait_s": w} for k, w in enumerate(waits[by])] for by in BREAKDOWNS}}

    nan = float("nan")
    h = 3600.0
    rows = [row("base", [nan, nan, h, h, h, 10 * h], [2.5 * h, h, h, 10 * h, 10.25 * h],
                [h, 2 * h, 3 * h, 4 * h, 9 * h]),
            row("exact", [nan, nan, h, h, h, 7 * h], [h, h, h, h, h], [2 * h, 2 * h, 3 * h, 4 * h, 5 * h]),
            row("constrained-cpu", [nan] * 6, [2 * h, h, h, 11 * h, h], [2 * h, 2 * h, 3 * h, 4 * h, 5 * h])]
    got = {(c["table_or_figure"].split(" (")[0], c["column"]): c for c in figures_9_11_comparisons(rows, 2000)}
    assert len(got) == 9 and all(tuple(c) == COMPARISON_KEYS for c in got.values())
    assert got["Figure 9", "wait cut against the baseline, 1-8 node jobs"]["ours"] is None  # no such job
    assert got["Figure 9", "wait cut against the baseline, 1024-4392 node jobs"]["ours"] == pytest.approx(30.0)
    assert got["Figure 10", "average wait, > 200 TB burst buffer"]["ours"] == pytest.approx(10.25)
    assert got["Figure 10", "average wait, no burst buffer"]["ours"] == pytest.approx(2.5)
    assert got["Figure 10", "wait change against the baseline, no burst buffer"]["ours"] == pytest.approx(-20.0)
    assert got["Figure 10", "wait change against the baseline, 100-200 TB"]["ours"] == pytest.approx(10.0)
    assert all(c["ours"] == "yes" for k, c in got.items() if k[0] == "Figure 11")
    assert all(classify(c) != "unexplained" for c in got.values())
    assert draw_figures_9_11(rows, tmp_path / "f.png").stat().st_size > 0
    assert figures_9_11_comparisons([{**rows[0], "workload": "theta-S2"}], 2000) == []


def test_window_figure_4_measures_the_ga_against_g_and_p(monkeypatch, tmp_path):
    """Figure 4 on one small window with few settings: a point per setting, the paper's findings
    as comparisons, the figure drawn."""
    import iosched.reproduce.window as hw

    monkeypatch.setattr(hw, "FIGURE4_G", (10, 500, 1000))
    monkeypatch.setattr(hw, "FIGURE4_P", (10, 20))
    points, records = hw.reproduce_figure4(windows=("random:1:30:S2",))
    assert {(q["generations"], q["population"]) for q in points} == {(10, 20), (500, 20), (1000, 20), (500, 10)}
    assert all(q["gd"] >= 0 and q["cpu_s"] > 0 for q in points)
    assert [r["column"] for r in records][0] == "GD falls as G grows" and records[-1]["paper_value"] == 0.2
    assert hw.draw_figure4(points, tmp_path / "f4.png").stat().st_size > 0


@pytest.mark.filterwarnings("ignore::iosched.core.TrivialInstanceWarning")  # no BB asked: said, and known
def test_window_figure_2_exhaustive_search_matches_the_exact_front(tmp_path):
    """Figure 2's exhaustive search (every subset) gives the exact method's front on small windows, the
    figure's points cover each size, the comparisons carry notes, and the figure is drawn."""
    import iosched
    import iosched.reproduce.window as hw

    for seed in range(6):
        for w in (1, 7, 12, 17):
            inst = iosched.load_instance("window", f"random:{seed}:{w}:S2")
            exact = iosched.solve("window", inst, "exact", attach_bound=False).solution.front
            assert hw.exhaustive_front(inst) == sorted(((p.nodes, p.burst_buffer) for p in exact), reverse=True)
    points, records = hw.reproduce_figure2(sizes=(5, 10, 18, 50), windows=1)
    assert [q["window"] for q in points] == [5, 10, 18, 50] and points[-1]["exhaustive_cpu_s"] is None
    assert all(q["exact_cpu_s"] >= 0 and q["bbsched-ga_cpu_s"] > 0 for q in points)
    assert all(r["note"] for r in records) and records[0]["column"] == "time grows exponentially in w"
    assert hw.draw_figure2(points, tmp_path / "f2.png").stat().st_size > 0
    assert "| 50 | - |" in hw.format_figure2(points)


def test_window_figure_14_checks_the_papers_statements_per_workload(tmp_path):
    """Figure 14 from hand-made runs: on theta-S5 every statement of the paper holds; theta-S6 is the same
    but for BBSched (exact) and weighted trading their metrics, so the two statements about BBSched's
    overall lead hold on 1 of 2 workloads; every answer that differs has a note, the figure is drawn."""
    from iosched.reproduce.paper_report import classify
    from iosched.reproduce.window import draw_figure14, figure14_comparisons

    keys = ("node_usage", "bb_usage", "ssd_usage", "wasted_ssd", "avg_wait_s", "avg_bounded_slowdown")
    runs = {"exact": (.9, .8, .6, .10, 3600, 2), "constrained-cpu": (.85, .5, .55, .3, 7200, 3),
            "constrained-ssd": (.84, .5, .56, .3, 7200, 3), "constrained-bb": (.5, .79, .3, .3, 10800, 4),
            "bin-packing": (.7, .6, .4, .3, 10800, 4), "weighted": (.8, .7, .5, .15, 5400, 2.5),
            "base": (.6, .55, .35, .2, 9000, 3.5)}
    swapped = {**runs, "exact": runs["weighted"], "weighted": runs["exact"]}
    rows = [{"workload": wl, "method": m, **dict(zip(keys, v))}
            for wl, table in (("theta-S5", runs), ("theta-S6", swapped)) for m, v in table.items()]
    got = {c["column"].split(" (")[0].split(" on every")[0]: c for c in figure14_comparisons(rows, 1000)}
    assert all(tuple(c) == COMPARISON_KEYS for c in got.values()) and len(got) == 6
    assert got["best overall"]["ours"] == "no (1 of 2)"
    assert got["overall noticeably below BBSched"]["ours"] == "no (1 of 2)"
    assert got["among the better node and SSD usage"]["ours"] == "yes"
    assert got["node usage and SSD usage are correlated"]["ours"] == "yes"
    assert got["waste more SSD than the baseline"]["ours"] == "yes"
    assert got["BB usage in the top 4, node and SSD usage below it,"]["ours"] == "yes"
    assert all(classify(c) != "unexplained" for c in got.values())
    assert draw_figure14(rows, tmp_path / "f.png").stat().st_size > 0
    assert figure14_comparisons([], 1000) == []
