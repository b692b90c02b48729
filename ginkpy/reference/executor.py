"""The reference executor: sequential host kernels on numpy arrays, the definition of correctness."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor


class ReferenceExecutor(Executor):
    """Runs every kernel on the host with numpy/scipy; arrays are ``numpy.ndarray``."""

    backend = "reference"

    def alloc(self, shape, dtype) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def from_host(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True, order="C")

    def to_host(self, *arrays: Any):
        out = tuple(np.array(a, copy=True) for a in arrays)
        return out[0] if len(out) == 1 else out

    def write(self, array: np.ndarray, host: np.ndarray) -> None:
        array[...] = host

    def copy(self, array: np.ndarray) -> np.ndarray:
        return array.copy()

    def same_memory(self, other: Executor) -> bool:
        return isinstance(other, ReferenceExecutor)
