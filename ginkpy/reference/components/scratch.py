"""Scratch arrays of the reference kernels: one array per shape and value type (and thread),
reused, so that an intermediate of a kernel (D^-1 r, alpha p) costs no allocation. numpy takes
a large temporary from the operating system each time (page faults that cost more than the
arithmetic of a small solve's iteration)."""
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


_AXPY = {char: blas.get_blas_funcs("axpy", dtype=np.dtype(char)) for char in "fdFD"}


def axpy(alpha, x: np.ndarray, y: np.ndarray) -> None:
    """y += alpha x in one pass and without a temporary (BLAS axpy) for contiguous arrays of
    one BLAS type, else numpy (also for empty arrays, which BLAS refuses: a rank without rows)."""
    function = _AXPY.get(y.dtype.char)
    if function is not None and y.size and x.dtype == y.dtype and x.flags.c_contiguous and y.flags.c_contiguous:
        function(x.reshape(-1), y.reshape(-1), x.size, alpha)
    else:
        y += alpha * x
