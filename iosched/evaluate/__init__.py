"""The evaluators, one module per problem: the one place where feasibility is checked."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Violation:
    """One broken constraint: its kind, where, and by how much (in the constraint's unit)."""

    constraint: str
    where: str
    amount: float

    def __str__(self):
        return f"{self.constraint} at {self.where}: by {self.amount:.6g}"
