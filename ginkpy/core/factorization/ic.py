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
    """``gk.factorization.Ic.build().on(exec).generate(A)``; the factors are ``l_factor``, ``lt_factor``.

    Ginkgo's ``algorithm`` ("sparselib" or "syncfree") and ``both_factors`` (whether L^H is kept
    beside L: ginkpy always keeps both) are accepted for its configurations and change nothing."""

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

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def lt_factor(self) -> Csr:
        return self.factors[1]
