"""The papers' reproductions in ``iosched.reproduce``, apart from the benchmark harness (issue 41), and
their old names under ``iosched.harness`` kept for one release."""

import ast
import importlib
import sys
from pathlib import Path

import pytest

import iosched.harness as harness
import iosched.reproduce as reproduce

MOVED = ("periodic", "window", "forwarding", "filedomain", "malleable", "paper_report")
PACKAGE = Path(reproduce.__file__).parent.parent


@pytest.mark.parametrize("name", MOVED)
def test_an_old_module_name_is_the_new_module_and_warns(name, monkeypatch):
    new = importlib.import_module(f"iosched.reproduce.{name}")
    monkeypatch.delitem(sys.modules, f"iosched.harness.{name}", raising=False)
    monkeypatch.delattr(harness, name, raising=False)
    with pytest.warns(DeprecationWarning, match=rf"iosched\.harness\.{name} moved to iosched\.reproduce\.{name}"):
        old = importlib.import_module(f"iosched.harness.{name}")
    assert old is new
    assert getattr(harness, name) is new  # `from iosched.harness import periodic` finds it too


@pytest.mark.parametrize("name", ["Reproduction", "comparison", "COMPARISON_KEYS", "CLOSE"])
def test_an_old_name_in_the_harness_package_is_the_new_one_and_warns(name):
    with pytest.warns(DeprecationWarning, match=rf"iosched\.harness\.{name} moved to iosched\.reproduce\.{name}"):
        old = getattr(harness, name)
    assert old is getattr(reproduce, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        harness.no_such_name  # noqa: B018


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
        if path.stem in MOVED:  # the deprecated aliases
            continue
        assert not {m for m in _imports(path) if m.startswith("iosched.reproduce")}, path
    for path in (PACKAGE / "reproduce").glob("*.py"):
        assert not {m for m in _imports(path) if m.startswith("iosched.harness")}, path
