"""OpenCL kernels of Jacobi (sources in jacobi_kernels.cl): the blocks found (Ginkgo's
supervariable agglomeration) and inverted (opencl/components/diagonal_blocks.cl) on the device,
scalar Jacobi's inverse diagonal, and the apply kernels (one work-item per entry of x)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.components.diagonal_blocks import invert_blocks
from ginkpy.opencl.launch import launch, launch_1d, scalar_arg


def _blocks(jacobi):
    return np.int32(jacobi.block_stride), jacobi.block_ptrs, jacobi.row_blocks, jacobi.blocks


def simple_scalar_apply(exec, jacobi, b, x):
    launch(exec, __file__, "simple_scalar_apply", x.dtype, x.shape, jacobi.blocks, b, x)


def scalar_apply(exec, alpha, jacobi, b, beta, x):
    launch(exec, __file__, "scalar_apply", x.dtype, x.shape, *scalar_arg(alpha), jacobi.blocks, b,
           *scalar_arg(beta), x)


def _storage(jacobi, x) -> dict:
    """BLOCK_SINGLE: 1 where the blocks are stored in the single precision of x's value type
    (storage_optimization)."""
    return {"BLOCK_SINGLE": int(jacobi.blocks.dtype != x.dtype)}


def simple_apply(exec, jacobi, b, x):
    launch(exec, __file__, "simple_apply", x.dtype, x.shape, *_blocks(jacobi), b, x, defines=_storage(jacobi, x))


def apply(exec, alpha, jacobi, b, beta, x):
    launch(exec, __file__, "apply", x.dtype, x.shape, *scalar_arg(alpha), *_blocks(jacobi), b,
           *scalar_arg(beta), x, defines=_storage(jacobi, x))


def invert_diagonal(exec, a, inverse):
    """inverse = 1 / diag(A), one work-item per row; an entry that is 0, missing or too small to
    invert becomes 1. Returns how many did (a count per row, summed on the host)."""
    n = min(a.shape)
    if n == 0:
        return 0
    bad = exec.alloc((n,), np.uint8)
    launch_1d(exec, __file__, "invert_diagonal", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              a.values.data, inverse.values.data, bad.data)
    return int(exec.to_host(bad).sum(dtype=np.int64))


def find_blocks(exec, a, max_block_size):
    """Block pointers by Ginkgo's supervariable agglomeration (the reference's algorithm, step
    for step), and the largest block's size: runs of rows with one pattern (a comparison per
    row, a prefix sum), cut every max_block_size rows into supervariables; from each
    supervariable the jump to where a block starting there ends (at most max_block_size rows
    on); the chain of jumps from row 0 by binary lifting (one launch per bit of n). One read:
    the number of blocks and the largest."""
    n = a.shape[0]
    if n == 0:
        return exec.from_host(np.zeros(1, np.int32)), 1
    run, first_row, jump, position, power = (exec.alloc((size,), np.int32) for size in (n, n, n + 1, n + 1, n + 1))
    starts_run, supervariable = exec.alloc((n,), np.uint8), exec.alloc((n,), np.uint8)
    rows, bound = np.int32(n), np.int32(max_block_size)
    launch_1d(exec, __file__, "compare_rows", a.dtype, n, rows, a.row_ptrs.data, a.col_idxs.data, run.data,
              starts_run.data)
    exec.run("components.prefix_sum.prefix_sum", run)
    launch_1d(exec, __file__, "run_firsts", a.dtype, n, rows, run.data, starts_run.data, first_row.data)
    launch_1d(exec, __file__, "supervariables", a.dtype, n, rows, bound, run.data, starts_run.data,
              first_row.data, supervariable.data)
    launch_1d(exec, __file__, "jumps", a.dtype, n + 1, rows, bound, supervariable.data, jump.data, position.data)
    for bit in range(n.bit_length()):  # steps t <= n: every bit of n
        launch_1d(exec, __file__, "lift", a.dtype, n + 1, np.int32(n + 1), np.int32(bit), position.data,
                  jump.data, power.data)
        jump, power = power, jump
    out = exec.from_host(np.array([0, 1], np.int32))
    launch_1d(exec, __file__, "count_blocks", a.dtype, n, rows, position.data, out.data)
    num_blocks, largest = (int(v) for v in exec.to_host(out))
    return position[:num_blocks + 1], largest


def generate(exec, a, block_ptrs, stride):
    """The inverse diagonal blocks (transposed, padded to ``stride``), the block of each row,
    each block's |D|_1 |D^-1|_1 and [first singular block, how many] (see
    opencl/components/diagonal_blocks.cl)."""
    num_blocks = int(block_ptrs.shape[0]) - 1
    blocks, row_blocks, conditioning, bad = invert_blocks(exec, a.row_ptrs, a.col_idxs, a.values, 1, a.shape[0],
                                                          a.nnz, block_ptrs, num_blocks, stride, a.dtype)
    return blocks.reshape(num_blocks, stride, stride), row_blocks, conditioning.reshape(num_blocks), bad
