"""Handlers of self-contained ``iosched`` subcommands, one module each, and the helpers they share with
:mod:`iosched.cli` (which defines every subcommand's arguments and dispatches to them)."""
