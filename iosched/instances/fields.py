"""JSON field tables: each field of an instance or solution format declared once, beside the dataclasses that
hold it -- its path, JSON type, unit, default and meaning -- so that the loader's key checks and the docs'
format pages (``docs/formats/``, through the ``iosched-fields`` directive) read the same table and cannot
drift apart.

A path names a field from the top of the JSON document: ``capacity.nodes``; ``jobs[].id`` for a field of
each item of the list ``jobs``; ``jobs{}.mapping`` for a field of each value of an object keyed by ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iosched.instances import check_fields, check_top


class Required:
    """The default of a field that must be given."""

    def __repr__(self) -> str:
        return "required"


REQUIRED = Required()


@dataclass(frozen=True)
class Field:
    """One JSON field: ``path`` (see the module docstring), JSON ``type``, ``unit`` ("" where none),
    ``meaning``, and ``default`` (:data:`REQUIRED`, a value the loader takes when the field is absent, or
    None where absence itself means something, said in ``meaning``)."""

    path: str
    type: str
    unit: str
    meaning: str
    default: Any = REQUIRED

    @property
    def parent(self) -> str:
        return self.path.rpartition(".")[0]

    @property
    def key(self) -> str:
        """The field's key in its object (the path's last part without its ``[]`` / ``{}`` marks)."""
        return self.path.rpartition(".")[2].replace("[]", "").replace("{}", "")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def items(self) -> bool:
        """Whether the path names the items of a list or the values of an object (``jobs{}``), not a key."""
        return self.path.endswith(("[]", "{}"))


class Fields:
    """The field table of one JSON format (``label``: how errors name a document of it)."""

    def __init__(self, label: str, *fields: Field):
        self.label = label
        self.fields = fields
        self.by_path = {f.path: f for f in fields}
        if len(self.by_path) != len(fields):
            raise ValueError(f"{label}: a path appears twice in its field table")

    def __iter__(self):
        return iter(self.fields)

    def keys(self, parent: str = "") -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The required and the optional keys of the object at ``parent`` ("" the document itself)."""
        inside = [f for f in self.fields if f.parent == parent and not f.items]
        return tuple(f.key for f in inside if f.required), tuple(f.key for f in inside if not f.required)

    def check(self, d, parent: str = "", where: str | None = None) -> None:
        """``d`` is the object at ``parent`` with its required keys and no key beyond the table (InstanceError
        naming ``where``, default ``parent``, and the key)."""
        required, optional = self.keys(parent)
        if parent:
            check_fields(d, where or parent, required, optional)
        else:
            check_top(d, self.label, required, optional)

    def default(self, path: str):
        """The value the loader takes where the field at ``path`` is absent."""
        return self.by_path[path].default

    def get(self, d: dict, path: str):
        """``d``'s value of the field at ``path`` (``d`` being the object holding it), or its default."""
        field = self.by_path[path]
        return d.get(field.key, field.default)
