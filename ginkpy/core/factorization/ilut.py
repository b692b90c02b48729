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

from ginkpy.core.base.factory import number, one_of, parameters
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.matrix.csr import Csr


# SuperLU's ILU dropping rules (SciPy's spilu drop_rule, comma-separated)
DROP_RULES = ("basic", "prows", "column", "area", "secondary", "dynamic", "interp")


def _check_drop_rule(value: str | None) -> None:
    if value is None:
        return
    words = [w.strip() for w in value.split(",")] if isinstance(value, str) else None
    if words is None or not all(w in DROP_RULES for w in words):
        raise ValueError(f"Ilut.with_drop_rule({value!r}): drop_rule must be None or comma-separated rules of "
                         f"{', '.join(map(repr, DROP_RULES))} (e.g. 'basic,area', SuperLU's default)")


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
    drop_rule : str, optional
        SuperLU's ILU dropping rules, comma-separated as SciPy's spilu takes them
        (``"basic"``, ``"prows"``, ``"column"``, ``"area"``, ``"secondary"``, ``"dynamic"``,
        ``"interp"``); None: SuperLU's default (``"basic,area"``).
    ordering : str, default "colamd"
        The column ordering: ``"colamd"`` (SciPy spilu's default), ``"natural"``,
        ``"mmd_at_plus_a"`` or ``"mmd_ata"`` (SciPy's ``permc_spec``, in lower case).
    pivot_threshold : float, optional
        Threshold partial pivoting in [0, 1] (SciPy's ``diag_pivot_thresh``); None: SuperLU's
        ILU default (0.1).
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
        drop_rule: str | None = attrs.field(default=None, validator=lambda i, a, v: _check_drop_rule(v))
        ordering: str = attrs.field(default="colamd", validator=one_of("colamd", "natural", "mmd_at_plus_a",
                                                                       "mmd_ata"))
        pivot_threshold: float | None = attrs.field(default=None, validator=number(min=0, max=1, optional=True))

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        host, p = self.executor.host, self.parameters
        *arrays, rows, cols = host.run("factorization.ilut.factorize", A.to_executor(host), p.drop_tol,
                                       p.fill_factor, p.drop_rule, p.ordering, p.pivot_threshold)
        return self._permuted(arrays, rows, cols)
