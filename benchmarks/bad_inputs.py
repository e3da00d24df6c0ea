"""A bad-input campaign: every field of every problem's built-in instances and every method parameter,
each set to troublesome values, run through the command line; each outcome classified.

    python benchmarks/bad_inputs.py [--problems periodic window] [--timeout 60] [--limit N]

Classes: ``clear`` (exit 2 with a message and no traceback), ``accepted`` (exit 0 or 1 without a
traceback: the value was taken, or the method reported a result), ``traceback`` (a Python
traceback reached the user), ``crash`` (killed by a signal), ``hang`` (still running after
``--timeout`` seconds). Each case runs in a process forked from this one (imports done once), so
a crash or a hang costs one case only. Prints the counts per problem and class, and the cases
that were not ``clear`` or ``accepted``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import inspect
import io
import json
import math
import os
import signal
import sys
import tempfile
import time

import iosched
from iosched.cli import main as cli
from iosched.core import METHODS, get_problem

NASTY = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "neg": -1, "zero": 0, "huge": 10**400,
         "big": 1e300, "tiny": 1e-300, "str": "abc", "bool": True, "null": None, "list": [], "dict": {},
         "int63": 2**63}
PARAM_VALUES = ["abc", "-1", "0", "nan", "inf", "1e300", "[]", "{}", "true", "null", "1e-300", "[1,2]"]
# a fast method per problem, run on every mutated instance
FAST = {"periodic": "fairshare", "window": "naive", "forwarding": "fixed", "filedomain": "even",
        "malleable": "rigid-fcfs"}


def _leaves(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):  # the first entries of a list stand for the rest
            yield from _leaves(v, prefix + (i,))
    else:
        yield prefix


def _set(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def run_case(argv: list[str], timeout: float) -> tuple[str, str]:
    """Fork, run the CLI with ``argv``, classify the outcome; (class, last line of stderr)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report the exit code and stderr through the pipe
        os.close(read)
        err = io.StringIO()
        code = 0
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = cli(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
            except BaseException:
                import traceback

                traceback.print_exc(file=err)
                code = 99
        os.write(write, json.dumps([code, err.getvalue()[-2000:]]).encode())
        os._exit(0)
    os.close(write)
    start = time.monotonic()
    chunks = []
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return "hang", f"still running after {timeout:g} s"
        time.sleep(0.01)
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    if os.WIFSIGNALED(status):
        return "crash", f"signal {os.WTERMSIG(status)}"
    try:
        code, err = json.loads(b"".join(chunks) or b"[99, \"no report\"]")
    except json.JSONDecodeError:
        return "crash", "no report from the child"
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if "Traceback" in err or code == 99:
        return "traceback", last
    if code == 2 and last.startswith("iosched: error:"):
        return "clear", last
    return "accepted", last


def cases(problem: str, folder: str):
    """(label, argv) pairs: every leaf of each built-in instance set to each nasty value, and every
    parameter of every method of ``problem`` set to each bad value."""
    prob = get_problem(problem)
    for spec in prob.builtins[:2] or []:
        doc = prob.read_instance(spec).to_dict()
        for path in _leaves(doc):
            for name, value in NASTY.items():
                target = os.path.join(folder, f"{problem}-{len(os.listdir(folder))}.json")
                with open(target, "w") as f:
                    f.write(json.dumps(_set(doc, path, value)))
                label = f"instance {spec} {'.'.join(map(str, path))}={name}"
                yield label, ["solve", problem, target, "--method", FAST.get(problem, "naive")]
    spec = prob.builtins[0]
    for m in sorted((m for m in METHODS.values() if m.problem == problem), key=lambda m: m.name):
        names = list(inspect.signature(m.run).parameters)[1:]
        quick = ["--profile", "quick"] if "profile" in names else []
        for pname in names:
            if pname == "profile":
                continue
            for value in PARAM_VALUES:
                argv = ["solve", problem, spec, "--method", m.name, "--param", f"{pname}={value}", *quick]
                yield f"param {m.name} {pname}={value}", argv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*", default=sorted(iosched.core.PROBLEMS))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--limit", type=int, help="at most this many cases per problem")
    ap.add_argument("--show-accepted", action="store_true", help="list the accepted cases too")
    args = ap.parse_args()
    counts = collections.defaultdict(collections.Counter)
    bad = []
    with tempfile.TemporaryDirectory() as folder:
        for problem in args.problems:
            for k, (label, argv) in enumerate(cases(problem, folder)):
                if args.limit and k >= args.limit:
                    break
                kind, last = run_case(argv, args.timeout)
                counts[problem][kind] += 1
                if kind != "clear" and (kind != "accepted" or args.show_accepted):
                    bad.append((problem, kind, label, last))
                print(f"\r{problem}: {k + 1} cases", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
    kinds = ["clear", "accepted", "traceback", "crash", "hang"]
    print("| problem | " + " | ".join(kinds) + " | cases |")
    print("|---|" + "---|" * (len(kinds) + 1))
    for problem, c in counts.items():
        print(f"| {problem} | " + " | ".join(str(c[k]) for k in kinds) + f" | {sum(c.values())} |")
    for problem, kind, label, last in bad:
        print(f"{problem} {kind}: {label}: {last[:160]}")


if __name__ == "__main__":
    main()
