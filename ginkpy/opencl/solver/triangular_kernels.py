"""OpenCL kernels of LowerTrs and UpperTrs (sources in triangular_kernels.cl).

The "sparselib" algorithm, by level scheduling on a GPU: ``generate`` analyses the triangle
once on the host: each row's dependency level (components.level_set: 0 for rows needing no
other row, else one more than the deepest row it needs), the rows sorted by level, the strict
triangle copied to the device in that order. Runs of consecutive thin levels are batched into
one launch of a single work-group that steps through them with barriers; each wide level gets
its own launch over all its rows. ``solve`` replays that schedule. On a CPU device one launch
runs through the rows in order (forward, or backward for an upper triangle), one work-item per
column, on the triangle split on the device (a ``SequentialPlan``: each row's inverse diagonal,
its entry of the row solved just before, and its other entries scaled, in arrays of their own;
two launches and a prefix sum): a core substitutes a 2D grid's triangle of 250000 rows in about
0.6 ms, where stepping work-items through its 1000 levels with barriers takes several; no level
analysis and no copy to the host are needed.

The "jacobi" algorithm: ``jacobi_generate`` inverts the diagonal on the device,
``jacobi_initialize``, ``jacobi_two_sweeps`` and ``jacobi_three_sweeps`` (the first two or three
sweeps from 0, the earlier ones recomputed at the neighbours) and ``jacobi_sweep`` are one launch
each, one work-item per (row, column); ``jacobi_bound`` (the contraction bound max_i |d_i|^-1
sum_j |n_ij|, the work of a row of jacobi_three_sweeps and whether a diagonal entry is zero or a
value not finite) one launch, one work-item per row, a work-group max each, left on the device
for the caller to read; ``jacobi_inverse_diagonal`` is ``jacobi_generate`` without the check
(no read).
"""
from __future__ import annotations

import attrs
import numpy as np
import pyopencl as cl
import scipy.sparse as sp

from ginkpy.core.matrix.dense import Dense
from ginkpy.opencl.launch import ceil_div, check_int32, launch, launch_1d, local_buffer, pow2_at_most, round_up
from ginkpy.reference.solver.triangle import first_zero, split_triangle

WORK_GROUP = 256  # work-group size of the wide-level launches


@attrs.frozen
class LevelSchedule:
    """The level structure of a triangle and its rows in level order, on the device.

    ``launches`` lists ``("chain", first_level, last_level)`` for a run of thin levels solved by
    one work-group and ``("level", begin, end)`` (level-order positions) for a wide level.
    """

    num_levels: int
    chain_size: int  # work-group size of the chain launches
    launches: tuple
    level_ptrs: object
    rows: object
    row_ptrs: object
    col_idxs: object
    values: object
    diag: object


def _chain_sizes(info) -> tuple[int, int]:
    """Work-group size of a chain and the most rows a level may have to join one.

    On a GPU a launch costs microseconds while a pass of 1024 work-items over a level costs
    about one memory latency; on a CPU a launch costs tens of microseconds while one core
    solves thousands of rows in that time.
    """
    if info.is_gpu:
        size = min(1024, info.max_work_group_size)
        return size, 2 * size
    size = min(256, info.max_work_group_size)
    return size, 16 * size


@attrs.frozen
class SequentialPlan:
    """The substitution of a CPU device: the triangle split into its inverse diagonal (n x 1),
    the entries of the rows solved just before (``near``: a_i,i-1 / a_ii forward, a_i,i+1 /
    a_ii backward, 0 where absent) and the other entries scaled by 1 / a_ii in CSR arrays of
    their own (made on the device, see ``sequential_count`` in the .cl), and which triangle it
    is."""

    row_ptrs: object
    col_idxs: object
    values: object
    inv_diag: object
    near: object
    lower: bool
    launches: tuple = (("sequential", 0, 0),)


def _sequential(info) -> bool:
    """Whether the rows are substituted in order by one work-item per column (a CPU device)."""
    return bool(info.is_cpu)


def _schedule(level_ptrs: np.ndarray, thin_rows: int) -> tuple:
    """Launches for the levels: runs of thin levels as chains, wide levels alone."""
    launches, run_start = [], None
    sizes = np.diff(level_ptrs)
    for level, size in enumerate(sizes.tolist()):
        if size <= thin_rows:
            run_start = level if run_start is None else run_start
            continue
        if run_start is not None:
            launches.append(("chain", run_start, level))
            run_start = None
        launches.append(("level", int(level_ptrs[level]), int(level_ptrs[level + 1])))
    if run_start is not None:
        launches.append(("chain", run_start, len(sizes)))
    return tuple(launches)


