"""Cholesky: the sparse Cholesky factorization A = P^T L L^H P of a Hermitian positive definite
matrix with a fill-reducing ordering (Ginkgo's experimental::factorization::Cholesky).

``generate(A)`` orders A (``ordering``: SuperLU's minimum degree on A + A^T by default) and
factorizes it on the host (SuperLU's LU with diagonal pivots on the ordered matrix, A = L D L^H,
checked for D > 0, scaled to L D^1/2); the factors are copied to the executor, where ``gk.solver.Direct`` solves
with them. A matrix that is not symmetric (Hermitian) or not positive definite is a ValueError
naming the column where a pivot is not positive.
"""
from __future__ import annotations

from typing import Any

from ginkpy.core.base.factory import Parameters, boolean, parameters
from ginkpy.core.factorization.lu import Lu, ordering_of
from ginkpy.core.matrix.csr import Csr


class Cholesky(Lu):
    """Sparse Cholesky: A[R][:, R] = L L^H, L lower triangular (Csr), R a fill-reducing ordering.

    For symmetric (Hermitian) positive definite matrices: half the factorization work of Lu and
    no pivoting. ``l_factor`` is L, ``u_factor`` L^H; ``row_permutation`` and
    ``column_permutation`` are both R.

    Parameters
    ----------
    ordering : reorder factory or str, optional
        The fill-reducing ordering, as Lu's: default (None) SuperLU's minimum degree on the
        pattern of A + A^T; ``"natural"``, ``"colamd"`` or a reorder factory
        (``gk.reorder.Amd.build()``).
    skip_sorting, symbolic_factorization
        Ginkgo's: accepted for its configurations; they change nothing here.

    Examples
    --------
    >>> chol = gk.factorization.Cholesky.build().on(exec).generate(A)
    >>> L = chol.l_factor                       # A[R][:, R] = L L^H
    >>> solver = gk.solver.Direct.build().with_factorization(gk.factorization.Cholesky.build()).on(exec).generate(A)
    """

    symmetric = True

    @parameters
    class Parameters(Parameters):
        ordering: Any = None
        skip_sorting: bool = boolean()
        symbolic_factorization: Any = None

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        host = self.executor.host
        ordering = ordering_of(self.parameters.ordering, A, type(self).__name__)
        plan, *arrays, rows = host.run("factorization.cholesky.factorize", A.to_executor(host), ordering)
        return self._kept(plan, self._permuted(arrays, rows))
