"""Build the instance library (iosched/library/data): instances, best-knowns, bounds, classes.

    nice python benchmarks/library_build.py [--problem P ...] [--only SHORT_NAME ...]
    nice python benchmarks/library_build.py --escalate thorough [--problem P ...] [--only SHORT_NAME ...]

Each instance of :data:`INSTANCES` is made from its spec (a built-in name or ``generate:SEED:{size}``),
stored with its hash in the problem's catalogue, and run through the problem's methods of
:data:`METHODS_RUN` (heuristics, and the exact method under the ``quick`` profile) with
:func:`iosched.solve`. Everything enters the history through the library's checked path
(:mod:`iosched.library.verdicts`: ``record`` re-scores a solution strictly and keeps it only where it
improves, ``record_bound`` a bound only where it tightens and no value passes it, ``record_run`` which
method ran under which profile), under the lock of the problem's folder. An instance already in the
history is skipped, so a killed build resumes; records are only ever appended. Each problem's
summary.json is regenerated with every record.

``--escalate PROFILE`` runs every ``open`` instance under each profile up to PROFILE (``quick``,
``default``, ``thorough``) with every method of :data:`ESCALATE` that can improve it, skipping the
(profile, method) pairs its history says ran already and stopping at an instance once it is
optimal; each run's solution, bound and run record go through the same checked path, with their
provenance (method, params, profile, the solver backend and package versions, time).
``--more-bounds`` only appends the problem's bound and those of :data:`MORE_BOUNDS` where they tighten the
recorded ones; ``--restate WHY`` only voids the solutions of instances whose stored best known today's
evaluator rejects (:func:`iosched.library.verdicts.restate`).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import iosched  # noqa: E402
from iosched import library  # noqa: E402
from iosched.core import METHODS, Status, get_problem  # noqa: E402
from iosched.errors import ParameterError  # noqa: E402
from iosched.files import write_text  # noqa: E402
from iosched.library import verdicts  # noqa: E402
from iosched.solvers import backends, load_profile  # noqa: E402


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
EXACT = {"periodic": "exact", "window": "exact", "forwarding": "exact", "filedomain": "exact", "malleable": "cpsat"}
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
# the time-indexed MILPs only where their models are small
SKIP = {("malleable", "milp"): lambda e: e.size.get("jobs", 0) > 4,
        ("forwarding", "milp"): lambda e: e.size.get("jobs", 0) > 12}


# Methods that can improve an open instance, per problem, in the order --escalate runs them under each
# profile: (method, params, skip(entry) -> True where the method does not apply). A method that takes
# a profile runs under it; one that takes only time_limit gets the profile's. A method not registered
# in this build (the exact methods in progress) is skipped with a line in the log: adding one is a line.
ESCALATE: dict[str, list[tuple[str, dict, object]]] = {
    "periodic": [("trace-compact", {}, None),  # found 0.2924515726 -> 0.2926141590 on paper-set2 under default
                 ("milp", {}, None),
                 ("exact", {}, None)],  # the branch and bound over count vectors (issue 47 item 3)
    "window": [("exact", {}, None)],
    "forwarding": [("search", {}, None),  # at the profile's limit (the build gave it 10 s; scarce-0 6463.212785 ->
                   # 6463.212330 at its default limit)
                   ("milp", {}, SKIP[("forwarding", "milp")]),
                   ("exact", {}, None)],
    "filedomain": [("exact", {}, None)],
    "malleable": [("cpsat", {}, None),  # default found 1.5-3.5 % better on paper10-0..2 than quick
                  ("milp", {}, SKIP[("malleable", "milp")]),
                  ("exact", {}, None)],
}
PROFILE_ORDER = ("quick", "default", "thorough")  # --escalate runs up to one of these


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


def solver_text(profile: str | None) -> str:
    """The solver provenance of a run under ``profile``: its limits, its MILP/LP backend with the backend's
    version, and the versions of OR-Tools and Pyomo; or that no solver ran."""
    if profile in (None, "none"):
        return "none (the method's own code)"
    prof = load_profile(profile)
    packages = []
    for package in ("ortools", "pyomo"):
        try:
            packages.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            continue
    return (f"profile {profile} (time_limit {prof.time_limit:g} s, rel_gap {prof.rel_gap:g}, threads {prof.threads}): "
            f"{prof.solver} {backends.version(prof.solver) or 'not installed'}, {', '.join(packages)}, as the method "
            f"uses")


def _takes(problem: str, method: str, name: str) -> bool:
    return name in inspect.signature(METHODS[f"{problem}/{method}"].run).parameters


def more_bounds(e: library.Entry, inst) -> tuple[float, str, str, float] | None:
    """The tightest of the problem's other bounds of :data:`MORE_BOUNDS`: (value, method, what backs it, time)."""
    best = None
    for key, backed in MORE_BOUNDS.get(e.problem, []):
        t = time.perf_counter()
        value = get_problem(e.problem).bounds(inst).get(key)
        if value is not None and (best is None or library.better(e.sense, best[0], value)):
            best = (value, f"iosched bound {e.problem} ({key})", backed, time.perf_counter() - t)
    return best


