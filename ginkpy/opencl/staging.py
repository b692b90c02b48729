"""A GPU's upload of data built on the host (``OpenCLExecutor.upload_rows``): filled a chunk of
rows at a time into a page-locked staging buffer and each chunk copied as soon as it is filled,
so that the copy of one chunk overlaps the filling of the next (a copy from pageable memory goes
through the driver's own staging at a fraction of the speed). The staging buffer is kept per
device, grown to the largest upload, and reused once its previous copies have finished."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ginkpy.core.base.row_chunks import row_chunks

PIPELINE_BYTES = 8 << 20  # a GPU's chunk where the caller leaves it open: about 13 copies of 100 MB


def upload_staged(exec, out: Any, fill_rows: Callable[[np.ndarray, int], None], chunk_bytes: int | None) -> None:
    """Fill ``out`` (a new device array) through the staging buffer of ``exec``'s device:
    ``fill_rows(rows, start)`` per chunk of about ``chunk_bytes`` (None: one), each chunk's copy
    enqueued at once (not waited for); the next upload waits for the last (the queue runs in
    order)."""
    import pyopencl as cl
    device = exec._device
    shape, dtype, nbytes = out.shape, out.dtype, out.nbytes
    row_bytes = nbytes // shape[0] if shape else nbytes
    with device.staging_lock:  # one upload at a time writes the staging buffer
        if device.staging is None or device.staging[0].nbytes < nbytes:
            if device.staging is not None and device.staging[1] is not None:
                device.staging[1].wait()
            device.staging = (device.host_array((nbytes,), np.uint8), None)
        array, last = device.staging
        if last is not None:
            last.wait()  # the last upload's copies have left the staging buffer
        host = array[:nbytes].view(dtype).reshape(shape)
        try:
            for start, stop in row_chunks(shape, dtype, chunk_bytes):
                fill_rows(host[start:stop], start)
                with exec.lock:
                    last = cl.enqueue_copy(exec.queue, out.data, host[start:stop], dst_offset=start * row_bytes,
                                           is_blocking=False)
        finally:
            device.staging = (array, last)
