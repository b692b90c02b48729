"""Ilut: the threshold incomplete LU with partial pivoting of SciPy's ``spilu`` (SuperLU's
ILUTP: X. S. Li and M. Shao, A supernodal approach to incomplete LU factorization with partial
pivoting, ACM TOMS 37, 2011), computed on the host; the factors then move to the executor.

A[R][:, C] ~ L U with L unit lower and U upper: the columns are ordered to reduce fill (COLAMD),
each row's entries below ``drop_tol`` times its norm are dropped, at most ``fill_factor`` times
A's entries are kept, and a pivot is taken off the diagonal where the diagonal entry is too
small, so that zero diagonals (circuits, saddle points) need no shift. R and C are
``row_permutation`` and ``column_permutation`` (gk.matrix.Permutation, as Lu's);
gk.preconditioner.Ilu applies x = C^T U^-1 L^-1 R b, the preconditioner SciPy's
``spilu(A).solve`` is, with its triangular solves on the executor.
Memory is that of the factors, at most about fill_factor times A's.

For the parallel threshold factorization on the device's pattern steps, see ParIlut.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import number, parameters
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.matrix.csr import Csr


class Ilut(Factorization):
    """The threshold ILU with pivoting of SciPy's ``spilu`` (SuperLU's ILUTP): A[R][:, C] ~ L U,
    entries dropped below a tolerance and fill limited; ``l_factor``, ``u_factor``,
    ``row_permutation`` R and ``column_permutation`` C.

    Use it for hard nonsymmetric systems (zero or tiny pivots, where ILU(0) fails or
    preconditions poorly): ``gk.preconditioner.Ilu`` with this factorization, or ``M="ilut"``.
    Computed on the host, then copied to the executor.

    Parameters
    ----------
    drop_tol : float, default 1e-4
        Entries below drop_tol times their row's norm are dropped (SciPy's spilu default).
    fill_factor : float, default 10
        The factors keep at most about fill_factor times A's entries (SciPy's spilu default).
    skip_sorting, l_strategy, u_strategy
        Ginkgo's: accepted, they change nothing (see Factorization).

    Examples
    --------
    >>> ilut = gk.preconditioner.Ilu.build().with_factorization(gk.factorization.Ilut.build().with_drop_tol(1e-5))
    >>> x, info = gk.linalg.gmres(A, b, M=ilut)           # or M=("ilut", {"drop_tol": 1e-5})
    """

    @parameters
    class Parameters(Factorization.Parameters):
        drop_tol: float = attrs.field(default=1e-4, validator=number(min=0))
        fill_factor: float = attrs.field(default=10.0, validator=number(min=1))

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        host, p = self.executor.host, self.parameters
        *arrays, rows, cols = host.run("factorization.ilut.factorize", A.to_executor(host), p.drop_tol,
                                       p.fill_factor)
        return self._permuted(arrays, rows, cols)
