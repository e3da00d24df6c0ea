"""CBC, a program rather than a Python package (Debian's ``coinor-cbc``): Pyomo models through Pyomo's
``cbc`` interface, which writes an LP file and runs it; array models and LPs from the MPS file HiGHS writes
of them, run with :func:`run_cbc` (each LP solve from scratch: CBC keeps no model between runs). Its options
are its command-line options without the dash, each handed over as one argument (no shell)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

import numpy as np

from iosched.errors import ParameterError
from iosched.solvers.backends.base import Backend, Pending, RootWatch, SolverMissing, keep, shown
from iosched.solvers.backends.highs import highs_model
from iosched.solvers.backends.pyomo_path import LegacyPyomo
from iosched.solvers.outcome import Answer, Profile, Stop

# CBC's status, as the first words of the solution file it writes (-solution): the headers CbcSolver.cpp writes;
# "no solution file" is iosched's word for a run that wrote none
STATUS_DOC = "https://github.com/coin-or/Cbc/blob/master/src/CbcSolver.cpp (the solution file's header)"
STATUS = {
    "Optimal": Stop.OPTIMAL,
    "Optimal (within gap tolerance)": Stop.OPTIMAL,  # -ratio, the profile's rel_gap, reached
    "Infeasible": Stop.INFEASIBLE,
    "Integer infeasible": Stop.INFEASIBLE,
    "Unbounded": Stop.UNBOUNDED,
    "Stopped on time": Stop.TIME_LIMIT,
    "Stopped on iterations": Stop.OTHER_LIMIT,  # also node and solution limits
    "Stopped on difficulties": Stop.NUMERICS,
    "Stopped on ctrl-c": Stop.INTERRUPTED,
    "Status unknown": Stop.UNKNOWN,
    "no solution file": Stop.ERROR,
}

# CBC's commands that read or write a file, or change its folder, in full (CBC takes any unique prefix of them)
FILE_COMMANDS = ("basisin", "basisout", "directory", "dirsample", "dirnetlib", "dirmiplib", "export", "import",
                 "gsolution", "mipstart", "nextbestsolution", "priorityin", "restoresolution", "savesolution",
                 "solution", "gmpl", "debug", "csvstatistics", "parametrics", "restoremodel", "savemodel", "stdin")


def header_status(head: str) -> str:
    """The status words of a solution file's first line ("Stopped on time (no integer solution - continuous
    used) - objective value 3" -> "Stopped on time")."""
    return re.split(r" - objective value| \(no integer solution", head, maxsplit=1)[0].strip() or "no solution file"


