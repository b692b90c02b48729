"""OpenCL kernels of the sparse matrix-matrix product C = A B and of the transpose with its
entry map (sources in spgemm_kernels.cl; the method is in the .cl's head comment).

The product, written once (the hash off, the scratch within its cap): an upper bound of each
row's length (min(sum over a_ik of |B_k|, columns of C)), their prefix sum, one blocking read
of the total, the rows written at those places in scratch with their lengths (a k-way merge of
the rows of B that each row of A selects, or a dense accumulator), the lengths' prefix sum, one
read of the size, the rows compacted (compact_rows). Else counted first: row lengths by the
same merge, one prefix sum (components.prefix_sum), one blocking read of the total (to
allocate), the merge again writing sorted columns and summed values. Both write the same
arrays to the bit. New values on the same patterns run the writing merge only
(:func:`spgemm_values`, no read). The transpose: the entries of each column
counted with atomics, one prefix sum, scattered with atomics and each row sorted, keeping the
source entry of each, so that new values are one gather (:func:`transpose_values`).

Three ways to make a row of C: a GPU's hash for the rows of more than HASH_FROM and at most
HASH_LIMIT products (a work-group of HASH_LANES per row: its columns gathered in a hash table
in local memory, each value summed by one work-item with bisection in B's rows), the merge
(the GPU's other rows: one row per work-item in work-groups of WORK_GROUP for rows of A of at
most PRIVATE_LISTS entries, their lists in private arrays; a work-group of LONG_ROW_LANES per
longer row, the longer rows listed on the device by the short rows' launch, so that the
work-groups visit those rows only) and a dense accumulator (a marker per column of C per work-item: a CPU's, a few
work-groups of one work-item each taking a contiguous stretch of rows; a GPU's where C is
small enough for a marker row per row of A: coarse levels). All sum a_ik b_kj in the order of
A's row's entries (a long row's merge: a tree over its work-items).
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.opencl.launch import WORK_GROUP, ceil_div, check_int32, launch_chunks, local_buffer, pow2_at_most, round_up

PRIVATE_LISTS = 64       # rows of A of at most this many entries merge in private arrays, longer ones by a work-group
LONG_ROW_LANES = 64      # work-items merging one long row on a GPU (a power of two)
LONG_ROW_GROUPS = 32     # work-groups per compute unit taking the long rows (each every so many rows)
DENSE_ITEMS_PER_UNIT = 4  # ... of a CPU's dense accumulator (each with a marker per column of C)
DENSE_MARKER_BYTES = 256 << 20  # the markers' memory at most, else a CPU merges as a GPU
GPU_DENSE_BYTES = 64 << 20      # a GPU's markers (a row per work-item) at most: small C with long rows
CPU_MIN_CHUNK = 256      # rows a CPU work-item takes at least
# a GPU hashes the rows of C of at most HASH_LIMIT products (0: none), merges the others. Off: on an
# H100 (2026-12-06, `python bench_sa_setup.py --problems poisson_2d --sizes 1000000 --hash-limits 1024 0
# --reps 1`) smoothed aggregation's products took as long hashed as merged (A P 57.7 / 57.8 ms,
# R (A P) 121.8 / 117.5 ms; whole setup 360 / 271 ms, the hashed run's including its kernels' builds)
HASH_LIMIT = 0
HASH_FROM = 32           # ... and of more than this many (fewer merge faster in one work-item)
HASH_LANES = 32          # work-items hashing one row
HASH_GROUPS = 64         # work-groups per compute unit taking the hashed rows (each every so many rows)
HASH_ON_CPU = False      # (tests: a CPU device hashes as a GPU, where it would accumulate densely)
# Without the hash a product is written once at bounds of its rows' lengths and compacted, the
# counting pass skipped, while that scratch takes at most 1 / SINGLE_PASS_SHARE of the device's memory
ONE_PASS = True          # (tests: False counts first always)
SINGLE_PASS_SHARE = 16


def _run(exec, name: str, dtype, items: int, *args, **defines) -> None:
    """Kernel ``name`` over ``items`` items, given (items, chunk, args)."""
    launch_chunks(exec, __file__, name, dtype, items, items, *args, min_chunk=CPU_MIN_CHUNK, defines=defines)


def _zeros(exec, size: int):
    out = exec.alloc((size,), np.int32)
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, out.data, np.int32(0), 0, 4 * size)
    return out


def _dense_items(exec, a, b) -> int:
    """The work-items of a dense accumulator for A B, 0 to merge instead. A CPU: a few, each a
    stretch of rows, while their markers take at most DENSE_MARKER_BYTES. A GPU: one per row
    where the markers of all rows take at most GPU_DENSE_BYTES (a coarse level's product, whose
    rows of A are long and whose columns few: a merge would scan hundreds of lists per entry)."""
    columns = max(b.shape[1], 1)
    if exec.info.is_cpu:
        items = min(DENSE_ITEMS_PER_UNIT * exec.info.compute_units, max(1, a.shape[0]))
        return items if items * columns * 4 <= DENSE_MARKER_BYTES else 0
    items = round_up(a.shape[0] + 1, WORK_GROUP)
    return items if items * columns * 4 <= GPU_DENSE_BYTES else 0


def _markers(exec, items: int, columns: int, markers=None):
    """items x columns markers, all -1 (``markers``: those of an earlier launch, filled again)."""
    markers = exec.alloc((items * max(columns, 1),), np.int32) if markers is None else markers
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, markers.data, np.int32(-1), 0, 4 * markers.size)
    return markers


def _launch_dense(exec, name: str, dtype, count: int, items: int, *args, **defines) -> None:
    """Kernel ``name`` over ``count`` rows on at most ``items`` work-items: on a CPU groups of
    one, each a contiguous stretch of rows; on a GPU one row each, in work-groups."""
    if count == 0:
        return
    if exec.info.is_cpu:
        chunk, local = ceil_div(count, items), 1
        global_size = ceil_div(count, chunk)
    else:
        chunk, local, global_size = 1, WORK_GROUP, round_up(count, WORK_GROUP)
    exec.kernel(__file__, dtype, name, **defines)(exec.queue, (global_size,), (local,), np.int32(count),
                                                  np.int32(chunk), *args)


def spgemm(exec, a, b):
    # C = A B: written once at bounds of the row lengths and compacted (where the bounds'
    # scratch fits), else row lengths counted, their prefix sum, then columns and values
    made = _one_pass(exec, a, b) if ONE_PASS and not _hash_limit(exec) and a.shape[0] else None
    return made if made is not None else _two_passes(exec, a, b)


def _one_pass(exec, a, b):
    """C's arrays written once: bound_i = min(sum over a_ik of |B_k|, columns) (prefix-summed,
    one read of the total), rows written at those places in scratch with their lengths, their
    prefix sum (one read), compact_rows. None where the scratch would take more than
    1 / SINGLE_PASS_SHARE of the device's memory or its size more than int32 (the caller counts)."""
    n, columns = a.shape[0], b.shape[1]
    bounds, counts = exec.alloc((n + 1,), np.int32), exec.alloc((n + 1,), np.int32)
    flag = exec.from_host(np.zeros(1, np.int32))
    _run(exec, "bound_rows", a.dtype, n + 1, np.int32(columns), np.int32((2 ** 31 - 1) // (n + 1)),
         a.row_ptrs.data, a.col_idxs.data, b.row_ptrs.data, bounds.data, counts.data, flag.data)
    exec.run("components.prefix_sum.prefix_sum", bounds)
    total, flagged = (int(v[0]) for v in exec.to_host(bounds[n:], flag))
    if flagged or total * (4 + a.dtype.itemsize) > exec.info.global_mem_size // SINGLE_PASS_SHARE:
        return None
    if total == 0:  # (every bound 0: the prefix sum of the bounds is C's row pointers)
        return bounds, exec.alloc((0,), np.int32), exec.alloc((0,), a.dtype)
    scratch_cols, scratch_vals = exec.alloc((total,), np.int32), exec.alloc((total,), a.dtype)
    _fill(exec, a, b, bounds, scratch_cols, scratch_vals, write_cols=True, counts=counts)
    exec.run("components.prefix_sum.prefix_sum", counts)
    nnz = int(exec.to_host(counts[n:])[0])
    col_idxs, values = exec.alloc((nnz,), np.int32), exec.alloc((nnz,), a.dtype)
    if nnz:
        _run(exec, "compact_rows", a.dtype, n, bounds.data, scratch_cols.data, scratch_vals.data, counts.data,
             col_idxs.data, values.data)
    return counts, col_idxs, values


def _two_passes(exec, a, b):
    """C's arrays: row lengths counted, their prefix sum, one read of the size, the rows written."""
    n, columns = a.shape[0], b.shape[1]
    row_ptrs = exec.alloc((n + 1,), np.int32)
    dense = _dense_items(exec, a, b)
    pattern = (a.row_ptrs.data, a.col_idxs.data, b.row_ptrs.data, b.col_idxs.data)
    hashed = long_rows = None  # (the rows the hash and the long merge take, listed on the device, for the fill too)
    if dense:
        scratch = _markers(exec, dense, columns)
        _launch_dense(exec, "count_rows_dense", a.dtype, n + 1, dense, np.int32(columns), *pattern, scratch.data,
                      row_ptrs.data)
    else:
        scratch = _merge_state(exec, a)
        long_rows = _zeros(exec, n + 1)
        _run(exec, "count_rows", a.dtype, n + 1, *pattern, row_ptrs.data, long_rows.data, **_short(exec))
        _long_rows(exec, a, b, long_rows, scratch, row_ptrs, None, None, None, count_only=True)
        hashed = _hashed_rows(exec, a, b)
        _hash_rows(exec, "count_rows_hash", a, hashed, *pattern, row_ptrs.data)
    exec.run("components.prefix_sum.prefix_sum", row_ptrs)
    nnz = int(exec.to_host(row_ptrs[n:])[0])
    check_int32(nnz, "the product's entries")
    col_idxs, values = exec.alloc((nnz,), np.int32), exec.alloc((nnz,), a.dtype)
    if nnz:
        _fill(exec, a, b, row_ptrs, col_idxs, values, write_cols=True, hashed=hashed, long_rows=long_rows,
              scratch=scratch)
    return row_ptrs, col_idxs, values


def spgemm_values(exec, a, b, c):
    # c's values = those of A B on c's pattern (that of an earlier product of these patterns)
    if c.nnz:
        _fill(exec, a, b, c.row_ptrs, c.col_idxs, c.values, write_cols=False)


def _hash_limit(exec) -> int:
    """The most products of a row the hash takes (0: none, a CPU's merge), as the device's local
    memory allows (a table of twice the slots and a list: 12 bytes a product)."""
    if exec.info.is_cpu and not HASH_ON_CPU:
        return 0
    # (a power of two: the table, of the power of two of at least twice a row's products, fits 2 limit)
    limit = pow2_at_most(HASH_LIMIT) if HASH_LIMIT > 0 else 0
    while limit and 12 * limit + 4 > exec.info.local_mem_size:
        limit //= 2
    return limit


def _short(exec) -> dict:
    """The merge's defines: the short rows of A in private arrays, one per work-item (the long
    ones: _long_rows), the rows the hash takes skipped."""
    return dict(PRIVATE_LISTS=PRIVATE_LISTS, **_hash_defines(exec))


def _hash_defines(exec) -> dict:
    """The rows the hash takes: more than HASH_FROM products, at most the hash limit."""
    return dict(HASH_LIMIT=_hash_limit(exec), HASH_FROM=HASH_FROM)


def _hashed_rows(exec, a, b):
    """The rows the hash takes, listed on the device: [count, rows...] (None: the hash is off)."""
    if not _hash_limit(exec) or a.shape[0] == 0:
        return None
    hashed = _zeros(exec, a.shape[0] + 1)
    _run(exec, "list_hashed_rows", a.dtype, a.shape[0], a.row_ptrs.data, a.col_idxs.data, b.row_ptrs.data,
         hashed.data, **_hash_defines(exec))
    return hashed


def _hash_rows(exec, name: str, a, hashed, *args, **defines) -> None:
    """Kernel ``name`` (count_rows_hash, fill_rows_hash) over the ``hashed`` rows of A: a
    work-group of HASH_LANES per row, a fixed number of groups each taking every so many."""
    if hashed is None:
        return
    limit = _hash_limit(exec)
    lanes = min(HASH_LANES, exec.info.max_work_group_size)
    groups = min(a.shape[0], HASH_GROUPS * exec.info.compute_units)
    exec.kernel(__file__, a.dtype, name, **_hash_defines(exec), **defines)(
        exec.queue, (groups * lanes,), (lanes,), hashed.data, *args, local_buffer(2 * limit, np.int32),
        local_buffer(limit, np.int32), local_buffer(1, np.int32))


def _long_rows(exec, a, b, long_rows, state, counts, row_ptrs, col_idxs, values, count_only=False,
               write_cols=False, count_rows=0):
    """The rows of A of more than PRIVATE_LISTS entries (listed in ``long_rows`` by count_rows
    or fill_rows: [count, rows...]) merged by a work-group each (a CPU: of one work-item):
    their counts, or their columns and values (and their lengths in ``counts``: count_rows)."""
    n = a.shape[0]
    if n == 0 or a.nnz <= PRIVATE_LISTS:  # (no row of A is long)
        return
    lanes = 1 if exec.info.is_cpu else min(LONG_ROW_LANES, exec.info.max_work_group_size)
    groups = min(n, LONG_ROW_GROUPS * exec.info.compute_units)
    dummy = counts if counts is not None else row_ptrs
    exec.kernel(__file__, a.dtype, "merge_long_rows", PRIVATE_LISTS=PRIVATE_LISTS, COUNT_ONLY=int(count_only),
                WRITE_COLS=int(write_cols), COUNT_ROWS=int(count_rows), **_hash_defines(exec))(
        exec.queue, (groups * lanes,), (lanes,), long_rows.data, a.row_ptrs.data, a.col_idxs.data,
        a.values.data, b.row_ptrs.data, b.col_idxs.data, b.values.data, np.int32(state.size // 2), state.data,
        dummy.data,
        (row_ptrs if row_ptrs is not None else dummy).data, (col_idxs if col_idxs is not None else dummy).data,
        (values if values is not None else a.values).data, local_buffer(lanes, np.int32), local_buffer(lanes, a.dtype))


def _merge_state(exec, a):
    """The long rows' merge's cursor and head per entry of A, one array (scratch the kernel
    initializes: the cursors, then the heads)."""
    long_rows = a.nnz if a.shape[0] and a.nnz > PRIVATE_LISTS else 1
    return exec.alloc((2 * long_rows,), np.int32)


def _fill(exec, a, b, row_ptrs, col_idxs, values, write_cols: bool, hashed=None, long_rows=None,
          scratch=None, counts=None) -> None:
    """Row pointers known: columns (write_cols) and values of C, each row by its way (``hashed``,
    ``long_rows``: the hash's and the long merge's rows when listed already; ``scratch``: the
    count's markers or merge state, used again); with ``counts`` (row_ptrs: bounds, the hash
    off) each row's length written there."""
    factors = (a.row_ptrs.data, a.col_idxs.data, a.values.data, b.row_ptrs.data, b.col_idxs.data, b.values.data)
    product = (row_ptrs.data, col_idxs.data, values.data)
    lengths = int(counts is not None)
    counts = row_ptrs if counts is None else counts  # (unused without COUNT_ROWS)
    dense = _dense_items(exec, a, b)
    if dense:
        markers = _markers(exec, dense, b.shape[1], scratch)
        _launch_dense(exec, "fill_rows_dense", a.dtype, a.shape[0], dense, np.int32(b.shape[1]), *factors,
                      markers.data, *product, counts.data, WRITE_COLS=int(write_cols), COUNT_ROWS=lengths)
        return
    state = _merge_state(exec, a) if scratch is None else scratch
    listed = long_rows is not None
    long_rows = long_rows if listed else _zeros(exec, a.shape[0] + 1)
    _run(exec, "fill_rows", a.dtype, a.shape[0], *factors, *product, long_rows.data, counts.data,
         WRITE_COLS=int(write_cols), LIST_LONG=int(not listed), COUNT_ROWS=lengths, **_short(exec))
    _long_rows(exec, a, b, long_rows, state, counts, row_ptrs, col_idxs, values, write_cols=write_cols,
               count_rows=lengths)
    hashed = _hashed_rows(exec, a, b) if hashed is None else hashed
    _hash_rows(exec, "fill_rows_hash", a, hashed, *factors, *product, WRITE_COLS=int(write_cols))


def transpose(exec, a, conjugate):
    # T = A^T (A^H): rows counted per column of A (at c + 1), scattered, each row sorted;
    # source[p] = the entry of A at p
    n, m = a.shape
    nnz = a.nnz
    row_ptrs = _zeros(exec, m + 1)
    _run(exec, "count_columns", a.dtype, nnz, a.col_idxs.data, row_ptrs.data)
    exec.run("components.prefix_sum.prefix_sum", row_ptrs)
    col_idxs, source = exec.alloc((max(nnz, 1),), np.int32), exec.alloc((max(nnz, 1),), np.int32)
    if nnz:
        # (row_ptrs[c + 1]: the next free place of row c, then its end)
        _run(exec, "scatter_entries", a.dtype, n, a.row_ptrs.data, a.col_idxs.data, row_ptrs.data,
             col_idxs.data, source.data)
        _run(exec, "sort_transposed", a.dtype, m, row_ptrs.data, col_idxs.data, source.data)
    values = exec.alloc((nnz,), a.dtype)
    transpose_values(exec, a, source, values, conjugate)
    return row_ptrs, col_idxs[:nnz], values, source[:nnz]


def transpose_values(exec, a, source, values, conjugate):
    # values[p] = a's value at source[p] (conjugated for A^H)
    _run(exec, "gather_values", a.dtype, a.nnz, source.data, a.values.data, values.data,
         CONJUGATE=int(bool(conjugate)))
