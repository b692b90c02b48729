"""OpenCL kernels of Idr (sources in idr_kernels.cl).

Each step is a vector kernel with one work-item per entry; step_1 and step_3 first solve
their small triangular systems (s x s per column) with one work-item per column, so that
the vector kernel only reads the coefficients.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import check_int32, launch


def step_1(exec, j, m, f, r, g, c, v, status):
    s = np.int32(f.shape[0])
    check_int32(g.values.size)  # the kernels index all of G with int32
    launch(exec, __file__, "solve_c", r.dtype, (1, r.shape[1]), np.int32(j), s, m, f, c, status)
    launch(exec, __file__, "step_1", r.dtype, r.shape, np.int32(j), s, r, g, c, v, status)


def step_2(exec, j, omega, z, c, u, u_j, status):
    check_int32(u.values.size)
    launch(exec, __file__, "step_2", z.dtype, z.shape, np.int32(j), np.int32(c.shape[0]), omega, z, c, u,
           u_j, status)


def step_3(exec, j, h, m, f, alpha, g_j, u_j, g, u, r, x, status):
    check_int32(g.values.size)
    launch(exec, __file__, "step_3_scalars", r.dtype, (1, r.shape[1]), np.int32(j), np.int32(f.shape[0]),
           h, m, f, alpha, status)
    launch(exec, __file__, "step_3", r.dtype, r.shape, np.int32(j), alpha, g_j, u_j, g, u, r, x, status)


def step_4(exec, kappa, tr, tt, r_norm, omega, z, t, r, x, status):
    launch(exec, __file__, "step_4", r.dtype, r.shape, real_dtype(r.dtype).type(kappa), tr, tt, r_norm, omega, z, t,
           r, x, status)
