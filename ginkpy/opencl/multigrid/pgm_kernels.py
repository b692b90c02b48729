"""OpenCL kernels of Pgm (sources in pgm_kernels.cl): the matching, the renumbering and the
Galerkin product run on the device, one work-item per row or aggregate.

Counts become pointers through an exclusive prefix sum (chunk sums, their prefix sum, each
chunk scanned: long chunks on a CPU, short ones on a GPU, whose sums are scanned the same way,
down to one work-group); the host reads only the totals it needs to allocate and, per matching
sweep, the number of unaggregated rows. The rows of an aggregate are gathered with
atomics and then sorted, so that sums over them run in a fixed order; an aggregate of more
than SORT_LIMIT rows (a star graph) is ordered on the host instead, with the reference kernel.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.opencl.launch import ceil_div, launch_1d, local_buffer, pow2_at_most

SORT_LIMIT = 256      # rows of an aggregate sorted by one work-item (insertion sort)
SCAN_SMALL = 1024     # a prefix sum of up to this many entries runs in one work-group
CPU_CHUNK = 4096      # entries a CPU work-item adds in a chunk of a prefix sum (at most SCAN_SMALL chunks)
GPU_CHUNK = 16        # ... a GPU work-item (the chunk sums are then summed the same way, recursively)
COUNT_GROUP = 256     # work-items of a group of the unaggregated count
COUNT_BLOCKS = 1024   # groups of the unaggregated count at most


def _index_dtype(exec):
    """The value type of the program holding the index-only kernels: float64 where the device
    has it (the program most matrices compile anyway), else float32."""
    return np.float64 if exec.info.fp64 else np.float32


def _run(exec, name, dtype, work_items, *args):
    launch_1d(exec, __file__, name, dtype, work_items, np.int32(work_items), *args)


def _zeros(exec, size: int):
    out = exec.alloc((size,), np.int32)
    cl.enqueue_fill_buffer(exec.queue, out.data, np.int32(0), 0, 4 * size)
    return out


def _group(exec, size: int) -> int:
    """A work-group size: ``size`` or the device's largest power of two below it."""
    return min(size, pow2_at_most(exec.info.max_work_group_size))


def _scan(exec, v, size: int) -> None:
    """v[0, size) = its exclusive prefix sum, in place, with no host read. A CPU adds long
    chunks, one per work-item; a GPU short ones, and their sums are scanned the same way."""
    dtype = _index_dtype(exec)
    if size <= SCAN_SMALL:
        wg = _group(exec, 256)
        exec.kernel(__file__, dtype, "scan_small")(exec.queue, (wg,), (wg,), np.int32(size), v.data,
                                                   local_buffer(SCAN_SMALL, np.int32))
        return
    chunk = max(CPU_CHUNK, ceil_div(size, SCAN_SMALL)) if exec.info.is_cpu else GPU_CHUNK
    items = ceil_div(size, chunk)
    partial = exec.alloc((items,), np.int32)
    launch_1d(exec, __file__, "chunk_sums", dtype, items, np.int32(size), np.int32(chunk), v.data, partial.data)
    _scan(exec, partial, items)
    launch_1d(exec, __file__, "chunk_scan", dtype, items, np.int32(size), np.int32(chunk), v.data, partial.data)


def _exclusive_scan(exec, v, size: int) -> int:
    """v[0, size) = its exclusive prefix sum, in place; v[size - 1] must be 0 before, so that it
    is the total after, which is returned (one host read)."""
    _scan(exec, v, size)
    return int(v[size - 1:size].get(queue=exec.queue)[0])


def compute_weights(exec, a, diag, weights) -> bool:
    nonsymmetric = _zeros(exec, 1)
    _run(exec, "compute_weights", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data, a.values.data,
         diag.values.data, weights.data, nonsymmetric.data)
    return not nonsymmetric.get(queue=exec.queue)[0]


def find_strongest_neighbor(exec, a, weights, agg, strongest_neighbor):
    _run(exec, "find_strongest_neighbor", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data,
         weights.data, agg.data, strongest_neighbor.data)


def match_edge(exec, strongest_neighbor, agg):
    _run(exec, "match_edge", _index_dtype(exec), agg.size, strongest_neighbor.data, agg.data)


