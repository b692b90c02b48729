"""Permutation: a permutation matrix P as its index array (Ginkgo's matrix::Permutation).

``P = Permutation.from_numpy(exec, perm)`` maps row i of P b to row ``perm[i]`` of b:
``P.apply(b, x)`` gives x[i, :] = b[perm[i], :]. The reorderings (``gk.reorder.Rcm``, ``Amd``)
generate one; matrices take it in :func:`permute`, as Ginkgo's ``permute(P, permute_mode)``:

- ``"rows"``: P A (row i of the result is row perm[i] of A),
- ``"columns"``: A P^T (column j of the result is column perm[j] of A),
- ``"symmetric"``: P A P^T (the same renumbering of rows and columns, what a fill-reducing or
  bandwidth-reducing ordering does),
- ``"inverse_rows"``, ``"inverse_columns"``, ``"inverse_symmetric"``: the same with P^T.

The permuted Csr or Dense is computed on the matrix's executor (a kernel per format, with its
reference twin, run by the format's ``_permuted``); column indices stay sorted in each row.
This module names no format: the formats build on it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import INDEX_DTYPE

MODES = ("rows", "columns", "symmetric", "inverse_rows", "inverse_columns", "inverse_symmetric")


class Permutation(LinOp):
    """A permutation matrix of size n x n stored as its index array ``perm`` (int32, on the
    executor): ``(P b)[i] = b[perm[i]]``.

    Use it to renumber a system (``permute(A, P)``, ``P.apply(b, x)``) or to read an ordering
    (``P.to_numpy()``). It applies to vectors of any value type.

    Parameters
    ----------
    exec : Executor
        Where the index array lives.
    perm : array
        The executor's int32 array of length n holding each of 0..n-1 once; use
        :meth:`from_numpy` to make one from host data (it is checked there).

    Examples
    --------
    >>> P = gk.matrix.Permutation.from_numpy(exec, [2, 0, 1])
    >>> x = P.apply(b, b.empty_like())          # x = [b[2], b[0], b[1]]
    >>> Pinv = P.compute_inverse()              # P^T
    """

    def __init__(self, exec: Executor, perm: Any) -> None:
        n = int(perm.shape[0])
        super().__init__(exec, (n, n), np.float64)
        self.perm = perm
        self._inverse: Permutation | None = None

    @classmethod
    def from_numpy(cls, exec: Executor, perm: Any) -> "Permutation":
        """A Permutation on ``exec`` from a host array holding each of 0..n-1 once."""
        p = np.asarray(perm)
        if p.ndim != 1 or (p.size and p.dtype.kind not in "iu"):
            raise ValueError(f"a permutation is a 1-D array of integers, got {p.dtype} of shape {p.shape}")
        n = p.size
        if n > np.iinfo(np.int32).max:
            raise ValueError(f"a permutation of {n} indices is too long for int32 indices")
        seen = np.zeros(n, bool)
        inside = (p >= 0) & (p < n)
        seen[p[inside]] = True
        if not inside.all() or not seen.all():
            missing = np.flatnonzero(~seen)
            raise ValueError(f"not a permutation of 0..{n - 1}: index {int(missing[0])} does not occur "
                             f"(each index must occur exactly once)")
        return cls(exec, exec.from_host(p.astype(INDEX_DTYPE)))

    @property
    def size(self) -> int:
        return self.shape[0]

    def to_numpy(self) -> np.ndarray:
        """The index array on the host (``perm[i]``: the old index of new index i)."""
        return self.executor.to_host(self.perm)

    def compute_inverse(self) -> "Permutation":
        """P^-1 = P^T: the permutation with ``inverse[perm[i]] = i`` (computed once, on the executor)."""
        if self._inverse is None:
            out = self.executor.alloc((self.size,), INDEX_DTYPE)
            self.executor.run("matrix.permutation.invert", self.perm, out)
            self._inverse = Permutation(self.executor, out)
            self._inverse._inverse = self
        return self._inverse

    def transpose(self) -> "Permutation":
        """P^T, the inverse."""
        return self.compute_inverse()

    def conj_transpose(self) -> "Permutation":
        """P^H = P^T."""
        return self.compute_inverse()

    def clone(self, exec: Executor | None = None) -> "Permutation":
        exec = self.executor if exec is None else exec
        return Permutation(exec, *exec.copy_arrays(self.executor, self.perm))

    def _check_operands(self, b: LinOp, x: LinOp) -> None:
        # any value type: the permutation moves values, it does not compute with them
        n = self.size
        if b.shape[0] != n or x.shape != (n, b.shape[1]):
            raise ValueError(f"dimension mismatch: the permutation is {n} x {n}, b is {b.shape[0]} x {b.shape[1]} "
                             f"and x {x.shape[0]} x {x.shape[1]}; both need {n} rows and the same columns")
        if b.dtype != x.dtype:
            raise TypeError(f"value type mismatch: b is {b.dtype} but x is {x.dtype}")

    def _apply_impl(self, b: LinOp, x: LinOp) -> None:
        # x = P b: x[i] = b[perm[i]]
        self.executor.run("matrix.dense.permute", b, self.perm, None, x)

    def _apply_advanced_impl(self, alpha: LinOp, b: LinOp, beta: LinOp, x: LinOp) -> None:
        tmp = x.empty_like()
        self._apply_impl(b, tmp)
        x.scale(beta.astype(x.dtype))
        x.add_scaled(alpha.astype(x.dtype), tmp)

    def __repr__(self) -> str:
        return f"Permutation({self.size}, {self.executor!r})"


def as_permutation(perm: Any, exec: Executor, size: int, what: str = "permutation") -> Permutation:
    """``perm`` (a Permutation or a host index array) as a Permutation of ``size`` on ``exec``."""
    if not isinstance(perm, Permutation):
        perm = Permutation.from_numpy(exec, perm)
    if perm.size != size:
        raise ValueError(f"the {what} has {perm.size} indices but the matrix needs {size}")
    return perm.to_executor(exec)


def permute(matrix: LinOp, permutation: Any, mode: str = "symmetric", column_permutation: Any = None) -> LinOp:
    """The permuted matrix (a new Csr or Dense on the matrix's executor).

    Parameters
    ----------
    matrix : Csr or Dense
        The matrix A (another sparse format is converted to Csr).
    permutation : Permutation or array
        P, the permutation of the rows (and of the columns for the symmetric modes).
    mode : str, default "symmetric"
        One of ``"rows"`` (P A), ``"columns"`` (A P^T), ``"symmetric"`` (P A P^T) and their
        ``"inverse_..."`` forms with P^T in place of P. Ignored when ``column_permutation`` is given.
    column_permutation : Permutation or array, optional
        Q for a nonsymmetric permutation P A Q^T (``mode`` then only says whether both are
        inverted: ``"inverse_symmetric"`` gives P^T A Q).

    Examples
    --------
    >>> P = gk.reorder.Rcm.build().on(exec).generate(A)
    >>> B = gk.matrix.permute(A, P)                       # P A P^T, small bandwidth
    >>> A2 = gk.matrix.permute(B, P, "inverse_symmetric") # back to A
    """
    if mode not in MODES:
        raise ValueError(f"permute: unknown mode {mode!r}; use one of {', '.join(MODES)}")
    A = matrix
    if not hasattr(A, "_permuted") and hasattr(A, "to_csr"):
        A = A.to_csr()
    if not hasattr(A, "_permuted"):
        raise TypeError(f"permute takes a Csr or Dense matrix (or another sparse format), not {type(A).__name__}")
    exec = A.executor
    n, m = A.shape
    inverse = mode.startswith("inverse_")
    kind = mode.removeprefix("inverse_")
    if column_permutation is not None:
        P = as_permutation(permutation, exec, n, "row permutation")
        Q = as_permutation(column_permutation, exec, m, "column permutation")
        rows, cols = (P, Q) if not inverse else (P.compute_inverse(), Q.compute_inverse())
    else:
        size = {"rows": n, "columns": m, "symmetric": n}[kind]
        if kind == "symmetric" and n != m:
            raise ValueError(f"a symmetric permutation needs a square matrix, not {n} x {m}: permute rows and "
                             f"columns apart with column_permutation")
        P = as_permutation(permutation, exec, size)
        P = P.compute_inverse() if inverse else P
        rows = P if kind in ("rows", "symmetric") else None
        cols = P if kind in ("columns", "symmetric") else None
    # gather form: result[i, j] = A[rows[i], cols[j]], by the format's kernel
    return A._permuted(rows, cols)
