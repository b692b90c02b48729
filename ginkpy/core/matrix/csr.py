"""Csr: compressed sparse row storage, the format every solver runs on.

Row pointers and column indices are int32, column indices sorted within each row, no
duplicates; values are float32, float64, complex64 or complex128. ``cache`` holds what a backend derives from the
matrix once (the OpenCL SpMV strategy, level sets of a triangular solve) for later kernels: entries
whose key starts with ``"pattern."`` depend on the sparsity pattern alone and survive a values
update (:meth:`Csr.update_values`), the others are dropped by it.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.bitwise import same_contents
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import INDEX_DTYPE
from ginkpy.core.matrix.dense import Dense, check_convertible, value_dtype
from ginkpy.core.matrix.permutation import Permutation, permute
from ginkpy.core.matrix.spgemm import multiply


class Csr(LinOp):
    """A sparse matrix in compressed sparse row format on an executor (Ginkgo's
    ``matrix::Csr``, SciPy's ``csr_matrix``): arrays ``row_ptrs``, ``col_idxs`` (int32, sorted
    within each row) and ``values``.

    The format every solver, preconditioner and factorization runs on: make the system matrix
    a Csr (:meth:`from_scipy`, ``gk.read``) unless a format of ``gk.matrix`` suits its rows
    better. Its SpMV picks a strategy per device and matrix (kept in ``cache``).

    Parameters
    ----------
    exec : Executor
        Where ``row_ptrs``, ``col_idxs`` and ``values`` live.
    shape : tuple of int
        The matrix's (rows, columns).
    row_ptrs, col_idxs, values : arrays
        The executor's arrays (rows + 1 and nnz int32 indices, nnz values); use
        :meth:`from_scipy` to make them from host data (checked and sorted there).

    Examples
    --------
    >>> A = gk.matrix.Csr.from_scipy(exec, scipy.sparse.diags([1.0, 2.0, 3.0]))
    >>> x = A.apply(b, x)                       # x = A b
    >>> S = A.to_scipy()
    """

    def __init__(self, exec: Executor, shape: tuple[int, int], row_ptrs: Any, col_idxs: Any, values: Any) -> None:
        super().__init__(exec, shape, values.dtype)
        self.row_ptrs = row_ptrs
        self.col_idxs = col_idxs
        self.values = values
        self.cache: dict[str, Any] = {}
        self._host_pattern: tuple[np.ndarray, np.ndarray] | None = None  # (row_ptrs, col_idxs), at first need
        self._host_row_ptrs: np.ndarray | None = None  # (row_ptrs alone, at first need)

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.values.shape[0])

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_scipy(cls, exec: Executor, matrix: Any, dtype: Any = None) -> "Csr":
        """From any scipy.sparse matrix or array (or a dense numpy array), copied to ``exec``.

        Duplicates are summed and column indices sorted, as the format requires.
        """
        out, events = cls.from_scipy_async(exec, matrix, dtype)
        for event in events:
            event.wait()
        return out

    @classmethod
    def from_scipy_async(cls, exec: Executor, matrix: Any, dtype: Any = None) -> tuple["Csr", list]:
        """:meth:`from_scipy` with the copies to ``exec`` enqueued, not waited for: the host's
        next work overlaps the transfer (``gk.linalg`` uploads A so while it sets up the solve).

        Parameters
        ----------
        exec : Executor
            Where the matrix goes.
        matrix : scipy.sparse matrix or array, or numpy.ndarray
            The matrix; its arrays are copied from where they are when they already are
            canonical CSR of the index and value types (no host copy).
        dtype : numpy dtype, optional
            The value type (default: the matrix's).

        Returns
        -------
        (Csr, list)
            The matrix and the events of its copies still in flight (``event.wait()``). The
            caller leaves ``matrix``'s arrays unchanged until they are done (waited for, or
            anything enqueued on ``exec`` after them read back).

        Examples
        --------
        >>> A, copies = gk.matrix.Csr.from_scipy_async(exec, S)
        >>> ...                                     # host work beside the transfer
        >>> for event in copies: event.wait()       # before S may change
        """
        if not (sp.issparse(matrix) or isinstance(matrix, np.ndarray)):
            raise TypeError(f"Csr.from_scipy needs a scipy.sparse matrix or a numpy array, not {type(matrix).__name__}")
        if isinstance(matrix, np.ndarray) and matrix.ndim != 2:
            raise ValueError(f"a matrix must be 2-D, got a {matrix.ndim}-D array")
        dtype = exec.check_dtype(value_dtype(matrix.dtype if dtype is None else dtype, "matrix"))
        check_convertible(value_dtype(matrix.dtype, "matrix"), dtype, "the matrix's values")
        checking = None
        if isinstance(matrix, np.ndarray) or matrix.format != "csr":
            m = sp.csr_matrix(matrix, dtype=dtype)  # a new matrix: ours to sort
            if not m.has_canonical_format:
                m.sum_duplicates()  # also sorts the indices
        else:
            m = matrix  # the caller's: copied only where it must change (no full temporary)
            checking = _CanonicalCheck.start(m)  # (None: known now)
            if checking is None and not m.has_canonical_format:
                m = _summed_copy(m)
        if m.nnz > np.iinfo(np.int32).max:
            raise ValueError(f"matrix has {m.nnz} nonzeros, more than int32 indices can address")
        arrays, events = _upload(exec, m, dtype)
        if checking is not None and not checking.canonical():
            # an unsorted or duplicated matrix, seen after its arrays went up as they were: sent
            # again, sorted
            for event in events:
                event.wait()
            m = _summed_copy(m)
            arrays, events = _upload(exec, m, dtype)
        out = cls(exec, m.shape, *arrays)
        if exec.asynchronous:  # the row pointers kept on the host (a copy): an SpMV strategy reads none
            out._host_row_ptrs = np.array(m.indptr, INDEX_DTYPE)
        return out, events

    # -- new values on the same pattern ------------------------------------------------------
    def update_values(self, values: Any) -> "Csr":
        """Overwrite the stored values in place with ``values``, the nnz new entries in this
        matrix's entry order (that of ``to_scipy().data``): one copy, the pattern unchanged.

        Use it for a sequence of matrices of one sparsity pattern (a time step, a Newton
        iteration): operators generated on this matrix keep working on its arrays, and
        ``update()`` of a solver or preconditioner recomputes only what depends on the values
        (AmgX's ``AMGX_matrix_replace_coefficients``). ``values`` is a NumPy array (copied to the
        executor), a ``pyopencl.array.Array`` or Dense on this executor (copied there), of nnz
        entries (any shape of that size); real values for a real matrix.

        Parameters
        ----------
        values : array_like, pyopencl.array.Array or Dense
            The new values, nnz of them, in the order of the stored entries.

        Examples
        --------
        >>> A = gk.matrix.Csr.from_scipy(exec, S)
        >>> A.update_values(2 * S.data)            # S canonical: its data is A's entry order
        >>> solver.update()                        # the preconditioner follows A's new values
        """
        exec, nnz = self.executor, self.nnz
        if isinstance(values, Dense) or type(values).__module__.startswith("pyopencl"):
            source = values if isinstance(values, Dense) else Dense.from_pyopencl(exec, values.reshape(values.size))
            if source.shape[0] * source.shape[1] != nnz:
                raise ValueError(f"update_values: {source.shape[0] * source.shape[1]} values given, the matrix "
                                 f"stores {nnz} (the same sparsity pattern takes the same number of values)")
            check_convertible(source.dtype, self.dtype, "update_values: the new values")
            Dense(exec, self.values.reshape(nnz, 1)).copy_from(Dense(source.executor, source.values.reshape(nnz, 1)))
        else:
            host = np.asarray(values)
            if host.size != nnz:
                raise ValueError(f"update_values: {host.size} values given, the matrix stores {nnz} (the same "
                                 f"sparsity pattern takes the same number of values)")
            check_convertible(value_dtype(host.dtype, "the new values"), self.dtype, "update_values: the new values")
            exec.write(self.values, host.reshape(nnz))
        self.values_written()
        return self

    def values_written(self) -> None:
        """Say that the values were written in place (by a kernel on this matrix's arrays): what
        ``cache`` kept of the old values is dropped, what depends on the pattern alone
        (``"pattern."`` keys: the SpMV strategy, the row lengths) kept."""
        self.cache = {key: value for key, value in self.cache.items() if key.startswith("pattern.")}

    def copy_values_from(self, matrix: Any) -> "Csr":
        """Take the values of ``matrix``, a SciPy sparse matrix (or a Csr) with this matrix's
        sparsity pattern, in one copy (see :meth:`update_values`).

        The pattern is compared on the host with this matrix's, read from the executor once
        and kept; a different pattern (other stored positions, after duplicates are summed) is a
        ValueError: make a new matrix (``Csr.from_scipy``) and generate its solver anew.

        Parameters
        ----------
        matrix : scipy.sparse matrix or array, or Csr
            The new matrix: same shape and stored positions (explicit zeros count as stored).

        Examples
        --------
        >>> A = gk.matrix.Csr.from_scipy(exec, S)
        >>> A.copy_values_from(S_next)             # S_next: S's pattern, new values
        >>> solver.update()
        """
        if isinstance(matrix, Csr):
            row_ptrs, col_idxs = matrix.host_pattern()
            values = matrix.values if self.executor.same_memory(matrix.executor) else matrix.executor.to_host(
                matrix.values)
        elif sp.issparse(matrix):
            m = matrix.tocsr() if matrix.format != "csr" else matrix
            if not m.has_canonical_format:
                m = m.copy()
                m.sum_duplicates()
            row_ptrs, col_idxs, values = m.indptr, m.indices, m.data
        else:
            raise TypeError(f"copy_values_from needs a scipy.sparse matrix or a gk.matrix.Csr, "
                            f"not {type(matrix).__name__}")
        self.check_pattern(matrix.shape, row_ptrs, col_idxs)
        return self.update_values(values)

    def host_pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """The row pointers and column indices as host arrays (read once, then kept: the
        pattern of a Csr does not change)."""
        if self._host_pattern is None:
            exec = self.executor
            self._host_pattern = tuple(np.asarray(a) for a in exec.to_host(self.row_ptrs, self.col_idxs))
        return self._host_pattern

    def host_row_ptrs(self) -> np.ndarray:
        """The row pointers as a host array (read once, then kept, as :meth:`host_pattern`'s:
        an SpMV strategy and Ilu's default both look at the row lengths)."""
        if self._host_pattern is not None:
            return self._host_pattern[0]
        if self._host_row_ptrs is None:
            self._host_row_ptrs = np.asarray(self.executor.to_host(self.row_ptrs))
        return self._host_row_ptrs

    def check_pattern(self, shape: tuple[int, int], row_ptrs: np.ndarray, col_idxs: np.ndarray) -> None:
        """Raise a ValueError unless (shape, row_ptrs, col_idxs) is this matrix's sparsity
        pattern (compared on the host; see :meth:`host_pattern`)."""
        ptrs, cols = self.host_pattern()
        if tuple(shape) != self.shape:
            raise ValueError(f"the new matrix is {shape[0]} x {shape[1]}, this one {self.shape[0]} x "
                             f"{self.shape[1]}: a values update needs the same shape and sparsity pattern")
        if len(col_idxs) != len(cols) or not (same_contents(np.asarray(row_ptrs, INDEX_DTYPE), ptrs)
                                               and same_contents(np.asarray(col_idxs, INDEX_DTYPE), cols)):
            raise ValueError(f"the new matrix has another sparsity pattern ({len(col_idxs)} stored entries, this one "
                             f"{len(cols)}{'' if len(col_idxs) != len(cols) else ' at other positions'}): a values "
                             f"update keeps the pattern; make a new matrix (Csr.from_scipy) and generate its "
                             f"solver anew")

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host."""
        row_ptrs, col_idxs, values = self.executor.to_host(self.row_ptrs, self.col_idxs, self.values)
        return sp.csr_matrix((values, col_idxs, row_ptrs), shape=self.shape)

    @classmethod
    def from_dense(cls, dense: Dense) -> "Csr":
        """The nonzeros of a Dense matrix, on its executor."""
        row_ptrs, col_idxs, values = dense.executor.run("matrix.dense.convert_to_csr", dense)
        return cls(dense.executor, dense.shape, row_ptrs, col_idxs, values)

    def to_dense(self) -> Dense:
        """A Dense copy on the same executor."""
        out = Dense.empty(self.executor, self.shape, self.dtype)
        self.executor.run("matrix.csr.convert_to_dense", self, out)
        return out

    def clone(self, exec: Executor | None = None) -> "Csr":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Csr(exec, self.shape, *exec.copy_arrays(self.executor, self.row_ptrs, self.col_idxs, self.values))


    def astype(self, dtype: Any) -> "Csr":
        """This matrix in value type ``dtype`` (itself when it already is), converted on its
        executor: the same row pointers and column indices, the values converted (real to real
        or complex, complex to complex)."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self
        values = Dense(self.executor, self.values.reshape(-1, 1)).astype(dtype).values.reshape(-1)
        return Csr(self.executor, self.shape, self.row_ptrs, self.col_idxs, values)

    def extract_diagonal(self) -> Dense:
        """The main diagonal as an n x 1 Dense (zero where no entry is stored)."""
        out = Dense.empty(self.executor, (min(self.shape), 1), self.dtype)
        self.executor.run("matrix.csr.extract_diagonal", self, out)
        return out

    def is_finite(self) -> bool:
        """True when no stored value is NaN or infinite (a launch and a read at the first call,
        then kept in ``cache`` until the values change: a solver and its preconditioner check
        the one matrix once)."""
        finite = self.cache.get("values.finite")
        if finite is None:
            finite = self.cache["values.finite"] = bool(self.executor.run("matrix.csr.is_finite", self))
        return finite

    def transpose(self) -> "Csr":
        """A new Csr holding A^T (column indices sorted), on the same executor."""
        row_ptrs, col_idxs, values = self.executor.run("matrix.csr.transpose", self)
        return Csr(self.executor, (self.shape[1], self.shape[0]), row_ptrs, col_idxs, values)

    def conj_transpose(self) -> "Csr":
        """A new Csr holding the conjugate transpose A^H (A^T for real values), on the same executor."""
        row_ptrs, col_idxs, values = self.executor.run("matrix.csr.conj_transpose", self)
        return Csr(self.executor, (self.shape[1], self.shape[0]), row_ptrs, col_idxs, values)

    def spmv_strategy(self) -> str:
        """How this matrix's SpMV runs on its executor, in words (Ginkgo's ``get_strategy()``):
        the strategy an OpenCL device chose from the row lengths (classical, vector, long_rows,
        merge_path or row_blocks) with its launch sizes; ``ginkpy info --executor`` prints it."""
        return self.executor.run("matrix.csr.spmv_strategy", self)

    def multiply(self, other: "Csr", out: "Csr | None" = None) -> "Csr":
        """The sparse product A B with another Csr (Ginkgo's Csr applied to a Csr), a new Csr
        on this executor, columns sorted, entries that cancel kept; with ``out``, a product of
        earlier values on the same patterns, only its values again, in place (see
        :func:`ginkpy.core.matrix.spgemm.multiply`).

        Examples
        --------
        >>> C = A.multiply(B)                  # C = A B
        >>> A.update_values(new); A.multiply(B, out=C)
        """
        return multiply(self, other, out)

    def scale_columns(self, diag: Dense) -> "Csr":
        """A D with D = diag(diag) (diag n x 1): a new Csr sharing this one's pattern, its values
        scaled per column. Right-preconditioned solvers fold scalar Jacobi into A this way."""
        values = self.executor.alloc(self.values.shape, self.dtype)
        self.executor.run("matrix.csr.scale_columns", self, diag, values)
        return Csr(self.executor, self.shape, self.row_ptrs, self.col_idxs, values)

    def scale_rows(self, diag: Dense) -> "Csr":
        """D A with D = diag(diag) (diag n x 1): a new Csr sharing this one's pattern, its values
        scaled per row (the row scaling of ScaledReordered)."""
        values = self.executor.alloc(self.values.shape, self.dtype)
        self.executor.run("matrix.csr.scale_rows", self, diag, values)
        return Csr(self.executor, self.shape, self.row_ptrs, self.col_idxs, values)

    def permute(self, permutation: Any, mode: str = "symmetric", column_permutation: Any = None) -> "Csr":
        """The permuted matrix P A P^T (or P A, A P^T, P A Q^T, ...: ``mode`` as in Ginkgo's
        permute_mode), a new Csr on this executor: see :func:`ginkpy.matrix.permute`."""
        return permute(self, permutation, mode, column_permutation)

    def _permuted(self, rows: Permutation | None, cols: Permutation | None) -> "Csr":
        """A[rows[i], cols[j]] as a new Csr (None: that side as it is); see :func:`permute`."""
        exec = self.executor
        # a Csr's columns are renumbered by the inverse: column c of A becomes column cols^-1[c]
        col_inverse = None if cols is None else cols.compute_inverse().perm
        arrays = exec.run("matrix.csr.permute", self, None if rows is None else rows.perm, col_inverse)
        return Csr(exec, self.shape, *arrays)

    # -- LinOp: SpMV ------------------------------------------------------------------------------
    def apply_with_dots(self, b: Dense, x: Dense, u: Dense, w: Dense | None, partials: Dense) -> None:
        # x = A b;  partial sums of u . x (and w . x)
        self.executor.run("matrix.csr.spmv_dots", self, b, x, u, w, partials)
        self.reduce_sums(partials)

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A b
        self.executor.run("matrix.csr.spmv", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha A b + beta x
        self.executor.run("matrix.csr.advanced_spmv", alpha, self, b, beta, x)

    def __repr__(self) -> str:
        return f"Csr({self.shape[0]} x {self.shape[1]}, nnz={self.nnz}, {self.dtype}, {self.executor!r})"


def _summed_copy(m: Any) -> Any:
    """A copy of the CSR matrix ``m`` with its duplicates summed and its indices sorted (the
    caller's matrix stays as it is)."""
    m = m.copy()
    m.sum_duplicates()
    return m


def _upload(exec: Executor, m: Any, dtype: np.dtype) -> tuple[list, list]:
    """The arrays of the CSR matrix ``m`` enqueued to ``exec`` (a GPU's large arrays through
    page-locked staging chunks; the events hold the rest until copied)."""
    return exec.from_host_async([m.indptr.astype(INDEX_DTYPE, copy=False), m.indices.astype(INDEX_DTYPE, copy=False),
                                 m.data.astype(dtype, copy=False)])


class _CanonicalCheck:
    """SciPy's ``has_canonical_format`` of a large CSR matrix whose answer SciPy has not kept,
    found in a thread beside the upload of its arrays: the check is a pass over the column
    indices (7.8 ms for the 14.7M entries of 3D Poisson 128^3 on a 2-core machine) that
    releases the GIL, and a user's first call on a new matrix waited for it before the upload
    began. Where it says no, the caller sends the sorted arrays again."""

    THREAD_NNZ = 1 << 20  # smaller matrices are checked at once: a thread costs more than the pass

    def __init__(self, m: Any) -> None:
        self._m, self._thread = m, threading.Thread(target=self._check, name="ginkpy-canonical-check", daemon=True)
        self._thread.start()

    def _check(self) -> None:
        try:
            self._m.has_canonical_format  # noqa: B018 - SciPy keeps the answer on the matrix
        except Exception:  # noqa: BLE001 - asked again by canonical(), in the caller's thread, to raise there
            pass

    @classmethod
    def start(cls, m: Any) -> "_CanonicalCheck | None":
        """A check of ``m`` running beside the caller, or None where its answer is at hand (SciPy
        kept it, or the matrix is small: then ``m.has_canonical_format`` answers at once)."""
        known = hasattr(m, "_has_canonical_format") or not getattr(m, "_has_sorted_indices", True)
        return None if known or m.nnz < cls.THREAD_NNZ else cls(m)

    def canonical(self) -> bool:
        """Whether the matrix has sorted indices and no duplicates (waits for the check)."""
        self._thread.join()
        return bool(self._m.has_canonical_format)
