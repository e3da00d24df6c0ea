"""The package's modules import one way and stay readable (issue 41): the graph of every ``import``
and ``from ... import`` in iosched/, those inside functions included, read from the source, has no
cycle.

An edge goes from a module to each iosched module it names: ``from iosched.a import b`` names
``iosched.a.b`` where that is a module, else ``iosched.a``; relative imports are resolved against the
importing module's package. Running a package's ``__init__`` before its modules is Python's doing,
not an import the code writes, so it is no edge. And no module is longer than MAX_LINES, and none imports
another module's private (``_name``) name: what a module shares is public, with a docstring (issue 50).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "iosched"
MAX_LINES = 800  # a module past it holds more than one idea: split it where they part


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]):
    """Every import of module ``name`` (at ``path``) that names a module of ``modules``, as (that module, the name
    imported from it or None where the module itself is imported, line); attribute reads ``m._x`` of a module
    ``m`` imported whole count as importing ``_x``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bound: dict[str, str] = {}  # local name -> the module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in modules:  # import iosched.a.b.c where c is a name
                    target = target.rpartition(".")[0]
                if target:
                    if alias.asname:
                        bound[alias.asname] = target
                    yield target, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                    yield f"{base}.{alias.name}", None, node.lineno
                    continue
                target = base
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target:
                    yield target, alias.name if target == base else None, node.lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            yield bound[node.value.id], node.attr, node.lineno


def import_graph() -> nx.DiGraph:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target, _, _ in _imports(name, path, modules):
            if target != name:
                graph.add_edge(name, target)
    return graph


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Every import of another module's private name (``_x``, not ``__x__``) in ``package``: "module:line
    imports target._x". A private module imported whole (``iosched.models._window_kernels``) is no such name."""
    modules = _modules(package)
    return sorted({f"{name}:{line} imports {target}.{what}" for name, path in modules.items()
                   for target, what, line in _imports(name, path, modules)
                   if what and what.startswith("_") and not what.endswith("__") and target != name})


def test_the_graph_reads_the_imports_it_should():
    """The reader finds the imports it must, inside functions too (a reader that found none would pass)."""
    graph = import_graph()
    assert graph.has_edge("iosched.problems", "iosched.core")
    assert graph.has_edge("iosched.core", "iosched.solvers")  # inside check_method_params
    assert graph.has_edge("iosched.solvers", "iosched.status")
    assert graph.number_of_edges() > 100


def test_no_import_cycle():
    cycles = sorted(sorted(c) for c in nx.simple_cycles(import_graph()))
    assert not cycles, f"{len(cycles)} import cycles, e.g. " + "; ".join(" -> ".join(c) for c in cycles[:5])


def test_no_module_is_longer_than_max_lines():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules past {MAX_LINES} lines: {long}"


def test_the_private_import_reader_finds_each_form(tmp_path):
    """The reader sees a private name imported by name, relatively and as an attribute of a module imported
    whole, and lets public names, dunders, private modules and a module's own names pass (a reader that
    found nothing would pass the test below)."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("_x = 1\ny = 2\n")
    (pkg / "_hidden.py").write_text("z = 3\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from pkg.a import _x, y\nfrom .. import a\nfrom ..a import __doc__\n"
                                      "import pkg.a as m\nfrom pkg import _hidden\nq = a._x + m._x + a.y\n")
    (pkg / "c.py").write_text("_own = 1\nimport pkg.c as me\nr = me._own\n")
    assert private_imports(pkg) == ["pkg.sub.b:1 imports pkg.a._x", "pkg.sub.b:6 imports pkg.a._x"]


def test_no_module_imports_another_modules_private_name():
    """What one module takes from another is public, with a docstring saying what it is for: a private name
    used elsewhere is a contract nobody wrote down (issue 50)."""
    found = private_imports()
    assert not found, f"{len(found)} imports of another module's private name:\n" + "\n".join(found)
