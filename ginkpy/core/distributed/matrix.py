"""Matrix: a row-partitioned sparse matrix over the ranks of an MPI communicator (Ginkgo's
``experimental::distributed::Matrix``, PETSc's MPIAIJ).

Each rank owns the rows ``partition.range(rank)`` and splits them once, at construction, into
the local block (the columns it owns, renumbered from 0: a square Csr) and the non-local block
(the other columns, renumbered compactly in the order of their global indices: the "ghost"
columns), stored compressed to the rows that have non-local entries (on a grid, the rows next
to another rank's).

``apply``: x = A_local b_local + A_non_local b_ghost. The halo exchange (``halo.Halo``) starts
before the local product and ends after it, so the ghost rows travel while the device computes
the local product; then one small launch adds the non-local part on its rows. Products with
dot products (``apply_with_dots``, what CG needs after its product) form the dots of the
local product in it and those of the non-local part in the non-local launch; the solver's
reduction adds both.

Its ``shape`` is that of the local block (n_local x n_local: what the Vector's kernels see),
``global_shape`` the whole. ``reduce_sums`` (or ``start_sums`` ... ``finish_sums``, overlapped
with work in between) makes the partial sums of a solver's reductions global without a
blocking read (``reduction.Reduction``); ``reduce_flags`` and ``reduce_max`` make the host's
decisions global; ``counters`` count the reductions and halo exchanges of the communicator.
"""
from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.distributed.collective import (Collective, allgather, any_over_ranks, check_comm,
                                                mixed_value_types_hint, raise_together)
from ginkpy.core.distributed.halo import Halo
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.distributed.reduction import reduction_of
from ginkpy.core.distributed.vector import Vector, _check_partition
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense, as_scalar, value_dtype