def generate(exec, a, lower, unit_diagonal):
    """The LevelSchedule (None for Dense) and the first row with a zero diagonal (-1 if none)."""
    if isinstance(a, Dense):
        return None, -1 if unit_diagonal else first_zero(np.diagonal(a.to_numpy()))
    if _sequential(exec.info):
        n, nnz = a.shape[0], int(a.values.shape[0])
        plan = SequentialPlan(exec.alloc((n + 1,), np.int32), exec.alloc((max(nnz, 1),), np.int32),
                              exec.alloc((max(nnz, 1),), a.dtype), Dense.empty(exec, (n, 1), a.dtype),
                              exec.alloc((max(n, 1),), a.dtype), bool(lower))
        zero_row = _split(exec, a, unit_diagonal, plan)
        return (None if zero_row >= 0 else plan), zero_row
    row_ptrs, col_idxs, values = exec.to_host(a.row_ptrs, a.col_idxs, a.values)
    strict, diag, zero_row = split_triangle(sp.csr_matrix((values, col_idxs, row_ptrs), shape=a.shape),
                                            lower, unit_diagonal)
    if zero_row >= 0:
        return None, zero_row
    to = exec.from_host
    level = exec.host.run("components.level_set.compute_levels", strict.indptr, strict.indices)
    order = np.argsort(level, kind="stable")
    num_levels = int(level.max()) + 1 if level.size else 0
    level_ptrs = np.zeros(num_levels + 1, dtype=np.int32)
    np.cumsum(np.bincount(level, minlength=num_levels), out=level_ptrs[1:])
    permuted = strict[order]  # rows in level order, columns still the original rows
    chain_size, thin_rows = _chain_sizes(exec.info)
    # the chain kernel may allow fewer work-items than the device (registers)
    chain_size = min(chain_size, exec.kernel(__file__, a.dtype, "solve_chain").get_work_group_info(
        cl.kernel_work_group_info.WORK_GROUP_SIZE, exec.device))
    return LevelSchedule(num_levels, chain_size, _schedule(level_ptrs, thin_rows), to(level_ptrs),
                         to(order.astype(np.int32)), to(permuted.indptr.astype(np.int32)),
                         to(permuted.indices.astype(np.int32)), to(permuted.data), to(diag[order])), -1


def update(exec, plan, a, lower, unit_diagonal) -> int:
    """``plan`` after new values of ``a`` on the pattern it was made from, in its own arrays:
    a CPU device's split of the rows again; a LevelSchedule's values and diagonal in its level
    order (its levels kept). The first row with a zero diagonal (-1 if none)."""
    if isinstance(plan, SequentialPlan):
        return _split(exec, a, unit_diagonal, plan)
    row_ptrs, col_idxs, values, order = exec.to_host(a.row_ptrs, a.col_idxs, a.values, plan.rows)
    strict, diag, zero_row = split_triangle(sp.csr_matrix((values, col_idxs, row_ptrs), shape=a.shape),
                                            lower, unit_diagonal)
    if zero_row < 0:
        exec.write(plan.values, strict[order].data)
        exec.write(plan.diag, diag[order])
    return zero_row


