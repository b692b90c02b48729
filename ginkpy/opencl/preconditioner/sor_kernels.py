"""OpenCL kernel of the (S)SOR and Gauss-Seidel preconditioners (source in sor_kernels.cl): the
weighted factors' values, one work-item per row, on the patterns that
factorization.factorization.initialize_l_u made on the device."""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import launch_1d

_NONE = np.iinfo(np.int32).max  # *bad_row when every diagonal entry is nonzero


def initialize_weighted_l_u(exec, a, omega, l, u, symmetric) -> int:
    n = a.shape[0]
    if n == 0:
        return -1
    bad = exec.from_host(np.array([_NONE], np.int32))
    u_ptrs, u_vals = (l.row_ptrs, l.values) if u is None else (u.row_ptrs, u.values)
    launch_1d(exec, __file__, "initialize_weighted_l_u", a.dtype, n, np.int32(n), real_dtype(a.dtype).type(omega),
              np.int32(u is not None), np.int32(bool(symmetric)), a.row_ptrs.data, a.values.data, l.row_ptrs.data,
              l.values.data, u_ptrs.data, u_vals.data, bad.data)
    row = int(exec.to_host(bad)[0])
    return -1 if row == _NONE else row
