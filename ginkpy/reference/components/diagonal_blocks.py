"""Reference of the diagonal-block inversion that Jacobi and the batch Jacobi share (the twin of
opencl/components/diagonal_blocks.cl): every diagonal block of every item inverted, with its
condition number and a singularity flag, vectorized over all blocks (batched LAPACK).

A block D (rows and columns block_ptrs[k] to block_ptrs[k + 1] - 1) is first equilibrated,
E = R D C with R and C diagonal scalings to a largest entry of 1 per row and then per column,
so badly scaled blocks are not mistaken for singular ones. D is singular when E has a zero row
or column or a reciprocal condition number 1 / (|E|_1 |E^-1|_1) below the value type's
epsilon (as SciPy's ill-conditioning warning), or when D^-1 = C E^-1 R is not finite in the
value type. ``conditioning`` is Ginkgo's: |D|_1 |D^-1|_1 (infinite for a singular block).

Layout: ``blocks[i, k, j, r]`` is entry (r, j) of the inverse of block k of item i (each block
stored transposed, padded with zeros to ``stride``, the largest block).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.csr import INDEX_DTYPE


def invert_blocks(row_ptrs, col_idxs, values, block_ptrs, stride):
    """(blocks, row_blocks, conditioning, singular) of the items whose values (N, nnz) share the
    CSR pattern (row_ptrs, col_idxs): inverse blocks (N, num_blocks, stride, stride) in the
    values' type, the block of each row, |D|_1 |D^-1|_1 (N, num_blocks) and a singular flag."""
    N = values.shape[0]
    n = row_ptrs.size - 1
    sizes = np.diff(block_ptrs)
    num_blocks = sizes.size
    row_blocks = np.repeat(np.arange(num_blocks, dtype=INDEX_DTYPE), sizes)
    # D_i: the entries whose row and column lie in the same block, identity padding
    blocks = np.zeros((N, num_blocks, stride, stride), np.result_type(values.dtype, np.float64))
    pad = np.arange(stride) >= sizes[:, None]
    blocks[:, np.arange(num_blocks)[:, None], np.arange(stride), np.arange(stride)] = pad
    rows = np.repeat(np.arange(n), np.diff(row_ptrs))
    block = row_blocks[rows]
    start = block_ptrs[block]
    inside = (col_idxs >= start) & (col_idxs < block_ptrs[block + 1])
    blocks[:, block[inside], (rows - start)[inside], (col_idxs - start)[inside]] = values[:, inside]
    blocks = blocks.reshape(N * num_blocks, stride, stride)
    # the norms are the blocks' own (padding left out)
    real = np.tile(~pad[:, :, None] & ~pad[:, None, :], (N, 1, 1))
    inverse, singular = _invert(blocks, real, np.finfo(values.dtype).eps)
    with np.errstate(over="ignore", invalid="ignore"):
        conditioning = _norm1(blocks * real) * _norm1(inverse * real)
        inverse = inverse.astype(values.dtype)
    singular |= ~np.isfinite(inverse).all(axis=(1, 2))  # beyond the value type's range
    conditioning = np.where(singular, np.inf, conditioning).astype(real_dtype(values.dtype))
    inverse = inverse.reshape(N, num_blocks, stride, stride)
    inverse[:, pad] = 0
    inverse.transpose(0, 1, 3, 2)[:, pad] = 0
    return (np.ascontiguousarray(inverse.transpose(0, 1, 3, 2)), row_blocks,
            conditioning.reshape(N, num_blocks), singular.reshape(N, num_blocks))


def _invert(blocks, real, eps):
    """Inverses of (m, stride, stride) identity-padded blocks by LU with partial pivoting (LAPACK,
    batched) of the equilibrated blocks, in float64 (complex128), and the singular flags
    (``real``: the entries inside each block)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        row = np.abs(blocks).max(axis=2, initial=0)
        row_scale = np.where(row == 0, 1, 1 / np.where(row == 0, 1, row))
        col = np.abs(row_scale[:, :, None] * blocks).max(axis=1, initial=0)
        col_scale = 1 / np.where(col == 0, 1, col)
        scaled = row_scale[:, :, None] * blocks * col_scale[:, None, :]
        zero = (row == 0).any(axis=1) | (col == 0).any(axis=1)
        scaled[zero] = np.eye(blocks.shape[1])
        try:
            inverse = np.linalg.inv(scaled)
        except np.linalg.LinAlgError:  # an exactly singular block: set aside first
            exact = np.linalg.slogdet(scaled)[0] == 0
            zero |= exact
            scaled[exact] = np.eye(blocks.shape[1])
            inverse = np.linalg.inv(scaled)
        singular = zero | ~(1 / (_norm1(scaled * real) * _norm1(inverse * real)) >= eps)
        # D^-1 = C E^-1 R
        return col_scale[:, :, None] * inverse * row_scale[:, None, :], singular


def _norm1(matrices):
    """The 1-norm (largest column sum) of each matrix of a batch."""
    return np.abs(matrices).sum(axis=1).max(axis=1, initial=0)


def first_singular(singular: np.ndarray) -> np.ndarray:
    """[first flagged block (item-major over the flags' flat order, 2^31 - 1 if none), how many]:
    what the device kernels report through atomics."""
    flat = np.flatnonzero(singular.reshape(-1))
    return np.array([flat[0] if flat.size else np.iinfo(np.int32).max, flat.size], dtype=np.int32)


def block_diagonal(block_ptrs, row_blocks, blocks):
    """The inverse blocks (N, num_blocks, stride, stride) of N items as one SciPy CSR matrix,
    block-diagonal over the items (item i's rows at i n to i n + n - 1): an apply to all items
    is one sparse product."""
    N, stride = blocks.shape[0], blocks.shape[2]
    n = row_blocks.size
    sizes = np.diff(block_ptrs)
    start = block_ptrs[row_blocks]
    lengths = sizes[row_blocks]
    # row r of block k holds entries (r, start_k + j), j < size_k: blocks[i, k, j, r - start_k]
    j = np.arange(stride)
    inside = j < lengths[:, None]
    rows, js = np.nonzero(inside)
    cols = start[rows] + js
    data = blocks[:, row_blocks[rows], js, rows - start[rows]]  # (N, entries)
    offsets = (np.arange(N) * n)[:, None]
    row_ptrs = np.zeros(N * n + 1, dtype=np.int64)
    np.cumsum(np.tile(lengths, N), out=row_ptrs[1:])
    return sp.csr_matrix((data.reshape(-1), (cols[None, :] + offsets).reshape(-1), row_ptrs), shape=(N * n, N * n))
