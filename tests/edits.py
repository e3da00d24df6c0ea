"""Edits of an instance's JSON for the bad-input tables: each returns a function that changes a
dict in place at ``path`` (keys and list indices)."""


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
