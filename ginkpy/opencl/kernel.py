"""A kernel of a compiled program, shared by the executors and threads of one device.

Launching a shared kernel sets its arguments and enqueues it under the device's lock (OpenCL's
one call that is not thread-safe is setting a kernel's arguments; see
``ginkpy/opencl/shared_device.py`` for why every enqueue takes the lock). Inside
:meth:`Executor.capture <ginkpy.core.base.executor.Executor.capture>` a launch also goes to the
recording, as a private copy of the kernel with its arguments set once, which the replay
enqueues (under the lock) without setting anything.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.opencl.prebuild import note_copy
from ginkpy.opencl.shared_device import SharedDevice, forked_error


class Kernel:
    """A kernel of a compiled program, shared by the executors of one device.

    Its scalar argument types are declared at its first launch, from the numpy scalars passed
    then (every launch passes the same types): pyopencl packs declared scalars directly, where
    its generic path costs about 10 us per scalar and launch. Declaring, setting the arguments
    and enqueueing happen under the device's lock, so threads sharing the kernel cannot mix
    their arguments. A capture's private copies are reused: once no recording holds one any
    more it goes back to the kernel's spares, and a later capture only sets its arguments
    (creating a kernel costs 0.5-1 ms on NVIDIA's OpenCL, and a multigrid cycle records
    hundreds of launches). Made by :meth:`OpenCLExecutor.kernel`, under the device's lock.
    """

    def __init__(self, program, name: str, device: SharedDevice) -> None:
        import pyopencl as cl
        self._program, self._name, self._device = program, name, device
        self._kernel = cl.Kernel(program, name)
        self._dtypes = None
        self._predeclared = None  # scalar types declared up front (prebuild.py), checked at the first launch
        self._spares: list = []  # private copies no recording holds

    def _declare(self, args: tuple) -> None:
        """Declare the scalar argument types of ``args`` (once; pyopencl generates and caches
        the invoker that packs them), unless :meth:`predeclare` declared these already."""
        dtypes = [a.dtype if isinstance(a, np.generic) else None for a in args]
        with self._device.lock:
            if self._dtypes is None:
                if _names(dtypes) != _names(self._predeclared):  # (numpy: dtype == None is True)
                    self._kernel.set_scalar_arg_dtypes(dtypes)
                self._dtypes = dtypes

    def declared_scalars(self) -> list | None:
        """The scalar argument types declared (None for a vector argument), or None before the
        first launch: what the program record keeps for :meth:`predeclare`."""
        return self._dtypes if self._dtypes is not None else self._predeclared

    def predeclare(self, dtypes: list) -> None:
        """Declare the scalar argument types ahead of the first launch (from the program
        record), so that the launch finds pyopencl's invoker made; the first launch still
        compares them with its arguments' and declares those where they differ."""
        with self._device.lock:
            if self._dtypes is None and self._predeclared is None:
                self._kernel.set_scalar_arg_dtypes(dtypes)
                self._predeclared = list(dtypes)

    def reserve(self, copies: int) -> None:
        """Make private copies up front, so that a capture finds ``copies`` of them spare."""
        import pyopencl as cl
        device = self._device
        with device.lock:
            while len(self._spares) < copies:
                self._spares.append(cl.Kernel(self._program, self._name))
                device.counters["kernel_copies"] += 1

    def __call__(self, queue, global_size, local_size, *args: Any):
        import pyopencl as cl
        device = self._device
        if device.forked:
            raise forked_error(device)
        if self._dtypes is None:
            self._declare(args)
        local = sum(a.size for a in args if type(a) is cl.LocalMemory)
        if local > device.info.local_mem_size:
            raise ValueError(f"the kernel '{self._name}' needs {local} bytes of local memory for this launch, "
                             f"the device '{device.info.name}' has {device.info.local_mem_size}: use fewer "
                             f"right-hand sides at once (or a smaller krylov_dim in Gmres)")
        device.counters["launches"] += 1
        recording = getattr(device.capture, "recording", None)
        events, name, lock = device.events, self._name, device.lock
        if recording is None:
            with lock:
                event = self._kernel(queue, global_size, local_size, *args)
            if events is not None:
                events.append((name, event))
            return event
        # a private copy with its arguments set once: the replay only enqueues it (set one by
        # one: declaring the copy's scalar types would generate pyopencl's invoker for it again,
        # about a millisecond per copy, and Gmres captures over a hundred per solve)
        if device.recordings:  # how many copies an apply takes, for prebuild.py's reserve
            note_copy(device, self)
        with lock:
            if self._spares:
                copy = _KernelCopy(self._spares.pop(), self._spares, args)
            else:
                copy = _KernelCopy(cl.Kernel(self._program, self._name), self._spares, args)
                device.counters["kernel_copies"] += 1
            for index, arg in enumerate(args):
                copy.kernel.set_arg(index, arg)
        global_size, local_size = tuple(global_size), None if local_size is None else tuple(local_size)
        enqueue = cl.enqueue_nd_range_kernel

        if events is None:
            def launch() -> None:
                with lock:
                    enqueue(queue, copy.kernel, global_size, local_size)
        else:
            def launch() -> None:
                with lock:
                    events.append((name, enqueue(queue, copy.kernel, global_size, local_size)))
        recording.steps.append(launch)
        return launch()

    def __getattr__(self, name: str) -> Any:  # the rest of pyopencl's Kernel (get_work_group_info, ...)
        return getattr(self._kernel, name)


def _names(dtypes: list | None) -> tuple | None:
    """Scalar argument types as comparable names (None for a vector argument)."""
    return None if dtypes is None else tuple(None if d is None else np.dtype(d).str for d in dtypes)


class _KernelCopy:
    """A private copy of a kernel with its arguments set, held by the recorded launches that
    enqueue it; it holds the arguments too (OpenCL does not keep a buffer alive for a kernel
    argument: a temporary of the launch would go back to the memory pool while the recording
    still writes it). When the last launch holding it is gone, the kernel goes back to
    ``spares`` for the next capture."""

    __slots__ = ("kernel", "spares", "args")

    def __init__(self, kernel, spares: list, args: tuple) -> None:
        self.kernel, self.spares, self.args = kernel, spares, args

    def __del__(self) -> None:
        self.spares.append(self.kernel)