class Matrix(LinOp):
    """This rank's rows of a square N x N matrix partitioned by ``partition`` over the ranks of
    ``comm`` (Ginkgo's ``experimental::distributed::Matrix``; the module says how): the block of
    its own columns (``local_matrix``) and the rest (``non_local``, on the rows that have entries
    there), whose entries need the other ranks' rows of x (a halo exchange overlapped with the
    local product).

    Use it for systems too large for one device, or to run on several GPUs: every core solver
    takes it, as a system matrix, with distributed Vectors. Make one with :meth:`from_scipy`
    (each rank its own rows; no rank needs the global matrix) or :meth:`from_global` (scattered
    from one rank); the constructor takes the blocks already split.

    Parameters
    ----------
    exec : Executor
        This rank's executor (``gk.distributed.executor_for_rank``).
    comm : mpi4py.MPI.Comm
        The communicator of the ranks.
    partition : Partition
        Which rows each rank owns.
    local_matrix : Csr
        The rank's rows on its own columns (renumbered from 0: square).
    non_local, non_local_rows : Csr, ndarray
        The ghost columns' block on the rows that have entries there, and those local rows.
    ghost_columns, receive_counts, send_rows, send_counts : ndarray
        The halo: the global index of each ghost column, how many come from each rank, the
        local rows this rank sends and how many go to each rank.

    Examples
    --------
    >>> partition = gk.distributed.Partition.uniform(n, comm)
    >>> A = gk.distributed.Matrix.from_scipy(exe, comm, my_rows, partition)   # rows with global columns
    >>> solver = gk.solver.Cg.build().on(exe).generate(A)
    """

    distributed = True

    def __init__(self, exec: Executor, comm: Any, partition: Partition, local_matrix: Csr, non_local: Csr,
                 non_local_rows: np.ndarray, ghost_columns: np.ndarray, receive_counts: np.ndarray,
                 send_rows: np.ndarray, send_counts: np.ndarray) -> None:
        super().__init__(exec, local_matrix.shape, local_matrix.dtype)
        self.comm, self.partition = comm, partition
        self.collective = Collective.of(comm)
        self.local_matrix = local_matrix
        # the non-local block on the rows that have entries there (r x g), and those rows
        self.non_local, self.non_local_rows = non_local, non_local_rows
        self._non_local_rows = exec.from_host(non_local_rows.astype(INDEX_DTYPE))
        # global index of each ghost column
        self.ghost_columns = ghost_columns
        self.halo = Halo(exec, comm, send_rows, send_counts, receive_counts)

    @property
    def collective_loop(self) -> bool:
        """Whether a solve's host decisions must be taken alike with other ranks (more than one)."""
        return self.comm.size > 1

    @property
    def counters(self) -> dict:
        """The reductions (one non-blocking allgather each) and halo exchanges this rank made
        with the others of its communicator, since the first distributed object there."""
        return self.collective.counters

    @property
    def non_local_matrix(self) -> Csr:
        """The non-local block with all of this rank's rows (n_local x g), made on demand."""
        compressed = self.non_local.to_scipy()
        n, g = self.shape[0], self.ghost_columns.size
        row_ptrs = np.zeros(n + 1, INDEX_DTYPE)
        row_ptrs[self.non_local_rows + 1] = np.diff(compressed.indptr)
        full = sp.csr_matrix((compressed.data, compressed.indices, np.cumsum(row_ptrs)), shape=(n, g))
        return Csr.from_scipy(self.executor, full, self.dtype)

    # -- creation ----------------------------------------------------------------------------
    @classmethod
    def from_scipy(cls, exec: Executor, comm: Any, matrix: Any, partition: Partition, dtype: Any = None) -> "Matrix":
        """From this rank's rows ``matrix`` (a SciPy sparse matrix, n_local x N, with global column
        indices) of an N x N matrix partitioned by ``partition``. Collective: every rank calls it
        with its rows; bad input raises the same error on every rank."""
        check_comm(comm)
        error = _check_partition(comm, partition)
        host = exec.host
        local = None
        if error is None:
            try:
                local = _host_csr(host, matrix, exec, partition, comm.rank, dtype)
            except (TypeError, ValueError) as err:
                error = err
        raise_together(comm, error)
        sizes = comm.allgather((local.shape[1], local.dtype.str))
        if len(set(sizes)) != 1:
            raise_together(comm, "the ranks pass different global sizes or value types (columns, value type): "
                                 + ", ".join(f"rank {r}: ({n}, {np.dtype(t)})" for r, (n, t) in enumerate(sizes))
                                 + mixed_value_types_hint([t for _, t in sizes]),
                           kind=TypeError if len({t for _, t in sizes}) > 1 else ValueError)
        # the local block, the non-local block, its ghost columns (sorted global indices), their
        # rows at their owners (local indices there) and how many each rank owns
        local_arrays, non_local_arrays, ghost_columns, requested, receive_counts = host.run(
            "distributed.matrix.separate_local_nonlocal", local, partition.offsets, comm.rank)
        n_local = partition.local_size(comm.rank)
        local_matrix = Csr(exec, (n_local, n_local), *(exec.from_host(a) for a in local_arrays))
        return cls._from_blocks(exec, comm, partition, local_matrix, non_local_arrays, ghost_columns, requested,
                                receive_counts)

    @classmethod
    def _from_blocks(cls, exec: Executor, comm: Any, partition: Partition, local_matrix: Csr,
                     non_local_arrays: tuple, ghost_columns: np.ndarray, requested: np.ndarray,
                     receive_counts: np.ndarray) -> "Matrix":
        """From the local block (on ``exec``) and the non-local block as host arrays (row
        pointers, compact column indices, values) with its ghost columns, their local indices at
        their owners (``requested``) and how many each rank owns (collective)."""
        # which of our rows each rank needs from us
        send_counts = np.empty_like(receive_counts)
        comm.Alltoall(receive_counts, send_counts)
        send_rows = np.empty(int(send_counts.sum()), np.int64)
        comm.Alltoallv([requested, (receive_counts, None)], [send_rows, (send_counts, None)])
        row_ptrs, col_idxs, values = non_local_arrays
        # the non-local block compressed to its rows with entries
        rows = np.flatnonzero(np.diff(row_ptrs))
        compressed = np.concatenate([[0], row_ptrs[rows + 1]]).astype(INDEX_DTYPE)
        non_local = Csr(exec, (rows.size, ghost_columns.size), exec.from_host(compressed),
                        exec.from_host(np.ascontiguousarray(col_idxs, INDEX_DTYPE)),
                        exec.from_host(np.ascontiguousarray(values, local_matrix.dtype)))
        return cls(exec, comm, partition, local_matrix, non_local, rows, ghost_columns, receive_counts,
                   send_rows, send_counts)

    @classmethod
    def from_global(cls, exec: Executor, comm: Any, matrix: Any = None, partition: Partition | None = None,
                    root: int = 0, dtype: Any = None) -> "Matrix":
        """Scatter a whole N x N SciPy matrix that rank ``root`` holds (the others pass None) by
        rows (default partition: uniform). For tests and problems small enough for one rank;
        larger ones are assembled rank by rank and given to :meth:`from_scipy`."""
        check_comm(comm)
        error, whole = None, None
        if comm.rank == root:
            if not (sp.issparse(matrix) or isinstance(matrix, np.ndarray)):
                error = f"Matrix.from_global needs a SciPy sparse matrix on rank {root}, not {type(matrix).__name__}"
            else:
                whole = sp.csr_matrix(matrix)
        raise_together(comm, error)
        n = comm.bcast(None if whole is None else whole.shape[0], root=root)
        partition = Partition.uniform(n, comm) if partition is None else partition
        error = _check_partition(comm, partition)
        if error is None and partition.global_size != n:
            error = f"the partition has {partition.global_size} rows, the matrix {n}"
        raise_together(comm, error)
        parts = None if whole is None else [whole[slice(*partition.range(r))] for r in range(comm.size)]
        return cls.from_scipy(exec, comm, comm.scatter(parts, root=root), partition, dtype)

    # -- what a solver asks of its system matrix -------------------------------------------------
    @property
    def global_shape(self) -> tuple[int, int]:
        n = self.partition.global_size
        return n, n

    def reduce_sums(self, *partials: Dense) -> None:
        """The partial sums of reductions (each G x count, one row per work-group) made global,
        all in one exchange: the G rows summed here, the ranks' sums added (in rank order, the
        same bits on every rank) into row 0, the other rows zero. Complex partial sums (the
        conjugating dots of a complex solve) stay complex, real ones (norms) real. No blocking
        read: the device waits only for the exchange (see ``reduction``)."""
        self.start_sums(*partials)
        self.finish_sums(*partials)

    def start_sums(self, *partials: Dense, extras: dict | None = None) -> None:
        """Start making ``partials`` global (read them without waiting); :meth:`finish_sums`
        with the same ``partials`` ends it. In between, the device runs what the solver
        enqueues that does not need them (a halo exchange sends them meanwhile).
        ``extras[i]``: partial sums added to those of ``partials[i]`` (the non-local part of a
        product with dots)."""
        if self.comm.size > 1 and partials:
            self.executor.host_step(reduction_of(self.executor, self.collective, partials, extras).start)

    def finish_sums(self, *partials: Dense) -> None:
        """Wait for the global sums of ``partials`` (started by :meth:`start_sums`) and write them
        to the device without waiting: kernels enqueued after this get them."""
        if self.comm.size > 1 and partials:
            self.executor.host_step(reduction_of(self.executor, self.collective, partials).finish)

    def reduce_flags(self, flags: np.ndarray) -> np.ndarray:
        """``flags`` or-ed over the ranks."""
        return any_over_ranks(self.comm, flags)

    def reduce_max(self, values: np.ndarray) -> np.ndarray:
        """The largest of the ranks' ``values`` (float64, per entry)."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        return values if self.comm.size == 1 else allgather(self.comm, values).max(axis=0)

    def collective_errors(self, outermost: bool) -> contextlib.AbstractContextManager:
        """Around a solve: an error raised in it on this rank is raised on the others too (at
        their next wait for this rank), see ``collective.Collective.solve``."""
        return self.collective.solve(outermost)

    def is_finite(self) -> bool:
        """True when no stored value on any rank is NaN or infinite."""
        mine = self.local_matrix.is_finite() and self.non_local.is_finite()
        return not bool(any_over_ranks(self.comm, np.array([not mine]))[0])

    def generate_preconditioner(self, factory: Any) -> LinOp:
        """The preconditioner of this matrix from a factory that is not a solver: a Schwarz
        factory generates on it; any other (Jacobi, Ilu) is the local solver of additive
        Schwarz, on each rank's local block (so Jacobi is block-Jacobi with the ranks' blocks,
        as Ginkgo's Jacobi on a distributed matrix)."""
        schwarz = Matrix._local_wrapper
        if schwarz is None:
            raise RuntimeError("a preconditioner of a distributed matrix needs gk.distributed loaded: import "
                               "ginkpy.distributed (gk.distributed) before generating it")
        if issubclass(factory.parameters.product, schwarz):
            return factory.generate(self)
        return schwarz.build().with_local_solver(factory).on(self.executor).generate(self)

    # the preconditioner that wraps a local one (additive Schwarz): set by
    # core/distributed/preconditioner/schwarz.py, which builds on this module
    _local_wrapper: type | None = None

    @staticmethod
    def register_local_wrapper(cls: type) -> type:
        """Name ``cls`` (``gk.distributed.preconditioner.Schwarz``) the preconditioner that
        :meth:`generate_preconditioner` wraps a local preconditioner in; a class decorator."""
        Matrix._local_wrapper = cls
        return cls

    def transpose(self) -> "Matrix":
        """A^T, partitioned as A: each entry moves to the owner of its column (collective)."""
        return self._transposed(conjugate=False)

    def conj_transpose(self) -> "Matrix":
        """A^H (A^T for real values), partitioned as A: each entry, conjugated, moves to the
        owner of its column (collective; Bicg uses it for its shadow system)."""
        return self._transposed(conjugate=self.dtype.kind == "c")

    def _transposed(self, conjugate: bool) -> "Matrix":
        comm, first = self.comm, self.partition.range(self.comm.rank)[0]
        # this rank's entries of A^T (A^H: conjugated; global indices), grouped by the ranks
        # that own their rows
        rows, cols, values, counts = self.executor.host.run(
            "distributed.matrix.transpose_entries", self.local_matrix.to_scipy(), self.non_local_matrix.to_scipy(),
            self.ghost_columns, self.partition.offsets, comm.rank, conjugate)
        receive_counts = np.empty_like(counts)
        comm.Alltoall(counts, receive_counts)
        parts = []
        for data in (rows, cols, values):
            received = np.empty(int(receive_counts.sum()), data.dtype)
            comm.Alltoallv([data, (counts, None)], [received, (receive_counts, None)])
            parts.append(received)
        n_local, n = self.shape[0], self.partition.global_size
        rows_t = sp.csr_matrix((parts[2], (parts[0] - first, parts[1])), shape=(n_local, n))
        return Matrix.from_scipy(self.executor, comm, rows_t, self.partition, self.dtype)

    def scale_columns(self, diag: Dense) -> "Matrix":
        """A D with D = diag(diag) (diag: this rank's n_local x 1 entries), partitioned as A: the
        local block's columns scaled by this rank's entries, the non-local block's by those of
        their owners (one exchange). Right-preconditioned solvers fold scalar Jacobi into A."""
        ghost_diag = self.halo.exchange_host(self.executor.to_host(diag.values))
        out = object.__new__(Matrix)
        out.__dict__.update(self.__dict__)
        out._loggers = []
        out.__dict__.pop("_extras", None)
        out.local_matrix = self.local_matrix.scale_columns(diag)
        out.non_local = self.non_local.scale_columns(Dense.from_numpy(self.executor, ghost_diag, self.dtype))
        return out

    # -- apply -------------------------------------------------------------------------------
    def _check_operands(self, b: LinOp, x: LinOp) -> None:
        super()._check_operands(b, x)
        for name, v in (("b", b), ("x", x)):
            if not isinstance(v, Vector):
                raise TypeError(f"a distributed Matrix applies to gk.distributed.Vector, but {name} is "
                                f"{type(v).__name__}: make it with gk.distributed.Vector.from_numpy(exec, comm, "
                                f"rows, partition)")
            if v.partition != self.partition:
                raise ValueError(f"{name} is partitioned as {v.partition}, the matrix as {self.partition}")

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A_local b_local + A_non_local b_ghost, the local product while the ghosts travel
        self._product(as_scalar(self.executor, 1.0, self.dtype), b, None, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha (A_local b_local + A_non_local b_ghost) + beta x
        self._product(alpha, b, beta, x)

    def apply_with_dots(self, b: Dense, x: Dense, u: Dense, w: Dense | None, partials: Dense) -> None:
        """x = A b and the global partial sums of u . x (and w . x): those of the local product
        computed in it, those of the non-local part in its launch, both added in the reduction."""
        self._check_operands(b, x)
        extra = self._extra_partials(partials)
        self._product(as_scalar(self.executor, 1.0, self.dtype), b, None, x, (u, w, partials, extra))
        extras = {} if extra is None else {0: [extra]}
        self.start_sums(partials, extras=extras)
        self.finish_sums(partials)

    def _extra_partials(self, partials: Dense) -> Dense | None:
        """The partial sums of the non-local part's dots that go with ``partials`` (None where
        this rank's rows have no non-local part)."""
        if not self.non_local.shape[0]:
            return None
        extras = self.__dict__.setdefault("_extras", {})
        extra = extras.get(id(partials))
        if extra is None:
            extra = extras[id(partials)] = (partials, Dense.empty(self.executor, (1, 1), partials.dtype))
        return extra[1]

    def _product(self, alpha: Dense, b: Dense, beta: Dense | None, x: Dense, dots: tuple | None = None) -> None:
        """x = alpha A b (+ beta x), with the dots of apply_with_dots: the exchange around the
        local product, then the non-local part on its rows."""
        exec, halo = self.executor, self.halo
        transfer = halo.start(b) if halo.active else None
        if dots is not None:
            u, w, partials, extra = dots
            exec.run("matrix.csr.spmv_dots", self.local_matrix, b, x, u, w, partials)
        elif beta is None:
            exec.run("matrix.csr.spmv", self.local_matrix, b, x)
        else:
            exec.run("matrix.csr.advanced_spmv", alpha, self.local_matrix, b, beta, x)
        if transfer is None:
            return
        ghost = halo.finish(transfer)
        if self.non_local.shape[0]:
            u, w, _, extra = dots if dots is not None else (None, None, None, None)
            exec.run("distributed.matrix.add_non_local", alpha, self.non_local, self._non_local_rows, ghost, None,
                     x, u, w, extra)

    def __repr__(self) -> str:
        n = self.partition.global_size
        return (f"distributed.Matrix({n} x {n}, rows {self.partition.range(self.comm.rank)} on rank {self.comm.rank}, "
                f"local nnz={self.local_matrix.nnz}, non-local nnz={self.non_local.nnz} "
                f"({self.ghost_columns.size} ghost columns), {self.dtype}, {self.executor!r})")


def _host_csr(host: Executor, matrix: Any, exec: Executor, partition: Partition, rank: int, dtype: Any) -> Csr:
    """This rank's rows as a checked Csr on the host (global column indices)."""
    if not (sp.issparse(matrix) or isinstance(matrix, np.ndarray)):
        raise TypeError(f"Matrix.from_scipy needs this rank's rows as a SciPy sparse matrix, "
                        f"not {type(matrix).__name__}")
    if matrix.ndim != 2:
        raise ValueError(f"this rank's rows must be a 2-D matrix, got {matrix.ndim}-D")
    first, end = partition.range(rank)
    if matrix.shape[0] != end - first:
        raise ValueError(f"the partition gives this rank rows {first} .. {end - 1} ({end - first} rows), "
                         f"but its matrix has {matrix.shape[0]} rows")
    if matrix.shape[1] != partition.global_size:
        raise ValueError(f"this rank's rows have {matrix.shape[1]} columns, but the partition covers "
                         f"{partition.global_size} rows: the matrix is N x N with N the partition's global size")
    dtype = exec.check_dtype(value_dtype(matrix.dtype if dtype is None else dtype, "matrix"))
    if sp.issparse(matrix):
        m = matrix.tocsr()
        if m.nnz and (m.indices.min() < 0 or m.indices.max() >= m.shape[1]):
            bad = int(m.indices.max() if m.indices.max() >= m.shape[1] else m.indices.min())
            raise ValueError(f"column index {bad} is out of range: the global size is {m.shape[1]}")
    return Csr.from_scipy(host, matrix, dtype)
