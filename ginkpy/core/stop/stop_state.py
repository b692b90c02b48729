"""StopState: the stopping logic of one solve as the device sees it.

Per right-hand-side column: ``status`` (uint8, StopReason codes; nonzero means the column
stopped and step kernels leave it untouched), ``checks`` (int32, how many stopping checks the
column has had: its iteration count plus one), ``threshold`` (the residual norm at which it
converges), ``max_iters`` (its iteration limit: the check after that many iterations stops it)
and ``history`` (the residual norm of each check, a ring of ``HISTORY_ROWS`` rows
that the host drains at every status read); threshold and history are in the real type of
the value type (float64 for complex128). The step kernel that produces a residual norm
compares it with the threshold itself (``stop_check`` in opencl/common.cl, the reference
twin in reference/components/stopping.py), so a solve needs no host round trip per iteration.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import STATUS_DTYPE

HISTORY_ROWS = 256  # more than the iterations the host lets run between two status reads


class StopState:
    def __init__(self, exec, k: int, dtype) -> None:
        self.executor = exec
        self.k = k
        self.status = exec.alloc((k,), STATUS_DTYPE)
        self.checks = exec.alloc((k,), np.int32)
        # norms are real, also for a complex value type
        # (the value type was checked when the solver was generated)
        self.history = Dense(exec, exec.alloc((HISTORY_ROWS, k), real_dtype(dtype)))
        self.threshold = Dense(exec, exec.alloc((1, k), real_dtype(dtype)))
        self.max_iters = 0

    @property
    def history_rows(self) -> int:
        return self.history.shape[0]

    def reset(self, status: np.ndarray, threshold: np.ndarray, max_iters: int) -> None:
        """Start a solve: the given status, thresholds and iteration limit, no checks yet."""
        exec = self.executor
        self.max_iters = int(min(max_iters, np.iinfo(np.int32).max - 1))
        exec.write(self.status, status.astype(STATUS_DTYPE))
        exec.write(self.checks, np.zeros(self.k, np.int32))
        exec.write(self.threshold.values, threshold.reshape(1, -1).astype(self.threshold.dtype))
