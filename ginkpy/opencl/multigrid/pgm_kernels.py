"""OpenCL kernels of Pgm (sources in pgm_kernels.cl): the matching, the numbering of the
aggregates and the Galerkin product run on the device, one work-item per row or aggregate,
without reading anything back: the host reads the matching's state after a block of sweeps and
the sizes (aggregates, coarse entries, flags) once per pass (core/multigrid/pgm.py).

Counts become pointers through an exclusive prefix sum (chunk sums, their prefix sum, each
chunk scanned: long chunks on a CPU, short ones on a GPU, whose sums are scanned the same way,
down to one work-group). The rows of an aggregate are gathered with atomics and then sorted,
so that sums over them run in a fixed order; an aggregate of more than SORT_LIMIT rows (a star
graph) is flagged, and the host orders its rows instead (reference sort_aggregates).
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import WORK_GROUP, ceil_div, launch_chunks, local_buffer, pow2_at_most

SORT_LIMIT = 256      # rows of an aggregate sorted by one work-item (insertion sort)
SCAN_SMALL = 1024     # a prefix sum of up to this many entries runs in one work-group
CPU_CHUNK = 4096      # entries a CPU work-item adds in a chunk of a prefix sum (at most SCAN_SMALL chunks)
GPU_CHUNK = 64        # ... a GPU work-item (the chunk sums are then summed the same way, recursively)


def _index_dtype(exec):
    """The value type of the program holding the index-only kernels: float64 where the device
    has it (the program most matrices compile anyway), else float32."""
    return np.float64 if exec.info.fp64 else np.float32


CPU_MIN_CHUNK = 512      # items a CPU work-item takes at least


def _run(exec, name, dtype, count, *args, items=None):
    """Kernel ``name`` over ``items`` items (rows or aggregates; default ``count``), given
    (count, chunk, args): a GPU runs one item per work-item, a CPU contiguous chunks
    (launch.launch_chunks; FOR_ITEMS in the .cl)."""
    launch_chunks(exec, __file__, name, dtype, count if items is None else items, count, *args,
                  min_chunk=CPU_MIN_CHUNK)


def _zeros(exec, size: int):
    out = exec.alloc((max(size, 1),), np.int32)
    _fill(exec, out, max(size, 1))
    return out


def _fill(exec, array, size: int, value: int = 0) -> None:
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, array.data, np.int32(value), 0, 4 * size)


def _copy_int(exec, dst, dst_index: int, src, src_index: int) -> None:
    """dst[dst_index] = src[src_index] on the device (int32 arrays)."""
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_copy(exec.queue, dst.data, src.data, src_offset=4 * src_index, dst_offset=4 * dst_index,
                        byte_count=4)


def _group(exec, size: int) -> int:
    """A work-group size: ``size`` or the device's largest power of two below it."""
    return min(size, pow2_at_most(exec.info.max_work_group_size))


def _scan(exec, v, size: int, width: int = 1) -> None:
    """v[0, size) = its exclusive prefix sum (``width`` int components per entry), in place,
    with no host read. A CPU adds long chunks, one per work-item; a GPU short ones, and their
    sums are scanned the same way."""
    dtype = _index_dtype(exec)
    if size <= SCAN_SMALL:
        wg = _group(exec, 256)
        exec.kernel(__file__, dtype, "scan_small", WIDTH=width)(exec.queue, (wg,), (wg,), np.int32(size), v.data,
                                                                local_buffer(SCAN_SMALL * width, np.int32))
        return
    chunk = max(CPU_CHUNK, ceil_div(size, SCAN_SMALL)) if exec.info.is_cpu else GPU_CHUNK
    items = ceil_div(size, chunk)
    partial = exec.alloc((items * width,), np.int32)
    wg = WORK_GROUP
    global_size = ceil_div(items, wg) * wg
    exec.kernel(__file__, dtype, "chunk_sums", WIDTH=width)(exec.queue, (global_size,), (wg,), np.int32(size),
                                                            np.int32(chunk), v.data, partial.data)
    _scan(exec, partial, items, width)
    exec.kernel(__file__, dtype, "chunk_scan", WIDTH=width)(exec.queue, (global_size,), (wg,), np.int32(size),
                                                            np.int32(chunk), v.data, partial.data)


def start_pass(exec, n, threshold, sweeps):
    agg, state, flags = exec.alloc((n,), np.int32), exec.alloc((2 + sweeps,), np.int32), exec.alloc((2,), np.int32)
    _run(exec, "start_pass", _index_dtype(exec), max(n, 2 + sweeps), np.int32(n), np.int32(threshold),
         np.int32(sweeps), agg.data, state.data, flags.data)
    return agg, state, flags


