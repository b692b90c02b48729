"""Jacobi: the block-diagonal preconditioner M = D^-1, D the (block) diagonal of A.

Generation runs once on the host with the reference kernels (find the blocks, invert each
with partial pivoting) and copies the inverse blocks to the executor; apply is a kernel there.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import check_system_matrix

MAX_BLOCK_SIZE = 32


class Jacobi(EnableBuild, LinOp):
    """(Block-)Jacobi preconditioner: x = D^-1 b.

    ``max_block_size`` 1 is scalar Jacobi (D is the diagonal of A). 2 to 32 is block-Jacobi
    with Ginkgo's supervariable agglomeration: consecutive rows with the same sparsity pattern
    form a supervariable (of at most ``max_block_size`` rows), and neighbouring supervariables
    merge while the block stays within ``max_block_size`` rows. ``block_pointers`` (row
    offsets 0 = p_0 < p_1 < ... < p_m = n) gives the blocks instead.

    Generation runs on the host once: A is copied there, each diagonal block is inverted with
    partial pivoting, and the inverses move to the executor. A zero diagonal entry or a block
    singular to working precision raises ValueError naming it.
    """

    @parameters
    class Parameters(Parameters):
        max_block_size: int = MAX_BLOCK_SIZE
        block_pointers: Any = None

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        max_block_size = _check_max_block_size(self.parameters.max_block_size)
        host = exec.host
        A = _host_csr(system_matrix, host)
        exec.check_dtype(A.dtype)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        if self.parameters.block_pointers is None:
            block_ptrs = host.run("preconditioner.jacobi.find_blocks", A, max_block_size)
        else:
            block_ptrs = _check_block_pointers(self.parameters.block_pointers, A.shape[0], max_block_size)
        # D_i^-1 for each diagonal block D_i, padded to the largest block (layout: reference kernels)
        blocks, row_blocks, singular = host.run("preconditioner.jacobi.generate", A, block_ptrs)
        if singular.any():
            raise ValueError(_singular_message(block_ptrs, np.flatnonzero(singular)))
        self.block_stride = blocks.shape[1]
        self.block_ptrs = exec.from_host(block_ptrs)
        self.row_blocks = exec.from_host(row_blocks)
        self.blocks = exec.from_host(blocks)

    @property
    def num_blocks(self) -> int:
        """Number of diagonal blocks."""
        return int(self.block_ptrs.shape[0]) - 1

    @property
    def block_pointers(self) -> np.ndarray:
        """First row of each block, then n (a host copy)."""
        return self.executor.to_host(self.block_ptrs)

    def transpose(self) -> "Jacobi":
        """The Jacobi preconditioner of A^T: each inverse block transposed (once, through the
        host; scalar Jacobi is its own transpose). Bicg uses it for its shadow system."""
        if self._is_scalar:
            return self
        out = copy.copy(self)
        out._loggers = []
        out.blocks = self.executor.from_host(np.ascontiguousarray(self.executor.to_host(self.blocks).swapaxes(1, 2)))
        return out

    @property
    def inverse_diagonal(self) -> Dense | None:
        """D^-1 as an n x 1 Dense for scalar Jacobi (solvers apply it inside their own kernels),
        None for block-Jacobi."""
        if not self._is_scalar:
            return None
        return Dense(self.executor, self.blocks.reshape(self.shape[0], 1))

    @property
    def _is_scalar(self) -> bool:
        return self.block_stride <= 1

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = D^-1 b
        kernel = "simple_scalar_apply" if self._is_scalar else "simple_apply"
        self.executor.run(f"preconditioner.jacobi.{kernel}", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha D^-1 b + beta x
        kernel = "scalar_apply" if self._is_scalar else "apply"
        self.executor.run(f"preconditioner.jacobi.{kernel}", alpha, self, b, beta, x)


def _host_csr(A: Any, host) -> Csr:
    """A as a checked Csr on the host: square, finite, of a supported value type."""
    if isinstance(A, LinOp) and not isinstance(A, (Csr, Dense)):
        if not hasattr(A, "to_csr"):
            raise TypeError(f"Jacobi needs a matrix (gk.matrix.Csr, Dense or a format with to_csr()), "
                            f"not {type(A).__name__}")
        A = A.to_csr()
    A = check_system_matrix(A, host, "matrix of the Jacobi preconditioner")
    return Csr.from_dense(A) if isinstance(A, Dense) else A


def _check_max_block_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_BLOCK_SIZE:
        raise ValueError(f"max_block_size must be an integer from 1 (scalar Jacobi) to {MAX_BLOCK_SIZE}, "
                         f"got {value!r}")
    return int(value)


def _check_block_pointers(value: Any, n: int, max_block_size: int) -> np.ndarray:
    ptrs = np.asarray(value)
    if ptrs.ndim != 1 or ptrs.dtype.kind not in "iu" or ptrs.size < 1 + (n > 0):
        raise ValueError(f"block_pointers must be a 1-D sequence of integer row offsets "
                         f"[0, p_1, ..., {n}], got {value!r}")
    sizes = np.diff(ptrs)
    if ptrs[0] != 0 or ptrs[-1] != n or (sizes <= 0).any():
        raise ValueError(f"block_pointers must rise strictly from 0 to the number of rows {n}, got {value!r}")
    if (sizes > max_block_size).any():
        i = int(np.argmax(sizes > max_block_size))
        raise ValueError(f"block {i} (rows {ptrs[i]} to {ptrs[i + 1] - 1}) has {sizes[i]} rows, more than "
                         f"max_block_size {max_block_size}: raise max_block_size (at most {MAX_BLOCK_SIZE}) "
                         f"or split the block")
    return ptrs.astype(INDEX_DTYPE)


def _singular_message(block_ptrs: np.ndarray, bad: np.ndarray) -> str:
    i = int(bad[0])
    start, end = int(block_ptrs[i]), int(block_ptrs[i + 1])
    more = f" (and {bad.size - 1} more blocks)" if bad.size > 1 else ""
    if end - start == 1:
        return (f"Jacobi: the diagonal entry of row {start} is zero{more}, so it cannot be inverted: "
                f"use block-Jacobi (a larger max_block_size) so that the row joins a block, "
                f"or another preconditioner")
    return (f"Jacobi: diagonal block {i} (rows {start} to {end - 1}) is singular to working precision{more}: "
            f"choose other block_pointers or max_block_size, or another preconditioner")
