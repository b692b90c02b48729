"""What the executors of one OpenCL device share, and the rules that keep sharing it safe.

One :class:`SharedDevice` per device and process: its context, its one in-order queue, the
memory pool, the compiled programs and kernels, the page-locked host arrays, and the lock.

Threads (issue 30): OpenCL promises thread-safe API calls (except setting a kernel's
arguments), but vendor runtimes do not keep that promise beside program builds, and pyopencl
lets go of the GIL in builds, waits, blocking copies and maps, so that two threads can be inside
the driver at once. The rule that makes any number of threads safe here:

- every OpenCL call that creates something or enqueues work (a build, a kernel, its arguments
  and launch, a replayed launch, a copy, a fill, a map, an allocation from the pool, a page-locked
  buffer) runs under the device's ``lock``; a build also holds the process-wide ``BUILD_LOCK``
  (compilers are not re-entrant across contexts either), so no enqueue of this process's
  ginkpy runs beside a build, and one thread builds a program while the others wait for it;
- waits (an event's, the queue's finish) run outside the lock: the device finishes the queue
  without the host, so a waiting thread never holds up another's enqueues; a read waits for its
  own copies (the queue is in order), not for the whole queue;
- no pyopencl object is dropped while it could wait: a copy to or from host memory returns a
  "nanny" event whose deletion waits for the copy with the GIL held, so such events are waited
  for, or kept in ``pending`` until they are complete; page-locked arrays are never freed
  (a finished owner's array is reused), so that no unmap is enqueued from a garbage collection.

Exit: at interpreter exit no thread enqueues any more (the atexit handler takes every device's
lock for good: a daemon thread still solving stops at its next launch, in Python, not inside the
driver, where the interpreter's finalization would abort the process), every queue is finished,
and the shared devices (context, queue, pool, programs, kernels, page-locked buffers) are
deliberately left to the operating system instead of being released one by one while the
interpreter tears down: some drivers hang releasing OpenCL objects at exit where a process that
leaves them exits at once.

Processes: an OpenCL runtime does not survive ``fork()`` (PoCL's worker threads and a GPU
driver's connection stay in the parent: a new context in the child hangs at its first wait,
even when the parent only listed the platforms). A process forked after ginkpy used OpenCL
raises :class:`~ginkpy.core.base.executor.ForkedProcessError` where it would use it, for new
executors and for those (and their matrices and solvers) inherited from the parent.
"""
from __future__ import annotations

import atexit
import collections
import ctypes
import os
import sys
import threading
import time
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.executor import ForkedProcessError, new_counters

BUILD_LOCK = threading.Lock()  # one program build at a time in the process, whatever the device


