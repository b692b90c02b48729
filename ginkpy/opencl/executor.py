"""The OpenCL executor: runs ginkpy's kernels on any OpenCL device through pyopencl.

Arrays are ``pyopencl.array.Array`` allocated from a memory pool. Kernels live in ``.cl``
files beside the Python module that launches them; :meth:`OpenCLExecutor.program` compiles
one for a value type once per context and caches it. The device's properties are read once
into :class:`DeviceInfo`, from which kernels choose their variant and launch sizes.

Threads and processes: the executors of a device share one context, queue and memory pool
(``shared_device.py``, which also says the rule that makes any number of threads safe: every
call that creates or enqueues under the device's lock, waits outside it, nothing dropped that
could wait; and what happens at exit and after ``fork()``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ginkpy.core.base.bitwise import compare_later
from ginkpy.core.base.device_choices import DeviceChoices
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.row_chunks import fill_in_chunks
from ginkpy.core.stop.stopping_status import status_defines
from ginkpy.opencl import fast_arrays, prebuild, shared_device as shared
from ginkpy.opencl.device_choices import device_choices
# (NoOpenCLDeviceError: also imported from here)
from ginkpy.opencl.device_selection import DeviceInfo, NoOpenCLDeviceError, NoOpenCLPlatformError, select_device
from ginkpy.opencl.kernel import Kernel
from ginkpy.opencl.staging import PIPELINE_BYTES, copy_staged, read_staged, reads_staged, upload_staged

_INCLUDE_DIR = Path(__file__).resolve().parent
# OpenCL types of the value types and of their real parts; complex values are float2 / double2
# (real part .x, imaginary part .y), their arithmetic in common.cl
_TYPE_NAMES = {np.dtype(np.float32): ("float", "float"), np.dtype(np.float64): ("double", "double"),
               np.dtype(np.complex64): ("float2", "float"), np.dtype(np.complex128): ("double2", "double")}
# the stop codes (STATUS_RUNNING, ...), defined once in core/stop/stopping_status.py
_STATUS_OPTIONS = [f"-D{name}={code}" for name, code in status_defines().items()]
SMALL_WRITE = 1 << 16  # bytes of a host write that is copied and not waited for (exec.write)


class OpenCLExecutor(Executor):
    """Runs kernels on one OpenCL device (see :func:`select_device` for how it is chosen):
    NVIDIA, AMD and Intel GPUs, and CPUs through PoCL.

    Executors on the same device share one context, queue and memory pool, so their arrays
    are interchangeable without copies. Threads may share them (see the module's notes); a
    process forked after OpenCL was used cannot make or use one (:class:`ForkedProcessError`:
    start workers with the spawn method).

    Parameters
    ----------
    device : str, int or pyopencl.Device, default None
        ``"<platform>:<device>"`` indices or a name substring (``ginkpy devices`` lists
        them), or a pyopencl Device; None: GINKPY_OPENCL_DEVICE or PYOPENCL_CTX, else the
        first GPU, else the first device.

    Examples
    --------
    >>> ocl = gk.OpenCLExecutor()               # or gk.executor("opencl")
    >>> ocl.info.name, ocl.info.is_gpu
    >>> A = gk.matrix.Csr.from_scipy(ocl, S)    # on the device
    """

    backend = "opencl"
    asynchronous = True
    NoPlatformError = NoOpenCLPlatformError

    def __init__(self, device: Any = None) -> None:
        super().__init__()
        shared.check_not_forked()
        dev = select_device(device)
        device = self._device = shared.shared_device(dev, DeviceInfo.of)
        self.context, self.queue, self.pool, self.info = device.context, device.queue, device.pool, device.info
        self.counters, self._capture, self.lock = device.counters, device.capture, device.lock
        self.device = dev

    # -- programs ----------------------------------------------------------------------------
    def program(self, module_file: str, dtype: Any, **defines: Any):
        """The compiled program of the ``.cl`` file beside ``module_file`` for value type ``dtype``.

        The source sees ``ValueType`` (float, double, or float2 / double2 for complex values),
        ``RealType`` (float or double: norms), ``VALUE_COMPLEX`` (0 or 1), ``IndexType`` (int),
        the stop codes ``STATUS_<NAME>`` and each of ``defines`` as a macro, and may
        ``#include "common.cl"``, which has the value arithmetic that works for both. Compiled
        once per context.
        """
        import pyopencl as cl
        path = Path(module_file).with_suffix(".cl")
        dtype = np.dtype(dtype)
        value, real = _TYPE_NAMES[dtype]
        options = [f"-DValueType={value}", f"-DRealType={real}", f"-DVALUE_COMPLEX={int(dtype.kind == 'c')}",
                   "-DIndexType=int", f"-I{_INCLUDE_DIR}", *_STATUS_OPTIONS]
        options += [f"-D{k}={v}" for k, v in sorted(defines.items())]
        key = (str(path), tuple(options))
        device = self._device
        prog = device.programs.get(key)
        if prog is None:
            self._check_process()
            # one build at a time, and nothing enqueued beside it (shared_device.py): the other
            # threads wait for the lock, and find the program built
            with device.lock, shared.BUILD_LOCK:
                prog = device.programs.get(key)
                if prog is None:
                    source = path.read_text()
                    prog = device.programs[key] = cl.Program(self.context, source).build(options=options)
                    device.counters["builds"] += 1
        return prog

    def kernel(self, module_file: str, dtype: Any, name: str, **defines: Any) -> "Kernel":
        """The kernel ``name`` of :meth:`program`, created once and then reused (pyopencl makes a
        new kernel object, and warns, on every ``program.name`` access). The look-up is one dict
        access and one attribute test (a program recording running): it runs for every launch."""
        key = (module_file, dtype, name, *sorted(defines.items()))
        device = self._device
        knl = device.kernels.get(key)
        if knl is None:
            program = self.program(module_file, dtype, **defines)
            with device.lock:  # clCreateKernel, not beside a build
                knl = device.kernels.get(key)
                if knl is None:
                    knl = device.kernels[key] = Kernel(program, name, device)
        if device.recordings:  # an operator's first apply is recorded (in some thread)
            prebuild.note_kernel(device, key, knl)
        return knl

    def prepare_programs(self, signature: str) -> int:
        """See :meth:`Executor.prepare_programs`: every program and kernel recorded for
        ``signature`` built now (``prebuild.py``), in this thread."""
        return prebuild.prepare(self, signature)

    def record_programs(self, signature: str):
        """See :meth:`Executor.record_programs` (``prebuild.py``; the record is kept on disk
        per device and ginkpy version, ``program_record.py``)."""
        return prebuild.recording(self, signature)

    def _check_process(self) -> None:
        """Raise :class:`ForkedProcessError` in a process forked from the one that made this executor."""
        if self._device.forked:
            raise shared.forked_error(self._device)

    # -- memory ------------------------------------------------------------------------------
    def check_dtype(self, dtype: Any) -> np.dtype:
        dtype = super().check_dtype(dtype)
        if dtype in (np.float64, np.complex128) and not self.info.fp64:
            single = "complex64" if dtype == np.complex128 else "float32"
            raise TypeError(f"the OpenCL device '{self.info.name}' has no float64 (fp64) support: use "
                            f"dtype=numpy.{single} ({dtype} needs fp64), or choose another device")
        return dtype

    def alloc(self, shape, dtype):
        self._check_process()
        self.counters["allocations"] += 1
        with self.lock:  # the pool may create a buffer, and its allocator enqueues on the queue
            return fast_arrays.empty(self.context, self.queue, self.pool, shape, dtype)

    def _write_waiting(self, buffer, host: np.ndarray) -> None:
        """Copy ``host`` into ``buffer``: enqueued under the lock, waited for outside it."""
        import pyopencl as cl
        with self.lock:
            event = cl.enqueue_copy(self.queue, buffer, host, is_blocking=False)
        event.wait()

    def from_host(self, array: np.ndarray):
        """A copy of ``array`` on the device. At most SMALL_WRITE bytes: copied on the host and
        not waited for; from the device's ``staged_upload_bytes``: through page-locked chunks
        (staging.py), the last chunks' transfers not waited for; else one copy, waited for."""
        array = np.ascontiguousarray(array)
        out = self.alloc(array.shape, array.dtype)
        if not array.size:
            return out
        if array.nbytes <= SMALL_WRITE:
            self.write_async(out, array.copy())  # the queue runs in order: what comes after sees it
        elif self._staged(array):
            copy_staged(self, [out], [array])
        else:
            self._write_waiting(out.data, array)
        return out

    def _staged(self, array: np.ndarray) -> bool:
        """Whether ``array`` goes up through the page-locked staging chunks (a GPU's choice)."""
        least = self.device_choices().staged_upload_bytes
        return 0 < least <= array.nbytes

    def from_host_async(self, arrays: list[np.ndarray]) -> tuple[list, list]:
        """See :meth:`Executor.from_host_async`: arrays from the device's ``staged_upload_bytes``
        (a GPU) go through page-locked chunks (``staging.copy_staged``: the host memcpy of a chunk
        overlapping the transfer of the last, the caller's arrays free on return), the others
        straight from the caller's memory (pyopencl's events hold them until done)."""
        self._check_process()
        hosts = [np.ascontiguousarray(a) for a in arrays]
        outs = [self.alloc(h.shape, h.dtype) for h in hosts]
        staged = [i for i, h in enumerate(hosts) if h.size and self._staged(h)]
        events = [self.write_async(o, h) for i, (o, h) in enumerate(zip(outs, hosts)) if i not in staged]
        if staged:
            events += copy_staged(self, [outs[i] for i in staged], [hosts[i] for i in staged])
        return outs, [e for e in events if e is not None]

    def upload(self, shape, dtype, fill):
        """See :meth:`Executor.upload`: filled in one piece (a GPU copies it after)."""
        return self._upload(shape, dtype, lambda host, start: fill(host), None, None)

    def upload_rows(self, shape, dtype, fill_rows, chunk_bytes=None):
        """See :meth:`Executor.upload_rows`. A CPU device's buffer is host memory: it is mapped
        and written in place (in one chunk where ``chunk_bytes`` is None). A GPU fills a kept
        page-locked staging buffer and copies each chunk as soon as it is filled (staging.py;
        None: chunks of ``staging.PIPELINE_BYTES``)."""
        return self._upload(shape, dtype, fill_rows, PIPELINE_BYTES if chunk_bytes is None else chunk_bytes,
                            chunk_bytes)

    def _upload(self, shape, dtype, fill_rows, gpu_chunk: int | None, cpu_chunk: int | None):
        import pyopencl as cl
        self._check_process()
        dtype = np.dtype(dtype)
        out = self.alloc(shape, dtype)
        if out.size == 0:
            fill_rows(np.empty(shape, dtype), 0)
            return out
        if not self.info.is_cpu:
            upload_staged(self, out, fill_rows, gpu_chunk)
            return out
        with self.lock:
            host, event = cl.enqueue_map_buffer(self.queue, out.base_data, cl.map_flags.WRITE_INVALIDATE_REGION,
                                                out.offset, shape, dtype, is_blocking=False)
        event.wait()
        try:
            fill_in_chunks(host, fill_rows, cpu_chunk)
        finally:
            with self.lock:
                host.base.release(self.queue)
        return out

    def adopt(self, array):
        """A ``pyopencl.array.Array`` of this executor's context as its array: itself where it is
        C-contiguous from its buffer's start, else a copy (a strided view through the host). Its
        own queue's pending work is waited for; another context is a ValueError naming both."""
        import pyopencl.array as cla
        self._check_process()
        if not isinstance(array, cla.Array):
            raise TypeError(f"expected a pyopencl.array.Array, not {type(array).__name__}")
        if array.context != self.context:
            theirs = ", ".join(d.name.strip() for d in array.context.devices)
            raise ValueError(f"the pyopencl array lives in another OpenCL context (device '{theirs}', context "
                             f"{array.context.int_ptr:#x}) than this executor (device '{self.info.name}', context "
                             f"{self.context.int_ptr:#x}): make it with the executor's context and queue "
                             f"(pyopencl.array.empty(exec.queue, ...)), or pass a NumPy copy (array.get())")
        if array.queue is not None and array.queue != self.queue:
            array.queue.finish()  # what its queue has pending on the array first
        if array.flags.c_contiguous:
            if array.offset == 0:
                return array
            out = self.alloc(array.shape, array.dtype)
            self.copy_into(out, array)
            return out
        # a strided view, which pyopencl cannot copy on the device: the span of its buffer through the host
        import pyopencl as cl
        if min(array.strides, default=0) < 0:
            raise ValueError("a pyopencl array with negative strides cannot be used: pass a contiguous copy")
        span = array.dtype.itemsize + sum((n - 1) * s for n, s in zip(array.shape, array.strides))
        raw = np.empty(span, np.uint8)
        if array.size:
            with self.lock:
                event = cl.enqueue_copy(self.queue, raw, array.base_data, src_offset=array.offset, is_blocking=False)
            event.wait()
        self._note_read()
        strided = np.lib.stride_tricks.as_strided(raw.view(array.dtype), array.shape, array.strides)
        return self.from_host(np.ascontiguousarray(strided))

    def to_host(self, *arrays: Any):
        """Copies of the device ``arrays`` on the host: the reads are enqueued together (under
        the lock) and waited for outside it; the queue runs in order, so everything enqueued
        before them is done too (work other threads enqueued after them is not waited for)."""
        import pyopencl as cl
        self._check_process()
        self._note_read()
        if reads_staged(self, arrays):  # (large reads through the page-locked ring: a device's choice)
            return read_staged(self, arrays)
        out, events = [], []
        with self.lock:
            for a in arrays:
                host = np.empty(a.shape, a.dtype)
                if a.size:
                    events.append(cl.enqueue_copy(self.queue, host, a.base_data, src_offset=a.offset,
                                                  is_blocking=False))
                out.append(host)
            if not events:
                events.append(cl.enqueue_marker(self.queue))
        for event in events:
            event.wait()
        return out[0] if len(out) == 1 else tuple(out)

    def to_host_compared(self, arrays: Any, hosts: Any) -> tuple[list[np.ndarray], list[bool]]:
        """:meth:`Executor.to_host_compared`; where the read goes through the page-locked ring
        (a GPU's large reads), each chunk is compared by a pool thread as soon as it is copied
        out, while the next chunks travel: the comparison costs little beyond the read."""
        if not reads_staged(self, arrays):
            return super().to_host_compared(arrays, hosts)
        self._check_process()
        self._note_read()
        # (an array of another shape or type is not the same: nothing of it compared)
        views = [np.ascontiguousarray(h).reshape(-1).view(np.uint8)
                 if tuple(h.shape) == tuple(a.shape) and h.dtype == a.dtype else None for a, h in zip(arrays, hosts)]
        answers: list[list] = [[] for _ in arrays]

        def compare(k: int, start: int, stop: int, copied: np.ndarray) -> None:
            if views[k] is not None:
                answers[k].append(compare_later(copied, views[k][start:stop]))
        copies = read_staged(self, arrays, on_chunk=compare)
        copies = list(copies) if isinstance(copies, tuple) else [copies]
        return copies, [views[k] is not None and all(f.result() for f in answers[k]) for k in range(len(arrays))]

    def host_array(self, shape, dtype) -> np.ndarray:
        """Page-locked host memory: a buffer allocated with ALLOC_HOST_PTR, mapped once (and kept
        for the process, reused once its owner lets it go). Reads into it are DMA transfers that
        the host does not wait for (on an H100, enqueueing one costs ~20 us, ~40-60 us into
        pageable memory)."""
        self._check_process()
        return self._device.host_array(shape, dtype)

    def read_async(self, arrays: list, into: list):
        import pyopencl as cl
        self._check_process()
        event = None
        with self.lock:
            for a, host in zip(arrays, into):
                if a.size:
                    event = self._device.keep(cl.enqueue_copy(self.queue, host, a.data, is_blocking=False))
        return event

    def read_done(self, event) -> bool:
        import pyopencl as cl
        self._check_process()
        return event is None or event.command_execution_status == cl.command_execution_status.COMPLETE

    def write(self, array, host: np.ndarray) -> None:
        """Overwrite ``array`` with ``host``. Inside a capture the data goes into a buffer of its
        own first, which the replay copies again (a device copy: nothing for the host to wait for).
        Outside one, a write of at most SMALL_WRITE bytes is copied on the host and not waited
        for; a larger one is waited for (``host`` is the caller's)."""
        import pyopencl as cl
        if not array.size:
            return
        self._check_process()
        host = np.ascontiguousarray(host, dtype=array.dtype)
        if self._recording() is None:
            if host.nbytes > SMALL_WRITE:
                self._write_waiting(array.data, host)
                return
            # a few values (a stop state, a mask): copied, and the copy not waited for (the
            # queue runs in order: whatever comes after it sees it)
            self.write_async(array, host.copy())
            return
        with self.lock:
            source = cl.Buffer(self.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
        queue, buffer, lock = self.queue, array.data, self.lock

        def write() -> None:
            with lock:
                cl.enqueue_copy(queue, buffer, source)
        write()
        self._record_write(write)

    def write_async(self, array, host: np.ndarray):
        import pyopencl as cl
        if not array.size:
            return None
        self._check_process()
        with self.lock:
            return self._device.keep(cl.enqueue_copy(self.queue, array.data, host, is_blocking=False))

    def copy(self, array):
        out = self.alloc(array.shape, array.dtype)
        self.copy_into(out, array)
        return out

    def copy_into(self, dst, src) -> None:
        """dst = src for device arrays of the same size: one copy on the queue (recorded by a
        running capture like a launch)."""
        import pyopencl as cl
        if not src.size:
            return
        self._check_process()
        queue, dst_buf, src_buf, lock = self.queue, dst.data, src.data, self.lock
        self.counters["launches"] += 1

        def copy() -> None:
            with lock:
                cl.enqueue_copy(queue, dst_buf, src_buf)
        recording = self._recording()
        if recording is not None:
            recording.steps.append(copy)
        copy()

    def synchronize(self) -> None:
        self._check_process()
        self.queue.finish()  # a wait: outside the lock

    def device_choices(self) -> DeviceChoices:
        return device_choices(self.info)

    def kernel_times(self) -> dict[str, tuple[int, float]]:
        """With GINKPY_OPENCL_PROFILE=1: per kernel name, the launches and their device seconds
        since the last call (for benchmarks and tuning; waits for the queue)."""
        self._check_process()
        events = self._device.events
        if events is None:
            raise RuntimeError("kernel times need GINKPY_OPENCL_PROFILE=1 set before the first executor")
        self.queue.finish()
        out: dict[str, tuple[int, float]] = {}
        for name, event in events:
            count, seconds = out.get(name, (0, 0.0))
            out[name] = (count + 1, seconds + (event.profile.end - event.profile.start) * 1e-9)
        events.clear()
        return out

    def flush(self) -> None:
        self._check_process()
        with self.lock:
            self.queue.flush()

    def same_memory(self, other: Executor) -> bool:
        return isinstance(other, OpenCLExecutor) and other.context == self.context

    def __repr__(self) -> str:
        return f"OpenCLExecutor('{self.info.name}' on '{self.info.platform}')"