def solve(exec, plan, b, x):
    # levels in order; the rows of a level in parallel (on a CPU: all rows in order)
    k = b.shape[1]
    if k == 0 or not plan.launches or b.shape[0] == 0:
        return
    if isinstance(plan, SequentialPlan):
        exec.kernel(__file__, x.dtype, "solve_sequential", LOWER=int(plan.lower))(
            exec.queue, (k,), None, np.int32(b.shape[0]), np.int32(k), plan.row_ptrs.data, plan.col_idxs.data,
            plan.values.data, plan.inv_diag.values.data, plan.near.data, b.values.data, x.values.data)
        return
    arrays = (plan.rows.data, plan.row_ptrs.data, plan.col_idxs.data, plan.values.data,
              plan.diag.data, b.values.data, x.values.data)
    for kind, first, last in plan.launches:
        if kind == "chain":
            exec.kernel(__file__, x.dtype, "solve_chain")(
                exec.queue, (plan.chain_size,), (plan.chain_size,), np.int32(first), np.int32(last),
                plan.level_ptrs.data, np.int32(k), *arrays)
        else:
            size = (last - first) * k
            wg = min(WORK_GROUP, exec.info.max_work_group_size)
            exec.kernel(__file__, x.dtype, "solve_level")(
                exec.queue, ((size + wg - 1) // wg * wg,), (wg,),
                np.int32(first), np.int32(last), np.int32(k), *arrays)


_NONE = np.iinfo(np.int32).max


def _split(exec, a, unit_diagonal, plan) -> int:
    """A SequentialPlan's arrays from the triangle ``a`` (made again on new values of its
    pattern): two launches and a prefix sum, one read (the first row with a zero diagonal, -1
    if none)."""
    n = a.shape[0]
    bad = exec.from_host(np.array([_NONE], np.int32))
    lower = {"LOWER": int(plan.lower)}
    launch_1d(exec, __file__, "sequential_count", a.dtype, n, np.int32(n), np.int32(bool(unit_diagonal)),
              a.row_ptrs.data, a.col_idxs.data, a.values.data, plan.inv_diag.values.data, plan.near.data,
              plan.row_ptrs.data, bad.data, defines=lower)
    # row_ptrs[i] = the counts of the rows before i
    exec.run("components.prefix_sum.prefix_sum", plan.row_ptrs)
    launch_1d(exec, __file__, "sequential_fill", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              a.values.data, plan.inv_diag.values.data, plan.row_ptrs.data, plan.col_idxs.data,
              plan.values.data, defines=lower)
    row = int(exec.to_host(bad)[0])
    return -1 if row == _NONE else row


def jacobi_generate(exec, a, unit_diagonal, inv_diag) -> int:
    bad = exec.from_host(np.array([_NONE], np.int32))
    _inverse_diagonal(exec, a, unit_diagonal, inv_diag, bad)
    row = int(exec.to_host(bad)[0])
    return -1 if row == _NONE else row


def jacobi_inverse_diagonal(exec, a, unit_diagonal, inv_diag):
    # inv_diag = D^-1, unchecked (the caller knows the diagonal is nonzero): no read
    _inverse_diagonal(exec, a, unit_diagonal, inv_diag, exec.scratch("jacobi_bad_row", (1,), np.int32))


def _inverse_diagonal(exec, a, unit_diagonal, inv_diag, bad):
    n = a.shape[0]
    launch_1d(exec, __file__, "jacobi_generate", a.dtype, n, np.int32(n), np.int32(bool(unit_diagonal)),
              a.row_ptrs.data, a.col_idxs.data, a.values.data, inv_diag.values.data, bad.data)


def jacobi_initialize(exec, inv_diag, b, x):
    # x = D^-1 b
    launch(exec, __file__, "jacobi_initialize", x.dtype, x.shape, inv_diag, b, x)


def _sweep(exec, a, lower, inv_diag, b, x, out, from_zero):
    # out = D^-1 (b - N y): y = x (from_zero 0), or the first (2) or second (3) sweep from x = 0
    size = out.shape[0] * out.shape[1]
    if size == 0:
        return
    check_int32(size)
    wg = min(WORK_GROUP, exec.info.max_work_group_size)
    exec.kernel(__file__, out.dtype, "jacobi_sweep", LOWER=int(bool(lower)))(
        exec.queue, (round_up(size, wg),), (wg,), np.int32(size), np.int32(out.shape[1]),
        a.row_ptrs.data, a.col_idxs.data, a.values.data, inv_diag.values.data, b.values.data, x.values.data,
        out.values.data, np.int32(from_zero))


def jacobi_sweep(exec, a, lower, inv_diag, b, x, out):
    # out = D^-1 (b - N x)
    _sweep(exec, a, lower, inv_diag, b, x, out, 0)


def jacobi_two_sweeps(exec, a, lower, inv_diag, b, out):
    # out = D^-1 (b - N D^-1 b): the first two sweeps from x = 0 in one launch
    _sweep(exec, a, lower, inv_diag, b, b, out, 2)


def jacobi_three_sweeps(exec, a, lower, inv_diag, b, out):
    # out = D^-1 (b - N D^-1 (b - N D^-1 b)): the first three sweeps from x = 0 in one launch
    _sweep(exec, a, lower, inv_diag, b, b, out, 3)


def jacobi_bound(exec, a, lower, unit_diagonal):
    # per work-group the maxima of (|d_i|^-1 sum_{j in N_i} |a_ij|, sum_{j in N_i} entries of row j,
    # a zero or missing diagonal or a value not finite): one launch, (groups, 3) on the device,
    # left to the caller to read (with others' in one read)
    n = a.shape[0]
    real = np.finfo(a.dtype).dtype
    if n == 0:
        return exec.from_host(np.zeros((1, 3), real))
    check_int32(n)
    wg = pow2_at_most(min(WORK_GROUP, exec.info.max_work_group_size))
    groups = ceil_div(n, wg)
    partial = exec.alloc((groups, 3), real)
    exec.kernel(__file__, a.dtype, "jacobi_bound", LOWER=int(bool(lower)))(
        exec.queue, (groups * wg,), (wg,), np.int32(n), np.int32(bool(unit_diagonal)), a.row_ptrs.data,
        a.col_idxs.data, a.values.data, partial.data, local_buffer(3 * wg, real))
    return partial
