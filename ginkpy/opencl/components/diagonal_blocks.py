"""How the diagonal-block inversion that Jacobi and the batch Jacobi share is launched (device
code: diagonal_blocks.cl; twin: reference/components/diagonal_blocks.py).

On a CPU device one work-item inverts one block in place, without barriers. On a GPU a block
gets as many work-items as its stride (the largest block) and lives in local memory; a
work-group holds several blocks, as many as fit 256 work-items and the local memory.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import INT32_MAX, ceil_div, check_int32, round_up

CPU_GROUP = 8      # work-items (blocks) per work-group on a CPU device
GPU_GROUP = 256    # at most this many work-items per work-group on a GPU
LOCAL_RESERVE = 1024  # bytes of local memory left to the compiler


def invert_blocks(exec, row_ptrs, col_idxs, values, num_items: int, n: int, nnz: int, block_ptrs,
                  num_blocks: int, stride: int, dtype):
    """The inverse diagonal blocks of ``num_items`` items (``values`` at item * nnz) of one CSR
    pattern of ``n`` rows, blocks given by ``block_ptrs``, padded to ``stride``: (blocks (N, num_blocks,
    stride, stride), row_blocks, conditioning (N, num_blocks), bad = [first singular block,
    how many]) on the device."""
    dtype = np.dtype(dtype)
    blocks = exec.alloc((num_items, num_blocks, stride, stride), dtype)
    row_blocks = exec.alloc((n,), np.int32)
    conditioning = exec.alloc((num_items, num_blocks), real_dtype(dtype))
    bad = exec.from_host(np.array([INT32_MAX, 0], np.int32))
    total = num_items * num_blocks
    if total == 0:
        return blocks, row_blocks, conditioning, bad
    check_int32(total * stride * stride, "the inverse blocks of a Jacobi")
    args = (np.int32(total), np.int32(num_blocks), np.int32(nnz), row_ptrs.data, col_idxs.data, values.data,
            block_ptrs.data, blocks.data, row_blocks.data, conditioning.data, bad.data)
    if exec.info.is_cpu:
        exec.kernel(__file__, dtype, "invert_blocks_item", STRIDE=stride)(
            exec.queue, (round_up(total, CPU_GROUP),), (CPU_GROUP,), *args)
    else:
        per_group = _blocks_per_group(exec.info, stride, dtype)
        exec.kernel(__file__, dtype, "invert_blocks_group", STRIDE=stride, BLOCKS_PER_GROUP=per_group)(
            exec.queue, (ceil_div(total, per_group) * per_group * stride,), (per_group * stride,), *args)
    return blocks, row_blocks, conditioning, bad


def _blocks_per_group(info, stride: int, dtype) -> int:
    """Blocks per work-group of invert_blocks_group: up to GPU_GROUP work-items, within the
    local memory (a tile of stride x (stride + 1) values and six arrays of stride per block)."""
    value, real = np.dtype(dtype).itemsize, real_dtype(dtype).itemsize
    per_block = stride * (stride + 1) * value + 6 * stride * real + 4 * stride + 4
    budget = max(info.local_mem_size - LOCAL_RESERVE, per_block)
    return max(1, min(GPU_GROUP // stride, min(info.max_work_group_size, GPU_GROUP) // stride,
                      budget // per_block))
