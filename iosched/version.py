"""The package version (one place: iosched.__version__ and the library's records read it)."""

__version__ = "0.1.0"
