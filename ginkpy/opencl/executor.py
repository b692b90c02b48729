"""The OpenCL executor: runs ginkpy's kernels on any OpenCL device through pyopencl.

Arrays are ``pyopencl.array.Array`` allocated from a memory pool. Kernels live in ``.cl``
files beside the Python module that launches them; :meth:`OpenCLExecutor.program` compiles
one for a value type once per context and caches it. The device's properties are read once
into :class:`DeviceInfo`, from which kernels choose their variant and launch sizes.

Threads: the executors of a device may be used by several threads at once. What OpenCL (or
pyopencl) does not make safe on one context runs under the device's one lock: building a
program, creating a kernel, declaring its scalar types (pyopencl generates an invoker, through
its disk cache) and setting a kernel's arguments until it is enqueued (shared kernels, and the
private copies a capture makes). Enqueueing, copies and waits need no lock (OpenCL makes them
thread-safe), nor does the replay of a captured iteration, which only enqueues.

Processes: an OpenCL runtime does not survive ``fork()`` (PoCL's worker threads and a GPU
driver's connection stay in the parent: a new context in the child hangs at its first wait,
even when the parent only listed the platforms). A process forked after ginkpy used OpenCL
raises :class:`~ginkpy.core.base.executor.ForkedProcessError` where it would use it, for new
executors and for those (and their matrices and solvers) inherited from the parent.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.executor import Executor, ForkedProcessError, new_counters
from ginkpy.core.stop.stopping_status import status_defines

_INCLUDE_DIR = Path(__file__).resolve().parent
# OpenCL types of the value types and of their real parts; complex values are float2 / double2
# (real part .x, imaginary part .y), their arithmetic in common.cl
_TYPE_NAMES = {np.dtype(np.float32): ("float", "float"), np.dtype(np.float64): ("double", "double"),
               np.dtype(np.complex64): ("float2", "float"), np.dtype(np.complex128): ("double2", "double")}
# the stop codes (STATUS_RUNNING, ...), defined once in core/stop/stopping_status.py
_STATUS_OPTIONS = [f"-D{name}={code}" for name, code in status_defines().items()]


class NoOpenCLDeviceError(RuntimeError):
    """No OpenCL platform or no matching device is available."""


class NoOpenCLPlatformError(NoOpenCLDeviceError):
    """No OpenCL platform (or device) at all: the only case where the default executor falls
    back to the reference executor. A requested device that does not exist is an error."""


_HOW_TO_GET_ONE = ('install a CPU device with  pip install "ginkpy[pocl]"  (PoCL), or a GPU driver '
                   'with OpenCL support; "python -m ginkpy devices" lists what is found')


@attrs.frozen
class DeviceInfo:
    """What kernels need to know about the device, read once."""

    name: str
    platform: str
    is_cpu: bool
    is_gpu: bool
    fp64: bool
    max_work_group_size: int
    local_mem_size: int
    compute_units: int
    subgroups: bool  # sub-group functions (cl_khr_subgroups or cl_intel_subgroups)
    global_mem_size: int

    @classmethod
    def of(cls, device) -> "DeviceInfo":
        import pyopencl as cl
        ext = device.extensions.split()
        return cls(name=device.name.strip(), platform=device.platform.name.strip(),
                   is_cpu=bool(device.type & cl.device_type.CPU),
                   is_gpu=bool(device.type & cl.device_type.GPU),
                   fp64="cl_khr_fp64" in ext or device.double_fp_config != 0,
                   max_work_group_size=int(device.max_work_group_size),
                   local_mem_size=int(device.local_mem_size),
                   compute_units=int(device.max_compute_units),
                   subgroups="cl_khr_subgroups" in ext or "cl_intel_subgroups" in ext,
                   global_mem_size=int(device.global_mem_size))


def _platforms():
    import pyopencl as cl
    global _opencl_used
    _opencl_used = True  # from here on a forked child cannot use OpenCL (PoCL starts its threads)
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # the ICD loader reports "no platform" as an error
        platforms = []
    if not platforms:
        raise NoOpenCLPlatformError(f"no OpenCL platform found: {_HOW_TO_GET_ONE}")
    return platforms


def select_device(spec: Any = None):
    """The OpenCL device for ``spec``: a pyopencl Device, ``"<platform>:<device>"`` indices, or a
    substring of the device or platform name. Without a spec: ``GINKPY_OPENCL_DEVICE``, then
    ``PYOPENCL_CTX``, then the first GPU, accelerator or CPU device, in that order."""
    import pyopencl as cl
    if isinstance(spec, cl.Device):
        return spec
    spec = spec or os.environ.get("GINKPY_OPENCL_DEVICE") or os.environ.get("PYOPENCL_CTX")
    platforms = _platforms()
    devices = [(i, j, d) for i, p in enumerate(platforms) for j, d in enumerate(p.get_devices())]
    if spec:
        spec = str(spec)
        parts = spec.split(":")
        if all(part.isdigit() for part in parts):
            p, d = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
            for i, j, dev in devices:
                if (i, j) == (p, d):
                    return dev
            raise NoOpenCLDeviceError(f"no OpenCL device {p}:{d}; the devices are: {_device_list(devices)} "
                                      f"(python -m ginkpy devices)")
        for _, _, dev in devices:
            if spec.lower() in dev.name.lower() or spec.lower() in dev.platform.name.lower():
                return dev
        raise NoOpenCLDeviceError(f"no OpenCL device matches {spec!r} (GINKPY_OPENCL_DEVICE, PYOPENCL_CTX or the "
                                  f"executor name); the devices are: {_device_list(devices)} "
                                  f"(python -m ginkpy devices)")
    for kind in (cl.device_type.GPU, cl.device_type.ACCELERATOR, cl.device_type.CPU):
        for _, _, dev in devices:
            if dev.type & kind:
                return dev
    if devices:
        return devices[0][2]
    raise NoOpenCLPlatformError(f"the OpenCL platforms have no device: {_HOW_TO_GET_ONE}")


def _device_list(devices) -> str:
    return "; ".join(f"{i}:{j} {dev.name.strip()} [{dev.platform.name.strip()}]" for i, j, dev in devices) or "none"


# -- fork: a child process cannot use its parent's OpenCL runtime ----------------------------

_opencl_used = False  # this process called into OpenCL (listed the platforms)
_forked_from: int | None = None  # the parent's process id, in a child forked after it used OpenCL

_FORK_ADVICE = ("OpenCL runtimes do not survive fork(): their threads and device connections stay in the parent, "
                "and work queued here would never run. Start worker processes with the 'spawn' (or 'forkserver') "
                "start method: multiprocessing.get_context('spawn').Pool(...), concurrent.futures."
                "ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn')), or joblib's default (loky) "
                "backend; or use executor='reference' in forked workers")


def _after_fork_in_child() -> None:
    """In a child forked after this process used OpenCL: mark every device of the parent, so
    that its executors, matrices and solvers raise instead of hanging. Their pyopencl objects are
    kept (in ``_devices``), never released here: that would call into the parent's runtime."""
    global _forked_from
    if _opencl_used:
        if _forked_from is None:
            _forked_from = os.getppid()
        for device in _devices.values():
            device.forked = True


