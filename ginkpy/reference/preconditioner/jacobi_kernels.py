"""Reference kernels of Jacobi: finding the diagonal blocks, inverting them, applying the inverse.

The inverse blocks are stored as an array of shape (num_blocks, stride, stride), stride the
size of the largest block, each block transposed (``blocks[i, j, r]`` is entry (r, j) of the
inverse of block i), so that for each j the rows of a block read consecutive addresses (one
work-item per row on a device reads coalesced). Block i covers rows block_ptrs[i] to
block_ptrs[i + 1] - 1; its padding is zero. ``row_blocks[r]`` is the block of row r. Scalar
Jacobi is stride 1.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.matrix.csr import INDEX_DTYPE


def find_blocks(exec, a, max_block_size):
    """Block pointers by Ginkgo's supervariable agglomeration.

    Consecutive rows with the same column pattern form a supervariable of at most
    ``max_block_size`` rows; neighbouring supervariables are then merged greedily while the
    merged block has at most ``max_block_size`` rows.
    """
    n = a.shape[0]
    if n == 0:
        return np.zeros(1, dtype=INDEX_DTYPE)
    row_ptrs, col_idxs = a.row_ptrs, a.col_idxs
    lengths = np.diff(row_ptrs)
    # same[i]: row i has the same column pattern as row i - 1
    same = np.zeros(n, dtype=bool)
    same[1:] = lengths[1:] == lengths[:-1]
    rows = np.repeat(np.arange(n), lengths)
    entries = np.flatnonzero(same[rows])
    differ = col_idxs[entries] != col_idxs[entries - lengths[rows[entries]]]
    same[rows[entries[differ]]] = False
    # supervariables: runs of rows with the same pattern, at most max_block_size rows each
    natural = [0]
    size = 1
    for i in range(1, n):
        if same[i] and size < max_block_size:
            size += 1
        else:
            natural.append(i)
            size = 1
    natural.append(n)
    # agglomerate neighbouring supervariables while the block fits
    block_ptrs = [0]
    for start, end in zip(natural[1:-1], natural[2:]):
        if end - block_ptrs[-1] > max_block_size:
            block_ptrs.append(start)
    block_ptrs.append(n)
    return np.array(block_ptrs, dtype=INDEX_DTYPE)


def generate(exec, a, block_ptrs):
    """The inverse diagonal blocks of ``a`` (in a's value type, transposed), ``row_blocks``, and
    a flag per block that is set where the block is singular to working precision."""
    n = a.shape[0]
    sizes = np.diff(block_ptrs)
    stride = int(sizes.max(initial=1))
    row_blocks = np.repeat(np.arange(sizes.size, dtype=INDEX_DTYPE), sizes)
    # D_i: the entries of a whose row and column lie in the same block, identity padding
    blocks = np.zeros((sizes.size, stride, stride))
    pad = np.arange(stride) >= sizes[:, None]
    blocks[:, np.arange(stride), np.arange(stride)] = pad
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    cols = a.col_idxs
    start = block_ptrs[row_blocks[rows]]
    inside = (cols >= start) & (cols < block_ptrs[row_blocks[rows] + 1])
    blocks[row_blocks[rows[inside]], (rows - start)[inside], (cols - start)[inside]] = a.values[inside]
    inverse, singular = _invert(blocks, np.finfo(a.dtype).eps)
    inverse[pad] = 0
    inverse.transpose(0, 2, 1)[pad] = 0
    return np.ascontiguousarray(inverse.transpose(0, 2, 1), dtype=a.dtype), row_blocks, singular


def _invert(blocks, eps):
    """Gauss-Jordan elimination with partial pivoting on each m x m block, in float64.

    Rows are first scaled to a largest entry of 1; a block is singular when a pivot is at
    most m * eps times the largest (scaled) entry of its column, or when a row is zero.
    """
    num_blocks, m, _ = blocks.shape
    row_max = np.abs(blocks).max(axis=2, initial=0)
    singular = (row_max == 0).any(axis=1)
    row_max[row_max == 0] = 1
    lu = blocks / row_max[:, :, None]
    threshold = m * eps * np.abs(lu).max(axis=1, initial=0)
    inverse = np.broadcast_to(np.eye(m), blocks.shape).copy()
    ids = np.arange(num_blocks)
    for j in range(m):
        # swap row j with the row of the largest |lu[:, j]| at or below it
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        for mat in (lu, inverse):
            mat[ids, j], mat[ids, p] = mat[ids, p], mat[ids, j].copy()
        pivot = lu[:, j, j]
        singular |= np.abs(pivot) <= threshold[:, j]
        pivot = np.where(singular, 1.0, pivot)
        lu[:, j] /= pivot[:, None]
        inverse[:, j] /= pivot[:, None]
        # eliminate column j from every other row
        factor = lu[:, :, j].copy()
        factor[:, j] = 0
        lu -= factor[:, :, None] * lu[:, j, None, :]
        inverse -= factor[:, :, None] * inverse[:, j, None, :]
    # (S D)^-1 = D^-1 S^-1, S the row scaling: D^-1 = (S D)^-1 S
    return inverse / row_max[:, None, :], singular


def _block_times(jacobi, b):
    """D^-1 b: each row's row of its inverse block times the block's part of b."""
    n, m = b.shape[0], jacobi.block_stride
    row_blocks = jacobi.row_blocks
    start = jacobi.block_ptrs[row_blocks]
    cols = start[:, None] + np.arange(m)
    inside = cols < jacobi.block_ptrs[row_blocks + 1][:, None]
    b_blocks = np.where(inside[:, :, None], b.values[np.minimum(cols, n - 1)], 0)
    inverse_rows = jacobi.blocks[row_blocks, :, np.arange(n) - start]
    return np.einsum("rj,rjk->rk", inverse_rows, b_blocks)


def simple_scalar_apply(exec, jacobi, b, x):
    x.values[...] = jacobi.blocks[:, 0] * b.values


def scalar_apply(exec, alpha, jacobi, b, beta, x):
    x.values[...] = alpha.values[0] * (jacobi.blocks[:, 0] * b.values) + beta.values[0] * x.values


def simple_apply(exec, jacobi, b, x):
    x.values[...] = _block_times(jacobi, b)


def apply(exec, alpha, jacobi, b, beta, x):
    x.values[...] = alpha.values[0] * _block_times(jacobi, b) + beta.values[0] * x.values
