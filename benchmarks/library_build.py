"""Build the instance library (iosched/library/data): instances, best-knowns, bounds, classes.

    nice python benchmarks/library_build.py [--problem P ...] [--only SHORT_NAME ...]

Each instance of :data:`INSTANCES` is made from its spec (a built-in name or ``generate:SEED:{size}``),
stored with its hash in the problem's catalogue, and run through the problem's methods of
:data:`METHODS_RUN` (heuristics, and the exact method under the ``quick`` profile) with
:func:`iosched.solve`. The best solution is re-scored by the evaluator after a JSON round trip and
stored; the history gets one ``solution`` record (the best), the tightest ``bound`` (the problem's,
one of :data:`MORE_BOUNDS`, or a method's own bound: all valid for every solution), and a ``class``
record (the first profile under which the exact method met that bound, or ``open``). An instance
already in the history is skipped, so a killed build resumes; records are only ever appended. Then
each problem's summary.json is regenerated.

``--escalate PROFILE`` only runs the exact method under PROFILE on the instances of class ``open``
(appending a better solution, a tighter bound and the class); ``--more-bounds`` only appends the
bounds of :data:`MORE_BOUNDS` where they tighten the recorded ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import iosched  # noqa: E402
from iosched import library  # noqa: E402
from iosched.core import METHODS, Status, get_problem  # noqa: E402
from iosched.errors import ParameterError  # noqa: E402
from iosched.files import write_text  # noqa: E402


def _gen(seed: int, **size) -> str:
    return f"generate:{seed}:{json.dumps(size, sort_keys=True)}"


def _family(prefix: str, tags: list[str], seeds, **size) -> list[tuple[str, str, list[str]]]:
    return [(f"{prefix}-{seed}", _gen(seed, **size), ["generated", *tags]) for seed in seeds]


# (short name, spec, tags) per problem
INSTANCES: dict[str, list[tuple[str, str, list[str]]]] = {
    "periodic": [(f"paper-set{k}", f"paper:set{k}", ["paper", "builtin"]) for k in range(1, 11)]
    + _family("small", ["small"], range(5), n_apps=3)
    + _family("medium", ["medium"], range(5), n_apps=6)
    + _family("large", ["paper-scale"], range(3), n_apps=10),
    "window": [("paper-example", "paper:example", ["paper", "builtin"])]
    + _family("small", ["small"], range(5), size=10)
    + _family("medium", ["medium"], range(5), size=20)
    + _family("theta-s4", ["paper-scale"], range(5), size=50, mix="S4")
    + _family("ssd-s6", ["paper-scale", "ssd"], range(3), size=20, mix="S6", ssd=True)
    + _family("machine", ["machine-scale"], range(2), size=200),
    "forwarding": [(f"testbed-{app}", f"testbed:{app}", ["paper", "builtin"])
                   for app in ("cesm", "cam", "awp", "shentu", "lammps", "macdrp", "dndc", "wrf1", "apt", "xcfd",
                               "swdnn")]
    + [("figure4", "figure4", ["paper", "builtin"]), ("pair-wrf1-awp", "pair:wrf1:awp", ["paper", "builtin"])]
    + _family("small", ["small"], range(5), n_jobs=3)
    + _family("medium", ["medium"], range(4), n_jobs=20)
    + _family("large", ["paper-scale"], range(2), n_jobs=100)
    + _family("scarce", ["paper-scale", "scarce-pool"], range(2), n_jobs=100, pool_nodes=16),
    "filedomain": [("paper-fig2", "paper:fig2", ["paper", "builtin"]),
                   ("paper-fig2d", "paper:fig2d", ["paper", "builtin"]),
                   ("example-gpfs", "example:gpfs", ["builtin"]), ("example-requests", "example:requests", ["builtin"]),
                   ("sweep-8-12", "sweep:8:12", ["builtin", "sweep"]),
                   ("sweep-8-30", "sweep:8:30", ["builtin", "sweep"])]
    + _family("small", ["small"], range(6), max_stripes=12)
    + _family("medium", ["medium"], range(5))
    + _family("token", ["medium", "token", "requests"], range(4), max_stripes=12, locking="token", requests=True),
    "malleable": [("paper-50", "paper:50", ["paper", "builtin"])]
    + _family("grid3", ["small", "grid"], range(5), jobs=3, kind="grid")
    + _family("grid4", ["small", "grid"], range(8), jobs=4, kind="grid")
    + _family("grid6", ["medium", "grid"], range(5), jobs=6, kind="grid")
    + _family("paper10", ["medium"], range(3), jobs=10),
}

# (method, params) per problem: heuristics and baselines, then exact methods (their profile set by the build)
METHODS_RUN: dict[str, list[tuple[str, dict]]] = {
    "periodic": [("persched", {}), ("persched-compact", {}), ("trace-compact", {"profile": "quick"}),
                 ("milp", {"profile": "quick"})],
    "window": [("first-fit", {}), ("nsga2", {"time_limit": 10}), ("exact", {})],
    "forwarding": [("fixed", {}), ("dfra", {}), ("mckp", {}), ("search", {"time_limit": 10}),
                   ("milp-dfra-space", {"profile": "quick"}), ("milp", {"profile": "quick"})],
    "filedomain": [("even", {}), ("stripe-aligned", {}), ("lustre", {}), ("exact", {"profile": "quick"})],
    "malleable": [("dmr", {}), ("rigid-backfill", {}), ("rigid-list", {}), ("rigid-optimal", {"profile": "quick"}),
                  ("cpsat", {"profile": "quick"}), ("milp", {"profile": "quick"})],
}
EXACT = {"periodic": "milp", "window": "exact", "forwarding": "milp", "filedomain": "exact", "malleable": "cpsat"}
# the problem's bound where Problem.gap_reference does not say what it is
BOUND_NAMES = {
    "window": "the exact Pareto front's hypervolume (dynamic program), valid for every selection's front",
    "forwarding": "models.forwarding.lower_bound (water-filling over the usable capacity), valid for every allocation",
    "filedomain": "models.filedomain.time_bound (data over bandwidth, lock grants, counting bound), valid for every "
                  "partition",
}
# bounds of Problem.bounds beside Problem.bound, valid for every solution: (key, what backs it)
MORE_BOUNDS = {"periodic": [("contiguity_sys_efficiency", "the contiguity bound (models.periodic.contiguity_bound: the "
                                                          "long-run LP with cuts for contiguous computes), valid for "
                                                          "every periodic pattern")]}
# relative: re-scoring reproduces a value, and a value this close to its bound is optimal (core.CERTIFIED_GAP)
TOLERANCE = 1e-9
# malleable's time-indexed MILP only where its grid is small
SKIP = {("malleable", "milp"): lambda e: e.size.get("jobs", 0) > 4,
        ("forwarding", "milp"): lambda e: e.size.get("jobs", 0) > 12}


def _size(data: dict) -> dict:
    return {k: len(v) if isinstance(v, list) else v for k, v in data.items()
            if isinstance(v, (list, int)) and not isinstance(v, bool)}


def _provenance(problem: str, spec: str) -> tuple[str, dict, int | None]:
    if spec.startswith("generate:"):
        _, seed, size = spec.split(":", 2)
        return f"iosched.instances.{problem}.generate", json.loads(size), int(seed)
    return f"iosched.instances.{problem}.load({spec!r})", {}, None


def make_entry(problem: str, short: str, spec: str, tags: list[str]) -> library.Entry:
    """Make the instance from its spec, store it, and return its catalogue entry."""
    prob = get_problem(problem)
    data = prob.read_instance(spec).to_dict()
    generator, params, seed = _provenance(problem, spec)
    objective = METHODS[f"{problem}/{EXACT[problem]}"].objective
    e = library.Entry(f"{problem}/{short}", problem, spec, generator, params, seed, iosched.__version__,
                      library.instance_hash(data), _size(data), tuple(tags), objective, prob.sense(objective),
                      library.UNITS[objective], TOLERANCE)
    library.write_json_gz(e.instance_path, {**data, "name": f"lib:{e.name}"})
    return e


def _solver(params: dict) -> str:
    if "profile" not in params:
        return "none (the method's own code)"
    from importlib.metadata import version

    return (f"profile {params['profile']}: HiGHS (highspy {version('highspy')}) or CP-SAT (ortools "
            f"{version('ortools')}), as the method uses")


def more_bounds(e: library.Entry, inst) -> dict | None:
    """The tightest of the problem's other bounds of :data:`MORE_BOUNDS` as a bound record, or None."""
    best = None
    for key, backed in MORE_BOUNDS.get(e.problem, []):
        t = time.perf_counter()
        value = get_problem(e.problem).bounds(inst).get(key)
        if value is not None and (best is None or library.better(e.sense, best["value"], value)):
            best = {"instance": e.name, "kind": "bound", "value": value, "backed_by": backed, "scope": "every solution",
                    "method": f"iosched bound {e.problem} ({key})", "time_s": round(time.perf_counter() - t, 3)}
    return best


