"""Bitwise comparison of host arrays: whether two arrays hold the same bits (a NaN equals
itself, -0.0 differs from 0.0), at about the host's memory bandwidth. How a sparsity pattern is
checked on the host, and how ``gk.linalg``'s solver cache tells whether a SciPy matrix changed
since its last call (:meth:`Executor.to_host_compared` compares a read-back piece by piece as it
arrives)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.host_threads import host_threads

COMPARED_AT_ONCE = 8 << 20  # bytes of two host arrays compared by one thread (larger ones: by a few)


def _words(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a and b (contiguous, of one size in bytes) as flat arrays of the widest unsigned integers
    that size allows."""
    a, b = (np.ascontiguousarray(v).reshape(-1) for v in (a, b))
    a, b = a.view(np.uint8), b.view(np.uint8)
    width = next(w for w in (8, 4, 2, 1) if a.nbytes % w == 0)
    return a.view(np.dtype(f"u{width}")), b.view(np.dtype(f"u{width}"))


def same_contents(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two host arrays of one shape and type hold the same bits, compared as the widest
    unsigned integers their size allows, large ones in chunks by a few threads (NumPy releases
    the GIL).

    Parameters
    ----------
    a, b : numpy.ndarray
        The arrays (of different shapes or types: not the same).

    Returns
    -------
    bool

    Examples
    --------
    >>> same_contents(np.array([np.nan]), np.array([np.nan]))
    True
    """
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = _words(a, b)
    chunk = COMPARED_AT_ONCE // a.itemsize
    if a.size <= chunk:
        return bool(np.array_equal(a, b))
    return all(host_threads().map(lambda s: np.array_equal(a[s:s + chunk], b[s:s + chunk]), range(0, a.size, chunk)))


def compare_later(a: np.ndarray, b: np.ndarray) -> Any:
    """Start comparing the bytes of a and b (flat uint8 arrays of one length) in a thread of the
    pool; returns the future of :func:`same_contents`'s answer. The caller leaves both unchanged
    until it has the answer."""
    return host_threads().submit(lambda: bool(np.array_equal(*_words(a, b))))
