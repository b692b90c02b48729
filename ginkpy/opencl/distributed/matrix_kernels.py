"""OpenCL kernels of gk.distributed.Matrix (sources in matrix_kernels.cl): the gather of the
rows other ranks need into the send buffer of the halo exchange."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def row_gather(exec, b, rows, out):
    """out[i, :] = b[rows[i], :] (rows: int32 on the device), one work-item per entry of out."""
    launch(exec, __file__, "row_gather", out.dtype, out.shape, rows, b, out)
