"""Sphinx configuration: MyST Markdown pages, the notebooks through myst-nb, the API from the docstrings.

Build (warnings are errors): ``sphinx-build -W --keep-going -b html docs docs/_build/html``. The
notebooks are executed at build time; ``IOSCHED_DOCS_EXECUTE=off`` renders them without running them
(the test suite does so: it runs the notebooks in tests/test_notebooks.py already). The math is
typeset by MathJax shipped with the site (sphinx-mathjax-offline copies MathJax 3.2.2 into _static/mathjax),
so formulas show without a network (HPC login nodes, CI); tests/test_docs.py checks it in headless Chromium.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "iosched"
author = "the iosched developers"
copyright = "2026, the iosched developers"
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax", "sphinx-mathjax-offline",
              "iosched_docs", "iosched_library"]  # napoleon: the public entry points' numpydoc sections
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "notebooks/.ipynb_checkpoints", "**/.ipynb_checkpoints"]
html_theme = "furo"
html_title = "iosched"
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": False}
nb_execution_mode = os.environ.get("IOSCHED_DOCS_EXECUTE", "auto")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
suppress_warnings = ["mystnb.unknown_mime_type"]
