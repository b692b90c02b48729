"""Smoothed aggregation of a Pgm level (``prolongation_relax`` w > 0), made on the executor.

P = S P_t with the smoother S = I - (w / rho) D^-1 A (rho Gershgorin's bound on the
eigenvalues of D^-1 A; PyAMG's SA with w = 4/3) and P_t the piecewise constant prolongation of
the aggregates; R = P^H (P^T for real values: a Hermitian A keeps a Hermitian coarse matrix)
and the coarse matrix R (A P). P is made from S's rows and the aggregates, without a general
product (P_t has one 1 per row: row i of P merges the entries s_ik of one aggregate agg[k]);
A P and R (A P) are device SpGEMMs (``Csr.multiply``); the transpose keeps the source of each
entry: the setup reads only the products' sizes (five reads: P's, with whether a diagonal
entry is missing, and each product's bounds' total and size), and new values of A on the same pattern (:meth:`SmoothedProducts.update`)
run the same kernels' numeric halves into the same arrays, reading nothing. The products are
structural (entries that cancel are kept), so the patterns do not depend on the values.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.types import INDEX_DTYPE
from ginkpy.core.matrix.spgemm import multiply, transpose_values, transpose_with_source


def piecewise_constant(A: Any, agg: Any, num_aggregates: int) -> Any:
    """P_t: n x m, P_iI = 1 where fine row i is in aggregate I (a Csr on A's executor)."""
    exec, n = A.executor, A.shape[0]
    return type(A)(exec, (n, num_aggregates), exec.from_host(np.arange(n + 1, dtype=INDEX_DTYPE)), exec.copy(agg),
                   exec.from_host(np.ones(n, A.dtype)))


def smoothed_prolongation(S: Any, agg: Any, num_aggregates: int, flags: Any = None) -> tuple[Any, Any]:
    """P = S P_t (n x m, a Csr on S's executor, columns sorted, sums that cancel kept) and the
    slot of each entry of S (the entry of P it adds to), with which new values of S give P's
    (``multigrid.smoothed_aggregation.prolongation_values``). One blocking read: P's size, and
    ``flags`` (the smoother's, where given) with it: a missing diagonal entry raises."""
    exec, n = S.executor, S.shape[0]
    # row i of P = sum over the entries s_ik of row i of S of s_ik e_agg[k]
    row_ptrs, sorted_entries = exec.run("multigrid.smoothed_aggregation.prolongation_pattern", S, agg)
    read = exec.to_host(row_ptrs[n:], *([] if flags is None else [flags]))
    size = int((read if flags is None else read[0])[0])
    if flags is not None and int(read[1][0]):
        raise ValueError("Pgm with prolongation_relax (smoothed aggregation): a row of the matrix has a zero or "
                         "no diagonal entry, and the smoother scales by D^-1; use prolongation_relax 0 (piecewise "
                         "constant aggregation) or store a nonzero diagonal")
    col_idxs, values, slots = exec.run("multigrid.smoothed_aggregation.prolongation_fill", S, row_ptrs,
                                       sorted_entries, size)
    return type(S)(exec, (n, num_aggregates), row_ptrs, col_idxs, values), slots


class SmoothedProducts:
    """P, R and R A P of a smoothed aggregation, with what their update keeps: the smoother S
    (A's pattern), the slot of each entry of S in P, A P, and the source of each entry of R
    among P's."""

    def __init__(self, A: Any, agg: Any, num_aggregates: int, relax: float) -> None:
        exec = A.executor
        self.fine, self.relax = A, relax
        self.agg, self.num_aggregates = agg, num_aggregates
        self.flags = exec.alloc((1,), np.int32)
        self.smoother = type(A)(exec, A.shape, A.row_ptrs, A.col_idxs, exec.alloc((A.nnz,), A.dtype))
        # S = I - (w / rho) D^-1 A
        exec.run("multigrid.smoothed_aggregation.smoother_values", A, relax, self.smoother.values, self.flags)
        # P = S P_t (the flags read with its size);  R = P^H;  A_c = R (A P)
        self.prolong, self.slots = smoothed_prolongation(self.smoother, agg, num_aggregates, self.flags)
        self.restrict, self.source = transpose_with_source(self.prolong, conjugate=True)
        self.fine_prolonged = multiply(A, self.prolong)
        self.coarse = multiply(self.restrict, self.fine_prolonged)

    @property
    def tentative(self) -> Any:
        """P_t, the piecewise constant prolongation (made anew: the setup does not use it)."""
        return piecewise_constant(self.fine, self.agg, self.num_aggregates)

    def update(self) -> None:
        """P, R and R A P again from A's new values (same pattern), into their own arrays."""
        A = self.fine
        A.executor.run("multigrid.smoothed_aggregation.smoother_values", A, self.relax, self.smoother.values,
                       self.flags)
        A.executor.run("multigrid.smoothed_aggregation.prolongation_values", self.smoother, self.slots,
                       self.prolong)
        self.prolong.values_written()
        transpose_values(self.prolong, self.restrict, self.source, conjugate=True)
        multiply(A, self.prolong, out=self.fine_prolonged)
        multiply(self.restrict, self.fine_prolonged, out=self.coarse)
