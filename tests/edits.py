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
