"""The ``iosched`` command line: solve, bound, model, generate, show, list, bench, report, reproduce, simulate, library.

Bad input exits with status 2 and a message naming the field and the value.
``solve`` exits 1 when the method's result is infeasible or an error.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import inspect
import itertools
import json
import os
import sys
import textwrap
import warnings
from pathlib import Path

from iosched.commands.common import dump_json, fmt, json_safe, parse_params, show_progress
from iosched.commands.library import cmd_library
from iosched.commands.simulate import cmd_simulate
from iosched.core import (
    METHODS,
    PROBLEMS,
    RunContext,
    Status,
    describe,
    get_method,
    get_problem,
    plain_summary,
    solve,
)
from iosched.errors import InstanceError, OutputError, ParameterError
from iosched.files import atomic_path
from iosched.solvers import backends, profile_source


def _stream(obj, stream) -> None:
    """``obj`` as JSON into ``stream`` piece by piece: PerSched's 200-application pattern is 84 MB of
    JSON, which as one string took the process from 0.4 to 1.07 GB."""
    json.dump(obj, stream, indent=2)
    stream.write("\n")


@contextlib.contextmanager
def _stdout_to_stderr(active: bool):
    """While active, whatever is written to stdout (by Python or by a solver library's C code) goes to
    stderr, so that the JSON printed afterwards is the only thing on stdout."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


PLOT_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp")


def _writable(path: str | None, option: str, formats: tuple[str, ...] = ()) -> None:
    """Check before any work that ``path`` can be written (its folder exists) and has a known extension."""
    if path is None:
        return
    target = Path(path)
    if formats and target.suffix.lower().lstrip(".") not in formats:
        raise ParameterError(f"{option} takes a file ending in .{', .'.join(formats)}, got {path!r}")
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir() or not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ParameterError(f"{option}: cannot write {path!r} (no such writable folder, or a folder)")


def _brief(value, width: int = 300) -> str:
    """``value`` as text (lists and dicts as JSON); a long list or dict cut between whole items, never inside
    one (--json gives it whole)."""
    if not isinstance(value, (list, dict)):
        return str(value)
    whole = json.dumps(json_safe(value), default=str)
    if len(whole) <= width:
        return whole
    items = [json.dumps(json_safe(v), default=str) for v in value] if isinstance(value, list) else \
        [f"{json.dumps(k)}: {json.dumps(json_safe(v), default=str)}" for k, v in value.items()]
    shown: list[str] = []
    size = 0
    for item in items:
        if shown and size + len(item) > width:
            break
        shown.append(item)
        size += len(item) + 2
    left, (start, end) = len(items) - len(shown), ("[", "]") if isinstance(value, list) else ("{", "}")
    more = f", ... {left} more of {len(items)}" if left else ""
    return f"{start}{', '.join(shown)}{more}{end}" + (" (--json or -o for all)" if left else "")


def cmd_solve(args) -> int:
    _writable(args.plot, "--plot", PLOT_FORMATS)
    _writable(args.output, "-o/--output")
    get_problem(args.problem)
    params = parse_params(args.param)
    if "seed" in params:
        raise ParameterError("give the seed with --seed, not --param seed=...")
    if args.profile:
        if "profile" not in inspect.signature(get_method(args.problem, args.method).run).parameters:
            raise ParameterError(f"{args.problem}/{args.method} runs no solver; --profile does not apply")
        params["profile"] = args.profile
    if "solver" in params:  # --param solver=NAME: the profile's backend replaced (profile NAME:SOLVER)
        signature = inspect.signature(get_method(args.problem, args.method).run).parameters
        if "profile" not in signature:
            raise ParameterError(f"{args.problem}/{args.method} runs no solver; --param solver does not apply")
        params["profile"] = f"{params.get('profile', signature['profile'].default)}:{params.pop('solver')}"
    with _stdout_to_stderr(args.json):
        res = solve(args.problem, args.instance, args.method, seed=args.seed, **params)  # loading counts
    if args.output or args.json:  # (a large solution's JSON costs memory: only when asked for)
        data = json_safe(res.to_dict(res.instance_data))
        if args.output:
            with atomic_path(args.output) as tmp, open(tmp, "w", encoding="utf-8") as f:
                _stream(data, f)
        if args.json:
            _stream(data, sys.stdout)
    if not args.json:  # the readable summary, also beside -o (the file holds the whole result)
        ev = res.evaluation
        print(f"{res.problem} / {res.instance} / {res.method}: {res.status.value}")
        print(f"  {res.objective_name} ({res.sense}): {fmt(res.objective)}   bound: {fmt(res.bound)}"
              f"   gap: {fmt(res.gap, '.3%') if res.gap is not None else '-'}")
        if ev is not None:
            print(f"  feasible: {ev.feasible}" + "".join(f"\n    {v}" for v in ev.violations[:10]))
            for key, value in ev.to_dict().items():
                if key not in ("feasible", "violations"):
                    print(f"  {key}: {value}")
        for key, value in res.info.items():
            print(f"  {key}: {_brief(value)}")
        prepared = f"; before it, the method's preparation {res.prepare_time_s:.3f} s" \
            if res.prepare_time_s is not None else ""
        print(f"  wall time: {res.wall_time_s:.3f} s (method {res.method_time_s:.3f} s, "
              f"bound {res.bound_time_s:.3f} s{prepared})")
    if args.plot:
        if res.solution is None:
            print(f"iosched: {res.status.value} without a solution: no plot written", file=sys.stderr)
        else:
            res.plot(args.plot)
    return 0 if res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT) else 1


