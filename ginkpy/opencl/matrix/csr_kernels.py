"""OpenCL kernels of Csr (sources in csr_kernels.cl).

SpMV has five launch strategies, chosen once per matrix from its row lengths and the device
by :func:`select_strategy` and kept in ``A.cache``:

- ``classical``: one work-item per row; the lean path for short rows of similar length (rows of
  at most 4 or 8 entries in a loop unrolled to 4 or 8 turns, ``max_row``).
- ``vector``: a power-of-two number of work-items per row, reduced in local memory, for longer rows.
- ``long_rows``: rows of similar length as classical or vector, plus a few much longer rows
  (an arrow matrix) cut into pieces of one work-group each, in the same launch.
- ``merge_path``: for rows of any lengths (power law): the rows plus nonzeros are cut into equal
  parts, two per work-group (the second loads while the first is summed); a part is staged in
  local memory (the matrix is read contiguously) and every work-item takes an equal share of it.
- ``row_blocks``: one work-item per contiguous, nonzero-balanced block of rows (the same
  partition of the merge path, with its bounds moved to row ends where that is near); what a
  CPU runs best, so CPUs always use it.

The last three sum a row split over several parts (pieces, work-groups or blocks) in a second,
small launch, the fix-up. The launches of a strategy are made once per column count with all
their arguments but the operands (:func:`_launches`): building them per call cost more host
time than a small SpMV takes on a GPU.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.matrix.dense import Dense
from ginkpy.opencl.launch import (MAX_PARTIALS, ceil_div, check_int32, local_buffer, resize, round_up, rows_at_once,
                                  scalar_arg)
from ginkpy.opencl.matrix.csr_strategy import (DOTS_GROUPS_PER_UNIT, GPU_PARTS, _fixup_wg, default_work_group,
                                              describe, select_strategy)

def _kernel(exec, a, name: str):
    return exec.kernel(__file__, a.dtype, name)


def spmv(exec, a, b, x) -> None:
    # x = A b
    _spmv(exec, a, b, x, None, None)


def advanced_spmv(exec, alpha, a, b, beta, x) -> None:
    # x = alpha A b + beta x
    _spmv(exec, a, b, x, alpha, beta)


def _spmv(exec, a, b, x, alpha, beta) -> None:
    n, k = x.shape
    if n == 0 or k == 0:
        return
    check_int32(max(n, b.shape[0]) * k, "entries of b or x")
    x_buf = x.values.data
    if alpha is None:  # plain SpMV never reads alpha and beta: x's buffer stands in for them
        operands = (b.values.data, x_buf, _FALSE, x_buf, _ZERO, x_buf, _ZERO)
    else:
        operands = (b.values.data, x_buf, _TRUE, *scalar_arg(alpha), *scalar_arg(beta))
    queue = exec.queue
    for launch in _launches(exec, a, k):
        launch.kernel(queue, launch.global_size, launch.local_size, *launch.head,
                      *(operands[1:5] if launch.fixup else operands), *launch.tail)


_FALSE = _ZERO = np.int32(0)
_TRUE = np.int32(1)


@attrs.frozen
class _Launch:
    """One kernel launch of an SpMV with all but its operands fixed: the kernel takes
    (*head, b, x, advanced, alpha, alpha stride, beta, beta stride, *tail), the fix-up
    (*head, x, advanced, alpha, alpha stride, *tail)."""

    kernel: Any
    global_size: tuple[int, int]
    local_size: tuple[int, int]
    head: tuple
    tail: tuple = ()
    fixup: bool = False


def _launches(exec, a, k: int) -> tuple[_Launch, ...]:
    """The launches of the SpMV of ``a`` with ``k`` columns, made once per strategy and column
    count (a call then only passes its operands: building the arguments cost more host time
    than a small SpMV takes on a GPU), again if the matrix's arrays were replaced."""
    strategy = select_strategy(exec, a)
    matrix = (a.row_ptrs, a.col_idxs, a.values)
    made = strategy.launches.get(k)
    if made is not None and all(p is q for p, q in zip(made[0], matrix)):
        return made[1]
    n = a.shape[0]
    wg, lanes, parts = strategy.work_group, strategy.lanes, strategy.parts
    # the sums of the parts; a stand-in where there are none (never written then)
    carries = (exec.alloc((parts, k), a.dtype) if parts else a.values).data
    head = (np.int32(n), np.int32(k), a.row_ptrs.data, a.col_idxs.data, a.values.data)

    def launch(name, size, tail=(), head=head, work_group=wg, defines=None, fixup=False):
        return _Launch(exec.kernel(__file__, a.dtype, name, **(defines or {})), (size, k),
                       (work_group, 1), head, tail, fixup)

    if strategy.name == "classical":
        launches = [launch("spmv_classical", round_up(n, wg), defines=dict(MAX_ROW=strategy.max_row))]
    elif strategy.name == "vector":
        launches = [launch("spmv_vector", round_up(n * lanes, wg),
                           (np.int32(lanes), local_buffer(wg, a.dtype)))]
    elif strategy.name == "long_rows":
        bounds = strategy.bounds if parts else a.row_ptrs  # a stand-in where there are no pieces
        launches = [launch("spmv_long_rows", (parts + ceil_div(n * lanes, wg)) * wg,
                           (np.int32(lanes), np.int32(strategy.long_min), np.int32(parts),
                            bounds.data, carries, local_buffer(wg, a.dtype)))]
    elif strategy.name == "merge_path":
        launches = [launch("spmv_merge_path", ceil_div(parts, GPU_PARTS) * wg,
                           (np.int32(parts), strategy.bounds.data, carries),
                           defines=dict(MERGE_PATH_WORK_GROUP=wg, MERGE_PATH_ITEMS=strategy.items,
                                        MERGE_PATH_PARTS=GPU_PARTS))]
    else:
        launches = [launch("spmv_row_blocks", round_up(parts, wg),
                           (np.int32(parts), strategy.bounds.data, carries))]
    if strategy.runs is not None:
        # the rows summed over several parts
        count, fixup_wg = strategy.runs.shape[0] // 3, _fixup_wg(exec)
        long, fixup_lanes = strategy.fixup_long, strategy.fixup_lanes
        size = round_up(long * fixup_lanes, fixup_wg) + round_up(count - long, fixup_wg)
        launches.append(launch("spmv_merge_path_fixup", size, (local_buffer(fixup_wg, a.dtype),),
                               head=(np.int32(k), np.int32(count), np.int32(long),
                                     np.int32(fixup_lanes), strategy.runs.data, carries),
                               work_group=fixup_wg, fixup=True))
    strategy.launches[k] = (matrix, tuple(launches))
    return strategy.launches[k][1]


