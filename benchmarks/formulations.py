"""The formulation study (issue 48) on one small library instance per problem, with each problem's valid
inequality on and off: the tables of docs/formulations.md (it includes the file this writes).

Each problem's every registered formulation, plus a row per valid inequality (a ``--variant`` of its main
MILP: window's and malleable's cover cuts, malleable's earliest end, forwarding's average-part rows,
filedomain's symmetry orders, periodic's contiguity cuts), on the profile's backend (HiGHS by default). The
same table is ``iosched formulations PROBLEM lib:NAME --profile P --variant ...`` (the command is printed above
each table). Times are wall clock on a shared machine: the load is printed beside them.

    python benchmarks/formulations.py [--profile quick] [--out benchmarks/formulations.md]
    python benchmarks/formulations.py --render     # the page again from benchmarks/formulations.json

It writes the measured studies to benchmarks/formulations.json beside the page (``--out``'s name with .json),
and the page from them (:func:`render`), so tests/test_formulations_docs.py checks that the page is what the
JSON gives, without solving anything.

With ``--cuts`` (issue 48 item 3) it measures instead each valid inequality on every small library instance of
its problem: the main MILP with and without it, one row each (the LP relaxation, root bound, best value, bound,
the solver's verdict and time), written to benchmarks/formulations_cuts.md.

    python benchmarks/formulations.py --cuts [--profile quick] [--out benchmarks/formulations_cuts.md]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time
from pathlib import Path

import iosched
from iosched import library
from iosched.formulations.study import Study, finite

CASES = [  # (problem, instance, {label: (formulation, params)}): the study's own rows, then these variants
    ("periodic", "lib:periodic/small-0", {"milp[contiguity=true]": ("milp", {"contiguity": True})}),
    ("window", "lib:window/small-3", {"milp[covers=true]": ("milp", {"covers": True})}),
    ("forwarding", "lib:forwarding/small-3", {"milp[average=true]": ("milp", {"average": True})}),
    ("filedomain", "lib:filedomain/small-0", {"milp[symmetry=first]": ("milp", {"symmetry": "first"}),
                                              "milp[symmetry=none]": ("milp", {"symmetry": "none"})}),
    ("malleable", "lib:malleable/grid3-2", {"milp[covers=true]": ("milp", {"covers": True}),
                                            "milp[earliest=true]": ("milp", {"earliest": True})}),
]


def command(problem: str, instance: str, variants: dict, profile: str) -> str:
    flags = " ".join(f"--variant {name}:" + ",".join(f"{k}={str(v).lower()}" for k, v in params.items())
                     for name, params in variants.values())
    return f"iosched formulations {problem} {instance} --profile {profile} {flags}"


def _cell(x, spec: str = ".6g") -> str:
    return "-" if x is None else format(x, spec) if isinstance(x, float) else str(x)


def cuts(profile: str, out: str) -> None:
    """Each problem's valid inequalities on and off on every small library instance (module docstring)."""
    began = datetime.datetime.now(datetime.UTC)
    load = os.getloadavg()[0]
    lines = [f"# Valid inequalities on the small library instances\n\n`python benchmarks/formulations.py --cuts "
             f"--profile {profile}`, measured {began:%Y-%m-%d %H:%M} UTC on a {os.cpu_count()}-core machine shared "
             f"with other jobs (load average {load:.1f} at the start), each solve and LP relaxation within the "
             f"{profile} profile's time limit on HiGHS. Per instance the main MILP as registered (`off`), then with "
             f"each inequality; values in the problem's units; `model` is the solver's verdict over the model's "
             f"scope, `time s` the solve's wall clock (the LP relaxation apart).\n"]
    for problem, _, variants in CASES:
        main_name = next(iter(variants.values()))[0]
        lines += [f"## {problem} `{main_name}`\n", "| instance | row | constraints | LP | root | best | bound | model "
                  "| time s | int gap | error |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for name in sorted(n for n, r in library.summary(problem).items() if "small" in r["tags"]):
            s = iosched.formulations(problem, f"lib:{name}", profile=profile, names=[main_name], variants=variants)
            for r in s.rows:
                row = "off" if r["formulation"] == main_name else r["formulation"]
                gap = None if r["integrality_gap"] is None else f"{100 * r['integrality_gap']:.3g}%"
                lines.append(f"| {name} | {row} | {_cell(r['constraints'])} | {_cell(r['lp_relaxation'])} | "
                             f"{_cell(r['root_bound'])} | {_cell(r['best'])} | {_cell(r['bound'])} | "
                             f"{_cell(r['model_status'])} | {_cell(r['time_s'], '.3g')} | {_cell(gap)} | "
                             f"{(r['error'] or '-')[:90]} |")
            print(f"{name}", flush=True)
        lines.append("")
    lines.append(f"Load average {os.getloadavg()[0]:.1f} at the end.\n")
    Path(out).write_text("\n".join(lines), encoding="utf-8")
    print(f"written {out}")


def measure(profile: str) -> dict:
    """Run the study of every case of :data:`CASES` on ``profile``: the record :func:`render` turns into the page
    (benchmarks/formulations.json keeps it, so the page can be checked against it without solving again)."""
    began = datetime.datetime.now(datetime.UTC)
    cases = []
    for problem, instance, variants in CASES:
        load, cpu, wall = os.getloadavg()[0], time.process_time(), time.perf_counter()
        s = iosched.formulations(problem, instance, profile=profile, variants=variants)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        cases.append({"command": command(problem, instance, variants, profile), "wall_s": wall, "cpu_s": cpu,
                      "load_before": load, "load_after": os.getloadavg()[0], "study": finite(s.to_dict())})
        print(f"{problem}: {wall:.0f} s", flush=True)
    return {"profile": profile, "date": f"{began:%Y-%m-%d %H:%M} UTC", "cpus": os.cpu_count(),
            "python": platform.python_version(), "cases": cases}


def render(record: dict) -> str:
    """The Markdown page of a :func:`measure` record (benchmarks/formulations.md, included in docs/formulations.md):
    per problem the command, the whole study's time and load, the study's table (:meth:`Study.markdown`)."""
    profile = record["profile"]
    parts = []
    for case in record["cases"]:
        s = Study(**case["study"])
        parts.append(f"### {s.problem}\n\n`{case['command']}`: {s.objective} ({s.sense}); the whole study "
                     f"{case['wall_s']:.0f} s of wall clock, {case['cpu_s']:.0f} s of CPU in this process (solvers' "
                     f"threads beside it), load average {case['load_before']:.1f} before, {case['load_after']:.1f} "
                     f"after.\n\n{s.markdown()}\n")
    head = (f"<!-- written by benchmarks/formulations.py from benchmarks/formulations.json: python "
            f"benchmarks/formulations.py --profile {profile} (measure and write both), or --render (rewrite this "
            f"page from the JSON) -->\n\nMeasured {record['date']} with `python benchmarks/formulations.py "
            f"--profile {profile}` on a {record['cpus']}-core machine shared with other jobs, Python "
            f"{record['python']}, each solve and each LP relaxation within the {profile} profile's time "
            f"limit on HiGHS (CP-SAT models on OR-Tools). Columns: variables (binary/integer/continuous), "
            f"constraints, nonzeros, the range of |matrix coefficients|, the LP relaxation, the root node's bound, "
            f"the best value and the final bound of the model (in the problem's units), the status by the one "
            f"rule of `iosched solve`, nodes, solve time, the integrality and root gaps (relative, positive where "
            f"the relaxation is weaker) and the evaluated value of the model's solution.\n")
    return head + "\n" + "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--cuts", action="store_true", help="each valid inequality on every small library instance")
    ap.add_argument("--render", action="store_true", help="rewrite the page from the stored JSON, solving nothing")
    ap.add_argument("--out", help="the Markdown file (default: benchmarks/formulations.md, or _cuts.md)")
    args = ap.parse_args()
    if args.cuts:
        cuts(args.profile, args.out or str(Path(__file__).with_name("formulations_cuts.md")))
        return
    out = Path(args.out or Path(__file__).with_name("formulations.md"))
    stored = out.with_suffix(".json")
    if args.render:
        record = json.loads(stored.read_text(encoding="utf-8"))
    else:
        record = measure(args.profile)
        stored.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"written {stored}")
    out.write_text(render(record), encoding="utf-8")
    print(f"written {out}")


if __name__ == "__main__":
    main()
