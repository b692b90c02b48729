"""OpenCL kernels of Ir (sources in ir_kernels.cl): one work-item per vector entry."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def prepare(exec, r, z, status):
    launch(exec, __file__, "prepare", r.dtype, r.shape, r, z, status)


def update(exec, omega, z, x, status):
    launch(exec, __file__, "update", x.dtype, x.shape, omega, z, x, status)
