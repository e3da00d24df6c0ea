"""Benchmark suites: which instances, which methods with which parameters, under which profile.

A suite is a TOML file::

    name = "periodic-paper"
    problem = "periodic"
    profile = "quick"          # the solvers.toml profile for every exact method
    seeds = 1                  # runs of each randomised method (seeds 0, 1, ...)
    timeout = 600              # seconds before a task is killed (default: 10 x the profile's limit + 60 s)

    [instances]
    names = ["paper:set1", "runs/*.json"]       # built-in names, files, globs
    [[instances.generate]]                      # and/or seeded random instances
    seeds = [0, 1, 2]
    n_apps = 3                                  # the generator's size parameters

    [[methods]]
    name = "persched"
    [[methods]]
    name = "milp"
    params = { slots = 48 }

    [slurm]                    # used by iosched bench --slurm only (iosched.harness.slurm.KEYS)
    partition = "debug"
    jobs = 2
    cores = 1
    memory = "2GB"
    walltime = "00:30:00"

Every mistake is reported before anything runs, with the line of the file it is on.
"""

from __future__ import annotations

import glob
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from iosched import validate
from iosched.core import METHODS, get_problem, method_parameters
from iosched.errors import InstanceError, ParameterError
from iosched.files import read_regular
from iosched.harness.slurm import options as slurm_options
from iosched.solvers import load_profile
from iosched.validate import check_params

MAX_SUITE_BYTES = 16 * 2**20  # a suite file beyond this is refused unread
TOP_KEYS = {"name", "problem", "profile", "seeds", "timeout", "instances", "methods", "slurm"}


@dataclass(frozen=True)
class Task:
    """One run: an instance (by spec), a method, its parameters and a seed."""

    problem: str
    instance: str  # a built-in name, a file path, or "generate:SEED:{json of size parameters}"
    method: str
    params: dict = field(default_factory=dict)
    seed: int | None = None

    @property
    def key(self) -> str:
        """A stable name for the task's result file."""
        text = json.dumps([self.problem, self.instance, self.method, self.params, self.seed], sort_keys=True)
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return {"problem": self.problem, "instance": self.instance, "method": self.method,
                "params": self.params, "seed": self.seed}


@dataclass(frozen=True)
class Suite:
    name: str
    problem: str
    profile: str
    timeout: float
    tasks: tuple[Task, ...]
    slurm: dict = field(default_factory=dict)  # the [slurm] table as written (iosched.harness.slurm.KEYS)


def builtin_suites() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in resources.files("iosched.harness").joinpath("suites").iterdir()
                  if p.name.endswith(".toml"))


def _line(text: str, needle: str, start: int = 0, key: bool = False) -> str:
    """The line of the first ``needle`` from line ``start`` (0-based) on; with ``key``, of ``needle``
    assigned as a TOML key (``needle =``, bare or quoted), so that a parameter ``f`` is not found in
    ``profile``. Not found that way: the first line holding ``needle`` anywhere."""
    lines = text.splitlines()
    pattern = re.compile(rf"(?:^|[\s{{,.])([\"']?){re.escape(needle)}\1\s*=")
    for i in range(start, len(lines)):
        if pattern.search(lines[i]) if key else needle in lines[i]:
            return f"line {i + 1}"
    if start or key:
        return _line(text, needle)
    return "somewhere"


