"""Workspace: a solver's work vectors, made at the first apply of a right-hand-side shape and
value type and kept for the next applies, so that nothing is allocated in the loop."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense


class Workspace:
    """A solver's work vectors for one right-hand-side shape and value type, zero at first.

    Vectors of b's rows are made like b (``b.empty_like``: distributed for a distributed b);
    anything else a solve keeps (its stop state, host arrays for reads) is kept with
    :meth:`get`. A solver makes one workspace per shape and value type
    (``IterativeSolver.workspace``).

    Parameters
    ----------
    exec : Executor
        The solver's executor.
    like : Dense
        A right-hand side of the shape and value type the workspace serves.

    Examples
    --------
    >>> ws = Workspace(exec, b)
    >>> r, p = ws.vectors("r", "p")          # n x k, zero at first
    >>> rho = ws.scalars("rho")[0]           # 1 x k
    >>> ws.vector("r") is r                  # the same vector on every call
    True
    """

    def __init__(self, exec, like: Dense) -> None:
        self.exec, self.shape, self.dtype, self.like = exec, like.shape, np.dtype(like.dtype), like
        self.items: dict[str, Any] = {}

    def get(self, name: str, make: Callable[[], Any]) -> Any:
        """The item ``name``, made by ``make()`` at the first call."""
        item = self.items.get(name)
        if item is None:
            item = self.items[name] = make()
        return item

    def vector(self, name: str, rows: int | None = None, cols: int | None = None) -> Dense:
        """An n x k Dense (or rows x cols), zero at first (the initial guess of an iterative
        preconditioner that writes into it)."""
        n, k = self.shape
        cols = k if cols is None else cols
        if rows is None:
            return self.get(name, lambda: self.like.empty_like((n, cols)).fill(0.0))
        return self.get(name, lambda: self._zeros((rows, cols), self.dtype))

    def norms(self, name: str = "norms") -> Dense:
        """A 1 x k Dense of the real type of the value type, for norms (by default those the
        monitor reads)."""
        return self.get(name, lambda: self._zeros((1, self.shape[1]), real_dtype(self.dtype)))

    def vectors(self, *names: str) -> list[Dense]:
        """n x k Dense each."""
        return [self.vector(name) for name in names]

    def scalars(self, *names: str, rows: int = 1) -> list[Dense]:
        """rows x k Dense each (one value per column)."""
        return [self.vector(name, rows=rows) for name in names]

    def partials(self, name: str, count: int = 1) -> Dense:
        """The partial sums of ``count`` reductions per column (their kernel gives them its shape)."""
        return self.vector(name, rows=1, cols=count * self.shape[1])

    def array(self, name: str, shape: tuple[int, ...], dtype) -> Any:
        """A raw executor array (int32 counts, uint8 flags)."""
        return self.get(name, lambda: self.exec.alloc(shape, dtype))

    def _zeros(self, shape: tuple[int, int], dtype) -> Dense:
        # (the value type was checked when the solver was generated)
        return Dense(self.exec, self.exec.alloc(shape, dtype)).fill(0.0)
