"""OpenCL kernel of the CSR -> COO index conversion (sources in format_conversion_kernels.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_1d

INT_PROGRAM = np.float32  # the value type the int-only program is compiled for (any device has it)


def convert_ptrs_to_idxs(exec, ptrs, idxs) -> None:
    # idxs[p] = i for every position p of row i, one work-item per row
    n = int(ptrs.shape[0]) - 1
    launch_1d(exec, __file__, "convert_ptrs_to_idxs", INT_PROGRAM, n, np.int32(n), ptrs.data, idxs.data)
