"""Instances, one module per problem, and the JSON plumbing they share.

Every error names the field and the value it rejects.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Self

from iosched.errors import InstanceError
from iosched.files import write_text


def parse_json(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InstanceError(f"{where} is not valid JSON: {e}") from None
    except RecursionError:
        raise InstanceError(f"{where} is nested too deeply to be an instance") from None
    except ValueError:  # an integer beyond Python's digit limit
        raise InstanceError(f"{where} holds a number of more than {sys.get_int_max_str_digits()} digits") from None


def read_text(path: Path) -> str:
    """A file's text, or an InstanceError naming the file (unreadable, binary, a directory...)."""
    try:
        return path.read_text()
    except UnicodeDecodeError:
        raise InstanceError(f"{path} is not a UTF-8 text file") from None
    except OSError as e:
        raise InstanceError(f"cannot read {path}: {e.strerror or e}") from None


def check_top(d, label: str, required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    """A top-level JSON object with its ``required`` keys and nothing beyond ``optional``."""
    if not isinstance(d, dict):
        raise InstanceError(f"a {label} must be a JSON object, got {type(d).__name__}")
    for key in required:
        if key not in d:
            raise InstanceError(f"missing field {key!r} in {label}")
    unknown = sorted(set(d) - set(required) - set(optional))
    if unknown:
        raise InstanceError(f"unknown field {unknown[0]!r} in {label}")


def check_fields(d, where: str, required, optional=()) -> None:
    """A nested JSON object: ``where`` names it in errors (``platform``, ``jobs[3]``...)."""
    if not isinstance(d, dict):
        raise InstanceError(f"{where} must be an object, got {d!r}")
    missing = sorted(set(required) - set(d))
    if missing:
        raise InstanceError(f"missing field {where}.{missing[0]}")
    unknown = sorted(set(d) - set(required) - set(optional))
    if unknown:
        raise InstanceError(f"unknown field {where}.{unknown[0]}")


def build(kind, d, where: str, optional=()):
    """The dataclass ``kind`` from a JSON object; every field but ``optional`` is required."""
    names = [f.name for f in dataclasses.fields(kind)]
    check_fields(d, where, [n for n in names if n not in optional], optional)
    return kind(**d)


class JsonInstance:
    """``to_json`` / ``from_json`` for a class with ``to_dict`` / ``from_dict(d, name)``."""

    if TYPE_CHECKING:  # what each subclass defines
        def to_dict(self) -> dict: ...

        @classmethod
        def from_dict(cls, d: dict, name: str = ...) -> Self: ...

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            write_text(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, text_or_path: str | Path):
        """From a file (a Path, or a string naming an existing file) or from JSON text."""
        if isinstance(text_or_path, Path) or os.path.isfile(text_or_path):
            path = Path(text_or_path)
            return cls.from_dict(parse_json(read_text(path), str(path)), name=path.stem)
        return cls.from_dict(parse_json(text_or_path, "<string>"))
