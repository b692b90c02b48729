"""The cache through which ``gk.linalg.cg(A, b)`` and the other functions reuse the
:class:`~ginkpy.linalg._solver.Solver` they built for a SciPy matrix they saw before: A's copy
on the executor, a snapshot of its arrays to see a change, and the solvers by their arguments."""
from __future__ import annotations

import collections
import contextlib
import threading
import weakref
from typing import Any, Iterator

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.bitwise import same_contents
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import INDEX_DTYPE
from ginkpy.core.matrix.csr import Csr
from ginkpy.linalg._kept_operators import KeptOperator, host_kept
from ginkpy.linalg._snapshot import Snapshot
from ginkpy.linalg._solver import Solver
from ginkpy.linalg._spd import SYMMETRIC_METHODS, nonsymmetry, warn_nonsymmetric

# -- what linalg's functions build, kept for the next call on the same matrix ---------------------

CACHED_MATRICES = 4  # SciPy matrices whose solvers are kept (the most recently used)
SOLVERS_PER_MATRIX = 8


class _CachedMatrix:
    """What the functions built for one SciPy matrix: a snapshot of its arrays (to tell a later
    call whether they changed), A on the executor, and the Solvers by their arguments."""

    def __init__(self, A: Any, exec: Executor, dtype: np.dtype) -> None:
        self.exec, self.dtype, self.format, self.shape = exec, dtype, A.format, A.shape
        # A's upload enqueued now. Its snapshot: where the upload took A's arrays as they are
        # and the executor's choices say so (a GPU), read back from the device's copy at the
        # next call on A, each piece compared with A's as it arrives (a host copy beside the
        # first call slowed it by more than the copy costs); else copied on the host by
        # settle(), after the solve, which the first call waits for (the caller may change A
        # once the call returned)
        self.matrix, self._uploads = Csr.from_scipy_async(exec, A, dtype)  # (A's canonical check beside it)
        self.canonical = A.format == "csr" and A.has_canonical_format  # (its data in the matrix's entry order)
        as_they_are = self.canonical and A.data.dtype == dtype and \
            A.indptr.dtype == INDEX_DTYPE and A.indices.dtype == INDEX_DTYPE
        self._from_device = as_they_are and exec.device_choices().snapshots_from_device
        self._source: Any = None if self._from_device else _arrays(A)
        self._snapshot: Any = None  # (a Snapshot, or the arrays read back)
        self.matrix.spmv_strategy()  # (chosen now from the host's row pointers, beside the upload)
        self.solvers: collections.OrderedDict = collections.OrderedDict()
        self.lock = threading.RLock()
        self.nonsymmetry: Any = ...  # (gk.linalg._spd.nonsymmetry of A, found at first need)

    @property
    def arrays(self) -> list[np.ndarray]:
        """The snapshot of A's arrays (indptr, indices, data): taken on the host by settle(),
        or read back from the device's copy of A by the first :meth:`matches` (which every
        later call on A runs before it reads this)."""
        if self._from_device:
            return self._snapshot
        self._take_snapshot()
        return self._snapshot.arrays

    def _take_snapshot(self) -> None:
        if self._snapshot is None:  # copies by a few threads, waited for by arrays and settle()
            self._snapshot, self._source = Snapshot(self._source), None

    def settle(self) -> None:
        """Wait for A's upload and (on the host) its snapshot: what the first call must not
        return before."""
        uploads, self._uploads = self._uploads, []
        for event in uploads:
            event.wait()
        if not self._from_device:
            self._take_snapshot()
            self._snapshot.wait()

    def matches(self, A: Any) -> str:
        """"same", "values" (only the values changed, in a canonical CSR matrix: an update takes
        them) or "other"."""
        if A.format != self.format or A.shape != self.shape:
            return "other"
        current = _arrays(A)
        if self._from_device and self._snapshot is None:
            # the snapshot read back from the device's copy of A, each piece compared with A's
            # as it arrives (the comparison costs little beyond the read)
            m = self.matrix
            copies, same = self.exec.to_host_compared([m.row_ptrs, m.col_idxs, m.values], current)
            self._snapshot = copies
            same_pattern, same_values = same[0] and same[1], same[2]
        else:
            old = self.arrays
            same_pattern = same_contents(current[0], old[0]) and same_contents(current[1], old[1])
            same_values = same_pattern and same_contents(current[2], old[2])
        if not same_pattern:
            return "other"
        if same_values:
            return "same"
        return "values" if self.canonical and current[2].dtype == self.arrays[2].dtype else "other"

    def solver(self, A: Any, method: str, M: Any, arguments: dict) -> Solver:
        """The kept Solver of these arguments for A (this matrix, as its snapshot holds it),
        built at its first use (the caller holds the lock)."""
        key = (method, _key(M), tuple(sorted((k, _key(v)) for k, v in arguments.items())))
        solver = self.solvers.get(key)
        if solver is not None and not all(kept.holds(value) for kept, value in
                                          zip(solver._kept_operators, (M, arguments.get("left_preconditioner")))):
            solver = None  # (a sparse M changed since: built anew)
        if solver is None:
            if method in SYMMETRIC_METHODS:
                if self.nonsymmetry is ...:
                    self.nonsymmetry = nonsymmetry(A)  # (A holds what the snapshot holds)
                warn_nonsymmetric(method, None, self.nonsymmetry)
            solver = self.solvers[key] = Solver(self.matrix, method, M=(M[0], dict(M[1])) if isinstance(M, tuple)
                                                else M, executor=self.exec, **arguments)
            # the host operators the key names by identity, held (their ids stay theirs) with their contents
            solver._kept_operators = (KeptOperator(M), KeptOperator(arguments.get("left_preconditioner")))
            while len(self.solvers) > SOLVERS_PER_MATRIX:
                self.solvers.popitem(last=False)
        else:
            self.solvers.move_to_end(key)
        return solver

    def take_values(self, A: Any) -> None:
        """A's new values: into the snapshot and the matrix, then every solver follows them."""
        np.copyto(self.arrays[2], A.data)
        self.nonsymmetry = ...
        self.matrix.update_values(A.data)
        for solver in self.solvers.values():
            solver.refresh()


