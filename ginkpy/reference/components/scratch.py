"""What the reference kernels use to keep a small solve's iteration cheap: scratch arrays (one
per shape and value type and thread, reused, so that an intermediate such as D^-1 r costs no
allocation; numpy takes a large temporary from the operating system each time), and BLAS's
axpy where it runs on one thread."""
from __future__ import annotations

import threading

import numpy as np
from scipy.linalg import blas

KEPT = 8  # scratch arrays kept per thread (the last shapes used)
_local = threading.local()


def scratch(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` whose contents are undefined: valid until the next
    call for the same shape and type in this thread (use it within one kernel)."""
    arrays = getattr(_local, "arrays", None)
    if arrays is None:
        arrays = _local.arrays = {}
    key = (tuple(shape), np.dtype(dtype))
    array = arrays.get(key)
    if array is None:
        if len(arrays) >= KEPT:
            arrays.clear()
        array = arrays[key] = np.empty(shape, dtype)
    return array


# Up to this many entries OpenBLAS runs dot and axpy on one thread; above, a threaded call on a
# busy machine waits for its threads (measured here: 50 ms for a dot of 10^4 + 1 entries under
# load), so larger vectors are done in stretches of this size, or by numpy's own loops.
BLAS_SERIAL_SIZE = 10_000
_AXPY = {char: blas.get_blas_funcs("axpy", dtype=np.dtype(char)) for char in "fdFD"}


def axpy(alpha, x: np.ndarray, y: np.ndarray) -> None:
    """y += alpha x: BLAS axpy (one pass, no new array) on stretches of BLAS_SERIAL_SIZE for
    contiguous arrays of one BLAS type, numpy for the others (also for empty arrays, which BLAS
    refuses: a rank without rows)."""
    function = _AXPY.get(y.dtype.char)
    if function is not None and x.size and x.dtype == y.dtype and x.flags.c_contiguous and y.flags.c_contiguous:
        xs, ys, n = x.reshape(-1), y.reshape(-1), x.size
        for start in range(0, n, BLAS_SERIAL_SIZE):
            function(xs[start:start + BLAS_SERIAL_SIZE], ys[start:start + BLAS_SERIAL_SIZE],
                     min(BLAS_SERIAL_SIZE, n - start), alpha)
    else:
        y += alpha * x
