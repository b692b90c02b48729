"""ScaledReordered: solve a system after reordering and scaling it, with any inner solver
(Ginkgo's experimental::reorder::ScaledReordered).

With row scaling R, column scaling C (diagonal) and the reordering's permutation P,
``generate(A)`` forms A' = P (R A C) P^T (for a row permutation such as Mc64's: A' = P R A C)
on the executor and generates the inner operator on it. ``apply(b, x)`` solves A x = b as

    b' = P R b,  y0 = P C^-1 x0,  y = inner(b'),  x = C P^T y

so the inner solver works on the reordered, scaled system and the caller sees A's own solution.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, as_factory, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.checks import system_csr
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.permutation import Permutation, permute
from ginkpy.core.solver.solver_base import generate_preconditioner


def _diagonal(value: Any, exec, n: int, dtype, what: str) -> Dense | None:
    """A scaling given as an array of n values or an n x 1 Dense, as an n x 1 Dense on exec."""
    if value is None:
        return None
    if isinstance(value, Dense):
        d = value.to_executor(exec).astype(dtype)
    else:
        d = Dense.from_numpy(exec, np.asarray(value).reshape(-1), dtype)
    if d.shape != (n, 1):
        raise ValueError(f"ScaledReordered: the {what} has shape {d.shape} but the system needs {n} values (n x 1)")
    host = d.to_numpy()
    if not np.all(np.isfinite(host)) or np.any(host == 0):
        raise ValueError(f"ScaledReordered: the {what} must be finite and nonzero (it scales the system and its "
                         f"inverse maps the solution back)")
    return d


class ScaledReordered(EnableBuild, LinOp):
    """Reorder (and optionally scale) a system, solve it with an inner solver, map the solution back.

    Use it to give a solver or a factorization a better-numbered system: Rcm for ILU or
    triangular solves, Amd for a direct solver, Mc64 to bring large entries onto the diagonal
    of a matrix with zero diagonals before Jacobi or ILU, a scaling to equilibrate rows and
    columns.

    Parameters
    ----------
    inner_operator : factory
        The solver (or preconditioner, or direct solver) generated on the reordered system;
        required.
    reordering : reordering factory, optional
        ``gk.reorder.Rcm.build()``, ``Amd.build()``, ``Mc64.build()``; None (default): no reordering.
    row_scaling, col_scaling : array of n values or n x 1 Dense, optional
        The diagonals of R and C (default: none).

    Examples
    --------
    >>> solver = (gk.solver.ScaledReordered.build()
    ...           .with_reordering(gk.reorder.Rcm.build())
    ...           .with_inner_operator(gk.solver.Gmres.build().with_criteria(...)).on(exec).generate(A))
    >>> solver.apply(b, x)        # x solves A x = b
    """

    @parameters
    class Parameters(Parameters):
        inner_operator: Any = None
        reordering: Any = None
        row_scaling: Any = None
        col_scaling: Any = None

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec, params = factory.executor, self.parameters
        if params.inner_operator is None:
            raise ValueError("ScaledReordered needs an inner operator: with_inner_operator(gk.solver.Gmres.build()"
                             "...) or any solver factory")
        A = system_csr(system_matrix, exec, "ScaledReordered")
        LinOp.__init__(self, exec, A.shape, A.dtype)
        n = A.shape[0]
        self.row_scaling = _diagonal(params.row_scaling, exec, n, A.dtype, "row scaling")
        self.col_scaling = _diagonal(params.col_scaling, exec, n, A.dtype, "column scaling")
        self.inverse_col_scaling: Dense | None = None
        if self.row_scaling is not None:
            A = A.scale_rows(self.row_scaling)  # R A
        if self.col_scaling is not None:
            A = A.scale_columns(self.col_scaling)  # R A C
            self.inverse_col_scaling = Dense.from_numpy(exec, 1 / self.col_scaling.to_numpy(), A.dtype)
        self.permutation: Permutation | None = None
        self.mode = "symmetric"
        if params.reordering is not None:
            reordering = as_factory(params.reordering, exec)
            self.permutation = reordering.generate(A)
            if not isinstance(self.permutation, Permutation):
                raise TypeError(f"ScaledReordered: the reordering must generate a gk.matrix.Permutation "
                                f"(gk.reorder.Rcm.build(), ...), not {type(self.permutation).__name__}")
            self.mode = getattr(reordering.parameters.product, "mode", "symmetric")
            A = permute(A, self.permutation, self.mode)  # P (R A C) P^T, or P R A C
        self.system_matrix: Csr = A
        self.inner_operator = generate_preconditioner(params.inner_operator, A, exec, "inner operator",
                                                      initial_guess="provided")
        self._work: tuple[Dense, Dense] | None = None

    def _vectors(self, b: Dense) -> tuple[Dense, Dense]:
        if self._work is None or self._work[0].shape != b.shape or self._work[0].dtype != b.dtype:
            self._work = (b.empty_like(), b.empty_like())
        return self._work

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        exec, P = self.executor, self.permutation
        rhs, y = self._vectors(b)
        t = x.empty_like() if (self.row_scaling is not None or self.col_scaling is not None) and P else None
        # b' = P R b
        self._scale_permute(self.row_scaling, P, b, rhs, t)
        # y0 = P C^-1 x0 (the columns are permuted only by a symmetric reordering)
        self._scale_permute(self.inverse_col_scaling, P if self.mode == "symmetric" else None,
                            x, y, t)
        # y = inner(b')
        self.inner_operator.apply(rhs, y)
        # x = C P^T y
        if P is not None and self.mode == "symmetric":
            exec.run("matrix.dense.permute", y, P.compute_inverse().perm, None, x)
        else:
            x.copy_from(y)
        if self.col_scaling is not None:
            exec.run("matrix.dense.scale_rows", self.col_scaling, x, x)

    def _scale_permute(self, diag: Dense | None, P: Permutation | None, v: Dense, out: Dense,
                       tmp: Dense | None) -> None:
        # out = P D v (either may be absent)
        exec = self.executor
        if diag is not None and P is not None:
            exec.run("matrix.dense.scale_rows", diag, v, tmp)
            exec.run("matrix.dense.permute", tmp, P.perm, None, out)
        elif diag is not None:
            exec.run("matrix.dense.scale_rows", diag, v, out)
        elif P is not None:
            exec.run("matrix.dense.permute", v, P.perm, None, out)
        else:
            out.copy_from(v)
