"""What every backend module fills in: :class:`Backend`, the class one module per backend derives from.

A backend says, as class attributes: what to install, its profile limits in its own option names
(``LIMITS``), its one table from native status codes to :class:`~iosched.solvers.outcome.Stop`
(``STATUS``, with the vendor's page of codes in ``STATUS_DOC``), which raw options read or write files
(``FILE_OPTIONS``, refused from a profile file), how its log says a MIP start was taken (``START_TAKEN``),
and what it can do (``mip_start``, ``root_bound``, ``incremental_lp``, ``size_limit``), which callers and
tests ask instead of comparing names. Its methods solve a Pyomo model (through
:mod:`iosched.solvers.backends.pyomo_path`), an array model (:meth:`Backend.solve_matrix`) and an array LP
(:meth:`Backend.lp_send`, :meth:`Backend.lp_solve`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import io
import logging
import math
import os
import re
import reprlib
import tempfile
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from iosched.errors import ParameterError
from iosched.solvers.outcome import Answer, Profile, SolveOutcome, Stop

if TYPE_CHECKING:  # SciPy is imported where a matrix is built: not on import iosched (issue 50 item 5)
    import scipy.sparse

log = logging.getLogger("iosched.solvers")


class SolverMissing(ParameterError):
    """The profile names a backend whose Python package (or program) is not installed."""


class LicenceLimit(ParameterError):
    """The backend refused the model for its size under a size-limited licence."""

    said = False  # whether a caller has told the user of this refusal already (malleable_lp says it once)


# how the backends word a size refusal under a limited licence: Gurobi "Model too large for size-limited
# license", CPLEX "Error 1016: Community Edition. Problem size limits exceeded", Xpress "too many rows and
# columns" (code 10010)
LICENCE_REFUSAL = re.compile(r"size-limited license|Problem size limits exceeded|too many rows and columns|"
                             r"Error\s+1016|\b10010\b", re.IGNORECASE)

_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict = 3, 60, 60, 4, 4


def shown(value) -> str:
    """``repr(value)`` cut short: a value from a file may be megabytes long or nested thousands deep."""
    return _SHOWN.repr(value)


# the profile's limits and how each is handed over
CASTS = {"time_limit": float, "rel_gap": float, "threads": int, "seed": int}


def finite(value) -> float | None:
    """``value`` as a float, None where it is missing or infinite (backends say 1e20 or 1e30 for it)."""
    return float(value) if value is not None and math.isfinite(value) and abs(value) < 1e30 else None


@dataclass
class Pending:
    """Rows and columns an LP hands its backend in one piece: row bounds, then the new columns' cost and
    bounds and their entries (a CSC matrix of all rows x the new columns)."""

    row_lo: np.ndarray
    row_hi: np.ndarray
    cost: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    A: scipy.sparse.csc_matrix  # CSR once joined

    @classmethod
    def join(cls, blocks: list[Pending]) -> Pending:
        """The blocks handed over so far as one LP (each block's matrix padded to all the rows), A as CSR."""
        import scipy.sparse as sp

        row_lo = np.concatenate([b.row_lo for b in blocks])
        row_hi = np.concatenate([b.row_hi for b in blocks])
        A = sp.hstack([sp.vstack([b.A, sp.csc_matrix((len(row_lo) - b.A.shape[0], b.A.shape[1]))])
                       for b in blocks]).tocsr()
        return cls(row_lo, row_hi, np.concatenate([b.cost for b in blocks]), np.concatenate([b.lo for b in blocks]),
                   np.concatenate([b.hi for b in blocks]), A)


def senses(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row types "L" (<= hi), "G" (>= lo), "E" and the right-hand sides (a free row's 1e20: infinite to CPLEX
    and Xpress, far beyond any activity to the others)."""
    sense = np.where(np.isinf(lo), "L", np.where(np.isinf(hi), "G", "E"))
    return sense, np.clip(np.where(sense == "L", hi, lo), -1e20, 1e20)


def clip(values: np.ndarray, big: float) -> np.ndarray:
    """Infinite bounds as the backend's own infinity ``big``."""
    return np.clip(values, -big, big)


@functools.cache
def package_version(package: str) -> str:
    """``package``'s installed version, read once per process: the metadata scan is not free (benchmarks/
    speed.md, constants), and every LP built checks its backend (the order LP builds up to 720 on six jobs)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class RootWatch:
    """The dual bound after the root node, as a backend's callback sees it: the last value seen while the
    root was being processed (the backend's bound improves through the root's cut rounds)."""

    def __init__(self):
        self.bound: float | None = None

    def see(self, value) -> None:
        value = finite(value)
        if value is not None:
            self.bound = value


class Backend:
    """One MILP/LP backend. A subclass sets the class attributes below and implements the paths it offers:
    :meth:`solve_mps` (array models, by default through the MPS file HiGHS writes), :meth:`lp_send` and
    :meth:`lp_solve` (array LPs), and a Pyomo path (deriving from ContribPyomo or LegacyPyomo of
    :mod:`iosched.solvers.backends.pyomo_path`)."""

    name = ""
    label = ""  # how its messages name it (the name where empty)
    package = ""  # pip install <package>
    module = ""  # import <module>
    pyomo = ""  # the Pyomo solver factory name
    core = False  # a dependency of iosched itself (else an extra: pip install 'iosched[<name>]')
    licence = ""  # the size limit of the licence its wheel ships, "" for none
    size_limit = 0  # a model of more variables than this exceeds that licence (0: no limit)
    LIMITS: dict[str, str] = {}  # profile field -> the backend's option for it
    STATUS: dict = {}  # native status code -> Stop
    STATUS_DOC = ""  # the vendor's page of those codes
    FILE_OPTIONS: tuple[str, ...] = ()  # raw options (lower case) naming files: refused from a profile file
    START_TAKEN: re.Pattern | None = None  # its log's line for a MIP start taken, the value in a group
    mip_start = True  # hands a Pyomo model's variable values over as a MIP start
    mip_start_why = ""  # why not, where it does not
    root_bound = True  # reports the dual bound after the root node
    root_why = ""  # why not, where it does not
    incremental_lp = True  # an array LP keeps its model between solves (columns added go on from the basis)

    # --- what it is, and whether it is here ----------------------------------------------------------

    def __repr__(self) -> str:
        return f"<backend {self.name}>"

    def version(self) -> str | None:
        """The installed version of its package, None when it is not installed."""
        if importlib.util.find_spec(self.module) is None:
            return None
        return package_version(self.package)

    def install(self) -> str:
        """How to install it."""
        return f"pip install {self.package}"

    def require(self) -> Backend:
        """This backend, installed: else SolverMissing naming what to install."""
        if self.version() is None:
            extra = "" if self.core else f" (or pip install 'iosched[{self.name}]')"
            raise SolverMissing(f"solver {self.name!r} is not installed: {self.install()}{extra}")
        return self

    # --- its status table ----------------------------------------------------------------------------

    def stop(self, code) -> Stop:
        """Why it stopped, from its native status ``code`` through its table; a code the table does not list
        is logged (naming the backend and the code) and reported as Stop.UNLISTED, never folded into another."""
        found = self.STATUS.get(code)
        if found is None:
            log.warning("%s returned status code %r, which its table does not list (see %s): reported as %r",
                        self.name, code, self.STATUS_DOC, Stop.UNLISTED.value)
            return Stop.UNLISTED
        return found

    def answer(self, code, has_solution: bool, message: str = "", **values) -> Answer:
        """An :class:`Answer` whose stop is ``code`` read through the table."""
        return Answer(self.stop(code), str(code), has_solution, message=message, **values)

    def node_count(self, native) -> int | None:
        """The branch-and-bound nodes the backend's solver object ``native`` processed (None where it does not
        say, or for an LP): what a backend module overrides; callers ask :meth:`nodes`."""
        return None

    def nodes(self, native) -> int | None:
        """:meth:`node_count`, None where reading it fails: a count is worth less than the solve it describes."""
        try:
            return self.node_count(native)
        except Exception as e:  # each backend raises its own errors (a model without a solution ...)
            log.debug("%s: no node count (%r)", self.name, e)
            return None

    def no_root(self) -> str:
        """Why a solve asked for its root bound has none though the backend reports them."""
        return f"{self.label or self.name} reported no root node (an LP, or solved before branch and bound)"

    # --- options -------------------------------------------------------------------------------------

    def raw(self, profile: Profile) -> dict:
        """The profile's raw options for this backend (``[profile.<name>]``)."""
        return profile.raw.get(self.name, {})

    def options(self, profile: Profile) -> dict:
        """The profile's limits in this backend's own option names, then its raw options (which override)."""
        limits = {option: CASTS[field](getattr(profile, field)) for field, option in self.LIMITS.items()}
        return {**limits, **self.raw(profile)}

    def option_setter(self):
        """A function (key, value) that sets one raw option on a throwaway model, raising where the backend
        does not take it."""
        raise NotImplementedError

    def check_options(self, options: dict, where: str) -> None:
        """Every raw option of ``[profile.<name>]`` must exist in this backend and take its value (the backend
        itself says), and none may write files: a profile file is read from the working folder too, where
        anyone could leave one."""
        if not options:
            return
        label = self.label or self.name
        for key in options:
            if str(key).lower().lstrip("-") in self.FILE_OPTIONS:
                raise ParameterError(f"{where}.{self.name}: option {shown(key)} makes {label} read or write files, "
                                     f"which a profile file may not ask for (give it in Python if you need it)")
        self.require()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Xpress warns about its community licence
            setter = self.option_setter()
            for key, value in options.items():
                try:
                    setter(key, value)
                except Exception:  # each backend raises its own errors (and TypeError) for a bad name or value
                    raise ParameterError(f"{where}.{self.name}: {label} has no option {shown(key)} taking "
                                         f"{shown(value)}") from None

    # --- MIP starts and licences ---------------------------------------------------------------------

    def start_report(self, text: str | None) -> dict:
        """Whether its log ``text`` shows the MIP start taken, and its value there (None where not printed)."""
        found = self.START_TAKEN.search(text or "") if self.START_TAKEN is not None else None
        if not found:
            return {"taken": False, "value": None}
        value = next((g for g in found.groups() if g), None)
        try:
            value = float(value.rstrip(".")) if value is not None else None  # CPLEX ends its line with a dot
        except ValueError:
            value = None
        return {"taken": True, "value": value}

    def licence_error(self, error: Exception, variables: int, constraints: int) -> LicenceLimit | None:
        """A LicenceLimit naming the backend, the model's size and the limit, when ``error`` is its refusal of a
        model too large for its licence; None for any other error."""
        if not LICENCE_REFUSAL.search(str(error)):
            return None
        return LicenceLimit(f"{self.name} refused the model ({variables} variables, {constraints} constraints): too "
                            f"large for its {self.licence or 'licence'} ({str(error).strip()}). Solve it with another "
                            f"solver (a profile with solver = \"highs\" or \"scip\", e.g. --profile default:highs) or "
                            f"with a full {self.name} licence")

    # --- Pyomo models (the classes of pyomo_path implement these) ----------------------------------

    def solve_pyomo(self, model, profile: Profile, load: bool = True, warm: bool = False,
                    root: bool = False) -> SolveOutcome:
        """Solve the Pyomo ``model`` under the profile's limits (see
        :meth:`iosched.solvers.backends.pyomo_path.PyomoPath.solve_pyomo`)."""
        raise NotImplementedError

    def solve_relaxation(self, model, profile: Profile) -> SolveOutcome:
        """The LP relaxation of the Pyomo ``model``, solved under ``profile`` (see
        :meth:`iosched.solvers.backends.pyomo_path.PyomoPath.solve_relaxation`)."""
        raise NotImplementedError

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        """Pyomo's interface to this backend (with ``warm``, one that hands the variables' values over as a MIP
        start; with ``root``, one that reports the root node's bound to it)."""
        raise NotImplementedError

    def pyomo_answer(self, model, profile: Profile, warm: bool, root: RootWatch | None):
        """Solve the Pyomo ``model``: (an Answer, a function that loads its incumbent into the model)."""
        raise NotImplementedError

    # --- array models ----------------------------------------------------------------------------------

    def solve_matrix(self, h, profile: Profile, columns: int, rows: int, start=None, root: bool = False,
                     began: float | None = None) -> tuple[SolveOutcome, np.ndarray | None]:
        """Solve the array model held by ``h`` (a highspy.Highs, minimised) under ``profile``, from the column
        values ``start`` if given: the outcome and the incumbent's column values. By default through the MPS
        file HiGHS writes of it and this backend's own reader (writing it counts in the time limit from
        ``began``). A licence's size refusal raises LicenceLimit."""
        began = time.perf_counter() if began is None else began
        with tempfile.TemporaryDirectory(prefix="iosched-") as folder:
            path = os.path.join(folder, "model.mps")
            h.writeModel(path)
            del h
            left = replace(profile, time_limit=max(profile.time_limit - (time.perf_counter() - began), 0.01))
            answer = self.read_and_solve(path, left, columns, rows, start, root)
        report = None
        if start is not None:
            report = self.start_report(answer.log) if answer.log is not None else {"taken": None, "value": None}
        return answer.outcome(time.perf_counter() - began, report), answer.x

    def read_and_solve(self, path: str, profile: Profile, columns: int, rows: int, start, root: bool) -> Answer:
        """:meth:`solve_mps` quietly, its failures an ERROR answer (a licence's refusal raised), the columns
        checked."""
        try:
            with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                answer = self.solve_mps(path, profile, f"{path}.log",
                                        None if start is None else np.asarray(start, dtype=float),
                                        RootWatch() if root and self.root_bound else None)
        except Exception as e:
            refused = self.licence_error(e, columns, rows)
            if refused is not None:
                raise refused from None
            return Answer(Stop.ERROR, "exception", False, message=repr(e))
        if answer.x is not None and len(answer.x) != columns:
            return Answer(Stop.ERROR, "columns", False,
                          message=f"{self.name} read {len(answer.x)} columns of {columns}")
        if not answer.has_solution:
            answer.x = answer.objective = None
        answer.objective, answer.bound = finite(answer.objective), finite(answer.bound)
        if root:
            answer.root_why = self.root_why if not self.root_bound else "" if answer.root_bound is not None else \
                self.no_root()
        if start is not None:  # its log says whether the start was taken
            try:
                with open(f"{path}.log", encoding="utf-8", errors="replace") as f:
                    answer.log = f.read()
            except OSError:
                answer.log = None
        return answer

    def solve_mps(self, path: str, profile: Profile, log_file: str, start, root: RootWatch | None) -> Answer:
        """Solve the MPS file ``path`` (columns named c0, c1 ... in order, minimised, as HiGHS writes a model)
        through this backend's own reader and API, its log written to ``log_file``: an Answer with the column
        values in order (``x``) and, with ``root``, the root node's bound. ``start``: column values handed over
        as a MIP start."""
        raise NotImplementedError

    # --- array LPs (iosched.solvers.lp.LP) -------------------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        """Hand ``block`` (rows and columns not yet sent) to the backend's model of ``lp`` (made when ``first``)."""
        raise NotImplementedError

    def lp_solve(self, lp, time_limit: float) -> Answer:
        """Solve ``lp`` (again) within ``time_limit`` s: an Answer with the value, the column values and the row
        duals (``duals``) where it is optimal, in the convention of :mod:`iosched.solvers.lp`."""
        raise NotImplementedError


def keep(lp, block: Pending, first: bool) -> None:
    """For a backend that solves the whole LP each time (no model kept between solves): the blocks, kept."""
    if first:
        lp.model = []
    lp.model.append(block)
