"""Executors: where data lives and which backend runs the kernels.

A core algorithm never computes on data itself: it calls ``exec.run("matrix.dense.fill", x, 0.0)``
and the executor resolves the name to its backend's implementation at the same relative path,
``ginkpy/<backend>/matrix/dense_kernels.py:fill``, as Ginkgo's kernel dispatch does. A kernel
that a backend lacks raises :class:`KernelNotFoundError`; nothing falls back to the host.
"""
from __future__ import annotations

import contextlib
import importlib
import threading
from typing import Any, Callable

import numpy as np

from ginkpy.core.base.bitwise import same_contents
from ginkpy.core.base.capture import Capturing
from ginkpy.core.base.device_choices import DeviceChoices
from ginkpy.core.base.row_chunks import fill_in_chunks


class KernelNotFoundError(NotImplementedError):
    """A core algorithm asked for a kernel that this executor's backend does not provide (a
    bug of ginkpy, or an operator used on a backend it has no kernels for); the message names
    the backend and the kernel. Nothing falls back to the host silently.

    Examples
    --------
    >>> name = "solver.nothing.step_1"         # a kernel no backend has
    >>> try: gk.ReferenceExecutor().run(name)
    ... except gk.KernelNotFoundError as err: print(err)
    """


class ForkedProcessError(RuntimeError):
    """A device executor used in a process forked (``os.fork``, the ``fork`` start method of
    ``multiprocessing``) from one that had already used the device: device runtimes do not
    survive ``fork()``, so the work would never run. Start worker processes with the ``spawn``
    (or ``forkserver``) start method instead, or use the reference executor in forked workers.

    Examples
    --------
    >>> import multiprocessing
    >>> spawn = multiprocessing.get_context("spawn")  # its workers may use OpenCL
    >>> # with spawn.Pool(2) as pool: pool.map(solve, problems)
    """


# The executor registry: executor names and the classes that implement them, as
# "module:class" so that a backend is only imported when it is asked for. This is the only
# place where core/ names a backend.
EXECUTORS = {"reference": "ginkpy.reference.executor:ReferenceExecutor",
             "opencl": "ginkpy.opencl.executor:OpenCLExecutor"}


def executor_class(name: str) -> type:
    """The executor class registered under ``name`` (imported at first use)."""
    module, _, cls = EXECUTORS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def new_counters() -> dict[str, int]:
    """The counters of an executor's device (``Executor.counters``), all 0."""
    return {"launches": 0, "allocations": 0, "reads": 0, "captures": 0, "kernel_copies": 0, "builds": 0}