def record_bounds(e: library.Entry, inst) -> list[tuple[str, float, dict]]:
    """Record the problem's own bound (Problem.bound) and the tightest of :data:`MORE_BOUNDS` on ``e`` where
    they tighten the recorded one: (method, value, record_bound's answer) for each."""
    prob = get_problem(e.problem)
    out = []
    t0 = time.perf_counter()
    value = prob.bound(inst, e.objective)
    if value is not None:
        backed = prob.gap_reference(inst, e.objective) if prob.gap_reference else BOUND_NAMES[e.problem]
        method = f"iosched bound {e.problem} (Problem.bound)"
        out.append((method, value, verdicts.record_bound(e.name, value, method=method, backed_by=backed,
                                                         time_s=time.perf_counter() - t0)))
    found = more_bounds(e, inst)
    if found is not None:
        value, method, backed, seconds = found
        out.append((method, value, verdicts.record_bound(e.name, value, method=method, backed_by=backed,
                                                         time_s=seconds)))
    return out


def add_more_bounds(problem: str, log) -> None:
    """:func:`record_bounds` on every instance of ``problem`` (the problem's bound may have tightened since the
    build, as periodic's did with the period cap)."""
    for e in library.catalog(problem).values():
        for method, value, out in record_bounds(e, library.load(e.name)):
            log(f"{e.name}: {method} {value}: {'recorded' if out['recorded'] else 'not recorded'} ({out['why']})")


def _run(e: library.Entry, method: str, params: dict, profile: str | None, log):
    """``method`` on ``e`` through iosched.solve under ``profile`` (None: its own params), its solution through
    :func:`iosched.verdicts.record` and its bound through :func:`iosched.verdicts.record_bound`: the result (None
    where the method refused the instance, beyond its size limits) and the profile the run depended on
    (``none`` for a method that takes neither a profile nor a time limit)."""
    seed = 0 if METHODS[f"{e.problem}/{method}"].randomized else None
    run_params, used = dict(params), "none"  # used: the profile the run depends on
    if profile is not None:
        if _takes(e.problem, method, "profile"):
            run_params["profile"] = used = profile
        elif _takes(e.problem, method, "time_limit"):
            run_params["time_limit"], used = load_profile(profile).time_limit, profile
    inst = library.load(e.name)
    try:
        res = iosched.solve(e.problem, inst, method, seed=seed, attach_bound=False, **run_params)
    except ParameterError as err:
        log(f"  {method}: refused: {err}")
        return None, used
    log(f"  {method}: {res.status.value} {res.objective} bound {res.bound} ({res.wall_time_s:.1f} s)")
    if res.solution is not None and res.evaluation is not None and res.evaluation.feasible:
        out = verdicts.record(e.name, res.to_dict(inst), method=method,
                             params={**run_params, "seed": seed} if seed is not None else run_params,
                             profile=used, solver=solver_text(used), time_s=res.wall_time_s)
        log(f"    {out['verdict']}{' (recorded)' if out['recorded'] else ''}"
            + (f": {out['not_recordable']}" if "not_recordable" in out else ""))
    if res.bound is not None and res.status != Status.ERROR:
        out = verdicts.record_bound(e.name, res.bound, method=method, profile=used, time_s=res.wall_time_s,
                                   backed_by=f"the bound {method} proved ({res.info.get('gap_against') or 'its own'}),"
                                             f" valid for every solution")
        log(f"    bound {res.bound}: {'recorded' if out['recorded'] else 'not recorded'} ({out['why']})")
    return res, used


def _met(e: library.Entry, res) -> bool:
    """Whether ``res``'s value meets the recorded bound within the catalogue's tolerance."""
    bound = library.summarize(e.problem)["instances"][e.name]["bound"]
    return (res.objective is not None and bound is not None and res.evaluation is not None
            and res.evaluation.feasible and library.relative_gap(res.objective, bound) <= e.tolerance)