@functools.lru_cache(maxsize=4)
def program_version(path: str | None) -> str | None:
    """The version CBC at ``path`` prints on starting ("Version: 2.10.8"), None without a program there."""
    if path is None:
        return None
    try:
        out = subprocess.run([path, "-quit"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"Version:\s*(\S+)", out)
    return found.group(1) if found else "unknown"


@dataclass
class CbcRun:
    """What one run of CBC left: its solution file's status line and objective, {row or column name: (value,
    dual or reduced cost)}, and its output."""

    head: str
    objective: float | None = None
    values: dict = field(default_factory=dict)
    output: str = ""


def run_cbc(path: str, args: list[str], timeout: float) -> CbcRun:
    """Run CBC on the MPS file ``path`` with the command-line ``args`` (ending with the action: ``-solve``,
    ``-dualS``, ...). ``timeout`` (s): a safety net beyond CBC's own ``-sec``."""
    with tempfile.TemporaryDirectory(prefix="iosched-cbc-") as folder:
        sol = os.path.join(folder, "solution.txt")
        out = subprocess.run([shutil.which("cbc"), path, *args, "-printingOptions", "all", "-solu", sol],
                             capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        try:
            with open(sol, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return CbcRun("no solution file", output=out.stdout + out.stderr)
    head = lines[0] if lines else ""
    found = re.search(r"objective value\s+(\S+)", head)
    objective = float(found.group(1)) if found else None
    values = {}
    for line in lines[1:]:
        parts = line.replace("**", " ").split()
        if len(parts) >= 4:
            values[parts[1]] = (float(parts[2]), float(parts[3]))
    return CbcRun(head, objective, values, out.stdout)


def root_from_log(text: str) -> float | None:
    """The objective after the root node's cuts, from CBC's log ("Cbc0013I At root node, 8 cuts changed objective
    from -819.37 to -817.87 in 6 passes": its last such line, after any restart), in CBC's own minimising sense."""
    found = re.findall(r"At root node, .*? changed objective from \S+ to (\S+)", text or "")
    try:
        return float(found[-1]) if found else None
    except ValueError:
        return None


def _pyomo_cbc():
    """Pyomo's cbc interface that keeps the status line of the solution file it reads."""
    from pyomo.solvers.plugins.solvers.CBCplugin import CBCSHELL

    class Headed(CBCSHELL):
        head = ""

        def process_soln_file(self, results):
            try:
                with open(self._soln_file, encoding="utf-8", errors="replace") as f:
                    self.head = f.readline().strip()
            except OSError:
                self.head = ""
            return super().process_soln_file(results)

    return Headed()


class Cbc(LegacyPyomo, Backend):
    name = "cbc"
    package = "coinor-cbc"
    executable = "cbc"
    pyomo = "cbc"
    LIMITS = {"time_limit": "sec", "rel_gap": "ratio", "threads": "threads", "seed": "randomCbcSeed"}
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    START_TAKEN = re.compile(r"MIPStart provided solution with cost\s+(\S+)")
    # Pyomo's cbc interface writes only the integer variables' nonzero values as the start, and CBC scores the point
    # it makes of them as given: 95,822.3 for DFRA's 1,658.3 on forwarding random:0:20 (its own heuristic then finds
    # 1,658.3), 0.125 for PerSched's 0.208 on periodic milp. So no start goes to CBC from a Pyomo model; array
    # models hand CBC every column's value, which it takes at its value.
    mip_start = False
    mip_start_why = ("not handed over: Pyomo's cbc interface gives CBC only the integer values, which CBC scores as "
                     "a worse point")
    incremental_lp = False

    def version(self) -> str | None:
        return program_version(shutil.which(self.executable))

    def install(self) -> str:
        return (f"the {self.executable} program must be on PATH (apt-get install {self.package}, or conda install "
                f"-c conda-forge coin-or-cbc)")

    def require(self) -> Backend:
        if self.version() is None:
            raise SolverMissing(f"solver {self.name!r} is not installed: {self.install()}")
        return self

    def check_options(self, options: dict, where: str) -> None:
        """Beyond the file options: every key one word (a prefix of a file command is refused, as CBC takes any
        unique prefix) and every value one word, not an option of its own."""
        for key, value in options.items():
            word = str(key).lower().lstrip("-")
            if not re.fullmatch(r"[a-z][a-z0-9]*", word):
                raise ParameterError(f"{where}.cbc: option {shown(key)} must be one word of letters and digits")
            if any(command.startswith(word) for command in FILE_COMMANDS):
                raise ParameterError(f"{where}.cbc: option {shown(key)} names a CBC command that reads or writes "
                                     f"files, which a profile file may not ask for")
            if not re.fullmatch(r"[-+]?[0-9.eE+-]+|[A-Za-z0-9_.]+", str(value)):
                raise ParameterError(f"{where}.cbc: option {shown(key)} takes one word or number, got {shown(value)}")
        super().check_options(options, where)

    def option_setter(self):
        def set_option(key, value):
            """Raise where CBC does not know the command-line option ``-key value`` (CBC itself says)."""
            out = subprocess.run([shutil.which("cbc"), f"-{key}", str(value), "-quit"], capture_output=True,
                                 text=True, timeout=30, stdin=subprocess.DEVNULL).stdout
            said = re.search(r".*(?:No match for|illegal|out of range|Possible options for).*", out, re.IGNORECASE)
            if said:
                raise ValueError(said.group(0))

        return set_option

    def status_of(self, head: str) -> tuple[str, str]:
        return header_status(head), f"cbc: {head}"

    def arguments(self, profile: Profile) -> list[str]:
        """The profile's limits and raw options as CBC's command-line arguments."""
        return [x for k, v in self.options(profile).items() for x in (f"-{k}", str(v))]

    # --- Pyomo models ----------------------------------------------------------------------------------

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        import pyomo.environ  # noqa: F401  (loads the solver plugins)

        self.require()
        return _pyomo_cbc()

    def legacy_solve(self, opt, model, warm: bool, logfile: str, folder: str):
        """Pyomo's files (the LP file, the solution) go in ``folder``, removed afterwards whatever happens."""
        from pyomo.common.tempfiles import TempfileManager

        before = TempfileManager.tempdir
        TempfileManager.tempdir = folder
        try:
            return opt.solve(model, load_solutions=False, tee=False, logfile=logfile)
        finally:
            TempfileManager.tempdir = before

    def pyomo_native(self, opt, res):
        return opt.head

    def pyomo_bound(self, best, sense: int, answer: Answer):
        if sense < 0 and best is not None and answer.stop is not Stop.OPTIMAL:
            return -best  # Pyomo's cbc interface leaves a maximum's bound in CBC's own (minimising) sense
        return best

    def pyomo_loader(self, opt, res, model):
        return lambda: model.solutions.load_from(res)

    def root_after(self, native, root: RootWatch, log: str, sense: int) -> float | None:
        bound = root_from_log(log)
        return None if bound is None else sense * bound

    # --- array models --------------------------------------------------------------------------------------

    def solve_mps(self, path: str, profile: Profile, log_file: str, start, root: RootWatch | None) -> Answer:
        args = self.arguments(profile)
        if start is not None:
            start_file = f"{path}.start"
            with open(start_file, "w", encoding="utf-8") as f:
                f.writelines(f"{j} c{j} {v!r}\n" for j, v in enumerate(start.tolist()) if v)
            args += ["-mipstart", start_file]
        run = run_cbc(path, [*args, "-solve"], timeout=profile.time_limit + 60)
        with open(log_file, "w", encoding="utf-8") as f:
            f.write(run.output)
        obj = run.objective
        has = obj is not None and abs(obj) < 1e49 and not run.head.startswith(("Infeasible", "Integer infeasible")) \
            and "no integer solution" not in run.head
        code, message = self.status_of(run.head)
        answer = self.answer(code, has, message, objective=obj)
        found = re.search(r"Lower bound:\s+(\S+)", run.output)
        answer.bound = obj if answer.stop is Stop.OPTIMAL else (float(found.group(1)) if found else None)
        cols = {int(k[1:]): v for k, (v, _) in run.values.items() if k[:1] == "c" and k[1:].isdigit()}  # all printed
        answer.x = np.array([cols.get(j, 0.0) for j in range(len(cols))]) if has else None
        answer.root_bound = None if root is None else root_from_log(run.output)
        return answer

    # --- array LPs (the whole LP, as MPS, each solve) -------------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        keep(lp, block, first)

    def lp_solve(self, lp, time_limit: float) -> Answer:
        whole = Pending.join(lp.model)
        A = whole.A.tocsc()
        h = highs_model(whole.cost, whole.lo, whole.hi, whole.row_lo, whole.row_hi, A.indptr, A.indices, A.data)
        with tempfile.TemporaryDirectory(prefix="iosched-cbc-") as folder:
            path = os.path.join(folder, "lp.mps")
            h.writeModel(path)
            action = {"dual": "-dualS", "primal": "-primalS", "barrier": "-barrier"}[lp.algorithm]
            run = run_cbc(path, ["-sec", str(float(time_limit)), action], timeout=time_limit + 60)
        code, message = self.status_of(run.head)
        answer = self.answer(code, False, message)
        if answer.stop is Stop.OPTIMAL:
            answer.has_solution, answer.objective = True, run.objective
            answer.x = np.array([run.values.get(f"c{j}", (0.0, 0.0))[0] for j in range(len(whole.cost))])
            answer.duals = np.array([run.values.get(f"r{i}", (0.0, 0.0))[1] for i in range(len(whole.row_lo))])
        return answer
