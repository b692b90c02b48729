"""OpenCL kernels of Gcrotmk (sources in gcrotmk_kernels.cl): one work-item per vector entry."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def recycle(exec, cc, cr, cx, u, x, c_slot, u_slot, status):
    launch(exec, __file__, "recycle", x.dtype, x.shape, cc, cr, cx, u, x, c_slot, u_slot, status,
           work_items=max(x.values.size, x.shape[1]))