def add_more_bounds(problem: str, log) -> None:
    """Append a bound record of :data:`MORE_BOUNDS` for every instance it tightens (the built ones too)."""
    current = library.summary(problem)
    records = []
    for e in library.catalog(problem).values():
        rec = more_bounds(e, library.load(e.name))
        old = current.get(e.name, {}).get("bound")
        if rec is not None and (old is None or library.better(e.sense, old, rec["value"])):
            log(f"{e.name}: {rec['method']} {rec['value']} tightens {old}")
            records.append({**rec, "date": library.now(), "version": iosched.__version__, "machine": library.machine()})
    if records:
        library.append_history(problem, records)


def _run_method(e: library.Entry, inst, method: str, params: dict, log):
    """``method`` on ``e`` through iosched.solve: (result or None where refused, the value of its solution
    re-scored by the evaluator after a JSON round trip or None, that solution's dict)."""
    prob = get_problem(e.problem)
    seed = 0 if METHODS[f"{e.problem}/{method}"].randomized else None
    try:
        res = iosched.solve(e.problem, inst, method, seed=seed, attach_bound=False, **params)
    except ParameterError as err:  # beyond the method's size limits
        log(f"  {method}: refused: {err}")
        return None, None, None
    log(f"  {method}: {res.status.value} {res.objective} bound {res.bound} ({res.wall_time_s:.1f} s)")
    if res.solution is None or res.evaluation is None or not res.evaluation.feasible:
        return res, None, None
    sol = prob.solution_to_dict(res.solution, inst)
    ev = prob.evaluate(inst, prob.read_solution(json.loads(json.dumps(sol))))
    value = prob.objective(ev, e.objective) if ev.feasible else None
    if value is None or library.relative_gap(res.objective, value) > e.tolerance:
        log(f"  {method}: its solution does not re-score to {res.objective} after JSON ({value}): not stored")
        return res, None, None
    return res, value, sol


