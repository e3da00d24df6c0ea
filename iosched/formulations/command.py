"""What ``iosched model`` and ``iosched formulations`` do, called by :mod:`iosched.cli` (which parses and checks
the arguments): both read the formulations' registry."""

from __future__ import annotations

import json
import sys

from iosched.core import get_problem
from iosched.errors import OutputError, ParameterError
from iosched.files import atomic_path
from iosched.formulations import engine
from iosched.formulations.loop import build_model
from iosched.formulations.registry import ALGORITHM, ARRAY, CPSAT, formulations_of
from iosched.formulations.study import study, write
from iosched.solvers import load_profile


def setting(text: str, option: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON where it is JSON (numbers, true, lists), else as text."""
    if "=" not in text:
        raise ParameterError(f"{option} takes KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def settings(texts: list[str], option: str) -> dict:
    out: dict = {}
    for text in texts:
        key, value = setting(text, option)
        if key in out:
            raise ParameterError(f"{option} {key} is given twice: give it once")
        out[key] = value
    return out


def _size_line(kind: str, model) -> str:
    s = engine.size(kind, model)
    coef = "" if s["coef_min"] is None else f", |coefficients| in [{s['coef_min']:.3g}, {s['coef_max']:.3g}]"
    line = (f"  as the solver receives it: {s['variables']} variables ({s['binaries']} binary, {s['integers']} "
            f"general integer, {s['continuous']} continuous), {s['constraints']} constraints, {s['nonzeros']} "
            f"nonzeros{coef}")
    return line + (f"\n  numerics: {s['numerics']}" if s["numerics"] else "")


def model_command(args) -> int:
    """``iosched model PROBLEM INSTANCE --name NAME [--param K=V ...] [--write FILE] [--relax]``."""
    prob = get_problem(args.problem)
    known = formulations_of(args.problem)
    if args.name not in known or known[args.name].kind == ALGORITHM:
        models = [n for n, f in known.items() if f.kind != ALGORITHM]
        what = " (an algorithm, not a model)" if args.name in known else ""
        raise ParameterError(f"unknown model {args.name!r}{what} for {args.problem}; known: {', '.join(models)}")
    f = known[args.name]
    inst = prob.read_instance(args.instance)
    params = settings(args.param, "--param")
    m = build_model(args.problem, inst, args.name, **params)
    if f.kind == CPSAT:
        proto = m.Proto()
        n_int = sum(1 for v in proto.variables if list(v.domain) != [0, 1])
        print(f"{proto.name or args.name}: {len(proto.variables)} variables ({n_int} non-boolean), "
              f"{len(proto.constraints)} constraints (CP-SAT)")
    else:
        from pyomo.environ import Constraint, Var

        shown = m.pyomo() if f.kind == ARRAY else m
        variables = list(shown.component_data_objects(Var, descend_into=True))
        n_int = sum(1 for v in variables if v.is_integer() or v.is_binary())
        n_con = sum(1 for _ in shown.component_data_objects(Constraint, active=True, descend_into=True))
        name = m.name if f.kind == ARRAY else shown.name
        print(f"{name}: {len(variables)} variables ({n_int} integer), {n_con} constraints"
              + (" (an array model)" if f.kind == ARRAY else ""))
    print(_size_line(f.kind, m))
    print(f"  scope: {f.scope_of(params)}")
    if args.relax:
        profile = load_profile(args.profile)
        out, why = engine.relax(f.kind, m, profile)
        if out is None:
            print(f"LP relaxation: none ({why})")
        elif out.objective is None:
            print(f"LP relaxation: not solved ({out.stopped or out.status.value}) in {out.wall_time_s:.3g} s")
        else:
            value = f.value(inst, m, out.objective, True)
            objective = f.objective_of(params)
            print(f"LP relaxation: {value:.10g} ({objective}, {prob.sense(objective)}; the model's own objective "
                  f"{out.objective:.10g}) in {out.wall_time_s:.3g} s on {profile.solver}")
    if args.write:
        _write(f.kind, m, args.write)
    return 0


def _write(kind: str, m, path: str) -> None:
    if kind == CPSAT:
        if not path.endswith((".pb", ".pb.txt")):
            raise ParameterError(f"--write takes a .pb or .pb.txt file for a CP-SAT model, got {path!r}")
        with atomic_path(path) as tmp:
            if not m.ExportToFile(str(tmp)):
                raise OutputError(f"cannot write {path!r}: CP-SAT's ExportToFile failed")
    else:
        if path.rsplit(".", 1)[-1].lower() not in ("lp", "mps"):
            raise ParameterError(f"--write takes a .lp or .mps file, got {path!r}")
        shown = m.pyomo() if kind == ARRAY else m
        with atomic_path(path) as tmp:
            shown.write(str(tmp), io_options={"symbolic_solver_labels": True})
    print(f"written to {path}")


def _per_formulation(texts: list[str], option: str) -> list[tuple[str, dict]]:
    """``NAME:KEY=VALUE[,KEY=VALUE...]`` options as (NAME, settings)."""
    out = []
    for text in texts:
        name, sep, rest = text.partition(":")
        if not sep or not name:
            raise ParameterError(f"{option} takes NAME:KEY=VALUE[,KEY=VALUE...], got {text!r}")
        out.append((name, settings([s for s in rest.split(",") if s], option)))
    return out


def formulations_command(args) -> int:
    """``iosched formulations PROBLEM INSTANCE [--solver S ...] [--profile P] [--name N ...] [--param N:K=V]
    [--variant N:K=V,...] [--max-variables M] [--json] [--out DIR]``."""
    params: dict = {}
    for name, values in _per_formulation(args.param, "--param"):
        params.setdefault(name, {}).update(values)
    variants = {f"{name}[{','.join(f'{k}={json.dumps(v)}' for k, v in values.items())}]": (name, values)
                for name, values in _per_formulation(args.variant, "--variant")}
    if args.max_variables < 1:
        raise ParameterError(f"--max-variables must be at least 1, got {args.max_variables}")
    s = study(args.problem, args.instance, solvers=args.solver or None, profile=args.profile,
              names=args.name or None, params=params, variants=variants, max_variables=args.max_variables)
    if args.out:
        for path in write(s, args.out):
            print(f"written {path}", file=sys.stderr)
    if args.json:
        from iosched.formulations.study import finite

        print(json.dumps(finite(s.to_dict()), indent=2))
    else:
        print(s.table())
    return 0