def _check_not_forked() -> None:
    if _forked_from is not None:
        raise ForkedProcessError(f"this process was forked from process {_forked_from} after it had used "
                                 f"OpenCL, so it cannot use OpenCL itself: {_FORK_ADVICE}")


def _forked_error(device: "_Device") -> ForkedProcessError:
    return ForkedProcessError(f"this OpenCL executor on '{device.info.name}' (and the matrices, vectors and "
                              f"solvers made on it) comes from process {_forked_from}, the parent of this "
                              f"forked process; it cannot be used here. Make them inside the worker, from "
                              f"NumPy/SciPy data. {_FORK_ADVICE}")


os.register_at_fork(after_in_child=_after_fork_in_child)


class Kernel:
    """A kernel of a compiled program, shared by the executors of one device.

    Its scalar argument types are declared at its first launch, from the numpy scalars passed
    then (every launch passes the same types): pyopencl packs declared scalars directly, where
    its generic path costs about 10 us per scalar and launch. Declaring, setting the arguments
    and enqueueing happen under the device's lock, so threads sharing the kernel cannot mix
    their arguments. Inside :meth:`Executor.capture <ginkpy.core.base.executor.Executor.capture>`
    a launch also goes to the recording, as a private copy of the kernel with its arguments set
    once (under the lock too), which the replay enqueues without setting anything (no lock).
    Copies are reused: once no recording holds one any more it goes back to the kernel's
    spares, and a later capture only sets its arguments (creating a kernel costs 0.5-1 ms on
    NVIDIA's OpenCL, and a multigrid cycle records hundreds of launches).
    Made by :meth:`OpenCLExecutor.kernel`, under the device's lock.
    """

    def __init__(self, program, name: str, device: "_Device") -> None:
        import pyopencl as cl
        self._program, self._name, self._device = program, name, device
        self._kernel = cl.Kernel(program, name)
        self._dtypes = None
        self._spares: list = []  # private copies no recording holds

    def _declare(self, args: tuple) -> None:
        """Declare the scalar argument types of ``args`` (once; pyopencl generates and caches
        the invoker that packs them)."""
        dtypes = [a.dtype if isinstance(a, np.generic) else None for a in args]
        with self._device.lock:
            if self._dtypes is None:
                self._kernel.set_scalar_arg_dtypes(dtypes)
                self._dtypes = dtypes

    def __call__(self, queue, global_size, local_size, *args: Any):
        import pyopencl as cl
        device = self._device
        if device.forked:
            raise _forked_error(device)
        if self._dtypes is None:
            self._declare(args)
        local = sum(a.size for a in args if type(a) is cl.LocalMemory)
        if local > device.info.local_mem_size:
            raise ValueError(f"the kernel '{self._name}' needs {local} bytes of local memory for this launch, "
                             f"the device '{device.info.name}' has {device.info.local_mem_size}: use fewer "
                             f"right-hand sides at once (or a smaller krylov_dim in Gmres)")
        device.counters["launches"] += 1
        recording = getattr(device.capture, "recording", None)
        events, name = device.events, self._name
        if recording is None:
            with device.lock:
                event = self._kernel(queue, global_size, local_size, *args)
            if events is not None:
                events.append((name, event))
            return event
        # a private copy with its arguments set once: the replay only enqueues it (set one by
        # one: declaring the copy's scalar types would generate pyopencl's invoker for it again,
        # about a millisecond per copy, and Gmres captures over a hundred per solve)
        with device.lock:
            if self._spares:
                copy = _KernelCopy(self._spares.pop(), self._spares, args)
            else:
                copy = _KernelCopy(cl.Kernel(self._program, self._name), self._spares, args)
                device.counters["kernel_copies"] += 1
            for index, arg in enumerate(args):
                copy.kernel.set_arg(index, arg)
        global_size, local_size = tuple(global_size), None if local_size is None else tuple(local_size)

        if events is None:
            def launch() -> None:
                cl.enqueue_nd_range_kernel(queue, copy.kernel, global_size, local_size)
        else:
            def launch() -> None:
                events.append((name, cl.enqueue_nd_range_kernel(queue, copy.kernel, global_size, local_size)))
        recording.steps.append(launch)
        return launch()

    def __getattr__(self, name: str) -> Any:  # the rest of pyopencl's Kernel (get_work_group_info, ...)
        return getattr(self._kernel, name)


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


