"""What the ``iosched`` subcommands share: ``--param`` parsing, JSON and number output, progress bars.

Imported by :mod:`iosched.cli` and by the subcommand modules of :mod:`iosched.commands`, so that these
need not import :mod:`iosched.cli`, which imports them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from iosched.errors import ParameterError


def _param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise ParameterError(f"--param takes key=value, got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value
    except ValueError:  # an integer beyond Python's digit limit
        raise ParameterError(f"--param {key}: a number of more than {sys.get_int_max_str_digits()} digits") from None


def parse_params(texts: list[str]) -> dict:
    """``--param key=value`` options as a dict, each value read as JSON where it parses (else the string); a
    key given twice is refused (which one was meant?). ParameterError names a malformed option."""
    params: dict = {}
    for text in texts:
        key, value = _param(text)
        if key in params:
            raise ParameterError(f"--param {key} is given twice ({params[key]!r} and {value!r}): give it once")
        params[key] = value
    return params


def json_safe(o: object) -> object:
    """``o`` with every non-finite float as None (JSON has no NaN or infinity), in one pass; ``o``
    itself, not a copy, where nothing in it changes."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        cleaned = {k: json_safe(v) for k, v in o.items()}
        return o if all(cleaned[k] is v for k, v in o.items()) else cleaned
    if isinstance(o, (list, tuple)):
        items = [json_safe(v) for v in o]
        return o if all(a is b for a, b in zip(items, o)) else items
    return o


def dump_json(obj: object) -> str:
    """``obj`` as indented JSON, non-finite floats as null (:func:`json_safe`)."""
    return json.dumps(json_safe(obj), indent=2)


def fmt(x: object, spec: str = ".6g") -> str:
    """A number as ``spec`` formats it, None as \"-\" (a missing figure in a table), anything else as str."""
    return "-" if x is None else format(x, spec) if isinstance(x, (int, float)) else str(x)


def show_progress(args: argparse.Namespace) -> bool:
    """Whether to draw progress bars on stderr: always with --progress, never with --quiet, otherwise only
    on a terminal (as tqdm's disable=None and pip do), so logs and pipes stay free of them."""
    return args.progress or (not args.quiet and sys.stderr.isatty())
