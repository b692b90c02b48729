"""Isai: the batched incomplete sparse approximate inverse of the ILU(0) factors, M_i =
M_U,i M_L,i with M_L,i ~ L_i^-1 and M_U,i ~ U_i^-1, so that applying it is two sparse products
instead of two triangular solves (Ginkgo's ILU-ISAI, per item; beyond Ginkgo, which prototyped
batched ISAI and does not ship it).

Generation: the batched ILU(0) factors (:class:`ginkpy.core.batch.preconditioner.ilu.Ilu`); the
patterns of M_L and M_U (those of L and U, or of their ``sparsity_power``-th powers) once from
the shared pattern on the host; then every row of every item's inverses from its small dense
system T[J, J]^T m = e_i (T the factor, J the row's pattern), by the single-system ISAI kernel
``preconditioner.isai.generate_inverse`` run once over all items, on the executor: their factors
side by side as one block-diagonal matrix (item 0's L, item 0's U, item 1's L, ...), whose
inverse's values are then each item's M_L and M_U values in a row of ``values``.
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
from ginkpy.core.preconditioner.isai import ROW_LIMIT


class Isai(EnableBuild, BatchLinOp):
    """ISAI of every item's ILU(0) factors: x_i = M_U,i (M_L,i b_i).

    Cheaper to apply than :class:`Ilu` (two products, all rows in parallel, where ILU's
    triangular solves go level by level) and a little weaker; for the batched Gmres and
    Bicgstab. ``sparsity_power`` (default 1) k takes the patterns of L^k and U^k for the
    inverses: more entries, closer to ILU, costlier to apply.

    Examples
    --------
    >>> M = gk.batch.preconditioner.Isai.build().with_sparsity_power(2)
    >>> solver = gk.batch.solver.Gmres.build().with_preconditioner(M).with_tolerance(1e-8).on(exe).generate(A)
    >>> X, info = gk.linalg.batched_gmres(matrices, B, M="isai")
    """

    @parameters
    class Parameters(Parameters):
        sparsity_power: int = attrs.field(default=1, validator=integer(min=1))

    def __init__(self, factory: Factory, system_matrix: Any) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        ilu = Ilu.build().on(exec).generate(system_matrix)
        BatchLinOp.__init__(self, exec, ilu.num_batch_items, ilu.common_size, ilu.dtype)
        N, n = ilu.num_batch_items, ilu.common_size[0]
        host = exec.host
        ptrs, cols = exec.to_host(ilu.row_ptrs, ilu.col_idxs)
        rows = np.repeat(np.arange(n), np.diff(ptrs))
        # symbolic, once: the factors' patterns, where their entries sit in the ILU's values (the
        # unit diagonal of L at -1), and the patterns of the inverses
        pattern = SingleCsr(host, (n, n), ptrs, cols, np.ones(cols.size, self.dtype))
        factors, inverses = [], []
        for kind, inside in (("lower", cols <= rows), ("upper", cols >= rows)):
            where = np.flatnonzero(inside)
            if kind == "lower":
                where = np.where(cols[where] == rows[where], -1, where)
            t_ptrs = np.concatenate([[0], np.cumsum(np.bincount(rows[inside], minlength=n))])
            factors.append((t_ptrs, cols[inside], where))
            _, inverse, _ = host.run("preconditioner.isai.pattern", pattern, kind, self.parameters.sparsity_power)
            inverses.append(inverse)
        sizes = np.concatenate([np.diff(inverses[0][0]), np.diff(inverses[1][0])])
        if sizes.size and sizes.max() > ROW_LIMIT:
            raise ValueError(f"batch Isai: a row of the approximate inverses would have {sizes.max()} entries, more "
                             f"than {ROW_LIMIT} (its dense system grows with the square): lower the sparsity power")
        # the factors of every item, side by side (N, nnz_L + nnz_U)
        positions = exec.from_host(np.concatenate([factors[0][2], factors[1][2]]).astype(INDEX_DTYPE))
        system_values = exec.alloc((N, factors[0][2].size + factors[1][2].size), self.dtype)
        exec.run("batch.preconditioner.isai.gather_factors", ilu.values, positions, system_values)
        system = SingleCsr(exec, (2 * N * n,) * 2, *_block_diagonal(exec, N, n, factors), system_values.reshape(-1))
        (self.lower_row_ptrs, self.lower_col_idxs), (self.upper_row_ptrs, self.upper_col_idxs) = \
            ((exec.from_host(p.astype(INDEX_DTYPE)), exec.from_host(c.astype(INDEX_DTYPE))) for p, c in inverses)
        self.lower_nnz = int(inverses[0][1].size)
        self.values = exec.alloc((N, self.lower_nnz + int(inverses[1][1].size)), self.dtype)
        inverse = SingleCsr(exec, system.shape, *_block_diagonal(exec, N, n, inverses), self.values.reshape(-1))
        # every row of every item's M_L and M_U from its small system
        row = exec.run("preconditioner.isai.generate_inverse", system, inverse, False)
        if row >= 0:
            item, local = divmod(row, 2 * n)
            raise ValueError(f"batch Isai: the small system of row {local % n} of item {item}'s "
                             f"{'lower' if local < n else 'upper'} factor is singular (its ILU(0) factors overflow "
                             f"or are not finite): use gk.batch.preconditioner.Ilu or Jacobi for this batch")
        self.cache: dict[str, Any] = {}  # what a backend derives once

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = M_U,i (M_L,i b_i)
        self.executor.run("batch.preconditioner.isai.apply", self, b, x)


def _block_diagonal(exec, N: int, n: int, patterns) -> tuple:
    """Row pointers and column indices (on ``exec``) of the block-diagonal matrix whose blocks are
    the two patterns, (row_ptrs, col_idxs, ...) each, in turn for each of the N items."""
    (p0, c0, *_), (p1, c1, *_) = patterns
    lengths = np.tile(np.concatenate([np.diff(p0), np.diff(p1)]), N)
    row_ptrs = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    offsets = np.arange(N, dtype=np.int64)[:, None] * (2 * n)
    col_idxs = (np.concatenate([c0, c1 + n])[None, :] + offsets).ravel()
    for what, array in (("row pointers", row_ptrs), ("column indices", col_idxs)):
        if array.size and array.max() > np.iinfo(np.int32).max:
            raise ValueError(f"batch Isai: the batch is too large for int32 {what} of its generation "
                             f"({array.max()}); generate it for fewer items at a time")
    return exec.from_host(row_ptrs.astype(INDEX_DTYPE)), exec.from_host(col_idxs.astype(INDEX_DTYPE))
