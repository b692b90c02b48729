"""OpenCL kernels of Cg (sources in cg_kernels.cl): each step is one fused launch with one
work-item per vector entry, and the solver scalars (1 x k) stay on the device."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_1d


def _run(exec, name, v, work_items, *args):
    """Kernel ``name`` for the n x k vectors shaped like ``v``: entries and columns first."""
    launch_1d(exec, __file__, name, v.dtype, work_items, np.int32(v.values.size), np.int32(v.shape[1]),
              *args)


def initialize(exec, p, q, rho, prev_rho, status):
    """p = q = 0, rho = 0, prev_rho = 1."""
    _run(exec, "initialize", p, max(p.values.size, p.shape[1]), p.values.data, q.values.data,
         rho.values.data, prev_rho.values.data)


def step_1(exec, p, z, rho, prev_rho, status):
    """p = z + (rho / prev_rho) p in running columns (rho / prev_rho = 0 where prev_rho is 0)."""
    _run(exec, "step_1", p, p.values.size, p.values.data, z.values.data, rho.values.data,
         prev_rho.values.data, status.data)


def step_2(exec, x, r, p, q, beta, rho, prev_rho, status):
    """x += (rho / beta) p; r -= (rho / beta) q; prev_rho = rho in running columns. A column
    with beta <= 0 or rho == 0 gets status BREAKDOWN instead (also when n == 0)."""
    _run(exec, "step_2", x, max(x.values.size, x.shape[1]), x.values.data, r.values.data,
         p.values.data, q.values.data, beta.values.data, rho.values.data, prev_rho.values.data,
         status.data)
