"""Matrix: a row-partitioned sparse matrix over the ranks of an MPI communicator (Ginkgo's
``experimental::distributed::Matrix``, PETSc's MPIAIJ).

Each rank owns the rows ``partition.range(rank)`` and splits them once, at construction, into
the local block (the columns it owns, renumbered from 0: a square Csr) and the non-local block
(the other columns, renumbered compactly in the order of their global indices: the "ghost"
columns). The ghost columns are grouped by their owners, so the values each owner sends land in
one contiguous stretch of the ghost vector, in order: no scatter after the receive.

``apply``: x = A_local b_local + A_non_local b_ghost. The rows of b that other ranks need are
gathered into a send buffer on the device (one kernel), read to the host, and sent with
non-blocking MPI while the local SpMV runs on the device; the received ghost values are then
written to the device and the non-local SpMV adds their part. Device memory never goes to MPI
directly: it is staged through the host, in numpy buffers of the value type (mpi4py sends
complex64/complex128 as MPI's complex types).

Its ``shape`` is that of the local block (n_local x n_local: what the Vector's kernels see),
``global_shape`` the whole. ``reduce_sums`` makes the partial sums of a solver's reductions
global; ``reduce_flags`` makes the host's decisions global.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.distributed.collective import (any_over_ranks, check_comm, mixed_value_types_hint, mpi, raise_together,
                                                sum_over_ranks)
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.distributed.vector import Vector, _check_partition
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense, as_scalar, value_dtype

HALO_TAG = 15  # the MPI tag of the halo exchange (messages between two ranks never overtake)


@attrs.define
class _Neighbours:
    """The ranks this rank exchanges with, and where each one's rows sit in the buffer."""

    ranks: list
    begins: list
    ends: list

    @classmethod
    def from_counts(cls, counts: np.ndarray) -> "_Neighbours":
        offsets = np.concatenate([[0], np.cumsum(counts)])
        ranks = np.flatnonzero(counts).tolist()
        return cls(ranks, [int(offsets[r]) for r in ranks], [int(offsets[r + 1]) for r in ranks])


@attrs.define
class _Buffers:
    """The halo buffers of one column count and value type: the gathered rows to send (device)
    and the received ghost rows (host, then device)."""

    send: Dense | None
    receive: np.ndarray
    ghost: Dense