@attrs.define(eq=False)
class _Device:
    """What the executors of one device share: context, queue, memory pool, device properties,
    compiled programs and kernels, the lock (builds, kernel creation, argument setting), the
    counters and the running capture (per thread); ``forked`` in a child forked from the
    process that made it."""

    context: Any
    queue: Any
    pool: Any
    info: DeviceInfo
    programs: dict = attrs.field(factory=dict)
    kernels: dict = attrs.field(factory=dict)
    counters: dict = attrs.field(factory=new_counters)
    lock: Any = attrs.field(factory=threading.RLock)
    capture: Any = attrs.field(factory=threading.local)
    events: list | None = None  # (kernel name, event) of every launch when profiling
    forked: bool = False
    staging: Any = None  # upload's page-locked host buffer (GPU): (buffer, mapped array, last copy's event)
    staging_lock: Any = attrs.field(factory=threading.Lock)


_devices: dict[Any, _Device] = {}
_devices_lock = threading.Lock()  # one context, queue and memory pool per device, shared by executors


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
        _check_not_forked()
        import pyopencl as cl
        import pyopencl.tools as cl_tools
        dev = select_device(device)
        key = dev.int_ptr
        with _devices_lock:
            if key not in _devices:
                ctx = cl.Context([dev])
                # GINKPY_OPENCL_PROFILE=1: kernel times per name in executor.kernel_times()
                profile = os.environ.get("GINKPY_OPENCL_PROFILE") == "1"
                queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE
                                        if profile else 0)
                pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))
                _devices[key] = _Device(ctx, queue, pool, DeviceInfo.of(dev), events=[] if profile else None)
        shared = self._device = _devices[key]
        self.context, self.queue, self.pool, self.info = shared.context, shared.queue, shared.pool, shared.info
        self.counters, self._capture = shared.counters, shared.capture
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
            with device.lock:
                prog = device.programs.get(key)
                if prog is None:
                    source = path.read_text()
                    prog = device.programs[key] = cl.Program(self.context, source).build(options=options)
        return prog

    def kernel(self, module_file: str, dtype: Any, name: str, **defines: Any) -> "Kernel":
        """The kernel ``name`` of :meth:`program`, created once and then reused (pyopencl makes a
        new kernel object, and warns, on every ``program.name`` access). The look-up is one dict
        access: it runs for every launch."""
        key = (module_file, dtype, name, *sorted(defines.items()))
        device = self._device
        knl = device.kernels.get(key)
        if knl is None:
            program = self.program(module_file, dtype, **defines)
            with device.lock:  # clCreateKernel, not beside a build
                knl = device.kernels.get(key)
                if knl is None:
                    knl = device.kernels[key] = Kernel(program, name, device)
        return knl

    def _check_process(self) -> None:
        """Raise :class:`ForkedProcessError` in a process forked from the one that made this executor."""
        if self._device.forked:
            raise _forked_error(self._device)

    # -- memory ------------------------------------------------------------------------------
    def check_dtype(self, dtype: Any) -> np.dtype:
        dtype = super().check_dtype(dtype)
        if dtype in (np.float64, np.complex128) and not self.info.fp64:
            single = "complex64" if dtype == np.complex128 else "float32"
            raise TypeError(f"the OpenCL device '{self.info.name}' has no float64 (fp64) support: use "
                            f"dtype=numpy.{single} ({dtype} needs fp64), or choose another device")
        return dtype

    def alloc(self, shape, dtype):
        import pyopencl.array as cla
        self._check_process()
        self.counters["allocations"] += 1
        return cla.empty(self.queue, shape, np.dtype(dtype), allocator=self.pool)

    def from_host(self, array: np.ndarray):
        array = np.ascontiguousarray(array)
        out = self.alloc(array.shape, array.dtype)
        if array.size:
            out.set(array, queue=self.queue)
        return out

    def upload(self, shape, dtype, fill):
        """See :meth:`Executor.upload`. A CPU device's buffer is host memory: it is mapped and
        written in place. A GPU gets a DMA copy from a page-locked staging buffer that is kept
        (grown to the largest upload) and reused once its previous copy has finished; a copy
        from pageable memory goes through the driver's own staging at a fraction of the speed."""
        import pyopencl as cl
        self._check_process()
        dtype = np.dtype(dtype)
        out = self.alloc(shape, dtype)
        if out.size == 0:
            fill(np.empty(shape, dtype))
            return out
        if self.info.is_cpu:
            host, _ = cl.enqueue_map_buffer(self.queue, out.base_data, cl.map_flags.WRITE_INVALIDATE_REGION,
                                            out.offset, shape, dtype, is_blocking=True)
            try:
                fill(host)
            finally:
                host.base.release(self.queue)
            return out
        device = self._device
        with device.staging_lock:  # one upload at a time writes the staging buffer
            nbytes = out.nbytes
            if device.staging is None or device.staging[1].nbytes < nbytes:
                if device.staging is not None and device.staging[2] is not None:
                    device.staging[2].wait()
                device.staging = None
                buffer = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
                array, _ = cl.enqueue_map_buffer(self.queue, buffer, cl.map_flags.READ | cl.map_flags.WRITE,
                                                 0, (nbytes,), np.uint8, is_blocking=True)
                device.staging = (buffer, array, None)
            buffer, array, previous = device.staging
            if previous is not None:
                previous.wait()  # the last upload's copy has left the staging buffer
            host = array[:nbytes].view(dtype).reshape(shape)
            fill(host)
            event = cl.enqueue_copy(self.queue, out.data, host, is_blocking=False)
            device.staging = (buffer, array, event)
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
            return array if array.offset == 0 else array.with_queue(self.queue).copy()
        # a strided view, which pyopencl cannot copy on the device: the span of its buffer through the host
        import pyopencl as cl
        if min(array.strides, default=0) < 0:
            raise ValueError("a pyopencl array with negative strides cannot be used: pass a contiguous copy")
        span = array.dtype.itemsize + sum((n - 1) * s for n, s in zip(array.shape, array.strides))
        raw = np.empty(span, np.uint8)
        if array.size:
            cl.enqueue_copy(self.queue, raw, array.base_data, src_offset=array.offset)
        self._note_read()
        strided = np.lib.stride_tricks.as_strided(raw.view(array.dtype), array.shape, array.strides)
        return self.from_host(np.ascontiguousarray(strided))

    def to_host(self, *arrays: Any):
        import pyopencl as cl
        self._check_process()
        self._note_read()
        out = []
        for a in arrays:
            host = np.empty(a.shape, a.dtype)
            if a.size:
                cl.enqueue_copy(self.queue, host, a.data, is_blocking=False)
            out.append(host)
        self.queue.finish()
        return out[0] if len(out) == 1 else tuple(out)

    def host_array(self, shape, dtype) -> np.ndarray:
        """Page-locked host memory: a buffer allocated with ALLOC_HOST_PTR, mapped once (the
        mapping lives as long as the buffer). Reads into it are DMA transfers that the host does
        not wait for (on an H100, enqueueing one costs ~20 us, ~40-60 us into pageable memory)."""
        import pyopencl as cl
        self._check_process()
        nbytes = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
        buffer = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
        array, _ = cl.enqueue_map_buffer(self.queue, buffer, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                         shape, dtype, is_blocking=True)
        self._pinned = getattr(self, "_pinned", [])
        self._pinned.append(buffer)
        return array

    def read_async(self, arrays: list, into: list):
        import pyopencl as cl
        self._check_process()
        event = None
        for a, host in zip(arrays, into):
            if a.size:
                event = cl.enqueue_copy(self.queue, host, a.data, is_blocking=False)
        return event

    def read_done(self, event) -> bool:
        import pyopencl as cl
        self._check_process()
        return event is None or event.command_execution_status == cl.command_execution_status.COMPLETE

    def write(self, array, host: np.ndarray) -> None:
        import pyopencl as cl
        if not array.size:
            return
        self._check_process()
        recording = self._recording() is not None
        # a copy of its own only for a recording, which writes it again later (no extra host copy otherwise)
        host = np.array(host, dtype=array.dtype, order="C", copy=True) if recording else \
            np.ascontiguousarray(host, dtype=array.dtype)
        queue, buffer = self.queue, array.data
        cl.enqueue_copy(queue, buffer, host, is_blocking=True)
        if recording:
            self._record_write(lambda: cl.enqueue_copy(queue, buffer, host, is_blocking=False))

    def write_async(self, array, host: np.ndarray):
        import pyopencl as cl
        if not array.size:
            return None
        self._check_process()
        return cl.enqueue_copy(self.queue, array.data, host, is_blocking=False)

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
        queue, dst_buf, src_buf = self.queue, dst.data, src.data
        self.counters["launches"] += 1
        recording = self._recording()
        if recording is not None:
            recording.steps.append(lambda: cl.enqueue_copy(queue, dst_buf, src_buf))
        cl.enqueue_copy(queue, dst_buf, src_buf)

    def synchronize(self) -> None:
        self._check_process()
        self.queue.finish()

    def small_system_rows(self, method: str, dtype: Any) -> int:
        from ginkpy.opencl.small_systems import small_system_rows
        return small_system_rows(self.info, method, dtype)

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
        self.queue.flush()

    def same_memory(self, other: Executor) -> bool:
        return isinstance(other, OpenCLExecutor) and other.context == self.context

    def __repr__(self) -> str:
        return f"OpenCLExecutor('{self.info.name}' on '{self.info.platform}')"
