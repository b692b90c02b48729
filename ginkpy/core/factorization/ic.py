"""Ic: the exact IC(0) incomplete Cholesky factorization A ~ L L^H (Ginkgo's factorization::Ic;
L^H is L^T for real values).

For symmetric (complex: Hermitian) positive definite A: L is lower triangular with the sparsity
pattern of A's lower triangle and a real positive diagonal (the upper triangle of A is not
read), as Csr, together with its conjugate transpose L^H (``lt_factor``, as Ginkgo's). The
factorization runs on the host at generate(), level-scheduled and vectorized, on every
executor; the factors are then copied to the executor. A pivot that is not positive (A is not
SPD, or IC(0) does not exist for it) raises a ValueError naming the row.
"""
from __future__ import annotations

from ginkpy.core.factorization.factorization import Factorization, moved_factors
from ginkpy.core.matrix.csr import Csr


class Ic(Factorization):
    """``gk.factorization.Ic.build().on(exec).generate(A)``; the factors are ``l_factor``, ``lt_factor``."""

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        # sequential by nature: on the host, level-scheduled and vectorized
        host = self.executor.host
        return moved_factors(self.executor, A.shape, host.run("factorization.ic.factorize", A.to_executor(host)))

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def lt_factor(self) -> Csr:
        return self.factors[1]
