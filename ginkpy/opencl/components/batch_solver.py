"""How the batched solvers' kernels are launched (their shared device code is batch_solver.cl).

One launch solves the whole batch. On a GPU one work-group of up to 256 work-items (1024 for a
batch too small to fill the device) solves one item at a time; the item's arrays (work vectors,
x, preconditioner, matrix values) go to local memory in the solver's order of priority while they
fit the device's local memory, the rest to global memory, so a large single item works too.
When some work vectors are in global memory, each work-group has its own slot of them and the
work-groups loop over the items (as many as about eight per compute unit); otherwise there is
one work-group per item and the device balances them.

On a CPU device (PoCL) a work-group of one work-item solves an item alone: no barriers and no
reduction trees, every loop a plain sequential loop; the device's threads take the items.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import check_int32, local_buffer, pow2_at_most

FORMAT_CSR, FORMAT_ELL, FORMAT_DENSE = 1, 2, 3
PRECOND_NONE, PRECOND_SCALAR, PRECOND_BLOCK, PRECOND_ILU, PRECOND_ISAI = 0, 1, 2, 3, 4
GPU_GROUP, GPU_GROUP_SINGLE = 256, 1024  # work-items per item: in a batch, and for a batch too small to fill the device
GROUPS_PER_UNIT = 8      # work-groups per compute unit when the work vectors are in global memory
LOCAL_RESERVE = 1024     # bytes of local memory left to the compiler on a GPU


@attrs.frozen
class Plan:
    """How a batch is launched: work-items per group, groups, the arrays in local memory and
    the entries of the global work-vector slot of each group."""

    work_group: int
    groups: int
    local: frozenset
    local_entries: int
    global_entries: int


def plan(info, num_items: int, n: int, arrays: list[tuple[str, int, bool]], itemsize: int) -> Plan:
    """The launch of ``num_items`` items of ``n`` rows on the device ``info``. ``arrays`` lists
    (name, entries, is work vector) in order of priority for local memory; the arrays that are
    not work vectors (x, the matrix and preconditioner values) stay where they are in global
    memory when they do not fit."""
    if info.is_cpu:
        group = 1
        budget = info.local_mem_size - 4 * itemsize
    else:
        widest = GPU_GROUP_SINGLE if num_items < info.compute_units else GPU_GROUP
        group = max(1, min(pow2_at_most(info.max_work_group_size), widest, _pow2_at_least(n)))
        budget = info.local_mem_size - LOCAL_RESERVE - 4 * group * itemsize
    local, used, global_entries = set(), 0, 0
    for name, entries, work in arrays:
        if (used + entries) * itemsize <= budget:
            local.add(name)
            used += entries
        elif work:
            global_entries += entries
    if global_entries == 0:
        groups = num_items
    else:
        groups = min(num_items, GROUPS_PER_UNIT * info.compute_units,
                     max(1, info.global_mem_size // 8 // (global_entries * itemsize)))
    return Plan(group, groups, frozenset(local), used, global_entries)


def _kernel_group_limit(exec, kernel) -> int:
    """The most work-items per group the compiled kernel can run with on the device."""
    import pyopencl as cl
    return int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, exec.device))


def _pow2_at_least(value: int) -> int:
    return 1 << max(0, int(value) - 1).bit_length()


def _factor_arrays(exec, preconditioner) -> tuple:
    """(PRECOND, ints, indices, stride) of a batch Ilu or Isai as batch_solver.cl reads them. Ilu
    (made once, kept in its cache): ints = [the level count of L and U together, L's level count,
    row pointers (n + 1), diagonal positions (n), the level pointers (L's levels, then U's), the
    rows by level (L's, then U's)], indices the column indices. Isai: its row pointers and column
    indices (M_L's, then M_U's), stride M_L's entries."""
    if preconditioner.kind != "ilu":
        return PRECOND_ISAI, preconditioner.row_ptrs, preconditioner.col_idxs, preconditioner.lower_nnz
    if "opencl" not in preconditioner.cache:
        ptrs, cols, diag = (a.astype(np.int64) for a in exec.to_host(preconditioner.row_ptrs,
                                                                     preconditioner.col_idxs, preconditioner.diag))
        rows = np.repeat(np.arange(diag.size), np.diff(ptrs))
        levels = []
        for strict, counts in ((cols < rows, diag - ptrs[:-1]), (cols > rows, ptrs[1:] - diag - 1)):
            # the level of each row in the dependency graph of the strict triangle
            levels.append(exec.host.run("components.level_set.compute_levels",
                                        np.concatenate([[0], np.cumsum(counts)]), cols[strict]))
        l_levels = int(levels[0].max()) + 1
        level = np.concatenate([levels[0], levels[1] + l_levels])  # U's levels after L's
        level_ptrs = np.concatenate([[0], np.cumsum(np.bincount(level))])
        order = np.argsort(level, kind="stable") % diag.size
        ints = np.concatenate([[level_ptrs.size - 1, l_levels], ptrs, diag, level_ptrs, order])
        preconditioner.cache["opencl"] = (PRECOND_ILU, exec.from_host(ints.astype(np.int32)), preconditioner.col_idxs, 0)
    return preconditioner.cache["opencl"]