def _method_bound(e: library.Entry, res, method: str) -> dict | None:
    """The bound a method's result proved (valid for every solution, as Result.bound is), as a record."""
    if res is None or res.bound is None or res.status == Status.ERROR:
        return None
    return {"instance": e.name, "kind": "bound", "value": res.bound,
            "backed_by": f"the bound {method} proved ({res.info.get('gap_against') or 'its own'}), valid for every "
                         f"solution", "scope": "every solution", "method": method, "time_s": round(res.wall_time_s, 3)}


def _stamp() -> dict:
    return {"date": library.now(), "version": iosched.__version__, "machine": library.machine()}


def _params(params: dict, method: str, problem: str) -> dict:
    return {**params, "seed": 0} if METHODS[f"{problem}/{method}"].randomized else params


def run_instance(e: library.Entry, log) -> list[dict]:
    """Run the methods on ``e`` and return its history records (and store its best solution)."""
    prob = get_problem(e.problem)
    inst = library.load(e.name)
    best, best_time, bound_rec, runs, exact_value = None, None, None, [], None
    t0 = time.perf_counter()
    problem_bound = prob.bound(inst, e.objective)
    bound_time = time.perf_counter() - t0
    if problem_bound is not None:
        backed = prob.gap_reference(inst, e.objective) if prob.gap_reference else BOUND_NAMES[e.problem]
        bound_rec = {"instance": e.name, "kind": "bound", "value": problem_bound, "backed_by": backed,
                     "scope": "every solution", "method": f"iosched bound {e.problem} (Problem.bound)",
                     "time_s": round(bound_time, 3)}
    more = more_bounds(e, inst)
    if more is not None and (bound_rec is None or library.better(e.sense, bound_rec["value"], more["value"])):
        bound_rec = more
    for method, params in METHODS_RUN[e.problem]:
        if SKIP.get((e.problem, method), lambda _: False)(e):
            continue
        res, value, sol = _run_method(e, inst, method, params, log)
        if res is None:
            continue
        runs.append(method)
        b = _method_bound(e, res, method)
        if b is not None and (bound_rec is None or library.better(e.sense, bound_rec["value"], b["value"])):
            bound_rec = b
        if value is None:
            continue
        if method == EXACT[e.problem]:
            exact_value = value
        if best is None or library.better(e.sense, value, best["value"]):
            best, best_time = {"value": value, "method": method, "params": _params(params, method, e.problem),
                               "solution": sol}, res.wall_time_s
    if best is None:
        raise RuntimeError(f"{e.name}: no method gave a feasible solution")
    stamp = _stamp()
    library.write_json_gz(e.solution_path, best["solution"])
    records = [{"instance": e.name, "kind": "solution", "value": best["value"], "method": best["method"],
                "params": best["params"], "solver": _solver(best["params"]), "time_s": round(best_time, 3),
                "solution_hash": library.content_hash(best["solution"]), **stamp}]
    if bound_rec is not None:
        records.append({**bound_rec, **stamp})
    met = (exact_value is not None and bound_rec is not None
           and library.relative_gap(exact_value, bound_rec["value"]) <= e.tolerance)
    records.append({"instance": e.name, "kind": "class", "value": "quick" if met else "open",
                    "method": EXACT[e.problem], "tried": ["quick"] if EXACT[e.problem] in runs else [],
                    "note": "the exact method's value met the bound under the profile" if met else
                    "the exact method did not meet the bound under the profiles tried (or did not run)", **stamp})
    return records