def cmd_bound(args) -> int:
    prob = get_problem(args.problem)
    backends.require(args.solver)  # a missing backend's error names its package, before any work
    inst = prob.read_instance(args.instance)
    b = prob.bounds(inst, RunContext(solver=args.solver))  # the LP bounds on --solver's backend
    if args.json:
        print(dump_json({"problem": args.problem, "instance": inst.name, "bounds": b}))
    else:
        for key, value in b.items():
            print(f"{key}: {fmt(value)}")
    return 0


def cmd_model(args) -> int:
    _writable(args.write, "--write")
    if args.write and not args.write.lower().endswith((".lp", ".mps", ".pb", ".pb.txt")):  # before the model is built
        raise ParameterError(f"--write takes a .lp or .mps file (Pyomo models) or a .pb or .pb.txt file (CP-SAT "
                             f"models), got {args.write!r}")
    from iosched.formulations.command import model_command

    return model_command(args)


def cmd_formulations(args) -> int:
    from iosched.formulations.command import formulations_command

    return formulations_command(args)


def cmd_generate(args) -> int:
    _writable(args.output, "-o/--output")
    prob = get_problem(args.problem)
    size = parse_params(args.param)
    inst = prob.generate_instance(args.seed, **size)
    text = inst.to_json(args.output)
    if not args.output:
        print(text)
    return 0


# the iosched.instances module holding each problem's from_darshan
IMPORT_PROBLEMS = {"filedomain": "filedomain_darshan", "forwarding": "forwarding_darshan", "periodic": "periodic"}


def cmd_import(args) -> int:
    """``iosched import darshan LOG|FOLDER --problem P``: an instance from Darshan logs, its JSON on stdout
    or in --out, the one-line statement of what was assumed (and any log refused) on stderr."""
    from importlib import import_module

    from iosched.importers.darshan import logs_in

    _writable(args.out, "--out")
    build = import_module(f"iosched.instances.{IMPORT_PROBLEMS[args.problem]}").from_darshan
    params = parse_params(args.param)
    accepted = [n for n in inspect.signature(build).parameters if n not in ("log", "logs", "file")]
    for key in params:
        if key not in accepted:
            raise ParameterError(f"--param {key}: not a parameter of importing {args.problem} (accepted: "
                                 f"{', '.join(accepted)})")
    if args.file is not None:
        if args.problem != "filedomain":
            raise ParameterError(f"--file applies to --problem filedomain only, got --problem {args.problem}")
        params["file"] = args.file
    source = args.source
    if args.problem == "filedomain":
        logs = logs_in(source)
        if len(logs) != 1:
            raise ParameterError(f"--problem filedomain takes one log, {source!r} holds {len(logs)}")
        source = logs[0]
    inst = build(source, **params)
    print(f"assumed: {inst.provenance['assumed']}", file=sys.stderr)
    for r in inst.provenance.get("refused", []):
        print(f"refused: {r['reason']}", file=sys.stderr)
    text = inst.to_json(args.out)
    if not args.out:
        print(text)
    return 0


