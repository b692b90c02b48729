"""OpenCL kernel of the exclusive prefix sum (sources in prefix_sum_kernels.cl).

Three launches: every work-item sums a contiguous chunk, one work-group scans the chunk sums,
every work-item rescans its chunk from its offset. Long chunks on a CPU (few work-items, each
streaming through memory), short ones on a GPU.
"""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import ceil_div, check_int32, local_buffer, round_up

SCAN_GROUP = 256  # work-group size of the launches (and the one that scans the chunk sums)
INT_PROGRAM = np.float32  # the value type the int-only program is compiled for (any device has it)


def prefix_sum(exec, counts) -> None:
    # counts[i] = counts[0] + ... + counts[i - 1], in place (int32)
    size = int(counts.shape[0])
    if size == 0:
        return
    check_int32(size, "a prefix sum")
    wg = min(SCAN_GROUP, exec.info.max_work_group_size)
    least = ceil_div(size, 4 * exec.info.compute_units) if exec.info.is_cpu else 16
    chunk = max(least, ceil_div(size, wg * 64))  # at most 64 chunk sums per work-item of the scan
    chunks = ceil_div(size, chunk)
    sums = exec.alloc((chunks,), np.int32)
    args = (np.int32(size), np.int32(chunk), np.int32(chunks))
    exec.kernel(__file__, INT_PROGRAM, "chunk_sums")(exec.queue, (round_up(chunks, wg),), (wg,), *args,
                                                     counts.data, sums.data)
    exec.kernel(__file__, INT_PROGRAM, "scan_sums")(exec.queue, (wg,), (wg,), np.int32(chunks), sums.data,
                                                    local_buffer(wg, np.int32))
    exec.kernel(__file__, INT_PROGRAM, "scan_chunks")(exec.queue, (round_up(chunks, wg),), (wg,), *args,
                                                      counts.data, sums.data)