def escalate(e: library.Entry, profile: str, log) -> list[dict]:
    """The exact method under ``profile`` on an instance of class ``open``: its records (a better solution,
    stored; a tighter bound; the class: ``profile`` where the exact value met the bound, else ``open``)."""
    rec = library.summary(e.problem)[e.name]
    method = EXACT[e.problem]
    params = {**dict(METHODS_RUN[e.problem])[method], "profile": profile}
    res, value, sol = _run_method(e, library.load(e.name), method, params, log)
    if res is None:  # refused (beyond its size limits): nothing tried
        return []
    stamp, records = _stamp(), []
    best, bound = rec["best_known"], rec["bound"]
    if value is not None and library.better(e.sense, value, best) and library.relative_gap(best, value) > e.tolerance:
        library.write_json_gz(e.solution_path, sol)
        records.append({"instance": e.name, "kind": "solution", "value": value, "method": method,
                        "params": _params(params, method, e.problem), "solver": _solver(params),
                        "time_s": round(res.wall_time_s, 3), "solution_hash": library.content_hash(sol), **stamp})
    b = _method_bound(e, res, method)
    if b is not None and library.better(e.sense, bound, b["value"]):
        records.append({**b, **stamp})
        bound = b["value"]
    met = value is not None and library.relative_gap(value, bound) <= e.tolerance
    records.append({"instance": e.name, "kind": "class", "value": profile if met else "open", "method": method,
                    "tried": [*rec["class_tried"], profile],
                    "note": "the exact method's value met the bound under the profile" if met else
                    "the exact method did not meet the bound under the profiles tried", **stamp})
    return records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", nargs="*", default=list(library.PROBLEMS))
    ap.add_argument("--only", nargs="*", help="short names to build (default: all)")
    ap.add_argument("--escalate", metavar="PROFILE",
                    help="only run the exact method under PROFILE on the built instances of class open (with --only: "
                         "those of them)")
    ap.add_argument("--more-bounds", action="store_true",
                    help="only append the bounds of MORE_BOUNDS where they tighten the recorded ones")
    args = ap.parse_args(argv)
    for problem in args.problem:
        if args.more_bounds:
            add_more_bounds(problem, lambda text: print(text, flush=True))
            library.write_summary(problem)
            continue
        if args.escalate:
            for name, rec in library.summary(problem).items():
                if rec["class"] == "open" and (not args.only or name.split("/", 1)[1] in args.only):
                    print(f"{name}: the exact method under {args.escalate}", flush=True)
                    library.append_history(problem, escalate(library.entry(name), args.escalate,
                                                             lambda text: print(text, flush=True)))
                    library.write_summary(problem)
            continue
        (library.DATA / problem).mkdir(parents=True, exist_ok=True)
        done = {r["instance"] for r in library.read_history(problem)}
        entries = dict(library.catalog(problem))
        for short, spec, tags in INSTANCES[problem]:
            if args.only and short not in args.only:
                continue
            name = f"{problem}/{short}"
            e = make_entry(problem, short, spec, tags)
            if name in entries and entries[name].hash != e.hash:
                raise SystemExit(f"{name}: its spec {spec} now makes another instance (hash changed): give it a new "
                                 f"name rather than rewrite the library")
            entries[name] = entries.get(name, e)
            write_text(library.catalog_path(problem), json.dumps(
                {"problem": problem, "instances": [x.to_dict() for x in entries.values()]}, indent=1) + "\n")
            library._catalog.cache_clear()
            if name in done:
                continue
            print(f"{name} ({spec})", flush=True)
            t = time.perf_counter()
            library.append_history(problem, run_instance(e, lambda s: print(s, flush=True)))
            print(f"  done in {time.perf_counter() - t:.1f} s", flush=True)
        library.write_summary(problem)
    return 0


if __name__ == "__main__":
    sys.exit(main())
