"""Isai: the batched incomplete sparse approximate inverse of the ILU(0) factors, M_i =
M_U,i M_L,i with M_L,i ~ L_i^-1 and M_U,i ~ U_i^-1, so that applying it is two sparse products
instead of two triangular solves (Ginkgo's ILU-ISAI, per item; beyond Ginkgo, which prototyped
batched ISAI and does not ship it).

Generation: the batched ILU(0) factors (:class:`ginkpy.core.batch.preconditioner.ilu.Ilu`); the
patterns of M_L and M_U (those of L and U, or of their ``sparsity_power``-th powers) once from
the shared pattern on the host (the single-system ISAI's ``preconditioner.isai.pattern``); then
every row of every item's inverses in one kernel (``batch.preconditioner.isai.generate``), from
its small system T[J, J]^T m = e_i (T the factor, J the row's pattern, (M T)_ij = delta_ij on
J), which is triangular: L's is solved by backward substitution, U's by forward substitution,
reading the factors' entries where the ILU keeps them.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, integer, parameters
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.batch.preconditioner.ilu import Ilu
from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.csr import Csr as SingleCsr
from ginkpy.core.preconditioner.isai_limits import ROW_LIMIT


class Isai(EnableBuild, BatchLinOp):
    """ISAI of every item's ILU(0) factors: x_i = M_U,i (M_L,i b_i).

    Cheaper to apply than :class:`Ilu` (two products, all rows in parallel, where ILU's
    triangular solves go level by level) and a little weaker; for the batched Gmres and
    Bicgstab.

    Parameters
    ----------
    sparsity_power : int, default 1
        k: the inverses take the patterns of L^k and U^k: more entries, closer to ILU,
        costlier to apply.

    Examples
    --------
    >>> M = gk.batch.preconditioner.Isai.build().with_sparsity_power(2)
    >>> solver = gk.batch.solver.Gmres.build().with_preconditioner(M).with_tolerance(1e-8).on(exe).generate(A)
    >>> X, info = gk.linalg.batched_gmres(matrices, B, M="isai")
    """

    kind = "isai"  # what the backends' batched kernels dispatch on (a batch preconditioner), not its type

    @parameters
    class Parameters(Parameters):
        sparsity_power: int = attrs.field(default=1, validator=integer(min=1))

    def __init__(self, factory: Factory, system_matrix: Any) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        ilu = Ilu.build().on(exec).generate(system_matrix)
        BatchLinOp.__init__(self, exec, ilu.num_batch_items, ilu.common_size, ilu.dtype)
        n = ilu.common_size[0]
        host = exec.host
        # symbolic, once: the patterns of M_L and M_U
        ptrs, cols = exec.to_host(ilu.row_ptrs, ilu.col_idxs)
        pattern = SingleCsr(host, (n, n), ptrs, cols, np.ones(cols.size, self.dtype))
        (l_ptrs, l_cols), (u_ptrs, u_cols) = (host.run("preconditioner.isai.pattern", pattern, kind,
                                                       self.parameters.sparsity_power)[1] for kind in ("lower", "upper"))
        sizes = np.concatenate([np.diff(l_ptrs), np.diff(u_ptrs)])
        if sizes.size and sizes.max() > ROW_LIMIT:
            raise ValueError(f"batch Isai: a row of the approximate inverses would have {sizes.max()} entries, more "
                             f"than {ROW_LIMIT} (its small system grows with the square): lower the sparsity power")
        #: M_L's row pointers (n + 1), then M_U's; M_L's column indices, then M_U's; per item the
        #: values of M_L (the first ``lower_nnz``), then of M_U
        self.row_ptrs = exec.from_host(np.concatenate([l_ptrs, u_ptrs]).astype(INDEX_DTYPE))
        self.col_idxs = exec.from_host(np.concatenate([l_cols, u_cols]).astype(INDEX_DTYPE))
        self.lower_nnz = int(l_cols.size)
        self.values = exec.alloc((self.num_batch_items, l_cols.size + u_cols.size), self.dtype)
        # numeric: every row of every item's M_L and M_U from its small triangular system
        row = exec.run("batch.preconditioner.isai.generate", ilu, self)
        if row >= 0:
            item, local = divmod(row, 2 * n)
            raise ValueError(f"batch Isai: row {local % n} of item {item}'s approximate inverse of its "
                             f"{'lower' if local < n else 'upper'} factor is not finite (the ILU(0) factors of that "
                             f"item are nearly singular): use gk.batch.preconditioner.Ilu or Jacobi for this batch")

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = M_U,i (M_L,i b_i)
        self.executor.run("batch.preconditioner.isai.apply", self, b, x)