def cmd_show(args) -> int:
    prob = get_problem(args.problem)
    if args.template == (args.instance is not None):
        raise ParameterError("iosched show takes an instance or --template, one of the two")
    template = prob.template if args.template else None
    if args.template and template is None:  # (every problem registers one)
        raise ParameterError(f"{args.problem} has no template")
    inst = template() if template is not None else prob.read_instance(args.instance)
    print(dump_json(inst.to_dict()))
    return 0


def cmd_list(args) -> int:
    if args.suites:
        from importlib import resources

        from iosched.harness.suite import builtin_suites, load_suite

        if args.problem:
            raise ParameterError("iosched list --suites takes no problem or method")
        for name in builtin_suites():
            suite = load_suite(name)
            text = resources.files("iosched.harness").joinpath("suites", f"{name}.toml").read_text()
            head = [line.lstrip("#").strip() for line in itertools.takewhile(lambda x: x.startswith("#"),
                                                                             text.splitlines())]
            about = textwrap.fill(" ".join(head), 100, initial_indent="  ", subsequent_indent="  ")
            print(f"{name:18s} {suite.problem:11s} {len(suite.tasks):4d} tasks, profile {suite.profile}, "
                  f"timeout {suite.timeout:g} s")
            if about:
                print(about)
        return 0
    if args.method:
        print(describe(get_problem(args.problem).name, args.method))
        return 0
    if args.problem:
        prob = get_problem(args.problem)
        for m in sorted((m for m in METHODS.values() if m.problem == prob.name), key=lambda m: m.name):
            print(f"{describe(prob.name, m.name)}\n")
        return 0
    for name, prob in sorted(PROBLEMS.items()):
        models = f"; models {', '.join(prob.models)}" if prob.models else ""
        print(f"{name}: instances {', '.join(prob.builtins)}{models}")
        print(f"  instance specs: {plain_summary(prob.load.__doc__)}")
        for m in sorted((m for m in METHODS.values() if m.problem == name), key=lambda m: m.name):
            print(textwrap.fill(f"{m.description} [exact over: {m.exact_over or 'not stated'}]", 118,
                                initial_indent=f"  {m.name:24s} {m.objective:15s} ", subsequent_indent=" " * 43))
    return 0