def spmv_dots(exec, a, b, x, u, w, partials) -> None:
    """x = A b and the partial sums of u . x (and w . x unless w is None) per column: in the
    same pass for the classical and vector strategies and for row blocks that split no row;
    else the SpMV, then ``components.reduction.dots``."""
    n, k = x.shape
    strategy = select_strategy(exec, a)
    fused = strategy.name in ("classical", "vector") or (strategy.name == "row_blocks" and strategy.runs is None)
    if not fused or n == 0 or k == 0:
        _spmv(exec, a, b, x, None, None)
        exec.run("components.reduction.dots", x, u, w, partials)
        return
    check_int32(max(n, b.shape[0]) * k, "entries of b or x")
    count = (1 if w is None else 2) * k
    defines = dict(TWO=int(w is not None), W_IS_Y=int(w is x))
    operands = (np.int32(n), np.int32(k), a.row_ptrs.data, a.col_idxs.data, a.values.data, b.values.data,
                x.values.data, u.values.data, (w or u).values.data)
    if strategy.name == "row_blocks":
        parts = strategy.parts
        resize(exec, partials, (parts, count))
        wg = strategy.work_group
        exec.kernel(__file__, a.dtype, "spmv_row_blocks_dots", **defines)(
            exec.queue, (round_up(parts, wg), k), (wg, 1), *operands, partials.values.data,
            np.int32(parts), strategy.bounds.data)
        return
    wg = strategy.work_group
    groups = _dots_groups(exec, strategy, n, count)
    resize(exec, partials, (groups, count))
    if strategy.name == "classical":
        exec.kernel(__file__, a.dtype, "spmv_classical_dots", MAX_ROW=strategy.max_row,
                    ROWS_AT_ONCE=rows_at_once(exec.info), **defines)(
            exec.queue, (groups * wg, k), (wg, 1), *operands, partials.values.data, local_buffer(wg, a.dtype))
    else:
        exec.kernel(__file__, a.dtype, "spmv_vector_dots", **defines)(
            exec.queue, (groups * wg, k), (wg, 1), *operands, partials.values.data, np.int32(strategy.lanes),
            local_buffer(wg, a.dtype))