def solve(exec, module_file: str, a, preconditioner, b, x, work: list[tuple[str, int]], max_iterations: int,
          rtol: Any, atol: Any, iterations, residual_norms, reasons, *extra: Any) -> Plan:
    """Run kernel ``apply`` of the ``.cl`` beside ``module_file`` on every item of the batch:
    ``work`` lists the solver's work arrays (name, entries) in order of priority, ``extra`` the
    kernel's arguments after the shared ones. Returns the plan it launched with."""
    N, n = a.num_batch_items, a.common_size[0]
    dtype, real = a.dtype, real_dtype(a.dtype)
    dummy_int = exec.alloc((1,), np.int32)
    if a.kind == "csr":
        fmt, row_ptrs, col_idxs, width, mat_stride = FORMAT_CSR, a.row_ptrs, a.col_idxs, 0, a.nnz
    elif a.kind == "ell":
        width = a.num_stored_elements_per_row
        fmt, row_ptrs, col_idxs, mat_stride = FORMAT_ELL, dummy_int, a.col_idxs, n * width
    else:
        fmt, row_ptrs, col_idxs, width, mat_stride = FORMAT_DENSE, dummy_int, dummy_int, 0, n * n
    if preconditioner is None:
        prec, block_ptrs, row_blocks, block_stride, prec_values, prec_stride = \
            PRECOND_NONE, dummy_int, dummy_int, 0, exec.alloc((1,), dtype), 0
    elif preconditioner.kind == "jacobi":
        block_stride = preconditioner.block_stride
        prec = PRECOND_SCALAR if block_stride == 1 else PRECOND_BLOCK
        block_ptrs, row_blocks, prec_values = preconditioner.block_ptrs, preconditioner.row_blocks, preconditioner.blocks
        prec_stride = preconditioner.num_blocks * block_stride * block_stride
    else:  # Ilu, Isai: their arrays in the layout of batch_solver.cl
        prec, block_ptrs, row_blocks, block_stride = _factor_arrays(exec, preconditioner)
        prec_values, prec_stride = preconditioner.values, int(preconditioner.values.shape[1])
        # M v is computed into pz (by ISAI through ptmp) before the rows read it
        work = [*work, ("pz", n)] + ([("ptmp", n)] if prec == PRECOND_ISAI else [])
    arrays = [(name, entries, True) for name, entries in work] + [("xv", n, False)]
    if prec != PRECOND_NONE:
        arrays.append(("m_vals", prec_stride, False))
    arrays.append(("a_vals", mat_stride, False))
    info = exec.info
    while True:
        p = plan(info, N, n, arrays, dtype.itemsize)
        defines = {"WG": p.work_group, "FORMAT": fmt, "PRECOND": prec,
                   **{f"LOCAL_{name}": int(name in p.local) for name, _, _ in arrays}}
        kernel = exec.kernel(module_file, dtype, "apply", **defines)
        # the compiled kernel may allow fewer work-items per group than the device (registers)
        limit = _kernel_group_limit(exec, kernel)
        if p.work_group <= limit:
            break
        info = attrs.evolve(info, max_work_group_size=limit)
    for what, size in (("a batch matrix", N * mat_stride), ("a batch preconditioner", N * prec_stride),
                       ("a MultiVector", N * n), ("the batched solver's work space", p.groups * p.global_entries),
                       ("the batched solver's local work space", p.local_entries)):
        check_int32(size, what)
    gwork = exec.alloc((max(1, p.groups * p.global_entries),), dtype)
    kernel(exec.queue, (p.groups * p.work_group,), (p.work_group,),
           np.int32(N), np.int32(n), row_ptrs.data, col_idxs.data, np.int32(width), a.values.data,
           np.int32(mat_stride), block_ptrs.data, row_blocks.data, np.int32(block_stride), prec_values.data,
           np.int32(prec_stride), b.values.data, x.values.data, np.int32(max_iterations), real.type(rtol),
           real.type(atol), iterations.data, residual_norms.data, reasons.data, gwork.data,
           np.int32(p.global_entries), local_buffer(max(1, p.local_entries), dtype),
           local_buffer(4 * p.work_group, dtype), *extra)
    return p