def count_unagg(exec, agg) -> int:
    n = agg.size
    wg = _group(exec, COUNT_GROUP)
    groups = min(COUNT_BLOCKS, ceil_div(n, 8 * wg))
    block = ceil_div(n, groups)
    partial = exec.alloc((groups,), np.int32)
    exec.kernel(__file__, _index_dtype(exec), "count_unagg")(
        exec.queue, (groups * wg,), (wg,), np.int32(n), np.int32(block), agg.data, partial.data,
        local_buffer(wg, np.int32))
    return int(partial.get(queue=exec.queue).sum())


def assign_to_exist_agg(exec, a, weights, agg, intermediate_agg):
    out = agg if intermediate_agg is None else intermediate_agg
    _run(exec, "assign_to_exist_agg", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data,
         weights.data, agg.data, out.data, np.int32(intermediate_agg is None))
    if intermediate_agg is not None and agg.size:
        cl.enqueue_copy(exec.queue, agg.data, intermediate_agg.data)


def renumber(exec, agg) -> int:
    n = agg.size
    dtype = _index_dtype(exec)
    used = _zeros(exec, n + 1)
    _run(exec, "mark_used", dtype, n, agg.data, used.data)
    count = _exclusive_scan(exec, used, n + 1)
    _run(exec, "relabel", dtype, n, used.data, agg.data)
    return count


def compose(exec, agg, coarse_agg):
    _run(exec, "compose", _index_dtype(exec), agg.size, agg.data, coarse_agg.data)


def find_aggregate_rows(exec, agg, num_agg):
    n = agg.size
    dtype = _index_dtype(exec)
    ptrs = _zeros(exec, num_agg + 1)
    _run(exec, "count_rows", dtype, n, agg.data, ptrs.data)
    _exclusive_scan(exec, ptrs, num_agg + 1)
    rows = exec.alloc((n,), np.int32)
    if n == 0:
        return ptrs, rows
    next_row = exec.copy(ptrs)
    _run(exec, "fill_rows", dtype, n, agg.data, next_row.data, rows.data)
    too_large = _zeros(exec, 1)
    _run(exec, "sort_rows", dtype, num_agg, np.int32(SORT_LIMIT), ptrs.data, rows.data, too_large.data)
    if too_large.get(queue=exec.queue)[0]:
        # an aggregate too large for one work-item to sort: ordered on the host
        host_ptrs, host_rows = exec.host.run("multigrid.pgm.find_aggregate_rows", agg.get(queue=exec.queue), num_agg)
        return exec.from_host(host_ptrs), exec.from_host(host_rows)
    return ptrs, rows


def compute_coarse(exec, a, agg, agg_ptrs, agg_rows, num_agg):
    n, m = a.shape[0], num_agg
    # B = A P: per fine row, its columns' aggregates with the sums of their entries, in the
    # slots of the row of A
    b_len = exec.alloc((n,), np.int32)
    b_cols, b_vals = exec.alloc((max(a.nnz, 1),), np.int32), exec.alloc((max(a.nnz, 1),), a.dtype)
    _run(exec, "fill_b", a.dtype, n, a.row_ptrs.data, a.col_idxs.data, a.values.data, agg.data, b_len.data,
         b_cols.data, b_vals.data)
    # P^T B: per aggregate, the rows of B of its fine rows merged, in slots as long as all of them
    slots = exec.alloc((m + 1,), np.int32)
    _run(exec, "coarse_bounds", a.dtype, m, agg_ptrs.data, agg_rows.data, b_len.data, slots.data)
    cl.enqueue_fill_buffer(exec.queue, slots.data, np.int32(0), 4 * m, 4)
    total = _exclusive_scan(exec, slots, m + 1)
    c_len = exec.alloc((m + 1,), np.int32)
    slot_cols, slot_vals = exec.alloc((max(total, 1),), np.int32), exec.alloc((max(total, 1),), a.dtype)
    _run(exec, "fill_coarse", a.dtype, m, agg_ptrs.data, agg_rows.data, a.row_ptrs.data, b_len.data, b_cols.data,
         b_vals.data, slots.data, c_len.data, slot_cols.data, slot_vals.data)
    # packed
    cl.enqueue_fill_buffer(exec.queue, c_len.data, np.int32(0), 4 * m, 4)
    nnz = _exclusive_scan(exec, c_len, m + 1)
    cols, vals = exec.alloc((nnz,), np.int32), exec.alloc((nnz,), a.dtype)
    if nnz:
        _run(exec, "pack", a.dtype, m, slots.data, c_len.data, slot_cols.data, slot_vals.data, cols.data, vals.data)
    return c_len, cols, vals
