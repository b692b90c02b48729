"""A bitwise copy of a SciPy matrix's arrays, taken by a few threads in chunks (NumPy lets go of
the GIL in a copy): what ``gk.linalg``'s solver cache compares a later call's matrix with, where
the device's copy of A cannot be read back instead (``snapshots_from_device``). The cache takes
it after the solve, which the first call waits for before it returns (so the caller may change A
afterwards): taken beside the upload, the setup or the solve, its copies slowed them by more than
they cost alone (an H100's host, 2026-12-07)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.host_threads import host_threads

CHUNK_BYTES = 8 << 20  # bytes one task copies (smaller arrays: copied at once, in the caller's thread)


class Snapshot:
    """Copies of ``arrays``, taken in the background; :attr:`arrays` waits for them.

    The caller leaves the source arrays unchanged until :meth:`wait` (or :attr:`arrays`) has
    returned.

    Parameters
    ----------
    arrays : sequence of numpy.ndarray
        What to copy (a matrix's indptr, indices and data).

    Examples
    --------
    >>> snapshot = Snapshot([A.indptr, A.indices, A.data])
    >>> ...                                    # other work, beside the copy
    >>> indptr, indices, data = snapshot.arrays
    """

    def __init__(self, arrays: Any) -> None:
        self._copies = [np.empty(a.shape, a.dtype) for a in arrays]
        self._tasks: list = []
        for source, copy in zip(arrays, self._copies):
            if source.nbytes <= CHUNK_BYTES or not source.flags.c_contiguous:
                np.copyto(copy, source)
                continue
            flat_source, flat_copy = source.reshape(-1), copy.reshape(-1)
            step = max(1, CHUNK_BYTES // source.itemsize)
            self._tasks += [host_threads().submit(np.copyto, flat_copy[s:s + step], flat_source[s:s + step])
                            for s in range(0, flat_source.size, step)]

    def wait(self) -> None:
        """Wait until the copies are taken (raises what a copy raised)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.result()

    @property
    def arrays(self) -> list[np.ndarray]:
        """The copies, once taken."""
        self.wait()
        return self._copies
