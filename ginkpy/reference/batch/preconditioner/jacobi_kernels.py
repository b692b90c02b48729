"""Reference kernels of the batch Jacobi: inverting every item's diagonal blocks, and applying
them.

The inverse blocks have shape (N, num_blocks, stride, stride), stride the size of the largest
block, each block transposed as the single-system Jacobi stores it (``blocks[i, k, j, r]`` is
entry (r, j) of the inverse of block k of item i), padding zero. Scalar Jacobi is stride 1:
``blocks[i, r, 0, 0]`` = 1 / a_i(r, r).
"""
from __future__ import annotations

from ginkpy.reference.components.diagonal_blocks import block_diagonal, first_singular, invert_blocks


def generate(exec, a, block_ptrs, stride):
    """The inverse diagonal blocks of every item of the batch Csr ``a``, ``row_blocks`` (the
    block of each row), each block's condition number (N, num_blocks) and [first singular block
    (item i's block k counted as i num_blocks + k; 2^31 - 1 if none), number of singular blocks]."""
    blocks, row_blocks, conditioning, singular = invert_blocks(a.row_ptrs, a.col_idxs, a.values, block_ptrs,
                                                               stride)
    return blocks, row_blocks, conditioning, first_singular(singular)


def apply(exec, preconditioner, b, x):
    # x_i = D_i^-1 b_i: one sparse product over all items, D^-1 made at the first apply
    inverse = preconditioner.cache.get("reference_inverse")
    if inverse is None:
        inverse = preconditioner.cache["reference_inverse"] = block_diagonal(
            preconditioner.block_ptrs, preconditioner.row_blocks, preconditioner.blocks)
    N, n, k = b.values.shape
    x.values[...] = (inverse @ b.values.reshape(N * n, k)).reshape(N, n, k)
