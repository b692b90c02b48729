"""OpenCL kernels of Pgm (sources in pgm_kernels.cl): the matching, the renumbering and the
Galerkin product run on the device, one work-item per row or aggregate.

Counts become pointers through an exclusive prefix sum over chunks (one work-item per chunk,
then one for the chunk sums), the host reads only the totals it needs to allocate (and, per
matching sweep, the number of unaggregated rows). The rows of an aggregate are gathered with
atomics and then sorted, so that sums over them run in a fixed order; an aggregate of more
than SORT_LIMIT rows (a star graph) is ordered on the host instead, with the reference kernel.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.opencl.launch import ceil_div, launch_1d

SORT_LIMIT = 256     # rows of an aggregate sorted by one work-item (insertion sort)
SCAN_CHUNKS = 1024   # work-items of a prefix sum (and of the unaggregated count)
MIN_CHUNK = 64       # entries a work-item of a prefix sum adds at least


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


def _chunks(size: int) -> tuple[int, int]:
    """(work-items, entries each) of a chunked pass over ``size`` entries."""
    chunk = max(MIN_CHUNK, ceil_div(size, SCAN_CHUNKS))
    return ceil_div(size, chunk), chunk


def _exclusive_scan(exec, v, size: int) -> int:
    """v[0, size) = its exclusive prefix sum, in place; returns the total (one host read)."""
    dtype = _index_dtype(exec)
    items, chunk = _chunks(size)
    partial = exec.alloc((items + 1,), np.int32)
    launch_1d(exec, __file__, "chunk_sums", dtype, items, np.int32(size), np.int32(chunk), v.data, partial.data)
    # the total lands in partial[items]: the scan of items + 1 partials whose last is 0
    cl.enqueue_fill_buffer(exec.queue, partial.data, np.int32(0), 4 * items, 4)
    launch_1d(exec, __file__, "scan_partials", dtype, 1, np.int32(items + 1), partial.data)
    launch_1d(exec, __file__, "chunk_scan", dtype, items, np.int32(size), np.int32(chunk), v.data, partial.data)
    return int(partial[items:].get(queue=exec.queue)[0])


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
    if n == 0:
        return 0
    items, chunk = _chunks(n)
    partial = exec.alloc((items,), np.int32)
    launch_1d(exec, __file__, "count_unagg", _index_dtype(exec), items, np.int32(n), np.int32(chunk),
              agg.data, partial.data)
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
