"""The documentation site builds with warnings as errors (a broken docstring fails it), and its
generated pages hold what the package says: each problem's methods with their parameters, the CLI's
help. The notebooks are rendered without running here (tests/test_notebooks.py runs them); the
README's build command runs them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import iosched

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("myst_nb")
    out = tmp_path_factory.mktemp("html")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
                           str(DOCS), str(out)], capture_output=True, text=True,
                          env={**os.environ, "IOSCHED_DOCS_EXECUTE": "off"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.parametrize("problem", ["periodic", "window", "forwarding", "filedomain", "malleable"])
def test_each_problem_page_lists_every_method_with_its_parameters(site, problem):
    html = (site / "problems" / f"{problem}.html").read_text()
    for method in iosched.methods(problem):
        assert f"<p>{method}</p>" in html, method
    for p in iosched.describe(problem, iosched.methods(problem)[0]).parameters:
        assert p.name in html
    assert "math notranslate" in html  # the formulation is typeset


def test_cli_api_and_notebook_pages(site):
    cli = (site / "cli.html").read_text()
    assert "iosched solve" in cli and "--profile" in cli
    assert "iosched.solve" in (site / "api.html").read_text()
    for nb in ("periodic", "window", "forwarding", "filedomain", "malleable", "batch"):
        assert (site / "notebooks" / f"{nb}.html").stat().st_size > 10_000