@attrs.define(eq=False)
class SharedDevice:
    """What the executors of one device share: context, queue, memory pool, device properties
    (``info``: a DeviceInfo), compiled programs and kernels, the lock (see the module's rule),
    the counters and the running capture (per thread); the copies still in flight (``pending``),
    the page-locked host arrays (``pinned``), the upload's staging array and copy ring; ``forked`` in a child forked from the process that made it;
    the record of the programs each kind of operator uses and the recordings running
    (``prebuild.py``)."""

    context: Any
    queue: Any
    pool: Any
    info: Any
    programs: dict = attrs.field(factory=dict)
    kernels: dict = attrs.field(factory=dict)
    counters: dict = attrs.field(factory=new_counters)
    lock: Any = attrs.field(factory=threading.RLock)
    capture: Any = attrs.field(factory=threading.local)
    events: list | None = None  # (kernel name, event) of every launch when profiling
    forked: bool = False
    pending: Any = attrs.field(factory=collections.deque)  # events of copies in flight, oldest first
    pinned: list = attrs.field(factory=list)  # (raw page-locked uint8 array, its size)
    staging: Any = None  # upload's page-locked host array (GPU) and its copies' events
    staging_lock: Any = attrs.field(factory=threading.Lock)
    ring: Any = None  # from_host_async's page-locked chunks (GPU; staging.py: StagingRing)
    ring_lock: Any = attrs.field(factory=threading.Lock)
    # programs built up front (prebuild.py): the recordings running (in any thread), each
    # thread's own, and the device's record of the programs each kind of operator uses
    recordings: int = 0
    recording: Any = attrs.field(factory=threading.local)
    program_record: Any = None
    prepared: dict = attrs.field(factory=dict)  # signature -> (record, its generation, kernels, copies)

    def keep(self, event: Any) -> Any:
        """Hold ``event`` (a copy's) until it is complete, so that dropping it never waits;
        returns it. Complete ones are let go here, oldest first (the queue runs in order)."""
        import pyopencl as cl
        complete = cl.command_execution_status.COMPLETE
        with self.lock:
            pending = self.pending
            while pending and pending[0].command_execution_status == complete:
                pending.popleft()
            if event is not None:
                pending.append(event)
        return event

    def host_array(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A page-locked host array of ``shape`` and ``dtype``: a free one of the same size where
        an earlier owner has let its array go, else a new buffer allocated with ALLOC_HOST_PTR and
        mapped for good. Never freed, never unmapped. Every array numpy derives from it (views,
        slices, what a read in flight holds) has the raw mapped array as its base, so the raw
        array is free exactly when its reference count is back to what the list alone holds."""
        import pyopencl as cl
        dtype = np.dtype(dtype)
        size = int(np.prod(shape)) * dtype.itemsize
        nbytes = max(size, 1)
        event = None
        with self.lock:
            raw = _free_pinned(self.pinned, nbytes)
            if raw is None:
                buffer = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
                raw, event = cl.enqueue_map_buffer(self.queue, buffer, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                                   (nbytes,), np.uint8, is_blocking=False)
                self.pinned.append((raw, nbytes))
            view = raw[:size].view(dtype).reshape(shape)  # base: raw (raw's own base is not an array)
        if event is not None:
            event.wait()
        return view


def _free_pinned(pinned: list, nbytes: int) -> np.ndarray | None:
    """The first raw array of ``pinned`` of ``nbytes`` that nothing but the list references."""
    for raw, size in pinned:
        if size == nbytes and sys.getrefcount(raw) <= _FREE_REFS:
            return raw
    return None


def _references_when_free() -> int:
    """What sys.getrefcount says in _free_pinned of an array that only the list references
    (measured the same way, so that it holds on any CPython)."""
    for raw, _ in [(np.empty(1), 1)]:
        return sys.getrefcount(raw)
    return 0


_FREE_REFS = _references_when_free()
_devices: dict[Any, SharedDevice] = {}
_devices_lock = threading.Lock()  # one context, queue and memory pool per device, shared by executors


def shared_device(dev: Any, describe: Any) -> SharedDevice:
    """The one SharedDevice of the pyopencl device ``dev`` (``describe(dev)``: its DeviceInfo),
    made at the first call: a context, an in-order queue (profiling with GINKPY_OPENCL_PROFILE=1:
    ``exec.kernel_times()``) and a memory pool."""
    import pyopencl as cl
    import pyopencl.tools as cl_tools
    key = dev.int_ptr
    with _devices_lock:
        if key not in _devices:
            ctx = cl.Context([dev])
            profile = os.environ.get("GINKPY_OPENCL_PROFILE") == "1"
            queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE if profile else 0)
            pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))
            _devices[key] = SharedDevice(ctx, queue, pool, describe(dev), events=[] if profile else None)
            if len(_devices) == 1:
                atexit.register(_at_exit)
        return _devices[key]


# -- exit: finish the queues, leave the rest to the operating system ------------------------------

_left: list = []  # what _at_exit keeps from being released
EXIT_GRACE = 0.05  # seconds at exit for threads that waited on the device to leave the driver


def _at_exit() -> None:
    """Stop every device's enqueues for good (the lock taken and kept: a daemon thread still
    solving waits at its next launch, in Python, until the process ends), finish the queues,
    give threads that were waiting on the device a moment to return from the driver, and keep
    the shared devices from being released while the interpreter tears down (one extra
    reference that nothing drops). A daemon thread caught inside a driver call when the
    interpreter finalizes would abort the process ("terminate called without an active
    exception"): the lock and the finished queues keep them out of it."""
    devices = [device for device in _devices.values() if not device.forked]
    for device in devices:
        device.lock.acquire()  # never released
    for device in devices:
        try:
            device.queue.finish()
        except Exception:  # noqa: BLE001 - exiting: a device error must not block the exit
            pass
    if devices and threading.active_count() > 1:
        time.sleep(EXIT_GRACE)
    _left.append(dict(_devices))
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_left))


# -- fork: a child process cannot use its parent's OpenCL runtime ----------------------------

opencl_used = False  # this process called into OpenCL (listed the platforms); set by the executor
_forked_from: int | None = None  # the parent's process id, in a child forked after it used OpenCL

FORK_ADVICE = ("OpenCL runtimes do not survive fork(): their threads and device connections stay in the parent, "
               "and work queued here would never run. Start worker processes with the 'spawn' (or 'forkserver') "
               "start method: multiprocessing.get_context('spawn').Pool(...), concurrent.futures."
               "ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn')), or joblib's default (loky) "
               "backend; or use executor='reference' in forked workers")


def _after_fork_in_child() -> None:
    """In a child forked after this process used OpenCL: mark every device of the parent, so
    that its executors, matrices and solvers raise instead of hanging. Their pyopencl objects are
    kept (in ``_devices``), never released here: that would call into the parent's runtime."""
    global _forked_from
    if opencl_used:
        if _forked_from is None:
            _forked_from = os.getppid()
        for device in _devices.values():
            device.forked = True
        _left.append(dict(_devices))  # never released in the child either
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(_left))


def check_not_forked() -> None:
    """Raise ForkedProcessError in a process forked after its parent used OpenCL."""
    if _forked_from is not None:
        raise ForkedProcessError(f"this process was forked from process {_forked_from} after it had used "
                                 f"OpenCL, so it cannot use OpenCL itself: {FORK_ADVICE}")


def forked_error(device: SharedDevice) -> ForkedProcessError:
    """The error for using ``device``, made in the parent, in a forked child."""
    return ForkedProcessError(f"this OpenCL executor on '{device.info.name}' (and the matrices, vectors and "
                              f"solvers made on it) comes from process {_forked_from}, the parent of this "
                              f"forked process; it cannot be used here. Make them inside the worker, from "
                              f"NumPy/SciPy data. {FORK_ADVICE}")


os.register_at_fork(after_in_child=_after_fork_in_child)