def cmd_compile(args) -> int:
    """Run every method's one-off preparation (numba compilations) now, not in a first solve."""
    from time import perf_counter

    steps: dict = {}
    for m in sorted(METHODS.values(), key=lambda m: (m.problem, m.name)):
        if m.prepare is not None:
            steps.setdefault(m.prepare, []).append(f"{m.problem}/{m.name}")
    failed = False
    for prepare, names in steps.items():
        start = perf_counter()
        try:
            prepare()
        except Exception as e:  # the others may still work: say which failed, go on, exit 1
            failed = True
            print(f"{', '.join(names)}: failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            continue
        print(f"{', '.join(names)}: ready in {perf_counter() - start:.1f} s", flush=True)
    return 1 if failed else 0


def cmd_solvers(args) -> int:
    """The MILP/LP backends a profile can name: installed or not, version, licence limit; and the profile file."""
    rows = backends.inventory()
    in_force = f"solver profiles: {profile_source()}"
    if args.json:
        print(in_force, file=sys.stderr)
        print(json.dumps(rows, indent=2))
        return 0
    print(in_force)
    for r in rows:
        if r["version"] is None:
            print(f"{r['solver']:7s} not installed ({r['install']})")
        else:
            print(f"{r['solver']:7s} {r['package']} {r['version']}, Pyomo {r['pyomo']}, licence limit: {r['licence']}")
    return 0


def _drawn(paths: list[Path], folder: Path) -> list[Path]:
    """A reproduction's figures once drawn (by :func:`_reproduce_one`, in its process)."""
    return paths


def _reproduce_one(name: str, own: dict, workers: int, progress: bool, figures_dir: str | None):
    """One paper's reproduction, its figures drawn into ``figures_dir`` here, so that what returns pickles
    (the problems run in processes of their own when several run at once)."""
    from importlib import import_module

    rep = import_module(f"iosched.reproduce.{name}").reproduce(workers=workers, progress=progress, **own)
    if rep.figures is not None:  # drawn here for a report; without one, not drawn at all
        rep.figures = None if figures_dir is None else functools.partial(_drawn, rep.figures(Path(figures_dir)))
    return rep


def cmd_reproduce(args) -> int:
    """Each paper's experiment (``iosched.reproduce.<problem>.reproduce``) beside its published figures; the
    problems in ``args.processes`` processes at once (default: one per core, as many as there are problems)."""
    from importlib import import_module

    from iosched.reproduce import paper_report

    named = args.problem or ["all"]
    problems = sorted(PROBLEMS) if named == ["all"] else list(dict.fromkeys(get_problem(p).name for p in named))
    options = parse_params(args.param)
    if args.sets is not None:
        if problems != ["periodic"]:
            raise ParameterError("--sets applies to 'reproduce periodic' only")
        options["sets"] = args.sets
    if options and len(problems) > 1:
        raise ParameterError("--param applies to one problem: name it (iosched reproduce PROBLEM --param ...)")
    processes = min(len(problems), os.cpu_count() or 1) if args.processes is None else args.processes
    if processes < 1:
        raise ParameterError(f"--processes must be at least 1, got {processes}")
    figures_dir = None
    if args.report is not None:
        report_dir = Path(args.report)
        if report_dir.exists() and not report_dir.is_dir():
            raise ParameterError(f"--report: {args.report!r} exists and is not a folder")
        try:
            (report_dir / "figures").mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"--report: cannot make the folder {args.report!r}: {e.strerror or e}") from None
        figures_dir = str(report_dir / "figures")
    runs = {}
    for name in problems:
        signature = inspect.signature(import_module(f"iosched.reproduce.{name}").reproduce)
        own = {**options, **({"full": True} if args.full and "full" in signature.parameters else {}),
               **({"report": True} if args.report is not None and "report" in signature.parameters else {})}
        try:
            signature.bind(**own)
        except TypeError as e:
            raise ParameterError(f"reproduce {name}: {e}") from None
        runs[name] = (name, own, args.workers, show_progress(args), figures_dir)
    ok, out, reps = True, [], {}
    if not args.json:
        print(paper_report.SEED_LEGEND + "\n", flush=True)
    with contextlib.ExitStack() as stack:
        if processes > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            pool = stack.enter_context(ProcessPoolExecutor(min(processes, len(runs)), mp.get_context("spawn")))
            pending = {name: pool.submit(_reproduce_one, *run) for name, run in runs.items()}
            results = ((name, future.result()) for name, future in pending.items())
        else:
            results = ((name, _reproduce_one(*run)) for name, run in runs.items())
        for name, rep in results:
            reps[name] = rep
            ok &= rep.ok
            if args.json:
                out.append({"problem": name, "title": rep.title, "ok": rep.ok, "rows": rep.rows, "notes": rep.notes,
                            "comparisons": rep.comparisons})
            elif args.report is not None:
                c = paper_report.counts(rep.comparisons)
                print(f"{rep.title}: every solution feasible: {'yes' if rep.ok else 'NO'}; {len(rep.comparisons)} "
                      f"figures compared ({c['within']} within 10 %, {c['explained']} explained, {c['unexplained']} "
                      f"unexplained, {c['not comparable']} not comparable)", flush=True)
            else:
                print(f"{rep.title}\n\n{rep.table}\n" + (f"\n{rep.notes}\n" if rep.notes else ""), flush=True)
    if args.report is not None:
        written = paper_report.write(reps, args.report)
        print(f"report: {written['report']}, {written['json']} and {len(written) - 2} figures in "
              f"{Path(args.report) / 'figures'}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(dump_json(out if len(out) > 1 else out[0]))
    return 0 if ok else 1


def _progress_flags(parser) -> None:
    flags = parser.add_mutually_exclusive_group()
    flags.add_argument("--progress", action="store_true",
                       help="progress bars on stderr also when it is a file or a pipe (default: on a terminal only)")
    flags.add_argument("--quiet", action="store_true", help="no progress bars")


def cmd_bench(args) -> int:
    from iosched.harness.runner import check_out, run_suite
    from iosched.harness.suite import load_suite

    check_out(args.out)  # before the suite's instances are generated
    suite = load_suite(args.suite)
    slurm = None
    if args.slurm or args.slurm_opt:
        from iosched.harness.slurm import parse_opt

        if not args.slurm:
            raise ParameterError("--slurm-opt is for --slurm only")
        slurm = dict(parse_opt(text) for text in args.slurm_opt)
    counts = run_suite(suite, args.out, workers=args.workers, scheduler=args.scheduler, memory_mb=args.memory_mb,
                       progress=show_progress(args), retry_failed=args.retry_failed, retry_starved=args.retry_starved,
                       slurm=slurm)
    print(f"{suite.name}: {counts['done']} run ({counts['failed']} failed), {counts['skipped']} already done;"
          f" results in {Path(args.out) / 'results'}")
    return 0


def cmd_report(args) -> int:
    from iosched.harness import report

    skipped: list[Path] = []
    reasons: dict[Path, str] = {}
    rows = report.load_results(args.dir, skipped, reasons)
    for path in skipped:
        print(f"iosched: skipped {path}: it {reasons[path]}; 'iosched bench' runs it again", file=sys.stderr)
    if not rows:
        raise ParameterError(f"no results in {Path(args.dir) / 'results'}")
    table = report.summarize(rows)
    if args.format == "md":
        print(report.to_markdown(table))
        print()
        print(report.to_markdown(report.per_instance(rows)))
    elif args.format == "csv":
        print(report.to_csv(table), end="")
    else:
        target = Path(args.dir) / "results.parquet"
        report.to_parquet(rows, target)
        print(f"{len(rows)} results written to {target}")
    for p in report.plot(rows, args.plots or Path(args.dir) / "plots"):
        print(f"plot: {p}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="iosched", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="run a method on an instance, evaluate and bound it")
    s.add_argument("problem")
    s.add_argument("instance", help="JSON file or built-in name (e.g. paper:set3)")
    s.add_argument("--method", required=True)
    s.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    s.add_argument("--profile", help="solver profile from solvers.toml (exact methods)")
    s.add_argument("--seed", type=int)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--plot", metavar="FILE", help="draw the solution (png/svg/pdf)")
    s.add_argument("-o", "--output", metavar="FILE", help="also write the JSON result here")
    s.set_defaults(fn=cmd_solve)

    b = sub.add_parser("bound", help="bounds valid for every solution of an instance")
    b.add_argument("problem")
    b.add_argument("instance")
    b.add_argument("--json", action="store_true")
    b.add_argument("--solver", default="highs", choices=list(backends.BACKENDS),
                   help="the backend of the bounds' LPs (malleable's; default: highs)")
    b.set_defaults(fn=cmd_bound)

    md = sub.add_parser("model", help="build an exact model, print its size, write it as LP or MPS")
    md.add_argument("problem")
    md.add_argument("instance")
    md.add_argument("--name", default="milp", help="which model (see 'iosched list'; periodic: milp, longrun)")
    md.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="the builder's parameters, e.g. period=9000 slots=200 kind=relaxation")
    md.add_argument("--write", metavar="FILE", help="FILE.lp or FILE.mps (Pyomo), FILE.pb or FILE.pb.txt (CP-SAT)")
    md.add_argument("--relax", action="store_true", help="also solve its LP relaxation and print the value")
    md.add_argument("--profile", default="default", help="solver profile of --relax (default: default)")
    md.set_defaults(fn=cmd_model)

    fo = sub.add_parser("formulations", help="every formulation of a problem side by side on an instance: size, "
                                             "LP relaxation, root bound, best, bound, gaps, scope, evaluated value")
    fo.add_argument("problem")
    fo.add_argument("instance")
    fo.add_argument("--solver", action="append", default=[], help="a MILP backend (repeat for several; default: "
                                                                   "the profile's)")
    fo.add_argument("--profile", default="default", help="solver profile: time limit per solve, gap, threads")
    fo.add_argument("--name", action="append", default=[], help="only this formulation (repeat for several)")
    fo.add_argument("--param", action="append", default=[], metavar="NAME:KEY=VALUE",
                    help="a builder parameter of formulation NAME, e.g. milp:covers=true")
    fo.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE[,KEY=VALUE]",
                    help="an extra row: formulation NAME with these parameters (a valid inequality on and off)")
    fo.add_argument("--max-variables", type=int, default=50_000,
                    help="a model estimated past this many variables is a row that says so, not built")
    fo.add_argument("--json", action="store_true", help="print one JSON object")
    fo.add_argument("--out", metavar="DIR", help="write formulations.csv (and .parquet), .json and bound_vs_time.png")
    fo.set_defaults(fn=cmd_formulations)

    g = sub.add_parser("generate", help="a seeded random instance")
    g.add_argument("problem")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="generator size parameters, e.g. n_apps=6")
    g.add_argument("-o", "--output", metavar="FILE")
    g.set_defaults(fn=cmd_generate)

    im = sub.add_parser("import", help="an instance from Darshan logs (filedomain, forwarding, periodic)")
    im.add_argument("format", choices=["darshan"])
    im.add_argument("source", metavar="LOG|FOLDER", help="a Darshan log, or a folder of them (forwarding: one job per "
                                                         "log; periodic: one application per log)")
    im.add_argument("--problem", required=True, choices=list(IMPORT_PROBLEMS))
    im.add_argument("--file", metavar="PATH", help="filedomain: the shared file (default: the largest written by "
                                                   "every rank)")
    im.add_argument("--out", metavar="FILE", help="write the instance JSON here (default: stdout)")
    im.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="what a log does not hold, e.g. bandwidth=3 (periodic, GB/s), stripe_size=1048576 "
                         "stripe_count=4 aggregators=4 (filedomain), procs_per_node=16 (forwarding)")
    im.set_defaults(fn=cmd_import)

    sh = sub.add_parser("show", help="print an instance as JSON")
    sh.add_argument("problem")
    sh.add_argument("instance", nargs="?")
    sh.add_argument("--template", action="store_true", help="a small valid instance to start from (every field, "
                                                            "its unit and meaning: the docs' format pages)")
    sh.set_defaults(fn=cmd_show)

    ls = sub.add_parser("list", help="problems, methods and built-in instances; a problem's (or one method's) "
                                     "parameters with their defaults, accepted values and units")
    ls.add_argument("problem", nargs="?")
    ls.add_argument("method", nargs="?")
    ls.add_argument("--suites", action="store_true", help="the built-in benchmark suites (for iosched bench)")
    ls.set_defaults(fn=cmd_list)

    be = sub.add_parser("bench", help="run a benchmark suite (resumable) in warm workers, a fresh process "
                                      "for each task that needs a solver")
    be.add_argument("suite", help="a suite file or a built-in suite (iosched list --suites)")
    be.add_argument("--out", required=True, metavar="DIR")
    be.add_argument("--workers", type=int, help="local processes at once (default: cores / profile threads)")
    be.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (tls://host:port with Dask's "
                                                           "TLS configuration, or tcp://host:port)")
    be.add_argument("--slurm", action="store_true",
                    help="run on Slurm worker jobs started for this run (the suite's [slurm] table; docs/harness.md)")
    be.add_argument("--slurm-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="a Slurm option over the suite's [slurm] (partition, account, jobs, cores, memory, "
                         "walltime, job_extra_directives, job_script_prologue, interface, start_timeout, "
                         "retries, restarts, dashboard, insecure)")
    be.add_argument("--memory-mb", type=int,
                    help="address-space limit per task (at least 512); beyond it the task is OOM")
    be.add_argument("--retry-failed", action="store_true",
                    help="run again the tasks that crashed, timed out or ran out of memory")
    be.add_argument("--retry-starved", action="store_true",
                    help="run again the time-limited tasks that got under a quarter of their budget in CPU")
    _progress_flags(be)
    be.set_defaults(fn=cmd_bench)

    rp = sub.add_parser("report", help="gap tables and plots from a results directory")
    rp.add_argument("dir")
    rp.add_argument("--format", choices=["md", "csv", "parquet"], default="md")
    rp.add_argument("--plots", metavar="DIR", help="where the performance profile and gap plots go (default DIR/plots)")
    rp.set_defaults(fn=cmd_report)

    sm = sub.add_parser("simulate", help="a batch scheduler with burst buffer on a trace (FCFS/WFP, EASY, window)")
    sm.add_argument("trace", help="an SWF file (an extra column: burst buffer GB), or generate:SEED[:JOBS]")
    sm.add_argument("--policy", choices=["fcfs", "wfp"], default="fcfs")
    sm.add_argument("--backfill", choices=["easy", "none"], default="easy")
    sm.add_argument("--window", metavar="METHOD", help="a window method run at each scheduling event (default: none)")
    sm.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="the window method's parameters")
    sm.add_argument("--window-size", type=int, default=20)
    sm.add_argument("--starvation", type=int, default=50, help="window calls after which a job must start")
    sm.add_argument("--backfill-depth", type=int, default=100,
                    help="queued jobs after the head tried for EASY backfilling per pass (Slurm's bf_max_job_test)")
    sm.add_argument("--persistent-bb", type=float, default=0.0, help="share of the burst buffer held persistently")
    sm.add_argument("--mix", help="put a burst buffer mix (S1-S4) or a local SSD mix (S5-S7) on the trace")
    sm.add_argument("--mix-seed", type=int, default=0)
    sm.add_argument("--nodes", type=int, help="the machine's nodes (default: the trace header's)")
    sm.add_argument("--burst-buffer", type=int, help="burst buffer GB (default: the header's; Theta's with --mix)")
    sm.add_argument("--jobs", type=int, help="simulate the first JOBS jobs only")
    sm.add_argument("--ssd-classes", metavar="GB:NODES,...", help="the nodes' local SSD classes, e.g. 128:2196,"
                    "256:2196 (default with SSD requests: half 128 GB, half 256 GB, the paper's Section 6)")
    sm.add_argument("--warmup", type=float, default=0.1, help="share of the submit span left out at the start")
    sm.add_argument("--cooldown", type=float, default=0.1, help="share of the submit span left out at the end")
    sm.add_argument("--format", choices=["csv", "parquet"], default="csv", help="of the per-job records")
    sm.add_argument("--out", required=True, metavar="DIR")
    sm.add_argument("--no-plots", action="store_true")
    _progress_flags(sm)
    sm.set_defaults(fn=cmd_simulate)

    lb = sub.add_parser("library", help="the instance library: named instances with verified best-knowns, bounds "
                                        "and history; check a solution against them")
    lsub = lb.add_subparsers(dest="action", required=True)
    ll = lsub.add_parser("list", help="the library's instances with status, best known, bound and gap")
    ll.add_argument("problem", nargs="?")
    ll.add_argument("--tag", help="only the instances with this tag (paper, small, medium, paper-scale ...)")
    ll.add_argument("--status", choices=["optimal", "open"])
    ll.add_argument("--json", action="store_true")
    lw = lsub.add_parser("show", help="an instance's catalogue entry, summary and history (JSON)")
    lw.add_argument("name", help="e.g. periodic/paper-set1 (or lib:periodic/paper-set1)")
    for action, text in (("check", "score a solution file against the best known: improves, matches, worse, "
                                   "infeasible or invalid (exit 1 infeasible, 2 invalid)"),
                         ("record", "check a solution and, where it improves, add it to the history and the summary "
                                    "(exit 1 when not recorded)")):
        lc = lsub.add_parser(action, help=text)
        lc.add_argument("name")
        lc.add_argument("solution", help="a JSON file: a result as 'iosched solve --json' writes it, or its solution")
        lc.add_argument("--json", action="store_true")
        if action == "record":
            lc.add_argument("--method", help="who found it (default: the result's method, or 'submitted')")
    lm = lsub.add_parser("summary", help="regenerate summary.json from the catalogue and the history")
    lm.add_argument("problem", nargs="?")
    lb.set_defaults(fn=cmd_library)

    co = sub.add_parser("compile", help="compile the methods' numba kernels now (otherwise on first use; "
                                        "cached for later processes)")
    co.set_defaults(fn=cmd_compile)

    sv = sub.add_parser("solvers", help="the MILP/LP backends a profile can name (solver = ...): installed, "
                                        "version, licence limit")
    sv.add_argument("--json", action="store_true")
    sv.set_defaults(fn=cmd_solvers)

    r = sub.add_parser("reproduce", help="the paper's experiment beside its published figures")
    r.add_argument("problem", nargs="*", help="problems (default: all)")
    r.add_argument("--sets", type=int, nargs="*", help="periodic: the paper sets (default: all)")
    r.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="options of one problem's reproduction")
    r.add_argument("--workers", type=int, default=1, help="processes (periodic: for the period search)")
    r.add_argument("--processes", type=int, help="problems reproduced at once, each in a process of its own "
                                                 "(default: one per core)")
    r.add_argument("--json", action="store_true")
    r.add_argument("--report", metavar="DIR", help="write report.md, comparisons.json and figures/ to DIR; the "
                                                   "terminal gets a summary per paper")
    r.add_argument("--full", action="store_true", help="also the long experiments (more draws, sweeps)")
    _progress_flags(r)
    r.set_defaults(fn=cmd_reproduce)
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """iosched's own warnings as 'iosched: warning: ...' on stderr; the others as Python prints them."""
    if category.__module__.startswith("iosched"):
        print(f"iosched: warning: {message}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.fn(args)
    except (InstanceError, ParameterError, OutputError) as e:
        print(f"iosched: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped early (| head): not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