def _dots_groups(exec, strategy, n: int, count: int) -> int:
    """Work-groups of a classical or vector SpMV that writes ``count`` partial sums per group
    (its rows strided over the launch): at most DOTS_GROUPS_PER_UNIT per compute unit and
    MAX_PARTIALS partial sums in all (Cg's spmv_p takes the same)."""
    rows_per_group = strategy.work_group // strategy.lanes
    return max(1, min(ceil_div(n, rows_per_group), DOTS_GROUPS_PER_UNIT * exec.info.compute_units,
                      MAX_PARTIALS // count))


def scale_columns(exec, a, diag, out) -> None:
    """out (the values of A D) = A's values times diag at their columns."""
    nnz = a.nnz
    if nnz == 0:
        return
    wg = default_work_group(exec)
    _kernel(exec, a, "scale_columns")(exec.queue, (round_up(nnz, wg),), (wg,), np.int32(nnz), a.col_idxs.data,
                                      a.values.data, diag.values.data, out.data)


def convert_to_dense(exec, a, out) -> None:
    n, m = a.shape
    if n == 0 or m == 0:
        return
    check_int32(n * m, "entries of the dense matrix")
    exec.run("matrix.dense.fill", out, 0.0)
    wg = default_work_group(exec)
    _kernel(exec, a, "scatter_to_dense")(
        exec.queue, (round_up(n, wg),), (wg,), np.int32(n), np.int32(m), a.row_ptrs.data,
        a.col_idxs.data, a.values.data, out.values.data)


def extract_diagonal(exec, a, out) -> None:
    size = min(a.shape)
    if size == 0:
        return
    wg = default_work_group(exec)
    _kernel(exec, a, "extract_diagonal")(
        exec.queue, (round_up(size, wg),), (wg,), np.int32(size), a.row_ptrs.data,
        a.col_idxs.data, a.values.data, out.values.data)


def is_finite(exec, a) -> bool:
    # the stored values as an nnz x 1 Dense view: Dense's reduction does the work
    return exec.run("matrix.dense.is_finite", Dense(exec, a.values.reshape(a.nnz, 1)))


def transpose(exec, a):
    """Row pointers, column indices (sorted) and values of A^T, computed on the host with the
    reference kernel: it runs once per solver (Bicg forms A^T at generate time), where a device
    counting sort would save one copy of the matrix each way, not time per iteration."""
    host = exec.host
    return tuple(exec.from_host(v) for v in host.run("matrix.csr.transpose", a.clone(host)))


def conj_transpose(exec, a):
    """Row pointers, column indices (sorted) and values of A^H, on the host as :func:`transpose`."""
    host = exec.host
    return tuple(exec.from_host(v) for v in host.run("matrix.csr.conj_transpose", a.clone(host)))


def permute(exec, a, rows, col_inverse):
    """Row pointers, column indices (sorted in each row) and values of the matrix whose row i is
    row rows[i] of A (all rows in order for None), with column c renumbered col_inverse[c]:
    the row lengths gathered and scanned, then one work-item per row copies its row and, where
    columns were renumbered, sorts it by insertion (rows are short; this runs once per setup)."""
    n, nnz = a.shape[0], a.nnz
    row_ptrs = exec.alloc((n + 1,), np.int32)
    col_idxs, values = exec.alloc((nnz,), np.int32), exec.alloc((nnz,), a.dtype)
    has_rows, has_cols = int(rows is not None), int(col_inverse is not None)
    wg = default_work_group(exec)
    rows_arg = (a.row_ptrs if rows is None else rows).data
    # row_ptrs[i] = length of row rows[i], row_ptrs[n] = 0; then their exclusive prefix sum
    exec.kernel(__file__, a.dtype, "permuted_row_lengths", ROWS=has_rows)(
        exec.queue, (round_up(n + 1, wg),), (wg,), np.int32(n), rows_arg, a.row_ptrs.data, row_ptrs.data)
    exec.run("components.prefix_sum.prefix_sum", row_ptrs)
    if n and nnz:
        exec.kernel(__file__, a.dtype, "permute_rows", ROWS=has_rows, COLS=has_cols)(
            exec.queue, (round_up(n, wg),), (wg,), np.int32(n), rows_arg,
            (a.row_ptrs if col_inverse is None else col_inverse).data, a.row_ptrs.data, a.col_idxs.data,
            a.values.data, row_ptrs.data, col_idxs.data, values.data)
    return row_ptrs, col_idxs, values


def scale_rows(exec, a, diag, out) -> None:
    """out (the values of D A) = A's values times diag at their rows; one work-item per row."""
    n = a.shape[0]
    if n == 0 or a.nnz == 0:
        return
    wg = default_work_group(exec)
    _kernel(exec, a, "scale_rows")(exec.queue, (round_up(n, wg),), (wg,), np.int32(n), a.row_ptrs.data,
                                   a.values.data, diag.values.data, out.data)


def spmv_strategy(exec, a) -> str:
    """How the SpMV of ``a`` runs on this device (the strategy chosen from its row lengths)."""
    return describe(select_strategy(exec, a))
