"""Directives that write pages from the package itself, so they cannot drift from it.

``.. iosched-methods:: PROBLEM``: a table of the problem's methods, each with its objective, its
description, what it is exact over and its parameters (defaults, accepted values, units) from
:func:`iosched.describe`. ``.. iosched-exactness::``: the one table of every problem's methods and what
each is exact over. ``.. iosched-cli::``: the help of ``iosched`` and of each subcommand, from
:func:`iosched.cli.build_parser`. ``.. iosched-fields:: MODULE:NAME``: a JSON format's field table
(:class:`iosched.instances.fields.Fields`), the one its loader checks keys against.
"""

from __future__ import annotations

import argparse
import json
from importlib import import_module

from docutils import nodes
from docutils.parsers.rst import Directive


def _table(header: list[str], rows: list[list[str]], widths: list[int]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=w) for w in widths)
    head, body = nodes.thead(), nodes.tbody()
    for cells, parent in [(header, head)] + [(r, body) for r in rows]:
        row = nodes.row()
        for text in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=text)
            row += entry
        parent += row
    group += head
    group += body
    return table


class MethodsDirective(Directive):
    required_arguments = 1

    def run(self):
        import iosched

        problem = self.arguments[0]
        rows = []
        for name in iosched.methods(problem):
            d = iosched.describe(problem, name)
            params = "; ".join(f"{p.name}{f' [{p.unit}]' if p.unit else ''} = {p.default!r}: {p.accepts}"
                               for p in d.parameters) or "none"
            rows.append([name, d.objective + (" (randomised)" if d.randomized else ""), d.description,
                         d.exact_over or "not stated", params])
        return [_table(["method", "objective", "what it is", "exact over", "parameters (default: accepted)"], rows,
                       [12, 12, 32, 16, 28])]


class ExactnessDirective(Directive):
    """Every method of every problem and what its answer is optimal over (iosched.core.register's exact_over)."""

    def run(self):
        import iosched
        from iosched.core import PROBLEMS

        rows = [[problem, name, iosched.describe(problem, name).exact_over or "not stated"]
                for problem in PROBLEMS for name in iosched.methods(problem)]
        return [_table(["problem", "method", "exact over"], rows, [14, 20, 66])]


def _help(text: str) -> nodes.literal_block:
    block = nodes.literal_block(text=text)
    block["language"] = "text"  # not highlighted: the options stay as typed
    return block


class CliDirective(Directive):
    def run(self):
        from iosched.cli import build_parser

        parser = build_parser()
        out = [_help(parser.format_help())]
        subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, sub in subs.choices.items():
            section = nodes.section(ids=[f"iosched-{name}"])
            section += nodes.title(text=f"iosched {name}")
            section += _help(sub.format_help())
            out.append(section)
        return out


class FieldsDirective(Directive):
    required_arguments = 1

    def run(self):
        module, _, name = self.arguments[0].partition(":")
        table = getattr(import_module(module), name)
        rows = [[f.path, f.type, f.unit, "required" if f.required else "optional" if f.default is None
                 else json.dumps(f.default), f.meaning] for f in table]
        return [_table(["field", "type", "unit", "default", "meaning"], rows, [22, 10, 8, 10, 50])]


def setup(app):
    app.add_directive("iosched-methods", MethodsDirective)
    app.add_directive("iosched-exactness", ExactnessDirective)
    app.add_directive("iosched-cli", CliDirective)
    app.add_directive("iosched-fields", FieldsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
