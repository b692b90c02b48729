"""Hybrid: an Ell part for the regular bulk of the rows plus a Coo part for what overflows it.

Ell is fast when rows have similar lengths but pads every row to the longest one; Coo costs
the same per entry whatever the row lengths. Hybrid gives each row its first ``ell_width``
entries in Ell and the rest in Coo. The width comes from Ginkgo's ``imbalance_limit``
strategy: the length of the row at the ``imbalance_limit`` quantile of the row lengths
(0.8 by default: 80% of the rows fit entirely in the Ell part; 1.0 puts everything in Ell).
SpMV is the Ell SpMV followed by the Coo SpMV adding into the same x.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.base.executor import Executor
from ginkpy.core.matrix.coo import Coo
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.ell import Ell
from ginkpy.core.matrix.sparse_format import SparseFormat, row_slots

DEFAULT_IMBALANCE_LIMIT = 0.8


def ell_width(row_lengths: np.ndarray, imbalance_limit: float = DEFAULT_IMBALANCE_LIMIT) -> int:
    """Entries per row of the Ell part: the row length at the ``imbalance_limit`` quantile
    (Ginkgo's ``hybrid::imbalance_limit`` strategy)."""
    if not 0.0 <= imbalance_limit <= 1.0:
        raise ValueError(f"imbalance_limit is the fraction of rows that fit the Ell part, in [0, 1]; "
                         f"got {imbalance_limit!r}")
    if row_lengths.size == 0:
        return 0
    lengths = np.sort(row_lengths)
    return int(lengths[min(int(lengths.size * imbalance_limit), lengths.size - 1)])


class Hybrid(SparseFormat):
    """A sparse matrix stored as ``ell`` (an :class:`Ell`) for the regular bulk of its rows plus
    ``coo`` (a :class:`Coo`) for what overflows it (Ginkgo's ``matrix::Hybrid``).

    Use it for matrices with mostly similar row lengths and a few long rows, where Ell alone
    would pad every row to the longest; :meth:`from_csr` and :meth:`from_scipy` split the rows
    at Ginkgo's imbalance limit (``imbalance_limit``, default 0.8: 80% of the rows fit in Ell).

    Parameters
    ----------
    ell : Ell
        The regular part.
    coo : Coo
        The overflow, of the same shape, value type and executor.

    Examples
    --------
    >>> A = gk.matrix.Hybrid.from_scipy(exec, S, imbalance_limit=0.9)
    >>> A.ell.num_stored_elements_per_row, A.coo.nnz
    >>> x = A.apply(b, x)
    """

    def __init__(self, ell: Ell, coo: Coo) -> None:
        if not isinstance(ell, Ell) or not isinstance(coo, Coo):
            raise TypeError(f"Hybrid(ell, coo) takes an Ell and a Coo, not {type(ell).__name__} and {type(coo).__name__}")
        if ell.shape != coo.shape or ell.dtype != coo.dtype or not ell.executor.same_memory(coo.executor):
            raise ValueError(f"the Ell and Coo parts of a Hybrid must have the same shape, value type and executor; "
                             f"got {ell!r} and {coo!r}")
        super().__init__(ell.executor, ell.shape, ell.dtype)
        self.ell = ell
        self.coo = coo

    @property
    def nnz(self) -> int:
        """Number of stored entries of the matrix, padding excluded."""
        return self.ell.nnz + self.coo.nnz

    # -- creation and conversion -----------------------------------------------------------------
    @classmethod
    def from_csr(cls, csr: Csr, imbalance_limit: float = DEFAULT_IMBALANCE_LIMIT) -> "Hybrid":
        """The entries of ``csr``, on its executor, split by the imbalance limit (see the module
        docstring). Split and built with numpy on the host (a one-time cost at creation)."""
        cls._check_csr(csr)
        matrix = csr.to_scipy()
        width = ell_width(np.diff(matrix.indptr), imbalance_limit)
        # the first `width` entries of each row go to Ell, the rest to Coo
        rows, slots = row_slots(matrix)
        in_ell = slots < width
        ell = _select(matrix, rows, in_ell)
        coo = _select(matrix, rows, ~in_ell)
        return cls(Ell._from_host(csr.executor, ell, width), Coo._from_host(csr.executor, coo))

    def to_scipy(self) -> sp.csr_matrix:
        """A scipy.sparse.csr_matrix copy on the host (the two parts merged with numpy; explicit
        zeros are kept)."""
        parts = [part.to_scipy().tocoo() for part in (self.ell, self.coo)]
        rows, cols, values = (np.concatenate([getattr(p, a) for p in parts]) for a in ("row", "col", "data"))
        return sp.csr_matrix((values, (rows, cols)), shape=self.shape)

    def clone(self, exec: Executor | None = None) -> "Hybrid":
        """A copy of this matrix, on ``exec`` if given."""
        return Hybrid(self.ell.clone(exec), self.coo.clone(exec))

    def is_finite(self) -> bool:
        """True when no stored value is NaN or infinite."""
        return self.ell.is_finite() and self.coo.is_finite()

    # -- LinOp: SpMV ------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = A_ell b;  x = x + A_coo b
        self.executor.run("matrix.ell.spmv", self.ell, b, x)
        self.executor.run("matrix.coo.spmv2", self.coo, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha A_ell b + beta x;  x = x + alpha A_coo b
        self.executor.run("matrix.ell.advanced_spmv", alpha, self.ell, b, beta, x)
        self.executor.run("matrix.coo.advanced_spmv2", alpha, self.coo, b, x)

    def __repr__(self) -> str:
        return (f"Hybrid({self.shape[0]} x {self.shape[1]}, {self.ell.num_stored_elements_per_row} per row in Ell, "
                f"{self.coo.nnz} in Coo, {self.dtype}, {self.executor!r})")


def _select(matrix: sp.csr_matrix, rows: np.ndarray, keep: np.ndarray) -> sp.csr_matrix:
    """The entries of a host CSR matrix where ``keep`` is set (explicit zeros included)."""
    return sp.csr_matrix((matrix.data[keep], (rows[keep], matrix.indices[keep])), shape=matrix.shape)
