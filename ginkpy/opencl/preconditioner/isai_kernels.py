"""OpenCL kernel of the ISAI preconditioner (sources in isai_kernels.cl): the small dense
systems, one work-item per row of the inverse, in a global workspace of m_i^2 entries per row
(m_i the row's pattern size). Rows are launched in batches whose workspace stays within
:data:`BATCH_VALUES` entries; the pattern's row pointers are read once to plan them."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_1d

BATCH_VALUES = 1 << 25  # workspace entries of one launch
_NONE = np.iinfo(np.int32).max


def generate_inverse(exec, system, inverse, spd) -> int:
    n = inverse.shape[0]
    if n == 0:
        return -1
    sizes = np.diff(exec.to_host(inverse.row_ptrs)).astype(np.int64)
    ends = np.cumsum(sizes * sizes)  # end of each row's block in one workspace for all rows
    bad = exec.from_host(np.array([_NONE], np.int32))
    first = 0
    while first < n:
        base = ends[first - 1] if first else 0
        last = max(first + 1, int(np.searchsorted(ends, base + BATCH_VALUES, side="right")))
        offsets = np.concatenate([[0], ends[first:last - 1] - base])
        work = exec.alloc((max(int(ends[last - 1] - base), 1),), inverse.dtype)
        launch_1d(exec, __file__, "generate_inverse", inverse.dtype, last - first, np.int32(first),
                  np.int32(last), np.int32(bool(spd)), system.row_ptrs.data, system.col_idxs.data,
                  system.values.data, inverse.row_ptrs.data, inverse.col_idxs.data, inverse.values.data,
                  exec.from_host(offsets.astype(np.int64)).data, work.data, bad.data)
        first = last
    row = int(exec.to_host(bad)[0])
    return -1 if row == _NONE else row
