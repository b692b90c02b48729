"""Jacobi: the batched (block-)Jacobi preconditioner M_i = D_i^-1, D_i the (block) diagonal of
item i (Ginkgo's ``gko::batch::preconditioner::Jacobi``).

The blocks are found once from the shared pattern (the single-system Jacobi's supervariable
agglomeration, on the executor) and are the same for every item; every item's blocks are
inverted in one launch there (the single-system Jacobi's kernel with an item axis), with one
read of the singular-block report. The batched solvers apply M inside their kernel; ``apply``
applies it on its own.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, integer, parameters
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.batch.matrix.checks import check_system_matrix
from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.csr import Csr as SingleCsr
from ginkpy.core.preconditioner.jacobi import keep_blocks

MAX_BLOCK_SIZE = 32


class Jacobi(EnableBuild, BatchLinOp):
    """(Block-)Jacobi for every item of a batch: x_i = D_i^-1 b_i.

    The cheapest batch preconditioner, applied inside the batched solver kernels; a zero
    diagonal entry or a singular block raises ValueError naming the item and the rows.

    Parameters
    ----------
    max_block_size : int, default 32
        1: scalar Jacobi (D_i the diagonal of A_i); 2 to 32: block-Jacobi, the blocks chosen
        from the shared pattern as gk.preconditioner.Jacobi chooses them.

    Examples
    --------
    >>> M = gk.batch.preconditioner.Jacobi.build().with_max_block_size(1)
    >>> solver = gk.batch.solver.Cg.build().with_preconditioner(M).on(exec).generate(A)
    >>> X, info = gk.linalg.batched_cg(matrices, B, M="jacobi")
    """

    kind = "jacobi"  # what the backends' batched kernels dispatch on (a batch preconditioner), not its type

    @parameters
    class Parameters(Parameters):
        max_block_size: int = attrs.field(default=MAX_BLOCK_SIZE, validator=integer(min=1, max=MAX_BLOCK_SIZE))

    def __init__(self, factory: Factory, system_matrix: BatchLinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec, "matrix of the batch Jacobi preconditioner")
        BatchLinOp.__init__(self, exec, A.num_batch_items, A.common_size, A.dtype)
        self.cache: dict = {}  # what a backend derives once for its apply
        csr = A.to_csr()
        n = A.common_size[0]
        if self.parameters.max_block_size == 1:
            block_ptrs, stride = _row_pointers(exec, n), 1
        else:
            pattern = SingleCsr(exec, (n, n), csr.row_ptrs, csr.col_idxs, csr.values[0])
            block_ptrs, stride = exec.run("preconditioner.jacobi.find_blocks", pattern, self.parameters.max_block_size)
        # D_i^-1 of every diagonal block of every item (layout: reference batch jacobi kernels)
        keep_blocks(self, exec.run("batch.preconditioner.jacobi.generate", csr, block_ptrs, stride), block_ptrs,
                    stride, _singular_message)

    @classmethod
    def from_arrays(cls, exec, common_size: tuple[int, int], block_ptrs, row_blocks, blocks) -> "Jacobi":
        """A batch Jacobi from inverse blocks already on ``exec``: ``blocks`` of shape
        (N, num_blocks, stride, stride) in the layout of the reference kernels (which is the
        single-system Jacobi's with a leading item axis), ``block_ptrs`` and ``row_blocks`` as
        the single-system Jacobi holds them. Nothing is copied or checked: this is how a
        generated gk.preconditioner.Jacobi runs inside the batched kernels."""
        self = cls.__new__(cls)
        stride = int(blocks.shape[2])
        EnableBuild.__init__(self, cls.build().with_max_block_size(max(1, min(stride, MAX_BLOCK_SIZE))).on(exec))
        BatchLinOp.__init__(self, exec, blocks.shape[0], common_size, blocks.dtype)
        self.block_stride, self.block_ptrs, self.row_blocks, self.blocks = stride, block_ptrs, row_blocks, blocks
        self.cache, self._conditioning = {}, None
        return self

    @property
    def num_blocks(self) -> int:
        """Diagonal blocks per item (the same for every item)."""
        return int(self.block_ptrs.shape[0]) - 1

    @property
    def conditioning(self) -> np.ndarray | None:
        """Each block's condition number |D|_1 |D^-1|_1 per item, (N, num_blocks) on the host
        (None for a Jacobi made with :meth:`from_arrays`)."""
        return None if self._conditioning is None else self.executor.to_host(self._conditioning)

    @property
    def is_scalar(self) -> bool:
        """True for scalar Jacobi (every block one row)."""
        return self.block_stride == 1

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        # x_i = D_i^-1 b_i
        self.executor.run("batch.preconditioner.jacobi.apply", self, b, x)


def _row_pointers(exec, n: int):
    """0, 1, ..., n on ``exec``: scalar Jacobi's blocks, one per row (made once per size)."""
    key = (id(getattr(exec, "context", exec)), n)
    if key not in _ROW_POINTERS:
        _ROW_POINTERS[key] = exec.from_host(np.arange(n + 1, dtype=INDEX_DTYPE))
    return _ROW_POINTERS[key]


_ROW_POINTERS: dict = {}


def _singular_message(block_ptrs: np.ndarray, first: int, count: int) -> str:
    num_blocks = block_ptrs.size - 1
    i, k = divmod(first, num_blocks)
    start, end = int(block_ptrs[k]), int(block_ptrs[k + 1])
    more = f" (and {count - 1} more blocks)" if count > 1 else ""
    if end - start == 1:
        return (f"batch Jacobi: item {i} has a zero diagonal entry in row {start}{more}, which cannot be "
                f"inverted: use block-Jacobi (a larger max_block_size) or no preconditioner")
    return (f"batch Jacobi: diagonal block {k} (rows {start} to {end - 1}) of item {i} is singular to working "
            f"precision{more}: choose another max_block_size, or no preconditioner")
