"""Reference kernels of the batch Jacobi: inverting every item's diagonal blocks (on the host),
and applying them.

The inverse blocks have shape (N, num_blocks, stride, stride), stride the size of the largest
block, each block transposed as the single-system Jacobi stores it (``blocks[i, k, j, r]`` is
entry (r, j) of the inverse of block k of item i), padding zero. Scalar Jacobi is stride 1:
``blocks[i, r, 0, 0]`` = 1 / a_i(r, r).
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.matrix.csr import INDEX_DTYPE


def generate(exec, a, block_ptrs):
    """The inverse diagonal blocks of every item of the batch Csr ``a``, ``row_blocks`` (the
    block of each row) and a (N, num_blocks) flag set where a block is singular."""
    N, n = a.num_batch_items, a.common_size[0]
    sizes = np.diff(block_ptrs)
    stride = int(sizes.max(initial=1))
    row_blocks = np.repeat(np.arange(sizes.size, dtype=INDEX_DTYPE), sizes)
    # D_i: the entries whose row and column lie in the same block, identity padding
    blocks = np.zeros((N, sizes.size, stride, stride), np.result_type(a.dtype, np.float64))
    pad = np.arange(stride) >= sizes[:, None]
    blocks[:, np.arange(sizes.size)[:, None], np.arange(stride), np.arange(stride)] = pad
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    cols = a.col_idxs
    block = row_blocks[rows]
    start = block_ptrs[block]
    inside = (cols >= start) & (cols < block_ptrs[block + 1])
    blocks[:, block[inside], (rows - start)[inside], (cols - start)[inside]] = a.values[:, inside]
    inverse, singular = _invert(blocks, np.finfo(a.dtype).eps)
    inverse[:, pad] = 0
    inverse.transpose(0, 1, 3, 2)[:, pad] = 0
    with np.errstate(over="ignore"):
        inverse = np.ascontiguousarray(inverse.transpose(0, 1, 3, 2), dtype=a.dtype)
    singular |= ~np.isfinite(inverse).all(axis=(2, 3))  # an inverse beyond a.dtype's range
    return inverse, row_blocks, singular


def _invert(blocks, eps):
    """Inverses of (..., m, m) blocks in float64 (complex128 for complex blocks), and a flag where a block is singular: a zero
    row or column, or a reciprocal condition number below ``eps`` after scaling rows and then
    columns to a largest entry of 1 (badly scaled blocks are not mistaken for singular ones)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if blocks.shape[-1] == 1:
            inverse = 1.0 / blocks
            return inverse, ~np.isfinite(inverse[..., 0, 0])
        row = np.abs(blocks).max(axis=-1)
        r = np.where(row > 0, 1.0 / row, 1.0)
        scaled = blocks * r[..., :, None]
        col = np.abs(scaled).max(axis=-2)
        c = np.where(col > 0, 1.0 / col, 1.0)
        scaled = scaled * c[..., None, :]
        s = np.linalg.svd(scaled, compute_uv=False)
        singular = (row == 0).any(axis=-1) | (col == 0).any(axis=-1) | ~(s[..., -1] > eps * s[..., 0])
    m = blocks.shape[-1]
    scaled[singular] = np.eye(m)
    # D^-1 = C E^-1 R for E = R D C
    inverse = np.linalg.inv(scaled) * c[..., :, None] * r[..., None, :]
    return inverse, singular


def apply(exec, preconditioner, b, x):
    # x_i = D_i^-1 b_i: row r of block k, x_i[r] = sum_j blocks[i, k, j, r - start_k] b_i[start_k + j]
    n, stride = preconditioner.common_size[0], preconditioner.block_stride
    block = preconditioner.row_blocks
    start = preconditioner.block_ptrs[block]
    j = np.arange(stride)
    weights = preconditioner.blocks[:, block[:, None], j, (np.arange(n) - start)[:, None]]  # (N, n, stride)
    cols = start[:, None] + j
    inside = cols < preconditioner.block_ptrs[block + 1][:, None]
    values = np.where(inside[None, :, :, None], b.values[:, np.where(inside, cols, 0)], 0)
    x.values[...] = np.einsum("irj,irjc->irc", weights, values)
