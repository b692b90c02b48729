"""Ic: the exact IC(0) incomplete Cholesky factorization A ~ L L^H (Ginkgo's factorization::Ic;
L^H is L^T for real values).

For symmetric (complex: Hermitian) positive definite A: L is lower triangular with the sparsity
pattern of A's lower triangle and a real positive diagonal (the upper triangle of A is not
read), as Csr, together with its conjugate transpose L^H (``lt_factor``, as Ginkgo's). The
factorization runs on the host at generate(), level-scheduled and vectorized, on every
executor; the factors are then copied to the executor. Where a pivot is not positive (IC(0)
does not exist for A, as for many SPD matrices that are not M-matrices), it is retried on
A + alpha diag(A) with growing alpha (Manteuffel), with one ``logging`` line; a diagonal entry
that is not positive raises a ValueError (A is not symmetric positive definite).
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import boolean, one_of, parameters
from ginkpy.core.factorization.factorization import (FACTORIZE_ALGORITHMS, Factorization, moved_factors,
                                                     shifted_cholesky)
from ginkpy.core.matrix.csr import Csr


class Ic(Factorization):
    """The exact IC(0) incomplete Cholesky factorization A ~ L L^H on the pattern of A's lower
    triangle (Ginkgo's ``factorization::Ic``): ``l_factor`` L and ``lt_factor`` L^H.

    Use it for a symmetric (Hermitian) positive definite system's preconditioner
    (``gk.preconditioner.Ic``, or ``M="ic"`` in ``gk.linalg``) with Cg; a pivot that is not
    positive is retried on a shifted matrix (Manteuffel). Computed on the host, then copied to
    the executor; for one computed on the device see :class:`ParIc`.

    Parameters
    ----------
    algorithm : {"sparselib", "syncfree"}, default "sparselib"
        Ginkgo's choice of whose kernel computes the factors: accepted for its configurations;
        ginkpy computes the same exact IC(0) on the host either way.
    both_factors : bool, default True
        Ginkgo's: whether L^H is kept beside L (ginkpy always keeps both): accepted.
    skip_sorting, l_strategy, u_strategy
        Ginkgo's: accepted, they change nothing (see Factorization).

    Examples
    --------
    >>> ic = gk.factorization.Ic.build().on(exec).generate(A)
    >>> L, LH = ic.l_factor, ic.lt_factor
    >>> M = gk.preconditioner.Ic.build().with_factorization(gk.factorization.Ic.build())
    """

    symmetric = True
    pattern_from_matrix = True

    @parameters
    class Parameters(Factorization.Parameters):
        algorithm: str = attrs.field(default="sparselib", validator=one_of(*FACTORIZE_ALGORITHMS))
        both_factors: bool = boolean(True)

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        # sequential by nature: on the host, level-scheduled and vectorized
        host = self.executor.host
        a = A.to_executor(host)

        def attempt(shift: float) -> tuple:
            *arrays, bad = host.run("factorization.ic.factorize", a, shift)
            return (None if bad >= 0 else moved_factors(self.executor, A.shape, arrays)), bad
        return shifted_cholesky("IC(0)", A, attempt)
