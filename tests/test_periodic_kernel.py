"""PerSched's kernel: stderr says whether numba compiles it or loads it from its disk cache."""

import os
import subprocess
import sys

CHILD = """
import iosched.heuristics.periodic_kernel as k
k.NOTICE_AFTER = 0.0  # as on a busy machine: every preparation takes long enough for the notice
k.compile_kernel()
print(k._LOADED["compiled"])
"""


def _prepare(env=None):
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip(), proc.stderr


def test_a_load_from_the_cache_is_announced_as_a_load():
    _prepare()  # make sure the cache holds the kernel
    compiled, err = _prepare()
    assert compiled == "False"
    assert "loading PerSched's compiled kernel from numba's cache" in err and "kernel loaded after" in err
    assert "compiling" not in err


def test_a_compilation_is_announced_as_one(tmp_path):
    compiled, err = _prepare({"NUMBA_CACHE_DIR": str(tmp_path)})  # an empty cache
    assert compiled == "True"
    assert "compiling PerSched's kernel with numba" in err and "kernel compiled after" in err
