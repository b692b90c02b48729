"""OpenCL kernels of Multigrid's cycle (sources in multigrid_kernels.cl): restriction (of a
residual computed in the same pass or given, or fused with the first smoothing step),
prolongation alone or fused with the smoothing step after it, and the coarse levels cycled
through in one work-group (coarse_cycle)."""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import check_int32, launch_1d, pow2_at_most

COARSE_CYCLE_GROUP = 1024  # work-items of coarse_cycle's one work-group at most


def restrict_residual(exec, a, agg_ptrs, agg_rows, b, x, coarse_b):
    size, k = coarse_b.values.size, coarse_b.shape[1]
    check_int32(max(size, b.values.size))
    launch_1d(exec, __file__, "restrict_residual", b.dtype, size, np.int32(size), np.int32(k), a.row_ptrs.data,
              a.col_idxs.data, a.values.data, agg_ptrs.data, agg_rows.data, b.values.data, x.values.data,
              coarse_b.values.data)


def restrict(exec, agg_ptrs, agg_rows, r, coarse_b):
    size, k = coarse_b.values.size, coarse_b.shape[1]
    check_int32(max(size, r.values.size))
    launch_1d(exec, __file__, "aggregate_sums", r.dtype, size, np.int32(size), np.int32(k), agg_ptrs.data,
              agg_rows.data, r.values.data, coarse_b.values.data)


def relax_first_restrict(exec, beta, a, inv_diag, agg_ptrs, agg_rows, b, x, coarse_b):
    size, k = coarse_b.values.size, coarse_b.shape[1]
    check_int32(max(size, b.values.size))
    launch_1d(exec, __file__, "relax_first_restrict", b.dtype, size, np.int32(size), np.int32(k),
              real_dtype(b.dtype).type(beta), a.row_ptrs.data, a.col_idxs.data, a.values.data, inv_diag.values.data,
              agg_ptrs.data, agg_rows.data, b.values.data, x.values.data, coarse_b.values.data)


def prolong(exec, agg, coarse_x, x):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "prolong", x.dtype, size, np.int32(size), np.int32(k), agg.data,
              coarse_x.values.data, x.values.data)


def prolong_relax(exec, beta, a, inv_diag, agg, coarse_x, b, x, x_new):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "prolong_relax", x.dtype, size, np.int32(size), np.int32(k),
              real_dtype(x.dtype).type(beta), a.row_ptrs.data, a.col_idxs.data, a.values.data, inv_diag.values.data,
              agg.data, coarse_x.values.data, b.values.data, x.values.data, x_new.values.data)


def _concatenate(exec, arrays, dtype, out=None):
    """One device array holding ``arrays`` (device arrays) one after another (written into
    ``out`` where given)."""
    total = sum(a.size for a in arrays)
    out = exec.alloc((max(total, 1),), dtype) if out is None else out
    offset = 0
    for a in arrays:
        if a.size:
            with exec.lock:
                cl.enqueue_copy(exec.queue, out.data, a.data, dst_offset=offset * out.dtype.itemsize,
                                byte_count=a.size * out.dtype.itemsize)
        offset += a.size
    return out


def pack_coarse_levels(exec, coarse):
    """The arrays of the levels of ``coarse`` packed one after another (coarse.cache), as
    coarse_cycle reads them. Packed again (after a values update), the values, D^-1 and omegas
    are written into the arrays packed before, which recorded launches hold."""
    mats, levels = coarse.matrices, coarse.levels
    dtype = mats[0].dtype
    packed = coarse.cache.get("opencl")
    if packed is not None:
        _concatenate(exec, [m.values for m in mats], dtype, packed["values"])
        _concatenate(exec, [d.values.reshape(-1) for d in coarse.inv_diags], dtype, packed["inv_diag"])
        exec.write(packed["omega"], np.asarray(coarse.omegas + [0.0], dtype=real_dtype(dtype)))
        return
    empty = exec.alloc((0,), np.int32)
    coarse.cache["opencl"] = dict(
        meta=exec.from_host(coarse.layout().astype(np.int32).ravel()),
        row_ptrs=_concatenate(exec, [m.row_ptrs for m in mats], np.int32),
        col_idxs=_concatenate(exec, [m.col_idxs for m in mats], np.int32),
        values=_concatenate(exec, [m.values for m in mats], dtype),
        inv_diag=_concatenate(exec, [d.values.reshape(-1) for d in coarse.inv_diags], dtype),
        omega=exec.from_host(np.asarray(coarse.omegas + [0.0], dtype=real_dtype(dtype))),
        agg=_concatenate(exec, [lv.agg for lv in levels], np.int32),
        agg_ptrs=_concatenate(exec, [lv.agg_ptrs for lv in levels] or [empty], np.int32),
        agg_rows=_concatenate(exec, [lv.agg_rows for lv in levels], np.int32),
        inverse=coarse.inverse.values.reshape(-1))


def coarse_cycle(exec, coarse, schedule, work, b, x):
    arrays = coarse.cache["opencl"]
    k = b.shape[1]
    check_int32(work.values.size)
    kernel = exec.kernel(__file__, b.dtype, "coarse_cycle")
    group = arrays.get("group")
    if group is None:
        # as many work-items as the device runs in one group of this kernel (its registers may
        # allow fewer than the device's maximum)
        fits = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, exec.device)
        group = arrays["group"] = min(COARSE_CYCLE_GROUP, pow2_at_most(min(exec.info.max_work_group_size, fits)))
    kernel(exec.queue, (group,), (group,), np.int32(k), np.int32(schedule.shape[0]), schedule.data, arrays["meta"].data,
        arrays["row_ptrs"].data, arrays["col_idxs"].data, arrays["values"].data, arrays["inv_diag"].data,
        arrays["omega"].data, arrays["agg"].data, arrays["agg_ptrs"].data, arrays["agg_rows"].data,
        arrays["inverse"].data, work.values.data, b.values.data, x.values.data)