class Matrix(LinOp):
    """This rank's rows of a square N x N matrix partitioned by ``partition`` over the ranks of
    ``comm`` (Ginkgo's ``experimental::distributed::Matrix``; the module says how): the block of
    its own columns (``local_matrix``) and the rest (``non_local_matrix``), whose entries need
    the other ranks' rows of x (a halo exchange overlapped with the local product).

    Use it for systems too large for one device, or to run on several GPUs: every core solver
    takes it, as a system matrix, with distributed Vectors. Make one with :meth:`from_scipy`
    from each rank's own rows (no rank needs the global matrix).

    Parameters
    ----------
    exec : Executor
        This rank's executor (``gk.distributed.executor_for_rank``).
    comm : mpi4py.MPI.Comm
        The communicator of the ranks.
    partition : Partition
        Which rows each rank owns.
    local_matrix, non_local_matrix : Csr
        The rank's rows: its own columns, and the ghost columns (numbered as ghost_columns).
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

    def __init__(self, exec: Executor, comm: Any, partition: Partition, local_matrix: Csr,
                 non_local_matrix: Csr, ghost_columns: np.ndarray, receive_counts: np.ndarray,
                 send_rows: np.ndarray, send_counts: np.ndarray) -> None:
        super().__init__(exec, local_matrix.shape, local_matrix.dtype)
        self.comm, self.partition = comm, partition
        self.local_matrix, self.non_local_matrix = local_matrix, non_local_matrix
        # global index of each ghost column; local index of each row sent (in order of the receivers)
        self.ghost_columns = ghost_columns
        self.send_rows = send_rows
        self._send_rows = exec.from_host(send_rows.astype(INDEX_DTYPE))
        self._receive_from = _Neighbours.from_counts(receive_counts)
        self._send_to = _Neighbours.from_counts(send_counts)
        self._buffers: dict[tuple, _Buffers] = {}
        self._host_arrays: dict[tuple, np.ndarray] = {}

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
        # which of our rows each rank needs from us
        send_counts = np.empty_like(receive_counts)
        comm.Alltoall(receive_counts, send_counts)
        send_rows = np.empty(int(send_counts.sum()), np.int64)
        comm.Alltoallv([requested, (receive_counts, None)], [send_rows, (send_counts, None)])
        n_local = partition.local_size(comm.rank)
        local_matrix = Csr(exec, (n_local, n_local), *(exec.from_host(a) for a in local_arrays))
        non_local_matrix = Csr(exec, (n_local, ghost_columns.size), *(exec.from_host(a) for a in non_local_arrays))
        return cls(exec, comm, partition, local_matrix, non_local_matrix, ghost_columns, receive_counts,
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
        conjugating dots of a complex solve) stay complex, real ones (norms) real."""
        if self.comm.size == 1 or not partials:
            return
        exec = self.executor
        hosts = self._read("sums", [p.values for p in partials])
        # each rank's sums in float64 (complex128 for complex partial sums), all in one array
        sums = sum_over_ranks(self.comm, np.concatenate([h.sum(axis=0, dtype=np.result_type(h.dtype, np.float64))
                                                         for h in hosts]))
        begin = 0
        for p, host in zip(partials, hosts):
            out = np.zeros_like(host)
            part = sums[begin:begin + host.shape[1]]
            out[0] = part if host.dtype.kind == "c" else part.real
            begin += host.shape[1]
            exec.write(p.values, out)

    def reduce_flags(self, flags: np.ndarray) -> np.ndarray:
        """``flags`` or-ed over the ranks."""
        return any_over_ranks(self.comm, flags)

    def is_finite(self) -> bool:
        """True when no stored value on any rank is NaN or infinite."""
        mine = self.local_matrix.is_finite() and self.non_local_matrix.is_finite()
        return not bool(any_over_ranks(self.comm, np.array([not mine]))[0])

    def generate_preconditioner(self, factory: Any) -> LinOp:
        """The preconditioner of this matrix from a factory that is not a solver: a Schwarz
        factory generates on it; any other (Jacobi, Ilu) is the local solver of additive
        Schwarz, on each rank's local block (so Jacobi is block-Jacobi with the ranks' blocks,
        as Ginkgo's Jacobi on a distributed matrix)."""
        from ginkpy.core.distributed.preconditioner.schwarz import Schwarz
        if issubclass(factory.parameters.product, Schwarz):
            return factory.generate(self)
        return Schwarz.build().with_local_solver(factory).on(self.executor).generate(self)

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
        exchange = self._start_exchange(b)
        self.executor.run("matrix.csr.spmv", self.local_matrix, b, x)
        self._add_non_local(exchange, as_scalar(self.executor, 1.0, self.dtype), x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha (A_local b_local + A_non_local b_ghost) + beta x
        exchange = self._start_exchange(b)
        self.executor.run("matrix.csr.advanced_spmv", alpha, self.local_matrix, b, beta, x)
        self._add_non_local(exchange, alpha, x)

    def apply_with_dots(self, b: Dense, x: Dense, u: Dense, w: Dense | None, partials: Dense) -> None:
        """x = A b and the global partial sums of u . x (and w . x): computed in the SpMV where
        this rank needs no ghost values (the local product is then the whole)."""
        if self._receive_from.ranks:
            LinOp.apply_with_dots(self, b, x, u, w, partials)
            return
        self._check_operands(b, x)
        exchange = self._start_exchange(b)
        self.executor.run("matrix.csr.spmv_dots", self.local_matrix, b, x, u, w, partials)
        self._finish_exchange(exchange)
        self.reduce_sums(partials)

    def _start_exchange(self, b: Dense) -> tuple:
        """Send the rows of b that other ranks need and post the receives of our ghost rows."""
        exec, comm = self.executor, self.comm
        buffers = self._buffers_for(b.shape[1], b.dtype)
        requests, sent = [], None
        if buffers.send is not None:
            # the rows to send, gathered on the device and read to the host (MPI gets host memory)
            exec.run("distributed.matrix.row_gather", b, self._send_rows, buffers.send)
            sent = self._read("halo", [buffers.send.values])[0]
        receive, to = buffers.receive, self._receive_from
        requests += [comm.Irecv(receive[lo:hi], source=r, tag=HALO_TAG) for r, lo, hi in zip(to.ranks, to.begins, to.ends)]
        to = self._send_to
        requests += [comm.Isend(sent[lo:hi], dest=r, tag=HALO_TAG) for r, lo, hi in zip(to.ranks, to.begins, to.ends)]
        return requests, sent, buffers

    def _finish_exchange(self, exchange: tuple) -> None:
        requests, _, buffers = exchange
        if requests:
            mpi().Request.Waitall(requests)
        if buffers.receive.size:
            self.executor.write(buffers.ghost.values, buffers.receive)

    def _add_non_local(self, exchange: tuple, alpha: Dense, x: Dense) -> None:
        # x = x + alpha A_non_local b_ghost, once the ghost rows arrived
        self._finish_exchange(exchange)
        ghost = exchange[2].ghost
        if ghost.shape[0]:
            one = as_scalar(self.executor, 1.0, self.dtype)
            self.executor.run("matrix.csr.advanced_spmv", alpha, self.non_local_matrix, ghost, one, x)

    def _read(self, purpose: str, arrays: list) -> list[np.ndarray]:
        """The device ``arrays`` copied into host arrays kept for ``purpose`` (page-locked on a
        device: the copy is a DMA transfer), waited for: a blocking read, counted as one, so
        that a capture of a solver's loop body knows it holds host work."""
        exec = self.executor
        into = []
        for i, a in enumerate(arrays):
            key = (purpose, i, a.shape, np.dtype(a.dtype))
            if key not in self._host_arrays:
                self._host_arrays[key] = exec.host_array(a.shape, a.dtype)
            into.append(self._host_arrays[key])
        exec._note_read()
        event = exec.read_async(arrays, into)
        if event is not None:
            event.wait()
        return into

    def _buffers_for(self, k: int, dtype: np.dtype) -> _Buffers:
        key = (k, np.dtype(dtype))
        buffers = self._buffers.get(key)
        if buffers is None:
            exec = self.executor
            sends = self.send_rows.size
            buffers = self._buffers[key] = _Buffers(
                Dense.empty(exec, (sends, k), dtype) if sends else None,
                np.zeros((self.ghost_columns.size, k), dtype),
                Dense.zeros(exec, (self.ghost_columns.size, k), dtype))
        return buffers

    def __repr__(self) -> str:
        n = self.partition.global_size
        return (f"distributed.Matrix({n} x {n}, rows {self.partition.range(self.comm.rank)} on rank {self.comm.rank}, "
                f"local nnz={self.local_matrix.nnz}, non-local nnz={self.non_local_matrix.nnz} "
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