def _short(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def load_instance(problem: str, spec: str):
    """The instance a task names: a built-in, a file, or ``generate:SEED:{size json}``."""
    return get_problem(problem).read_instance(spec)


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file; every task is checked before it runs."""
    path = Path(name_or_path)
    if not path.is_file():
        if path.exists():
            raise ParameterError(f"{name_or_path!r} is not a regular file (a directory, a FIFO or a device): give a "
                                 "suite file or a built-in suite")
        if name_or_path not in builtin_suites():
            raise ParameterError(f"no suite file or built-in suite {name_or_path!r}; built-in: "
                                 f"{', '.join(builtin_suites())}")
        path = Path(str(resources.files("iosched.harness").joinpath("suites", f"{name_or_path}.toml")))
    try:
        text = read_regular(path, MAX_SUITE_BYTES).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParameterError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OverflowError:
        raise ParameterError(f"{path}: more than {MAX_SUITE_BYTES // 2**20} MiB, too large for a suite") from None
    except OSError as e:
        raise ParameterError(f"{path}: cannot be read: {e.strerror or e}") from None
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ParameterError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise ParameterError(f"{path}: not valid TOML: nested too deeply") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise ParameterError(f"{path}: not valid TOML: {e}") from None

    def fail(msg: str, needle: str) -> ParameterError:
        return ParameterError(f"{path}, {_line(text, needle)}: {msg}")

    def param_fail(msg: str, param: str, start: int) -> ParameterError:  # the key, from the entry's line on
        return ParameterError(f"{path}, {_line(text, param, start, key=True)}: {msg}")

    for key in d:
        if key not in TOP_KEYS:
            raise fail(f"unknown key {key!r}", key)
    for key in ("problem", "instances", "methods"):
        if key not in d:
            raise ParameterError(f"{path}: missing {key!r}")
    if not isinstance(d.get("name", "x"), str) or not d.get("name", "x"):
        raise fail(f"name must be a non-empty string, got {_short(d['name'])}", "name")
    if not isinstance(d["instances"], dict):
        raise fail(f"instances must be a table ([instances] with names = [...] or [[instances.generate]]), got "
                   f"{_short(d['instances'])}", "instances")
    if not isinstance(d["methods"], list) or not all(isinstance(m, dict) for m in d["methods"]):
        raise fail(f"methods must be an array of tables ([[methods]] with name = ...), got {_short(d['methods'])}",
                   "methods")
    if not d["methods"]:
        raise fail("the suite has no methods", "methods")
    problem = d["problem"]
    if not isinstance(problem, str):
        raise fail(f"problem must be a problem's name, got {_short(problem)}", "problem")
    try:
        prob = get_problem(problem)
    except ParameterError as e:
        raise fail(str(e), "problem") from None
    profile = d.get("profile", "default")
    try:
        prof = load_profile(profile)
    except ParameterError as e:
        raise fail(str(e), "profile") from None
    n_seeds = d.get("seeds", 1)
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or not 1 <= n_seeds <= 10_000:
        raise fail(f"seeds must be an integer in [1, 10000], got {n_seeds!r}", "seeds")
    # the default leaves room for a fresh process's imports and the bound beside the method's own limit
    try:
        timeout = validate.number("timeout", d.get("timeout", 10 * prof.time_limit + 60), 0, 10**7, lo_open=True,
                                  error=ParameterError)
    except ParameterError as e:
        raise fail(str(e), "timeout") from None

    specs: dict[str, str] = {}  # spec: what named it (a duplicate task would run twice)
    inst = d["instances"]
    for key in inst:
        if key not in ("names", "generate"):
            raise fail(f"unknown key {key!r} in [instances]", key)
    names, generate = inst.get("names", []), inst.get("generate", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise fail(f"names must be a list of instance names, files or globs, got {_short(names)}", "names")
    if not isinstance(generate, list) or not all(isinstance(g, dict) for g in generate):
        raise fail(f"instances.generate must be an array of tables ([[instances.generate]] with seeds = [...] and "
                   f"the generator's size parameters), got {_short(generate)}", "generate")
    for name in names:
        matches = sorted(glob.glob(name)) if any(c in name for c in "*?[") else [name]
        if not matches:
            raise fail(f"no file matches {name!r}", name)
        for spec in matches:
            if spec in specs:
                raise fail(f"instance {spec!r} is named twice ({specs[spec]!r} and {name!r}): its tasks would run "
                           "twice", name)
            try:
                prob.read_instance(spec)
            except (InstanceError, ParameterError) as e:
                raise fail(str(e), name) from None
            specs[spec] = name
    for gen in generate:
        size = {k: v for k, v in gen.items() if k != "seeds"}
        seeds = gen.get("seeds", [0])
        if not isinstance(seeds, list) or not seeds:
            raise fail(f"seeds of a [[instances.generate]] entry must be a non-empty list, got {_short(seeds)}",
                       "generate")
        try:
            text_size = json.dumps(size, sort_keys=True, allow_nan=False)
            for seed in seeds:
                prob.generate_instance(seed, **size)  # what the task will run, checked the same way
        except (ParameterError, InstanceError, TypeError, ValueError, OverflowError) as e:
            raise fail(f"bad generator parameters {_short(size)}: {e}", "generate") from None
        for seed in seeds:
            spec = f"generate:{seed}:{text_size}"
            if spec in specs:
                raise fail(f"generated instance seed {seed} with {_short(size)} is listed twice: its tasks would "
                           "run twice", "generate")
            specs[spec] = "generate"
    if not specs:
        raise ParameterError(f"{path}: the suite has no instances")

    tasks = []
    configs: dict[str, int] = {}  # a method with its params: the entry's line (one task per entry and instance)
    headers = [i for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*methods\s*\]\]", line)]
    for index, m in enumerate(d["methods"]):
        name, params = m.get("name"), m.get("params", {})
        start = headers[index] if len(headers) == len(d["methods"]) else 0  # the entry's own lines
        unknown = set(m) - {"name", "params"}
        if unknown:
            raise param_fail(f"unknown key {sorted(unknown)[0]!r} in a [[methods]] entry", sorted(unknown)[0], start)
        if not isinstance(name, str):
            message = f"a [[methods]] entry needs name = \"METHOD\" (a string), got {_short(name)}"
            if name is not None:
                raise param_fail(message, "name", start)
            where = f"line {start + 1}" if len(headers) == len(d["methods"]) else _line(text, "[[methods]]")
            raise ParameterError(f"{path}, {where}: {message}")
        if not isinstance(params, dict):
            raise param_fail(f"params of method {name} must be a table ({{ key = value }}), got {_short(params)}",
                             "params", start)
        params = dict(params)
        key = f"{problem}/{name}"
        if key not in METHODS:
            raise fail(f"unknown method {name!r} for {problem}", f'"{name}"')
        accepted = method_parameters(METHODS[key].run)
        for p in params:
            if p == "seed":
                raise param_fail("a method's seed comes from the suite's 'seeds' key, not from its params", p, start)
            if p not in accepted:
                raise param_fail(f"method {name} has no parameter {p!r}; it takes {', '.join(accepted)}",
                                 p, start)
        for p, value in params.items():
            try:
                check_params(METHODS[key].run, {p: value}, f"method {name}")
            except ParameterError as e:
                raise param_fail(str(e), p, start) from None
        if "profile" in accepted:
            params.setdefault("profile", profile)
        try:
            label = json.dumps([name, params], sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as e:  # a TOML date, or a float a check let through
            raise param_fail(f"params of method {name} must be JSON values: {e}", "params", start) from None
        if label in configs:
            raise ParameterError(f"{path}, line {start + 1}: this [[methods]] entry repeats the one at line "
                                 f"{configs[label] + 1} ({name} with the same params): its tasks would run twice")
        configs[label] = start
        seeds = list(range(n_seeds)) if METHODS[key].randomized else [None]
        tasks += [Task(problem, spec, name, params, seed) for spec in specs for seed in seeds]
    slurm = d.get("slurm", {})
    slurm_options(slurm, f"{path}, {_line(text, '[slurm]')}: [slurm]")
    return Suite(d.get("name", path.stem), problem, profile, timeout, tuple(tasks), slurm)
