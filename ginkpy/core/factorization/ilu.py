"""Ilu: the exact ILU(0) factorization A ~ L U (Ginkgo's factorization::Ilu).

L is unit lower triangular (its diagonal of ones is stored), U upper triangular, both with the
sparsity pattern of A's triangles, as Csr. The factorization runs on the host at generate(),
level-scheduled and vectorized (rows that do not depend on each other are eliminated in one
numpy step), on every executor; the factors are then copied to the executor, where the
preconditioner applies them. A zero pivot raises a ValueError naming the row.
"""
from __future__ import annotations

from ginkpy.core.factorization.factorization import HostFactorization
from ginkpy.core.matrix.csr import Csr


class Ilu(HostFactorization):
    """``gk.factorization.Ilu.build().on(exec).generate(A)``; the factors are ``l_factor``, ``u_factor``."""

    kernel = "factorization.ilu.factorize"

    @property
    def l_factor(self) -> Csr:
        return self.factors[0]

    @property
    def u_factor(self) -> Csr:
        return self.factors[1]