def run_instance(e: library.Entry, log) -> None:
    """Bound ``e`` and run the methods of :data:`METHODS_RUN` on it, all through the library's checked path."""
    record_bounds(e, library.load(e.name))
    exact = EXACT[e.problem]
    for method, params in METHODS_RUN[e.problem]:
        if SKIP.get((e.problem, method), lambda _: False)(e):
            continue
        res, used = _run(e, method, {k: v for k, v in params.items() if k != "profile"}, params.get("profile"), log)
        if res is not None and method == exact:
            met = _met(e, res)
            verdicts.record_run(e.name, method=method, profile=used, met=met,
                               note="its value met the bound under the profile" if met else
                               "its value did not meet the bound under the profile")
    if library.summarize(e.problem)["instances"][e.name]["best_known"] is None:
        raise RuntimeError(f"{e.name}: no method gave a feasible solution that could be recorded")


def escalate(e: library.Entry, up_to: str, log, again: bool = False) -> None:
    """Run ``e`` (an open instance) under each profile up to ``up_to`` with the methods of :data:`ESCALATE`,
    skipping the (profile, method) pairs already tried (unless ``again``: a method improved since its
    recorded run), until it is optimal."""
    for profile in PROFILE_ORDER[:PROFILE_ORDER.index(up_to) + 1]:
        for method, params, skip in ESCALATE[e.problem]:
            rec = library.summarize(e.problem)["instances"][e.name]
            if rec["status"] == "optimal":
                log(f"  optimal ({rec['class']}): done")
                return
            if f"{e.problem}/{method}" not in METHODS:
                log(f"  {method}: not registered in this build, skipped")
                continue
            if skip is not None and skip(e):
                continue
            if not again and (f"{profile}/{method}" in rec["class_tried"] or f"none/{method}" in rec["class_tried"]):
                continue  # ran already (a run that depends on no profile ran for every profile)
            log(f"  {method} under {profile}")
            res, used = _run(e, method, params, profile, log)
            if res is None:
                continue
            met = _met(e, res)
            verdicts.record_run(e.name, method=method, profile=used, met=met,
                               note="its value met the bound under the profile" if met else
                               "its value did not meet the bound under the profile")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", nargs="*", default=list(library.PROBLEMS))
    ap.add_argument("--only", nargs="*", help="short names to build (default: all)")
    ap.add_argument("--escalate", metavar="PROFILE", choices=PROFILE_ORDER,
                    help="only run the open instances (with --only: those of them) under each profile up to PROFILE "
                         "with the methods of ESCALATE")
    ap.add_argument("--again", action="store_true",
                    help="with --escalate: run the (profile, method) pairs the history says ran already (the method "
                         "improved since)")
    ap.add_argument("--restate", metavar="WHY",
                    help="only void the recorded solutions of every instance whose stored best known today's evaluator "
                         "rejects (the problem's definition changed; WHY says how, and why its bounds still hold)")
    ap.add_argument("--more-bounds", action="store_true",
                    help="only record the bounds of MORE_BOUNDS where they tighten the recorded ones")
    args = ap.parse_args(argv)
    log = lambda text: print(text, flush=True)  # noqa: E731
    for problem in args.problem:
        if args.restate:
            for e in library.catalog(problem).values():
                out = verdicts.restate(e.name, args.restate)
                if out["restated"]:
                    log(f"{e.name}: restated ({out['why']})")
            continue
        if args.more_bounds:
            add_more_bounds(problem, log)
            continue
        if args.escalate:
            for name, rec in library.summarize(problem)["instances"].items():
                if rec["status"] == "open" and (not args.only or name.split("/", 1)[1] in args.only):
                    log(f"{name}: up to {args.escalate}")
                    escalate(library.entry(name), args.escalate, log, args.again)
            continue
        (library.DATA / problem).mkdir(parents=True, exist_ok=True)
        for short, spec, tags in INSTANCES[problem]:
            if args.only and short not in args.only:
                continue
            name = f"{problem}/{short}"
            with library.locked(problem):
                entries = dict(library.catalog(problem))
                e = make_entry(problem, short, spec, tags)
                if name in entries and entries[name].hash != e.hash:
                    raise SystemExit(f"{name}: its spec {spec} now makes another instance (hash changed): give it a "
                                     f"new name rather than rewrite the library")
                entries[name] = entries.get(name, e)
                write_text(library.catalog_path(problem), json.dumps(
                    {"problem": problem, "instances": [x.to_dict() for x in entries.values()]}, indent=1) + "\n")
                library.refresh()
                done = {r["instance"] for r in library.read_history(problem)}
            if name in done:
                continue
            log(f"{name} ({spec})")
            t = time.perf_counter()
            run_instance(e, log)
            log(f"  done in {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
