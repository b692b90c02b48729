"""Preconditioners, given to a solver with ``with_preconditioner``."""

__all__: list[str] = []
