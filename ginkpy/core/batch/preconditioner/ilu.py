"""Ilu: the batched incomplete-LU preconditioner, ILU(0) of every item on the shared pattern,
M_i = L_i U_i applied as x_i = U_i^-1 (L_i^-1 b_i). Beyond Ginkgo, which prototyped batched
ILU and does not ship it.

ILU(0) keeps the sparsity pattern: L_i's strictly lower entries (its diagonal is 1) and U_i's
upper entries are stored together in the items' pattern, ``values`` (N, nnz). The symbolic
part (the diagonal positions) is found once from the shared pattern on the host; the numeric
factorization of all items runs in one kernel (``batch.preconditioner.ilu.factorize``: on
OpenCL one work-item per item, on the reference executor vectorized over the items). The
batched solvers apply M inside their kernel: two triangular solves of the item's factors by
its work-group (level-scheduled on a GPU, in row order by a CPU work-item).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix.checks import check_system_matrix
from ginkpy.core.batch.multi_vector import MultiVector


class Ilu(EnableBuild, BatchLinOp):
    """ILU(0) of every item of a batch: x_i = U_i^-1 L_i^-1 b_i.

    Use it with the batched Gmres and Bicgstab (and with Cg where every item is symmetric
    positive definite and the factors stay positive, as IC(0) would: ILU(0) of a symmetric
    item is L D L^T, a symmetric M). It needs a stored, nonzero diagonal in every row of the
    shared pattern; an item whose elimination meets a zero pivot raises a ValueError naming the
    item and the row (batch Jacobi does not eliminate and may still work there).

    Examples
    --------
    >>> A = gk.batch.matrix.Csr.from_scipy(exe, matrices)
    >>> M = gk.batch.preconditioner.Ilu.build()
    >>> solver = gk.batch.solver.Bicgstab.build().with_preconditioner(M).with_tolerance(1e-8).on(exe).generate(A)
    """

    kind = "ilu"  # what the backends' batched kernels dispatch on (a batch preconditioner), not its type

    @parameters
    class Parameters(Parameters):
        """No parameters: ILU(0) on the items' own pattern."""

    def __init__(self, factory: Factory, system_matrix: Any) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        name = type(self).__name__
        A = check_system_matrix(system_matrix, exec, f"matrix of the batch {name} preconditioner")
        BatchLinOp.__init__(self, exec, A.num_batch_items, A.common_size, A.dtype)
        csr = A.to_csr()
        host = exec.host
        # symbolic, once: where each row's diagonal entry sits in the shared pattern
        diag, missing = host.run("batch.preconditioner.ilu.diagonal_positions", *exec.to_host(csr.row_ptrs,
                                                                                             csr.col_idxs))
        if missing >= 0:
            raise ValueError(f"batch {name}: row {missing} has no stored diagonal entry in the shared pattern, so "
                             f"ILU(0) has no pivot there; store the diagonal (an explicit zero is not enough "
                             f"either), or use no preconditioner")
        self.row_ptrs, self.col_idxs, self.diag = csr.row_ptrs, csr.col_idxs, exec.from_host(diag)
        self.values = exec.copy(csr.values)
        self.cache: dict[str, Any] = {}  # what a backend derives once (OpenCL: the level schedules)
        # numeric, every item at once: L_i and U_i in place of A_i's values
        bad_rows = np.asarray(exec.run("batch.preconditioner.ilu.factorize", self))
        if (bad_rows >= 0).any():
            items = np.flatnonzero(bad_rows >= 0)
            more = f" (and {items.size - 1} more items)" if items.size > 1 else ""
            raise ValueError(f"batch {name}: ILU(0) of item {int(items[0])} breaks down: the pivot of row "
                             f"{int(bad_rows[items[0]])} is zero or not finite{more}; that item has no ILU(0) "
                             f"factorization in this row order: use gk.batch.preconditioner.Jacobi for this batch")

    @property
    def nnz(self) -> int:
        """Stored entries of the factors per item (those of the pattern)."""
        return int(self.values.shape[1])

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = U_i^-1 (L_i^-1 b_i)
        self.executor.run("batch.preconditioner.ilu.apply", self, b, x)
