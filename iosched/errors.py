"""Errors raised on bad input; each message names the field and the value."""


class InstanceError(ValueError):
    """An instance (or a solution) that does not describe a valid problem."""


class ParameterError(ValueError):
    """A method parameter that is unknown or out of range."""


class OutputError(OSError):
    """A file the package was asked to write could not be written (full disk, read-only folder...);
    the message names the path and the cause, and no partial file is left."""
