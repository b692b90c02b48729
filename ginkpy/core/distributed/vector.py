"""Vector: a distributed n x k Dense (Ginkgo's ``experimental::distributed::Vector``), row-
partitioned: each rank holds its own rows, ``values`` is the executor's array of those rows.

It is a :class:`Dense` whose ``shape`` is that of the local rows, so every Dense kernel and the
solvers' fused step kernels work on the local part unchanged; the operations that reduce over
the rows (``compute_dot``, ``compute_conj_dot``, ``compute_norm2``, ``is_finite``) are global:
each rank reduces its rows, then the ranks combine their results on the host, in rank order, so
that every rank gets the same bits (see ``collective``). Complex vectors' norms are real.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.distributed.collective import (Collective, any_over_ranks, check_comm, mixed_value_types_hint,
                                                norm_over_ranks, raise_together, sum_over_ranks)
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.distributed.reduction import reduce_now
from ginkpy.core.matrix.dense import Dense, check_convertible, value_dtype


class Vector(Dense):
    """The rows ``partition.range(comm.rank)`` of an N x k matrix, on ``exec`` (Ginkgo's
    ``experimental::distributed::Vector``): a Dense of this rank's rows whose reductions (dot
    products, norms) are global over the ranks.

    The b and x of a solve with a distributed Matrix; make them with :meth:`from_numpy`,
    :meth:`zeros` or :meth:`full`.

    Parameters
    ----------
    exec : Executor
        This rank's executor.
    comm : mpi4py.MPI.Comm
        The communicator of the ranks.
    partition : Partition
        Which rows each rank owns.
    values : array
        The executor's array of this rank's rows (rows x k).

    Examples
    --------
    >>> b = gk.distributed.Vector.full(exe, comm, partition, 1.0)
    >>> x = gk.distributed.Vector.zeros(exe, comm, partition)
    >>> solver.apply(b, x)
    """

    distributed = True

    def __init__(self, exec: Executor, comm: Any, partition: Partition, values: Any) -> None:
        super().__init__(exec, values)
        self.comm, self.partition = comm, partition

    # -- creation ----------------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, exec: Executor, comm: Any, array: Any, partition: Partition,  # type: ignore[override]
                   dtype: Any = None) -> "Vector":
        """This rank's rows ``array`` (1-D: n_local, 2-D: n_local x k) of a vector partitioned by
        ``partition``, copied to ``exec`` (collective: every rank calls it with its rows)."""
        check_comm(comm)
        array = np.asarray(array)
        if array.ndim == 1:
            array = array[:, None]
        error = _check_partition(comm, partition)
        if error is None and array.ndim != 2:
            error = f"Vector.from_numpy needs a 1-D or 2-D array of this rank's rows, got {array.ndim}-D"
        if error is None and array.shape[0] != partition.local_size(comm.rank):
            first, end = partition.range(comm.rank)
            error = (f"the partition gives this rank rows {first} .. {end - 1} ({end - first} rows), "
                     f"but its array has {array.shape[0]}")
        if error is None:
            try:
                dtype = exec.check_dtype(value_dtype(array.dtype if dtype is None else dtype))
                check_convertible(value_dtype(array.dtype), dtype, "this rank's values")
            except TypeError as err:
                error = err
        raise_together(comm, error)
        shapes = comm.allgather((array.shape[1], np.dtype(dtype).str))
        raise_together(comm, None if len(set(shapes)) == 1 else
                       "the ranks pass different column counts or value types (columns, value type): "
                       + ", ".join(f"rank {r}: ({k}, {np.dtype(t)})" for r, (k, t) in enumerate(shapes))
                       + mixed_value_types_hint([t for _, t in shapes]),
                       kind=TypeError if len({t for _, t in shapes}) > 1 else ValueError)
        return cls(exec, comm, partition, exec.from_host(np.ascontiguousarray(array, dtype=dtype)))

    @classmethod
    def from_global(cls, exec: Executor, comm: Any, array: Any = None, partition: Partition | None = None,
                    root: int = 0, dtype: Any = None) -> "Vector":
        """Scatter a whole N (x k) array that rank ``root`` holds (the others pass None) by
        ``partition`` (default: uniform); for tests and small problems."""
        check_comm(comm)
        error, whole = None, None
        if comm.rank == root:
            whole = np.asarray(array)
            whole = whole[:, None] if whole.ndim == 1 else whole
            if whole.ndim != 2:
                error = f"Vector.from_global needs a 1-D or 2-D array, got {whole.ndim}-D"
        raise_together(comm, error)
        n = comm.bcast(None if whole is None else whole.shape[0], root=root)
        partition = Partition.uniform(n, comm) if partition is None else partition
        raise_together(comm, _check_partition(comm, partition) or
                       (None if partition.global_size == n else
                        f"the partition has {partition.global_size} rows, the array {n}"))
        parts = None if whole is None else [whole[slice(*partition.range(r))] for r in range(comm.size)]
        return cls.from_numpy(exec, comm, comm.scatter(parts, root=root), partition, dtype)

    @classmethod
    def empty(cls, exec: Executor, comm: Any, partition: Partition, cols: int = 1,  # type: ignore[override]
              dtype: Any = np.float64) -> "Vector":
        """Uninitialized: this rank's rows of an N x cols vector."""
        return cls(exec, comm, partition, exec.alloc((partition.local_size(comm.rank), cols), exec.check_dtype(dtype)))

    @classmethod
    def zeros(cls, exec: Executor, comm: Any, partition: Partition, cols: int = 1,  # type: ignore[override]
              dtype: Any = np.float64) -> "Vector":
        """Zeros: this rank's rows of an N x cols vector."""
        return cls.full(exec, comm, partition, 0.0, cols, dtype)

    @classmethod
    def full(cls, exec: Executor, comm: Any, partition: Partition, value: float,  # type: ignore[override]
             cols: int = 1, dtype: Any = np.float64) -> "Vector":
        """Every entry ``value``: this rank's rows of an N x cols vector."""
        x = cls.empty(exec, comm, partition, cols, dtype)
        x.fill(value)
        return x

    def empty_like(self, shape: tuple[int, int] | None = None) -> Dense:
        """Uninitialized, of this vector's executor and value type: a Vector of the same rows
        (and ``shape[1]`` columns); a plain Dense for another row count (a solver's scalars and
        work arrays, which are the same on every rank)."""
        shape = self.shape if shape is None else shape
        if shape[0] != self.shape[0]:
            return Dense.empty(self.executor, shape, self.dtype)
        return Vector(self.executor, self.comm, self.partition, self.executor.alloc(tuple(shape), self.dtype))

    def clone(self, exec: Executor | None = None) -> "Vector":
        """A copy of this vector (its rows), on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Vector(exec, self.comm, self.partition, *exec.copy_arrays(self.executor, self.values))

    def local_vector(self) -> Dense:
        """This rank's rows as a plain Dense sharing the values (its reductions are local)."""
        return Dense(self.executor, self.values)

    @property
    def global_shape(self) -> tuple[int, int]:
        return self.partition.global_size, self.shape[1]

    def gather(self, root: int = 0) -> np.ndarray | None:
        """The whole N x k vector on rank ``root`` (None on the other ranks; collective)."""
        local = np.ascontiguousarray(self.to_numpy())
        counts = np.diff(self.partition.offsets) * self.shape[1]
        whole = np.empty(self.global_shape, self.dtype) if self.comm.rank == root else None
        self.comm.Gatherv(local, (whole, counts) if whole is not None else None, root=root)
        return whole

    # -- reductions over every rank --------------------------------------------------------------
    def compute_dot(self, b: Dense, result: Dense | None = None) -> Dense:
        """Per-column dot products x^T b over every rank's rows into a 1 x k Dense (the same on
        every rank)."""
        return self._sum_over_ranks(super().compute_dot(b, result), result is not None)

    def compute_conj_dot(self, b: Dense, result: Dense | None = None) -> Dense:
        """Per-column inner products x^H b (x conjugated) over every rank's rows into a 1 x k
        Dense (the same on every rank): the sum of the ranks' conjugating dot products."""
        return self._sum_over_ranks(super().compute_conj_dot(b, result), result is not None)

    def _sum_over_ranks(self, result: Dense, kept: bool) -> Dense:
        # result = the sum of every rank's result (complex sums stay complex): where the caller
        # keeps result (a solver's workspace), as a solver's reductions, without a blocking read
        if self.comm.size == 1:
            return result
        if kept:
            reduce_now(self.executor, Collective.of(self.comm), result)
        else:
            local = self.executor.to_host(result.values)
            self.executor.write(result.values, sum_over_ranks(self.comm, local))
        return result

    def compute_norm2(self, result: Dense | None = None) -> Dense:
        """Per-column Euclidean norms over every rank's rows into a 1 x k Dense of the real type,
        from the ranks' (robust) norms of their rows: no overflow or underflow where those have none."""
        result = super().compute_norm2(result)  # of the real type (float64 for complex128)
        if self.comm.size > 1:
            local = self.executor.to_host(result.values)
            self.executor.write(result.values, norm_over_ranks(self.comm, local).astype(result.dtype))
        return result

    def is_finite(self) -> bool:
        """True when no entry on any rank is NaN or infinite."""
        return not bool(any_over_ranks(self.comm, np.array([not super().is_finite()]))[0])

    def __repr__(self) -> str:
        return (f"Vector({self.global_shape[0]} x {self.global_shape[1]}, rows {self.partition.range(self.comm.rank)} "
                f"on rank {self.comm.rank}, {self.dtype}, {self.executor!r})")


def _check_partition(comm: Any, partition: Any) -> str | None:
    """What is wrong with ``partition`` for ``comm`` (None: nothing). Collective (every rank
    makes the same calls whatever it passed), so that ranks passing different partitions all
    learn it."""
    ok = isinstance(partition, Partition)
    keys = comm.allgather(partition.offsets.tobytes() if ok else None)
    if not ok:
        return f"partition must be a gk.distributed.Partition, not {type(partition).__name__}"
    if partition.num_parts != comm.size:
        return f"the partition has {partition.num_parts} parts for {comm.size} ranks"
    if len(set(keys)) != 1:
        return "the ranks pass different partitions: every rank must pass the same one"
    return None
