"""Interoperability with scipy.sparse.linalg: ginkpy operators as SciPy LinearOperators, and
SciPy's operators, sparse matrices and NumPy arrays as ginkpy LinOps; the executor and A
arguments of linalg's functions (as_executor, square_operator). scipy.sparse.linalg is
imported only where a LinearOperator is asked for or given (its import takes ~0.1 s: a
fresh process's first solve would spend a third of its setup on it)."""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.executor import Executor, default_executor
from ginkpy.core.base.executor import executor as executor_by_name
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.polymorphic_object import PolymorphicObject
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense, check_convertible, value_dtype


def aslinearoperator(op: Any) -> "scipy.sparse.linalg.LinearOperator":
    """``op`` as a SciPy LinearOperator, so that ginkpy operators work inside SciPy's solvers.

    A ginkpy LinOp (matrix, solver, preconditioner) is wrapped so that each product runs on its
    executor (copying operands there and back); anything else goes to
    ``scipy.sparse.linalg.aslinearoperator``.

    Parameters
    ----------
    op : LinOp or anything scipy.sparse.linalg.aslinearoperator takes
        The operator; a generated solver acts as its inverse (x = 0 start each product).

    Examples
    --------
    >>> M = gk.preconditioner.Ilu.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, S))
    >>> x, info = scipy.sparse.linalg.gmres(S, b, M=gk.aslinearoperator(M))
    >>> gk.aslinearoperator(M).matvec(b)        # M^-1 b on the device
    """
    import scipy.sparse.linalg as spla

    from ginkpy.linalg._linear_operator import GinkpyLinearOperator
    if isinstance(op, ScipyOperator):
        return op.operator
    if isinstance(op, LinOp):
        return GinkpyLinearOperator(op)
    return spla.aslinearoperator(op)


class ScipyOperator(LinOp):
    """A SciPy LinearOperator as a ginkpy LinOp on any executor.

    SciPy operators compute on the host: each apply copies b to the host, calls the
    operator's ``matvec`` (``matmat`` for several columns) and copies the result back to the
    executor (two transfers per apply).
    """

    def __init__(self, exec: Executor, operator: "scipy.sparse.linalg.LinearOperator", dtype: Any,
                 what: str = "A") -> None:
        super().__init__(exec, operator.shape, exec.check_dtype(dtype))
        self.operator = operator
        self.what = what

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        host = b.to_numpy()
        name = f"the LinearOperator {self.what} ({type(self.operator).__name__})"
        try:
            if b.shape[1] == 1:  # through matvec with a 1-D array, as SciPy's solvers call it
                y = np.asarray(self.operator.matvec(host[:, 0]))
                y = y[:, None] if y.ndim == 1 else y
            else:
                y = np.asarray(self.operator.matmat(host))
        except ValueError as err:  # SciPy's own checks of what matvec returned
            raise ValueError(f"{name} failed on an operand of shape {b.shape}: {err}") from err
        check_convertible(value_dtype(y.dtype, f"the result of {name}"), self.dtype, f"the values {name} returned")
        if y.shape != x.shape:
            raise ValueError(f"{name} returned an array of shape {y.shape} for an operand of shape "
                             f"{b.shape}; expected {x.shape}")
        if not np.isfinite(y).all():
            raise ValueError(f"{name} returned NaN or Inf values (for a finite operand)")
        x.executor.write(x.values, np.ascontiguousarray(y, dtype=self.dtype))

    def transpose(self) -> "ScipyOperator":
        """The transpose (SciPy's ``.T``, which applies ``rmatvec`` to conjugated operands)."""
        self._check_rmatvec("^T")
        return ScipyOperator(self.executor, self.operator.T, self.dtype, f"{self.what}^T")

    def conj_transpose(self) -> "ScipyOperator":
        """The adjoint A^H, applied with the operator's ``rmatvec`` (SciPy's ``.H``)."""
        self._check_rmatvec("^H")
        return ScipyOperator(self.executor, self.operator.H, self.dtype, f"{self.what}^H")

    def _check_rmatvec(self, mark: str) -> None:
        """Raise where the LinearOperator has no ``rmatvec`` (SciPy would fail inside its first
        product, with "'NoneType' object is not callable" for one made without it)."""
        import scipy.sparse.linalg as spla  # imported already: the operator is one of its

        op, base = self.operator, spla.LinearOperator
        custom = getattr(op, "_CustomLinearOperator__rmatvec_impl", False)
        if custom is None or (custom is False and type(op)._rmatvec is base._rmatvec
                              and type(op)._adjoint is base._adjoint):
            raise NotImplementedError(
                f"the LinearOperator {self.what} has no rmatvec, but the method needs {self.what}{mark} "
                f"(bicg and qmr apply the adjoints of A and M, lsqr and lsmr that of A): make it LinearOperator(..., matvec=..., "
                f"rmatvec=lambda v: {self.what}^H v), or use a method without adjoints (bicgstab, cgs, gmres, tfqmr)")


def as_executor(executor: Any, A: Any) -> Executor:
    """The executor argument of linalg's functions: an executor, its name, or None (A's
    executor for a ginkpy operator, single or batched, else the default executor)."""
    if executor is None:
        return A.executor if isinstance(A, PolymorphicObject) else default_executor()
    if isinstance(executor, str):
        return executor_by_name(executor)
    if not isinstance(executor, Executor):
        raise TypeError(f"executor must be a ginkpy executor or its name ('reference', 'opencl'), "
                        f"not {type(executor).__name__}")
    return executor


def square_operator(A: Any, executor: Any) -> tuple[Executor, Any]:
    """The executor (:func:`as_executor`) and :func:`host_operator` of linalg's A, which must
    be a square 2-D matrix or operator."""
    if len(getattr(A, "shape", (0, 0))) != 2:
        raise ValueError(f"A has shape {getattr(A, 'shape', None)}: expected 2-D, an n x n matrix or operator")
    exec, operator = as_executor(executor, A), host_operator(A)
    if operator.shape[0] != operator.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {operator.shape}")
    return exec, operator


def host_operator(A: Any, what: str = "A") -> Any:
    """``A`` unchanged when it is a ginkpy LinOp, SciPy sparse matrix or NumPy array (a
    wrapped ginkpy LinOp is unwrapped); otherwise A as a SciPy LinearOperator."""
    if isinstance(A, (LinOp, np.ndarray)) or sp.issparse(A):
        return A
    import scipy.sparse.linalg as spla

    from ginkpy.linalg._linear_operator import GinkpyLinearOperator
    if isinstance(A, GinkpyLinearOperator):
        return A.linop
    try:
        return spla.aslinearoperator(A)
    except TypeError:
        raise TypeError(f"{what} must be a SciPy sparse matrix or array, a NumPy array, a SciPy "
                        f"LinearOperator or a ginkpy LinOp, not {type(A).__name__}") from None


def as_linop(A: Any, exec: Executor, dtype: Any, what: str = "A") -> LinOp:
    """``A`` (any form :func:`host_operator` accepts) as a ginkpy LinOp for ``exec``: matrices and
    arrays become Csr in value type ``dtype``, LinearOperators a :class:`ScipyOperator`, and
    ginkpy LinOps stay as they are."""
    A = host_operator(A, what)
    if isinstance(A, LinOp):
        return A
    if isinstance(A, np.ndarray) or sp.issparse(A):
        if A.ndim != 2:
            raise ValueError(f"{what} must be a 2-D matrix, got a {A.ndim}-D array")
        return Csr.from_scipy(exec, A, dtype)
    return ScipyOperator(exec, A, dtype, what)