class Executor(Capturing):
    """Where ginkpy's objects live and compute (Ginkgo's ``Executor``): the base of
    :class:`~ginkpy.reference.executor.ReferenceExecutor` (numpy/scipy on the host) and
    :class:`~ginkpy.opencl.executor.OpenCLExecutor` (any OpenCL device). Make one with
    :func:`executor` by name; every matrix and solver is made on one (``.on(exec)``).

    Subclasses set ``backend`` (the package under ``ginkpy/`` holding the kernels) and
    implement the memory operations on their array type.

    ``counters`` counts, since the executor's device was first used, the kernel ``launches``
    (and copies), device ``allocations``, blocking ``reads`` to the host, ``captures``
    (:meth:`capture` calls), the private ``kernel_copies`` a capture created and the device
    programs ``builds`` (compiled or loaded from a disk cache), where a backend has them: tests
    and benchmarks read them to check what a solve costs.

    Thread safety: executors may be shared between threads. On a device every call that
    creates or enqueues work (program builds, kernel arguments and launches, replayed launches,
    copies, allocations) runs under the device's lock and every wait outside it, so concurrent
    solves on one executor are correct and a build never runs beside another thread's launch;
    a capture records the calling thread's work only; a solver's work vectors are its own, and
    one solver object serializes concurrent ``apply`` calls. The counters add up every
    thread's work, without a lock (exact only while one thread works).

    Examples
    --------
    >>> exec = gk.executor("opencl")            # or gk.ReferenceExecutor()
    >>> A = gk.matrix.Csr.from_scipy(exec, S)
    >>> exec.synchronize(); exec.counters["launches"]
    """

    backend: str = ""
    _host: "Executor | None" = None
    asynchronous = False  # work is queued (a device); else it is done when its call returns
    _profiler = None  # a gk.log.ProfilerHook attached with add_logger: it times every kernel run here
    _profiled = 0  # hooks on this executor or on operators on it: while any, nothing is captured

    def __init__(self) -> None:
        self._kernels: dict[str, Callable[..., Any]] = {}
        self.counters = new_counters()
        self._capture = threading.local()
        self._scratch = threading.local()

    # -- programs built up front (issue 30) ---------------------------------------------------
    def prepare_programs(self, signature: str) -> int:
        """Build, in the calling thread, every device program (and kernel object) recorded for
        operators of ``signature`` (:func:`ginkpy.core.base.program_signature.program_signature`),
        so that their applies meet no build: a factory's generate calls it. Returns how
        many programs it built or loaded from a disk cache; 0 on the host, which has none."""
        return 0

    def record_programs(self, signature: str) -> contextlib.AbstractContextManager:
        """A context manager around an operator's first apply: the programs and kernels this
        thread uses meanwhile are recorded under ``signature``, for :meth:`prepare_programs`
        (and for the next process, where the backend keeps the record on disk). Nothing on
        the host."""
        return contextlib.nullcontext()

    def _check_process(self) -> None:
        """Raise :class:`ForkedProcessError` where this executor cannot run in the current
        process (a device executor inherited through ``fork()``); nothing on the host."""

    def _note_read(self) -> None:
        """Count a blocking read of the executor's memory (and spoil a running capture)."""
        self.counters["reads"] += 1
        recording = self._recording()
        if recording is not None:
            recording.read = True

    @property
    def host(self) -> "Executor":
        """The executor of the host (Ginkgo's ``get_master()``): where setup work that is not
        done by a device kernel runs (block inversions, factorizations, analyses), on numpy
        arrays, before its results move here with :meth:`copy_arrays` or ``to_executor``."""
        if Executor._host is None:
            Executor._host = executor_class("reference")()
        return Executor._host

    # -- kernel dispatch -------------------------------------------------------------------
    def run(self, kernel: str, *args: Any, **kwargs: Any) -> Any:
        """Run the named kernel (``"<path>.<concept>.<function>"``) on this executor."""
        fn = self._kernels.get(kernel)
        if fn is None:
            fn = self._kernels[kernel] = self._resolve(kernel)
        if self._profiler is not None:
            return self._profiler.kernel(self, kernel, fn, args, kwargs)
        return fn(self, *args, **kwargs)

    # -- loggers: a profiler hook ----------------------------------------------------------------
    def add_logger(self, logger: Any) -> None:
        """Attach a ``gk.log.ProfilerHook``: it times every kernel run on this executor (and
        every apply and generate of the operators on it) until removed. Solver loggers
        (Convergence, Stream) attach to a solver instead."""
        if not getattr(logger, "profiles", False):
            raise TypeError(f"an executor takes a gk.log.ProfilerHook, not {type(logger).__name__}: attach "
                            f"Convergence or Stream to a solver (solver.add_logger)")
        logger.attach(self)

    def remove_logger(self, logger: Any) -> None:
        """Detach a ProfilerHook attached with :meth:`add_logger`."""
        logger.detach(self)

    def _resolve(self, kernel: str) -> Callable[..., Any]:
        path, _, function = kernel.rpartition(".")
        module_name = f"ginkpy.{self.backend}.{path}_kernels"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name != module_name:
                raise
            raise KernelNotFoundError(
                f"kernel '{kernel}' is not implemented on the {self.backend} executor "
                f"(no module {module_name})") from None
        fn = getattr(module, function, None)
        if fn is None:
            raise KernelNotFoundError(
                f"kernel '{kernel}' is not implemented on the {self.backend} executor "
                f"({module_name} has no function '{function}')")
        return fn

    # -- memory ----------------------------------------------------------------------------
    def scratch(self, name: str, shape: tuple[int, ...], dtype: Any) -> Any:
        """A temporary array for what one kernel leaves for the next (partial sums of a
        reduction), kept per thread and reused: a kernel module takes it and enqueues its
        consumer before anything else (the device runs the queue in order), so that a solve
        allocates nothing after its first apply. Inside a capture a new array (the recording
        holds it)."""
        if self._recording() is not None:
            return self.alloc(shape, dtype)
        arrays = self._scratch.__dict__.setdefault("arrays", {})
        key = (name, tuple(shape), np.dtype(dtype))
        array = arrays.get(key)
        if array is None:
            array = arrays[key] = self.alloc(shape, dtype)
        return array

    def alloc(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        """Uninitialized array of ``shape`` and ``dtype`` in this executor's memory."""
        raise NotImplementedError

    def from_host(self, array: np.ndarray) -> Any:
        """Copy a host (numpy) array into this executor's memory."""
        raise NotImplementedError

    def from_host_async(self, arrays: list[np.ndarray]) -> tuple[list, list]:
        """Copies of the host ``arrays`` in this executor's memory, enqueued and not waited for.

        Returns the new arrays and the events of the copies in flight (``event.wait()``): the
        caller leaves ``arrays`` unchanged until they are done. On the host: no events.

        Examples
        --------
        >>> (ptrs, cols), copies = exec.from_host_async([indptr, indices])
        >>> for event in copies: event.wait()
        """
        return [self.from_host(a) for a in arrays], []

    def to_host(self, *arrays: Any) -> Any:
        """Copy arrays of this executor to the host; one array gives one numpy array, several a tuple."""
        raise NotImplementedError

    def to_host_compared(self, arrays: Any, hosts: Any) -> tuple[list[np.ndarray], list[bool]]:
        """Copies of this executor's ``arrays`` on the host, and for each whether it holds the
        same bits as the host array beside it in ``hosts`` (its shape and type included): how
        ``gk.linalg`` tells whether a matrix changed since its copy went to the device. A GPU
        compares each piece of the read-back as it arrives, while the next ones travel.

        Parameters
        ----------
        arrays : sequence of device arrays
        hosts : sequence of numpy.ndarray
            What to compare each copy with; left unchanged until this returns.

        Returns
        -------
        (list of numpy.ndarray, list of bool)

        Examples
        --------
        >>> (ptrs, idxs, vals), same = exec.to_host_compared(
        ...     [A.row_ptrs, A.col_idxs, A.values], [S.indptr, S.indices, S.data])
        """
        copies = self.to_host(*arrays) if len(arrays) != 1 else (self.to_host(*arrays),)
        copies = [np.asarray(c) for c in copies]
        return copies, [same_contents(c, h) for c, h in zip(copies, hosts)]

    def upload(self, shape: tuple[int, ...], dtype: Any, fill: Callable[[np.ndarray], None]) -> Any:
        """A new array of ``shape`` and ``dtype`` in this executor's memory, its contents written
        by ``fill(host)`` into a host array of that shape: one transfer and no host array in
        between where the executor allows it (the array itself on the host, the mapped buffer
        on a CPU device, a reused page-locked staging buffer on a GPU). For large inputs built
        on the host (a batch's values gathered from many matrices)."""
        host = np.empty(shape, dtype)
        fill(host)
        return self.from_host(host)

    def upload_rows(self, shape: tuple[int, ...], dtype: Any, fill_rows: Callable[[np.ndarray, int], None],
                    chunk_bytes: int | None = None) -> Any:
        """:meth:`upload` filled a chunk of rows at a time: ``fill_rows(host[start:stop], start)``
        for consecutive ranges of the leading axis, about ``chunk_bytes`` each (None: the
        executor's choice, one chunk on the host). A GPU copies each chunk as soon as it is
        filled, so that the copy of one overlaps the filling of the next.

        Examples
        --------
        >>> values = exec.upload_rows((N, nnz), np.float64, lambda rows, start: np.copyto(rows, V[start:start + len(rows)]))
        """
        return self.upload(shape, dtype, lambda host: fill_in_chunks(host, fill_rows, chunk_bytes))

    def adopt(self, array: Any) -> Any:
        """A device array made elsewhere (a ``pyopencl.array.Array``) as an array of this
        executor: the array itself where the executor can use it as it is, else a copy. The
        host's executor holds NumPy arrays only: a TypeError here."""
        raise TypeError(f"the {self.backend} executor holds NumPy arrays, not {type(array).__name__}: use "
                        f"Dense.from_numpy (or an OpenCL executor for pyopencl arrays)")

    def host_array(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A host array that :meth:`read_async` can copy into without the host waiting (page-locked
        memory on a device; a plain numpy array on the host)."""
        return np.empty(shape, dtype)

    def read_async(self, arrays: list, into: list) -> Any:
        """Start copying the executor's ``arrays`` into the host arrays ``into`` (made by
        :meth:`host_array`); returns the event to wait for (``event.wait()``; None when the
        copies are done already, as on the host)."""
        for a, host in zip(arrays, into):
            host[...] = a
        return None

    def write_async(self, array: Any, host: np.ndarray) -> Any:
        """Start copying the host array ``host`` (made by :meth:`host_array`, of ``array``'s
        shape and value type) into ``array`` without waiting; the caller leaves ``host``
        unchanged until the copy is done (work queued after it on this executor comes after
        it). Returns the event of the copy (None when it is done already, as on the host).
        Not recorded by a capture: for :meth:`host_step`."""
        array[...] = host
        return None

    def flush(self) -> None:
        """Hand the work queued so far to the device without waiting for it (OpenCL's clFlush:
        a driver may otherwise hold it until something waits, leaving the device idle while the
        host queues more). Nothing to do on the host."""

    def none_running(self, status: Any) -> bool:
        """Whether no column of the stop ``status`` array runs, where that is known without a
        read (on the host); False otherwise."""
        return False

    def all_running(self, status: Any) -> bool:
        """Whether every column of the stop ``status`` array still runs, where that is known
        without a read (on the host); False otherwise."""
        return False

    def read_done(self, event: Any) -> bool:
        """Whether the read of :meth:`read_async` that gave ``event`` has arrived."""
        return True

    def write(self, array: Any, host: np.ndarray) -> None:
        """Overwrite ``array`` (of this executor) with the host array ``host`` of the same shape."""
        raise NotImplementedError

    def copy(self, array: Any) -> Any:
        """A new array in this executor's memory with the contents of ``array`` (of this executor)."""
        raise NotImplementedError

    def copy_arrays(self, source: "Executor", *arrays: Any) -> list:
        """Copies, in this executor's memory, of ``arrays`` of the executor ``source`` (directly
        when the memory is shared, else through the host)."""
        if self.same_memory(source):
            return [self.copy(a) for a in arrays]
        host = source.to_host(*arrays)
        return [self.from_host(a) for a in (host if len(arrays) > 1 else (host,))]

    def synchronize(self) -> None:
        """Wait until all work queued on this executor is done (Ginkgo's ``exec->synchronize()``)."""

    def device_choices(self) -> DeviceChoices:
        """What this executor's device chooses where core leaves a choice to it (Multigrid's
        cycle, Ilu's triangular solves, a collective's waits, the batch of one): the one query
        core asks, answered by each backend from its own measured tables
        (:mod:`ginkpy.core.base.device_choices`)."""
        raise NotImplementedError(f"{type(self).__name__} does not say what its device chooses: "
                                  f"implement device_choices()")

    def small_system_rows(self, method: str, dtype: Any) -> int:
        """The most rows a single system may have to be solved as a batch of one (one launch for
        the whole solve, ``gk.batch``'s kernel) rather than by the loop of ``method`` ("cg",
        "bicgstab", "gmres") in value type ``dtype``: the crossover measured on this
        executor's device (``device_choices().small_system_rows``). 0 (never) on the host,
        where the loop costs no launches."""
        return self.device_choices().small_system_rows(method, dtype)

    def check_dtype(self, dtype: np.dtype) -> np.dtype:
        """Return ``dtype`` as a numpy dtype if this executor can compute in it, else raise TypeError."""
        from ginkpy.core.base.types import VALUE_TYPES
        dtype = np.dtype(dtype)
        if dtype not in VALUE_TYPES:
            raise TypeError(f"value type {dtype} is not supported: use float32, float64, complex64 or complex128")
        return dtype

    def same_memory(self, other: "Executor") -> bool:
        """True when arrays of ``other`` can be used by this executor without a copy."""
        return other is self

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def executor(name: str = "default") -> Executor:
    """An executor by name, as the command line and the ``executor=`` arguments take it.

    Parameters
    ----------
    name : str, default "default"
        ``"reference"``, ``"opencl"`` (the default OpenCL device), ``"opencl:<platform>:<device>"``
        (indices, as ``ginkpy devices`` lists them, or ``"opencl:<name substring>"``), or
        ``"default"`` (:func:`default_executor`: OpenCL when a device is present, else the
        reference executor).

    Examples
    --------
    >>> gk.executor("reference")
    ReferenceExecutor()
    >>> gpu = gk.executor("opencl:0:0")
    """
    if not isinstance(name, str):
        raise TypeError(f"executor(name): name must be a string ('reference', 'opencl', "
                        f"'opencl:<platform>:<device>' or 'default'), not {type(name).__name__}")
    if name == "default":
        return default_executor()
    kind, _, device = name.partition(":")
    if kind == "reference" and not device:
        return executor_class("reference")()
    if kind == "opencl":
        return executor_class("opencl")(device or None)
    raise ValueError(f"unknown executor '{name}': use 'reference', 'opencl', "
                     f"'opencl:<platform>:<device>' or 'default'")


def default_executor() -> Executor:
    """The OpenCL executor on the default device (a GPU if there is one, or the device that
    GINKPY_OPENCL_DEVICE / PYOPENCL_CTX names: one that does not exist is an error); the
    reference executor, with a warning, only when there is no OpenCL platform at all (or no
    pyopencl). It takes no parameters.

    Examples
    --------
    >>> exec = gk.default_executor()
    >>> exec.backend
    'opencl'
    """
    try:
        opencl = executor_class("opencl")
    except ImportError as err:
        return _fall_back(f"pyopencl cannot be imported ({err}): pip install pyopencl")
    try:
        return opencl()
    except opencl.NoPlatformError as err:
        return _fall_back(str(err))


def _fall_back(why: str) -> Executor:
    import warnings
    warnings.warn(f"{why} -- using the reference executor instead", RuntimeWarning, stacklevel=3)
    return executor_class("reference")()

