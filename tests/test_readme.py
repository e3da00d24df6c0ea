"""Every command in the README's and the docs' shell blocks runs, as written, from a clean folder (issues 22, 51).

Each command runs in its own process, in page order, in one temporary folder per page holding only what the
page tells a reader to write (a JSON or TOML block after the words "saved as `NAME`": README's ``my.json``
and ``my-suite.toml``; no ``runs/``: the commands make their folders, issue 40), so a command can use what an
earlier one of its page wrote (``report`` reads ``bench``'s results); optional parts in brackets are dropped.
Where a command is long, a smaller size stands in (SMALLER: the pages' own sizes in the slow run); the install
and test commands are the ones ``.ci/run`` runs, checked against it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {"README.md": README} | {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                                 for p in sorted((ROOT / "docs").rglob("*.md")) if "_build" not in p.parts}
SETUP = ("python3 -m venv", ".venv/bin/python -m pytest")  # what .ci/run does, checked below
DOCS = ".venv/bin/python -m sphinx"  # the documentation build: tests/test_docs.py runs it, checked below
SMALLER = {"--jobs 2000": "--jobs 200", "generate:0:3000": "generate:0:300", "generate:0:2000": "generate:0:200"}
SLOW = ("iosched reproduce", "batch_sim.py study", "iosched bench periodic-paper")  # minutes each


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def saved_files(text: str) -> dict[str, str]:
    """The files a page tells its reader to write: each JSON or TOML block after "saved as `NAME`"."""
    found = {}
    for m in re.finditer(r"saved as `([^`]+)`[^`]*?```(json|toml)\n(.*?)```", text, re.S):
        found[m.group(1)] = json.dumps(json.loads(m.group(3))) if m.group(2) == "json" else m.group(3)
    return found


def commands(text: str = README) -> list[str]:
    out = []
    for block in blocks("sh", text):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()  # a comment after the command
            if line and not line.startswith("#"):
                out.append(re.sub(r"\s+\[--[^\]]*\]", "", line))  # optional parts: [--format md|csv|parquet]
    return out


def _argv(command: str) -> list[str]:
    argv = shlex.split(command)
    if argv[0] == "iosched":
        return [str(Path(sys.executable).parent / "iosched"), *argv[1:]]
    if argv[0] == "python":
        return [sys.executable, str(ROOT / argv[1]), *argv[2:]]
    raise AssertionError(f"a documented command this test cannot run: {command}")


RUNNABLE = [(page, c) for page, text in PAGES.items() for c in commands(text)
            if not c.startswith((*SETUP, DOCS, "pip install")) and "&&" not in c]


def test_the_readme_docs_command_is_the_one_the_docs_test_runs():
    (docs,) = [c for c in commands() if c.startswith(DOCS)]
    assert docs.split()[3:] == ["-W", "--keep-going", "-b", "html", "docs", "docs/_build/html"]
    test = (ROOT / "tests" / "test_docs.py").read_text()
    assert '"-m", "sphinx"' in test and '"-W", "--keep-going"' in test and '"-b", "html"' in test


def test_the_readme_setup_commands_are_what_ci_runs():
    """The two commands (install + main job, tests) are the README's; .ci/run runs the same test
    command after the same install."""
    setup = [c for c in commands() if c.startswith(SETUP) or "&&" in c]
    assert any(c.startswith("python3 -m venv .venv && .venv/bin/pip install -e") and c.endswith("iosched reproduce")
               for c in setup), setup
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest" in setup and ".venv/bin/python -m pytest" in ci
    assert 'pip install --quiet -e ".[dev]"' in ci


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One folder per page, made when the page's first command runs, holding the files the page names."""
    made: dict[str, Path] = {}

    def folder(page: str) -> Path:
        if page not in made:
            made[page] = tmp_path_factory.mktemp(re.sub(r"\W", "-", page))
            for name, content in saved_files(PAGES[page]).items():
                (made[page] / name).write_text(content)
        return made[page]

    return folder


def test_the_files_a_reader_writes_are_the_ones_the_readme_names():
    """The README says which file each of its JSON and TOML blocks is (``my.json``, ``my-suite.toml``),
    and its commands use those files; the folder fixture writes nothing else."""
    files = saved_files(README)
    assert sorted(files) == ["my-suite.toml", "my.json"]
    assert tomllib.loads(files["my-suite.toml"])["problem"] == "window"
    readme = [c for page, c in RUNNABLE if page == "README.md"]
    assert any(" my.json " in c for c in readme) and any(" my-suite.toml " in c for c in readme)


def test_simulate_makes_its_results_folder_and_parents(tmp_path):
    """The README's ``iosched simulate ... --out runs/sim`` in a new folder: --out is made with its parents
    (it failed with 'cannot use runs/sim as a results folder' when runs/ did not exist, issue 40)."""
    (command,) = [c for page, c in RUNNABLE if page == "README.md" and c.startswith("iosched simulate generate:0:2000")]
    short = command.replace("generate:0:2000", "generate:0:50").replace("--window exact", "--window naive")
    proc = subprocess.run(_argv(short + " --no-plots"), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "runs" / "sim").iterdir()) == ["jobs.csv", "summary.json"]


WITHOUT_DATA: dict[str, str] = {}  # page -> the data beside the repository one of its commands needed and missed


@pytest.mark.parametrize("page,command", [pytest.param(p, c, marks=pytest.mark.slow) if c.startswith(SLOW) else (p, c)
                                          for p, c in RUNNABLE])
def test_every_documented_command_runs(page, command, folders):
    if page in WITHOUT_DATA:  # (the commands of a file run in order, on one worker: --dist loadfile)
        pytest.skip(f"an earlier command of {page} needs {WITHOUT_DATA[page]}, data beside the repository, "
                    "and this one may use what it makes")
    for long, short in SMALLER.items():
        if not any(command.startswith(s) for s in SLOW):
            command = command.replace(long, short)
    for path in re.findall(r"\.\./shared/\S+", command):
        if not (ROOT / path).exists():
            WITHOUT_DATA[page] = path
            pytest.skip(f"{path} is data beside the repository, not in it")
        command = command.replace(path, str(ROOT / path))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(_argv(command), cwd=folders(page), capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{page}: {command}\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("page", [p for p, text in PAGES.items() if blocks("python", text)])
def test_the_documented_python_runs(page, folders, monkeypatch):
    monkeypatch.chdir(folders(page))  # (the blocks write nothing, but a future one might)
    for block in blocks("python", PAGES[page]):
        exec(compile(block, page, "exec"), {})
