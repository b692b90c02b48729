"""Mixed precision: a factory's own value type (``with_value_type("float32")``, the
configuration's ``"value_type"``), and the operator that runs in it inside a solve of another.

A factory with a value type generates its product on the system matrix converted to that type
(:func:`generate_in`); a solver or preconditioner made so is applied through a
:class:`MixedPrecision` operator, which converts b into its type, applies it, and converts x
back (one conversion launch each way, on vectors kept for the next apply). The value type is a
precision: ``"float32"`` is complex64 for a complex system, ``"float64"`` complex128; complex
types on a real system are refused. The accuracy of a solve is always judged in the system's
own type, by the outer solver's criteria.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.lin_op import LinOp, dense_zeros, improve
from ginkpy.core.base.types import VALUE_TYPE_NAMES, dtype_in, value_type_name

__all__ = ["MixedPrecision", "VALUE_TYPE_NAMES", "apply_in", "converted", "dtype_in", "generate_in",
           "value_type_name"]

def converted(A: LinOp, dtype: np.dtype) -> LinOp:
    """``A`` in value type ``dtype``: a matrix converted on its executor (other formats through
    Csr); itself where it is already."""
    if A.dtype == dtype:
        return A
    if hasattr(A, "astype"):
        return A.astype(dtype)
    if hasattr(A, "to_csr"):
        return A.to_csr().astype(dtype)
    raise TypeError(f"a factory with value_type {np.dtype(dtype).name} needs the system matrix in that type, but "
                    f"{type(A).__name__} cannot be converted: give a matrix (gk.matrix.Csr, Dense, ...)")


def apply_in(vectors: tuple, b: Any, x: Any, read_x: bool, apply: Any) -> None:
    """``apply(b_in, x_in)`` on ``vectors`` (b_in, x_in) of another value type: b converted into
    b_in (and x into x_in where ``read_x``) before, x_in into x after; one launch each."""
    b_in, x_in = vectors
    exec = b_in.executor
    exec.run("matrix.dense.convert_precision", b, b_in)
    if read_x:
        exec.run("matrix.dense.convert_precision", x, x_in)
    apply(b_in, x_in)
    exec.run("matrix.dense.convert_precision", x_in, x)


def generate_in(factory: Any, *args: Any, **kwargs: Any) -> Any:
    """``factory.generate(A, ...)`` in the factory's value type: A converted, the product made
    on it (by the factory's parameters without a value type), and a solver or preconditioner
    wrapped in a :class:`MixedPrecision` operator of A's type. Products that are no operators
    (a multigrid level, a reordering) are returned as they are, in the value type."""
    params = factory.parameters
    A = args[0]
    dtype = factory.executor.check_dtype(dtype_in(params.value_type, A.dtype))
    plain = type(factory)(factory.executor, attrs.evolve(params, value_type=None))
    if dtype == A.dtype:
        return plain.generate(*args, **kwargs)
    product = plain.generate(converted(A, dtype), *args[1:], **kwargs)
    if isinstance(product, LinOp) and getattr(product, "converts_value_type", True) and product.shape == A.shape:
        return MixedPrecision(product, A.dtype)
    return product


class MixedPrecision(LinOp):
    """An operator of another value type, applied inside a solve of this one: b is converted
    into its type, the operator applied there, x converted back (Ginkgo's precision dispatch).

    Made by a factory with ``with_value_type`` (see :func:`generate_in`); use it where a part
    of a solve can run in lower precision: a float32 preconditioner or multigrid hierarchy of a
    float64 Krylov solver, the float32 inner solver of iterative refinement (``gk.solver.Ir``).
    Its vectors in the inner type are kept for the next apply of the same column count, so that
    an apply allocates nothing after the first and a solve around it can replay it.

    Parameters
    ----------
    operator : LinOp
        The operator in its own value type (``operator.dtype``).
    dtype : numpy dtype
        The value type it is applied in (of b and x).

    Examples
    --------
    >>> M = gk.solver.Multigrid.build().with_value_type("float32").on(exec).generate(A)   # A float64
    >>> M.operator.dtype, M.dtype          # float32 inside, float64 outside
    >>> solver = gk.solver.Cg.build().with_preconditioner(M).on(exec).generate(A)
    """

    converts_value_type = False

    def __init__(self, operator: LinOp, dtype: Any) -> None:
        super().__init__(operator.executor, operator.shape, dtype)
        self.operator = operator
        self._vectors: dict[int, tuple] = {}
        # an operator that starts from the x it is given (an iterative solver applied as given,
        # ``reads_initial_guess``): x goes in converted too
        self._reads_x = bool(getattr(operator, "reads_initial_guess", False))
        if hasattr(operator, "apply_with_initial_guess"):
            self.apply_with_initial_guess = self._apply_with_initial_guess
        if hasattr(operator, "backward"):
            self.backward = lambda: MixedPrecision(operator.backward(), dtype)

    # loggers watch the operator itself
    def add_logger(self, logger: Any) -> None:
        self.operator.add_logger(logger)

    def remove_logger(self, logger: Any) -> None:
        self.operator.remove_logger(logger)

    @property
    def loggers(self) -> tuple:
        return self.operator.loggers

    def _buffers(self, k: int) -> tuple:
        vectors = self._vectors.get(k)
        if vectors is None:
            exec, (n, m), dtype = self.executor, self.shape, self.operator.dtype
            vectors = self._vectors[k] = (dense_zeros(exec, (m, k), dtype), dense_zeros(exec, (n, k), dtype))
        return vectors

    def _apply_impl(self, b: Any, x: Any) -> None:
        apply_in(self._buffers(b.shape[1]), b, x, self._reads_x, self.operator.apply)

    def _apply_with_initial_guess(self, b: Any, x: Any, zero_guess: bool) -> None:
        """Improve x (from 0 where ``zero_guess``), as a smoother does, in the operator's type."""
        apply_in(self._buffers(b.shape[1]), b, x, not zero_guess,
                 lambda b_in, x_in: improve(self.operator, b_in, x_in, zero_guess))

    def __repr__(self) -> str:
        return f"MixedPrecision({self.operator!r} applied in {self.dtype})"
