"""The package's modules import one way and stay readable (issue 41): the graph of every ``import``
and ``from ... import`` in iosched/, those inside functions included, read from the source, has no
cycle.

An edge goes from a module to each iosched module it names: ``from iosched.a import b`` names
``iosched.a.b`` where that is a module, else ``iosched.a``; relative imports are resolved against the
importing module's package. Running a package's ``__init__`` before its modules is Python's doing,
not an import the code writes, so it is no edge. And no module is longer than MAX_LINES.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "iosched"
MAX_LINES = 800  # a module past it holds more than one idea: split it where they part


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph() -> nx.DiGraph:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:  # import iosched.a.b.c where c is a name
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
    return graph


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
