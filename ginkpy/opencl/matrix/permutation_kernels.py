"""OpenCL kernels of Permutation (sources in permutation_kernels.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_1d

INT_PROGRAM = np.float32  # the value type the int-only program is compiled for (any device has it)


def invert(exec, perm, out):
    # out[perm[i]] = i
    n = int(perm.shape[0])
    launch_1d(exec, __file__, "invert", INT_PROGRAM, n, np.int32(n), perm.data, out.data)
