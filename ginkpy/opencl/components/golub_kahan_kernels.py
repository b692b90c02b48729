"""OpenCL kernels of the Golub-Kahan bidiagonalization shared by Lsqr and Lsmr (sources in
golub_kahan_kernels.cl): one work-item per vector entry."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch, launch_1d


def bidiagonalize_u(exec, Av, u, state, status):
    launch(exec, __file__, "bidiagonalize_u", u.dtype, u.shape, Av, u, state, status)


def bidiagonalize_v(exec, u, v, Atu, uu, status):
    size_u, size_v = u.values.size, v.values.size
    launch_1d(exec, __file__, "bidiagonalize_v", u.dtype, max(size_u, size_v), np.int32(size_u), np.int32(size_v),
              np.int32(u.shape[1]), u.values.data, v.values.data, Atu.values.data, uu.values.data, status.data)