def diagonal_scale(exec, a):
    scale = exec.alloc((a.shape[0],), real_dtype(a.dtype))
    _run(exec, "diagonal_scale", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data, a.values.data, scale.data)
    return scale


def compute_weights(exec, a, scale, weights, flags, strongest_neighbor):
    _run(exec, "compute_weights", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data, a.values.data,
         scale.data, weights.data, flags.data, strongest_neighbor.data)


def find_strongest_neighbor(exec, a, weights, agg, strongest_neighbor, state, sweep):
    _run(exec, "find_strongest_neighbor", a.dtype, a.shape[0], np.int32(sweep), state.data, a.row_ptrs.data,
         a.col_idxs.data, weights.data, agg.data, strongest_neighbor.data)


def match_edge(exec, strongest_neighbor, agg, state, sweep):
    _run(exec, "match_edge", _index_dtype(exec), agg.size, np.int32(sweep), state.data, strongest_neighbor.data,
         agg.data, local_buffer(1 if exec.info.is_cpu else WORK_GROUP, np.int32))


def assign_to_exist_agg(exec, a, weights, agg, intermediate_agg):
    out = agg if intermediate_agg is None else intermediate_agg
    _run(exec, "assign_to_exist_agg", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data,
         weights.data, agg.data, out.data, np.int32(intermediate_agg is None))
    if intermediate_agg is not None and agg.size:
        exec.copy_into(agg, intermediate_agg)


def find_aggregates(exec, a, agg, member_ptrs, flags):
    n = agg.size
    dtype = _index_dtype(exec)
    # per root: (1, rows, entries of A, members), scanned into the aggregate numbers and pointers;
    # after them the counters that place each aggregate's rows
    counts = _zeros(exec, 5 * (n + 1))
    _run(exec, "count_members", dtype, n, agg.data, a.row_ptrs.data,
         (a.row_ptrs if member_ptrs is None else member_ptrs).data, np.int32(member_ptrs is not None), counts.data)
    _scan(exec, counts, n + 1, width=4)
    agg_ptrs, bounds, fine_ptrs = (exec.alloc((n + 1,), np.int32) for _ in range(3))
    agg_rows, sizes = exec.alloc((n,), np.int32), exec.alloc((3,), np.int32)
    _run(exec, "number_aggregates", dtype, n, agg.data, counts.data, agg_ptrs.data, agg_rows.data, bounds.data,
         fine_ptrs.data, sizes.data)
    _run(exec, "sort_rows", dtype, n, np.int32(SORT_LIMIT), sizes.data, agg_ptrs.data, agg_rows.data, flags.data)
    return agg_ptrs, agg_rows, bounds, None if member_ptrs is None else fine_ptrs, sizes


def compose(exec, agg, agg_ptrs, agg_rows, coarse_agg, coarse_ptrs, coarse_rows, fine_ptrs, sizes, flags):
    # every fine row is in one aggregate of each pass: the kernel writes each of fine once
    fine, rows = exec.alloc((agg.size,), agg.dtype), exec.alloc((agg.size,), np.int32)
    _run(exec, "compose", _index_dtype(exec), coarse_agg.size, np.int32(SORT_LIMIT), sizes.data, fine.data,
         agg_ptrs.data, agg_rows.data, coarse_ptrs.data, coarse_rows.data, fine_ptrs.data, rows.data, flags.data)
    return fine, rows


def compute_coarse(exec, a, agg, agg_ptrs, agg_rows, bounds, sizes):
    n = a.shape[0]
    lens = exec.alloc((n + 1,), np.int32)
    slots = max(a.nnz, 1)
    slot_cols, slot_vals = exec.alloc((slots,), np.int32), exec.alloc((slots,), a.dtype)
    _run(exec, "galerkin", a.dtype, n, sizes.data, a.row_ptrs.data, a.col_idxs.data, a.values.data, agg.data,
         agg_ptrs.data, agg_rows.data, bounds.data, lens.data, slot_cols.data, slot_vals.data, items=n + 1)
    _scan(exec, lens, n + 1)
    sizes = exec.alloc((1,), np.int32)
    _copy_int(exec, sizes, 0, lens, n)
    return lens, bounds, slot_cols, slot_vals, sizes


def pack(exec, row_ptrs, starts, cols, vals, num_agg, nnz, scale):
    ptrs = exec.alloc((num_agg + 1,), np.int32)
    out_cols, out_vals = exec.alloc((nnz,), np.int32), exec.alloc((nnz,), vals.dtype)
    _run(exec, "pack", vals.dtype, num_agg, real_dtype(vals.dtype).type(scale), row_ptrs.data, starts.data,
         cols.data, vals.data, ptrs.data, out_cols.data, out_vals.data, items=num_agg + 1)
    return ptrs, out_cols, out_vals
