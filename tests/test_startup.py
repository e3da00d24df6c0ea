"""``import iosched`` loads none of the heavy packages (issue 50 item 5): every CLI call and every fresh task
process pays for what it loads. Checked in a fresh interpreter; how long it takes is benchmarks/startup.py's."""

import json
import subprocess
import sys

HEAVY = ["scipy", "pyomo", "numba", "ortools", "pymoo", "matplotlib", "highspy", "pandas", "networkx", "dask",
         "gurobipy", "pyscipopt", "cplex", "xpress"]


def test_import_iosched_loads_no_heavy_package():
    code = (f"import sys, json, iosched; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_check_would_see_a_heavy_package_loaded():
    """The same check after one solver call (an LP built) finds scipy and highspy: it can fail."""
    code = ("import sys, json, iosched; from iosched.solvers.lp import LP; import numpy as np; lp = LP('highs'); "
            "lp.add_rows([1.0], [np.inf]); lp.add_cols([1.0], 0.0, np.inf, [[1.0]]); lp.solve(5); "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert {"scipy", "highspy"} <= set(json.loads(out.stdout.strip().splitlines()[-1]))
