"""Helpers shared by the instance tests: edits of an instance's JSON for the bad-input tables (each
returns a function that changes a dict in place at ``path``, keys and list indices), and the JSON
round trip."""


def _parent(d, path):
    for k in path[:-1]:
        d = d[k]
    return d


def set_at(path, value):
    def edit(d):
        _parent(d, path)[path[-1]] = value
    return edit


def drop_at(path):
    def edit(d):
        del _parent(d, path)[path[-1]]
    return edit


def json_paths(doc, prefix=()) -> list[tuple]:
    """Every place in a JSON value (root excluded), in document order: the keys and indices to it."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += json_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += json_paths(v, prefix + (i,))
    return out


def assert_round_trips(inst, cls, load, tmp_path):
    """``inst`` back from its JSON text (equal, and the same text again) and from a file, both by
    ``cls.from_json`` and by the problem's ``load``; returns the instance read from the text."""
    text = inst.to_json()
    back = cls.from_json(text)
    assert back == inst and back.to_json() == text
    path = tmp_path / "instance.json"
    inst.to_json(path)
    assert cls.from_json(path) == inst and load(str(path)) == inst
    return back