_cache: collections.OrderedDict = collections.OrderedDict()
_cache_lock = threading.Lock()


@contextlib.contextmanager
def kept_solver(A: Any, exec: Executor, dtype: np.dtype, method: str, M: Any,
                **arguments: Any) -> Iterator[Solver | None]:
    """The Solver of ``method`` for the SciPy matrix A with these arguments, built at a call
    before on the same matrix object and kept (else built now and kept), for the duration of
    the ``with`` block; None where nothing may be kept (A not a CSR or CSC matrix, M a SciPy
    operator or matrix, or ginkpy parameters).

    A kept solver is used only while A's arrays hold what they held then, compared on the host
    in full (bitwise, a pass over A, in parallel chunks); where only the values changed, the
    solvers of A take them as :meth:`Solver.update` does (their preconditioners' structure
    kept); any other change builds anew. The matrix is held for the block: another thread's
    call with new values of it waits until this solve is done."""
    if not (sp.issparse(A) and A.format in ("csr", "csc")) or not _cacheable(M) \
            or not _cacheable(arguments.get("left_preconditioner")):
        yield None
        return
    key = (id(A), type(exec).__name__)
    with _cache_lock:
        entry = _cache.get(key)
        if entry is not None and not (entry[0]() is A and entry[1].exec.same_memory(exec)
                                      and entry[1].dtype == dtype):
            entry = None
        if entry is not None:
            _cache.move_to_end(key)
    if entry is not None:
        cached = entry[1]
        with cached.lock:
            state = cached.matches(A)
            if state == "values":
                try:
                    cached.take_values(A)
                except Exception:
                    _forget(key)  # (half taken: built anew at the next call)
                    raise
            if state != "other":
                yield cached.solver(A, method, M, arguments)
                return
    try:
        ref = weakref.ref(A, lambda _, key=key: _forget(key))
    except TypeError:  # (a matrix class without weak references: nothing kept)
        yield None
        return
    cached = _CachedMatrix(A, exec, dtype)
    with _cache_lock:
        _cache[key] = (ref, cached)
        while len(_cache) > CACHED_MATRICES:
            _cache.popitem(last=False)
    with cached.lock:
        try:
            yield cached.solver(A, method, M, arguments)
        finally:
            try:
                cached.settle()
            except BaseException:
                _forget(key)  # (no snapshot: built anew at the next call)
                raise


def _forget(key: Any) -> None:
    with _cache_lock:
        _cache.pop(key, None)


def clear_cache() -> None:
    """Drop what ``gk.linalg``'s functions kept for the matrices they saw (their copies on the
    executor, preconditioners and solvers), to free device memory. It takes no parameters.

    Examples
    --------
    >>> x, info = gk.linalg.cg(A, b, M="amg")       # keeps A and its hierarchy for the next call
    >>> gk.linalg.clear_cache()
    """
    with _cache_lock:
        _cache.clear()


def _arrays(A: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return A.indptr, A.indices, A.data


def _cacheable(M: Any) -> bool:
    """Whether a solver with this M may be kept: M None, a name, (name, options) with plain
    options (numbers, strings), a ginkpy LinOp (the caller's object, applied as it is), a SciPy
    sparse M (compared with its snapshot at each call) or a SuperLU (or a LinearOperator around
    its ``solve``). Parameters, factories and other host operators are the caller's to change
    between calls: not kept."""
    if M is None or isinstance(M, (str, LinOp)) or host_kept(M):
        return True
    return (isinstance(M, tuple) and len(M) == 2 and isinstance(M[0], str) and isinstance(M[1], dict)
            and all(isinstance(v, (int, float, str, bool, type(None))) for v in M[1].values()))


def _key(value: Any) -> Any:
    """A comparable key for an argument: a LinOp by identity (the solver keeps it), (name,
    options) by their contents."""
    if isinstance(value, LinOp) or host_kept(value):
        return ("object", id(value))
    if isinstance(value, tuple):
        return ("options", value[0].lower(), tuple(sorted(value[1].items())))
    return value.lower() if isinstance(value, str) else value
