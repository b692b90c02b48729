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
    merged block has at most ``max_block_size`` rows. The greedy merge is a chain of jumps
    (from a block's first supervariable to the first one that no longer fits), followed from
    the first supervariable by binary lifting: a few whole-array steps, no loop over blocks.
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
    # supervariables: runs of rows with the same pattern, cut every max_block_size rows
    run_start = np.maximum.accumulate(np.where(same, 0, np.arange(n)))
    starts = np.r_[np.flatnonzero((np.arange(n) - run_start) % max_block_size == 0), n]
    count = starts.size - 1
    # jump[s]: the supervariable after the block that starts at supervariable s (count: the end)
    jump = np.searchsorted(starts, starts[:-1] + max_block_size, side="right") - 1
    jump = np.r_[np.maximum(jump, np.arange(1, count + 1)), count]
    # the block starts are 0, jump[0], jump[jump[0]], ...: step i of the chain for every i at once
    steps = np.arange(count)
    position = np.zeros(count, dtype=np.int64)
    power = jump
    for bit in range(max(count, 1).bit_length()):
        take = (steps >> bit) & 1 == 1
        position[take] = power[position[take]]
        power = power[power]
    first = np.unique(position[position < count])
    return np.r_[starts[first], n].astype(INDEX_DTYPE)


def invert_diagonal(exec, a, inverse):
    # inverse = 1 / diag(A); an entry that is 0, missing or too small to invert (1/d not finite)
    # becomes 1; returns how many did
    d = _diagonal(a)
    with np.errstate(divide="ignore", over="ignore"):
        inv = np.where(d != 0, 1 / d, np.inf).astype(a.dtype)
    bad = ~np.isfinite(inv)
    inv[bad] = 1
    inverse.values[:, 0] = inv
    return int(bad.sum())


def _diagonal(a):
    n = min(a.shape)
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.row_ptrs))
    on = np.flatnonzero((rows == a.col_idxs) & (rows < n))
    d = np.zeros(n, dtype=a.dtype)
    np.add.at(d, rows[on], a.values[on])
    return d


def generate(exec, a, block_ptrs):
    """The inverse diagonal blocks of ``a`` (in a's value type, transposed), ``row_blocks``, and
    a flag per block that is set where the block is singular to working precision."""
    n = a.shape[0]
    sizes = np.diff(block_ptrs)
    stride = int(sizes.max(initial=1))
    row_blocks = np.repeat(np.arange(sizes.size, dtype=INDEX_DTYPE), sizes)
    # D_i: the entries of a whose row and column lie in the same block, identity padding
    blocks = np.zeros((sizes.size, stride, stride), np.result_type(a.dtype, np.float64))
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
    """Inverses by LU with partial pivoting (LAPACK, batched), in float64 (complex128 for
    complex blocks).

    Each block D is first equilibrated, E = R D C with R and C diagonal scalings to a largest
    entry of 1 per row and then per column, so badly scaled blocks are not mistaken for
    singular ones. A block is singular when E is (a zero row or column included) or its
    reciprocal condition number 1 / (|E|_1 |E^-1|_1) is below ``eps``, as for SciPy's
    ill-conditioning warning.
    """
    m = blocks.shape[1]
    row = np.abs(blocks).max(axis=2, initial=0)
    row_scale = 1 / np.where(row == 0, 1, row)
    col = np.abs(row_scale[:, :, None] * blocks).max(axis=1, initial=0)
    col_scale = 1 / np.where(col == 0, 1, col)
    scaled = row_scale[:, :, None] * blocks * col_scale[:, None, :]
    singular = np.linalg.slogdet(scaled)[0] == 0
    scaled[singular] = np.eye(m)
    inverse = np.linalg.inv(scaled)
    singular |= ~(1 / (_norm1(scaled) * _norm1(inverse)) >= eps)
    # D^-1 = C E^-1 R
    return col_scale[:, :, None] * inverse * row_scale[:, None, :], singular


def _norm1(matrices):
    """The 1-norm (largest column sum) of each matrix of a batch."""
    return np.abs(matrices).sum(axis=1).max(axis=1, initial=0)


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
    x.values[...] = jacobi.blocks.reshape(-1, 1) * b.values


def scalar_apply(exec, alpha, jacobi, b, beta, x):
    x.values[...] = alpha.values[0] * (jacobi.blocks.reshape(-1, 1) * b.values) + beta.values[0] * x.values


def simple_apply(exec, jacobi, b, x):
    x.values[...] = _block_times(jacobi, b)


def apply(exec, alpha, jacobi, b, beta, x):
    x.values[...] = alpha.values[0] * _block_times(jacobi, b) + beta.values[0] * x.values
