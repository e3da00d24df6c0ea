"""Deprecated: moved to :mod:`iosched.reproduce.window`. This old name stays importable for one release
(it is that module under its old name) and warns on import."""

from iosched.harness import alias_moved_module

alias_moved_module(__name__, "iosched.reproduce.window")
