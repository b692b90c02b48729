"""Ic: the incomplete-Cholesky preconditioner M = L L^T, applied as x = L^-T (L^-1 b) (Ginkgo's
preconditioner::Ic), for symmetric positive definite systems (Cg).

The same as Ilu with the IC(0) factorization (``gk.factorization.Ic``) by default: ``l_solver``
solves with L, ``u_solver`` with L^T.
"""
from __future__ import annotations

from typing import Any

import attrs

from ginkpy.core.base.factory import parameters
from ginkpy.core.factorization.ic import Ic as IcFactorization
from ginkpy.core.preconditioner.ilu import Ilu


class Ic(Ilu):
    """``gk.preconditioner.Ic.build().with_l_solver(...).with_u_solver(...).with_factorization(...)``"""

    @parameters
    class Parameters(Ilu.Parameters):
        factorization: Any = attrs.field(factory=IcFactorization.build)
