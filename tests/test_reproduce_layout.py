"""The papers' reproductions in ``iosched.reproduce``, apart from the benchmark harness (issue 41)."""

import ast
from pathlib import Path

import iosched.reproduce as reproduce

PACKAGE = Path(reproduce.__file__).parent.parent


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_harness_and_the_reproductions_do_not_import_each_other():
    for path in (PACKAGE / "harness").glob("*.py"):
        assert not {m for m in _imports(path) if m.startswith("iosched.reproduce")}, path
    for path in (PACKAGE / "reproduce").glob("*.py"):
        assert not {m for m in _imports(path) if m.startswith("iosched.harness")}, path
