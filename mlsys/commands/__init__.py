"""Subcommands of the ``mlsys`` command that face the core solvers (solve, search, catalog)."""
