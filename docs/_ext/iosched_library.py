"""``.. iosched-library:: PROBLEM``: the instance library's table of one problem, read from the
library's data (iosched.library.summary), so the page cannot drift from it: name, size, best known,
bound, gap, status, difficulty class and who found the best known."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import Directive
from iosched_docs import _table  # the docs' one table builder (docs/_ext is on the path)


def _num(x) -> str:
    return "-" if x is None else f"{x:.8g}"


HEADER = ["name", "size", "best known", "bound", "gap", "status", "class", "found by"]


def library_rows(problem: str) -> list[list[str]]:
    """One row of :data:`HEADER` per library instance of ``problem``, from its summary."""
    from iosched import library

    rows = []
    for name, r in sorted(library.summary(problem).items()):
        found = r["found_by"] or {}
        rows.append([name.split("/", 1)[1], ", ".join(f"{k} {v}" for k, v in r["size"].items()),
                     _num(r["best_known"]), _num(r["bound"]), library.gap_text(r["gap"]),
                     r["status"], r["class"] or "-", f"{found.get('method', '-')} ({found.get('date', '')[:10]})"])
    return rows


class LibraryDirective(Directive):
    required_arguments = 1

    def run(self):
        from iosched import library

        problem = self.arguments[0]
        rows = library_rows(problem)
        first = next(iter(library.summary(problem).values()))
        intro = nodes.paragraph(text=f"{len(rows)} instances; objective {first['objective']} ({first['sense']}, "
                                     f"{first['units']}); {sum(r[5] == 'optimal' for r in rows)} optimal, "
                                     f"{sum(r[5] == 'open' for r in rows)} open.")
        return [intro, _table(HEADER, rows, [1] * len(HEADER))]


def setup(app):
    app.add_directive("iosched-library", LibraryDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
