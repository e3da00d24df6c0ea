"""The documentation site builds with warnings as errors (a broken docstring fails it), and its
generated pages hold what the package says: each problem's methods with their parameters, the CLI's
help. The notebooks are rendered without running here (tests/test_notebooks.py runs them); the
README's build command runs them. The formulas are typeset by the MathJax shipped with the site, checked
offline in headless Chromium."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import iosched

DOCS = Path(__file__).resolve().parents[1] / "docs"
CHROMIUM = shutil.which("chromium")  # Debian's; .ci/run installs it


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


@pytest.mark.parametrize("problem", ["periodic", "window", "forwarding", "filedomain", "malleable"])
def test_each_format_page_prints_every_field_of_its_tables(site, problem):
    """docs/formats/PROBLEM.md's tables come from the field tables the loaders check (the iosched-fields
    directive): every field's path is on the page, with its unit."""
    from importlib import import_module

    where = ("iosched.instances.periodic_fields",) * 2 if problem == "periodic" else (
        f"iosched.instances.{problem}", f"iosched.evaluate.{problem}")
    html = (site / "formats" / f"{problem}.html").read_text()
    for table in (import_module(where[0]).FIELDS, import_module(where[1]).SOLUTION_FIELDS):
        for f in table:
            assert f"<p>{f.path}</p>" in html, f.path
            assert not f.unit or f"<p>{f.unit}</p>" in html, (f.path, f.unit)


def test_cli_api_and_notebook_pages(site):
    cli = (site / "cli.html").read_text()
    assert "iosched solve" in cli and "--profile" in cli
    assert "iosched.solve" in (site / "api.html").read_text()
    for nb in ("periodic", "window", "forwarding", "filedomain", "malleable", "batch",
               *(f"formulations-{p}" for p in ("periodic", "window", "forwarding", "filedomain", "malleable"))):
        assert (site / "notebooks" / f"{nb}.html").stat().st_size > 10_000


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on the PATH (.ci/run installs Debian's chromium)")
def test_formulas_are_typeset_offline_in_a_browser(site, tmp_path):
    """MathJax ships with the site: with the network off, a problem page in headless Chromium shows its
    formulas typeset (MathJax's mjx-container in place of every math element, no raw TeX left). Loaded
    from a CDN, as before issue 40, every formula stayed raw LaTeX offline: \\(\\sum_f c_{jf} = n_j\\)."""
    page = site / "problems" / "forwarding.html"
    html = page.read_text()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert any("mathjax" in src for src in scripts) and not [s for s in scripts if "://" in s], scripts
    offline = ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]  # no name resolves, no route
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'profile'}", *offline, "--virtual-time-budget=10000",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    maths = html.count('class="math notranslate nohighlight"')
    assert maths >= 10 and dom.count("<mjx-container") == maths, (maths, dom.count("<mjx-container"))
    assert "\\(" not in dom and "\\[" not in dom and "\\sum_f c_{jf}" not in dom
