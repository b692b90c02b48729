"""Ilu: the exact ILU(0) factorization A ~ L U (Ginkgo's factorization::Ilu).

L is unit lower triangular (its diagonal of ones is stored), U upper triangular, both with the
sparsity pattern of A's triangles, as Csr. The factorization runs on the host at generate(),
level-scheduled and vectorized (rows that do not depend on each other are eliminated in one
numpy step), on every executor; the factors are then copied to the executor, where the
preconditioner applies them. A zero pivot raises a ValueError naming the row.
"""
from __future__ import annotations

from ginkpy.core.factorization.factorization import Factorization, moved_factors
from ginkpy.core.matrix.csr import Csr


class Ilu(Factorization):
    """``gk.factorization.Ilu.build().on(exec).generate(A)``; the factors are ``l_factor``, ``u_factor``."""

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        # sequential by nature: on the host, level-scheduled and vectorized
        host = self.executor.host
        return moved_factors(self.executor, A.shape, host.run("factorization.ilu.factorize", A.to_executor(host)))

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def u_factor(self) -> Csr:
        return self.factors[1]
