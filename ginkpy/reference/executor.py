"""The reference executor: sequential host kernels on numpy arrays, the definition of correctness."""
from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from ginkpy.core.base.device_choices import DeviceChoices
from ginkpy.core.base.executor import Executor, new_counters
from ginkpy.reference.device_choices import REFERENCE_CHOICES


class ReferenceExecutor(Executor):
    """Runs every kernel on the host with numpy/scipy (Ginkgo's ``ReferenceExecutor``); arrays
    are ``numpy.ndarray``. The definition of what is correct: every OpenCL kernel is tested
    against its reference twin.

    Use it without a device, to check a result, or to debug (every step is plain numpy). All
    reference executors share the host's memory, so they share what goes with it as the
    OpenCL executors of one device do: the counters and the capture running in each thread
    (an operator made on one executor may run inside a loop captured by another). It takes no
    parameters.

    Examples
    --------
    >>> ref = gk.ReferenceExecutor()
    >>> A = gk.matrix.Csr.from_scipy(ref, scipy.sparse.eye(3))
    >>> A.values                                # a numpy array
    """

    backend = "reference"
    _shared_capture = threading.local()
    _shared_counters = new_counters()

    def __init__(self) -> None:
        super().__init__()
        self._capture = ReferenceExecutor._shared_capture
        self.counters = ReferenceExecutor._shared_counters

    def run(self, kernel: str, *args: Any, **kwargs: Any) -> Any:
        fn = self._kernels.get(kernel)
        if fn is None:
            fn = self._kernels[kernel] = self._resolve(kernel)
        if self._profiler is not None:  # (nothing is captured meanwhile: Executor._profiled)
            self.counters["launches"] += 1
            return self._profiler.kernel(self, kernel, fn, args, kwargs)
        recording = self._recording()
        if recording is None:
            self.counters["launches"] += 1
            return fn(self, *args, **kwargs)
        # inside a capture: record the kernel (not the kernels it runs itself)
        self._capture.recording = None
        try:
            result = fn(self, *args, **kwargs)
        finally:
            self._capture.recording = recording
        self.counters["launches"] += 1
        if result is None:
            recording.steps.append(functools.partial(fn, self, *args, **kwargs))
        else:  # the caller goes on with a value computed from the data
            recording.read = True
        return result

    def alloc(self, shape, dtype) -> np.ndarray:
        self.counters["allocations"] += 1
        return np.empty(shape, dtype=dtype)

    def from_host(self, array: np.ndarray) -> np.ndarray:
        self.counters["allocations"] += 1
        return np.array(array, copy=True, order="C")

    def upload(self, shape, dtype, fill) -> np.ndarray:
        self.counters["allocations"] += 1
        out = np.empty(shape, dtype)
        fill(out)
        return out

    def to_host(self, *arrays: Any):
        self._note_read()
        out = tuple(np.array(a, copy=True) for a in arrays)
        return out[0] if len(out) == 1 else out

    def write(self, array: np.ndarray, host: np.ndarray) -> None:
        host = np.array(host, dtype=array.dtype, copy=True)
        array[...] = host
        self._record_write(lambda: array.__setitem__(Ellipsis, host))

    def copy(self, array: np.ndarray) -> np.ndarray:
        self.counters["allocations"] += 1
        return array.copy()

    def none_running(self, status: np.ndarray) -> bool:
        return not (status == 0).any()

    def all_running(self, status: np.ndarray) -> bool:
        return not status.any()  # RUNNING is 0

    def same_memory(self, other: Executor) -> bool:
        return isinstance(other, ReferenceExecutor)

    def device_choices(self) -> DeviceChoices:
        return REFERENCE_CHOICES
