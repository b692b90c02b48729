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
from ginkpy.reference.components.diagonal_blocks import block_diagonal, first_singular, invert_blocks


def find_blocks(exec, a, max_block_size):
    """Block pointers by Ginkgo's supervariable agglomeration, and the largest block's size.

    Consecutive rows with the same column pattern form a supervariable of at most
    ``max_block_size`` rows; neighbouring supervariables are then merged greedily while the
    merged block has at most ``max_block_size`` rows. The greedy merge is a chain of jumps
    (from a block's first supervariable to the first one that no longer fits), followed from
    the first supervariable by binary lifting: a few whole-array steps, no loop over blocks.
    """
    n = a.shape[0]
    if n == 0:
        return np.zeros(1, dtype=INDEX_DTYPE), 1
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
    block_ptrs = np.r_[starts[first], n].astype(INDEX_DTYPE)
    return block_ptrs, int(np.diff(block_ptrs).max())


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


def generate(exec, a, block_ptrs, stride):
    """The inverse diagonal blocks of ``a`` (in a's value type, transposed, ``stride`` the
    largest block), ``row_blocks``, each block's condition number |D|_1 |D^-1|_1 and
    [first singular block (2^31 - 1 if none), number of singular blocks] (see
    reference/components/diagonal_blocks.py)."""
    blocks, row_blocks, conditioning, singular = invert_blocks(a.row_ptrs, a.col_idxs, a.values[None, :],
                                                               block_ptrs, stride)
    return blocks[0], row_blocks, conditioning[0], first_singular(singular)


def _inverse_matrix(jacobi):
    """D^-1 as a SciPy CSR matrix, made at the first apply and kept in ``jacobi.cache``: an
    apply is one sparse product, with nothing to rebuild."""
    inverse = jacobi.cache.get("reference_inverse")
    if inverse is None:
        inverse = jacobi.cache["reference_inverse"] = block_diagonal(jacobi.block_ptrs, jacobi.row_blocks,
                                                                     jacobi.blocks[None])
    return inverse


def simple_scalar_apply(exec, jacobi, b, x):
    x.values[...] = jacobi.blocks.reshape(-1, 1) * b.values


def scalar_apply(exec, alpha, jacobi, b, beta, x):
    x.values[...] = alpha.values[0] * (jacobi.blocks.reshape(-1, 1) * b.values) + beta.values[0] * x.values


def simple_apply(exec, jacobi, b, x):
    # x = D^-1 b
    x.values[...] = _inverse_matrix(jacobi) @ b.values


def apply(exec, alpha, jacobi, b, beta, x):
    # x = alpha D^-1 b + beta x
    x.values[...] = alpha.values[0] * (_inverse_matrix(jacobi) @ b.values) + beta.values[0] * x.values
