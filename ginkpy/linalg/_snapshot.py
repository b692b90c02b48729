"""A bitwise copy of a SciPy matrix's arrays taken in the background: what ``gk.linalg``'s solver
cache compares a later call's matrix with. A few threads copy it in chunks (NumPy lets go of the
GIL in a copy) while the call uploads A and solves, so that a single-shot solve does not wait
for a host pass over A (on a GPU the host is idle during the solve); the call waits for the copy
before it returns, so the caller may change A afterwards."""
from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import numpy as np

CHUNK_BYTES = 8 << 20  # bytes one task copies (smaller arrays: copied at once, in the caller's thread)
THREADS = 4

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _threads() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(THREADS, thread_name_prefix="ginkpy-snapshot")
        return _pool


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
    >>> ...                                    # the solve, beside the copy
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
            self._tasks += [_threads().submit(np.copyto, flat_copy[s:s + step], flat_source[s:s + step])
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
