"""SciPy's direct-solver doors: ``spsolve(A, b)``, ``splu(A)`` and ``factorized(A)`` with ``scipy.sparse.linalg``'s
signatures, solved by ``gk.solver.Direct`` (gk.factorization.Lu, SuperLU's numeric
factorization; the triangular solves on the executor), and ``spilu(A)``, the threshold
incomplete LU of SciPy's spilu (gk.factorization.Ilut) applied by gk.preconditioner.Ilu with
exact triangular solves on the executor. Both return a :class:`SuperLU`, also a LinOp (an
``M`` for gk.linalg's solvers).

``permc_spec`` chooses the ordering: ``"NATURAL"`` none, ``"COLAMD"`` and ``"MMD_AT_PLUS_A"``
SuperLU's of that name, None (default) or ``"MMD_ATA"`` Lu's automatic choice (MMD_AT_PLUS_A
for a nearly symmetric pattern, else COLAMD); ``diag_pivot_thresh`` is Lu's
``pivot_threshold``. A singular matrix raises a ValueError (SciPy warns and returns NaN).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.lu import Lu
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.factorization.ilut import Ilut
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.solver.direct import Direct
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs
from ginkpy.linalg._interface import as_linop
from ginkpy.linalg._interface import as_executor


class SuperLU(LinOp):
    """The factorization of :func:`splu` or :func:`spilu`, as SciPy's ``SuperLU`` object:
    ``solve(rhs, trans="N")``, ``shape``, ``nnz``, ``L``, ``U``, ``perm_r``, ``perm_c``
    (Pr A Pc = L U in SciPy's convention; approximately so for :func:`spilu`).

    It is also a ginkpy LinOp applying A^-1 (``splu``) or the preconditioner (``spilu``) on
    its executor, so it can be the ``M`` of gk.linalg's solvers (``gmres(A, b, M=spilu(A))``)
    with no host round trip per application.

    Examples
    --------
    >>> lu = ginkpy.linalg.splu(A)
    >>> x = lu.solve(b)                      # b: (n,) or (n, k)
    >>> y = lu.solve(b, trans="T")           # A^T y = b
    >>> lu.L, lu.U                           # SciPy CSC matrices
    """

    def __init__(self, solver: LinOp) -> None:
        super().__init__(solver.executor, solver.shape, solver.dtype)
        self.solver = solver
        fact = solver.factorization
        self._rows = fact.row_permutation.to_numpy()
        self._cols = fact.column_permutation.to_numpy()
        self._transposed: dict[str, LinOp] = {}

    @property
    def nnz(self) -> int:
        return sum(f.nnz for f in self.solver.factorization.factors)

    @property
    def L(self) -> sp.csc_matrix:
        return self.solver.factorization.l_factor.to_scipy().tocsc()

    @property
    def U(self) -> sp.csc_matrix:
        return self.solver.factorization.u_factor.to_scipy().tocsc()

    @property
    def perm_r(self) -> np.ndarray:
        # SciPy: (Pr A)[perm_r[i]] = A[i]; ginkpy: row i of L U is row R[i] of A
        return np.argsort(self._rows).astype(np.int32)

    @property
    def perm_c(self) -> np.ndarray:
        return np.argsort(self._cols).astype(np.int32)

    def transpose(self) -> LinOp:
        """The operator of ``solve(b, trans="T")`` (on the executor)."""
        return self._operator("T")

    def conj_transpose(self) -> LinOp:
        """The operator of ``solve(b, trans="H")`` (on the executor)."""
        return self._operator("H")

    def _operator(self, trans: str) -> LinOp:
        """The solver (trans "N") or its (conjugate) transpose: the transposed triangular solves
        in the other order, ``R^T L^-T U^-T C``, made at the first use and kept."""
        if trans == "N":
            return self.solver
        if trans not in self._transposed:
            solver = self.solver
            if not isinstance(solver, Ilu):  # (Direct: its factors with transposable exact solves)
                solver = Ilu.build().with_l_solver(LowerTrs.build()).with_u_solver(UpperTrs.build()) \
                    .on(self.executor).generate(solver.factorization)
            self._transposed[trans] = solver.transpose() if trans == "T" else solver.conj_transpose()
        return self._transposed[trans]

    def solve(self, rhs: Any, trans: str = "N") -> np.ndarray:
        """x with A x = rhs (``trans="T"``: A^T x = rhs, ``"H"``: A^H x = rhs), by the factors'
        triangular solves on the executor; rhs of shape (n,) or (n, k), x of the same shape.
        For :func:`spilu` A is its incomplete factorization L U."""
        if trans not in ("N", "T", "H"):
            raise ValueError(f"trans must be 'N' (A x = b), 'T' (A^T x = b) or 'H' (A^H x = b), not {trans!r}")
        b = np.asarray(rhs)
        n = self.shape[0]
        if b.ndim not in (1, 2) or b.shape[0] != n:
            raise ValueError(f"rhs has shape {b.shape}, but the matrix is {n} x {n}")
        exec, dtype = self.executor, self.dtype
        if value_dtype(b.dtype, "rhs").kind == "c" and dtype.kind != "c":
            raise TypeError("rhs is complex but the matrix is real: factorize a complex matrix")
        B = Dense.from_numpy(exec, b.reshape(n, -1), dtype)
        X = self._operator(trans).apply(B, B.empty_like()).to_numpy()
        return X.reshape(b.shape)

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        self.solver.apply(b, x)


def splu(A: Any, permc_spec: str | None = None, diag_pivot_thresh: float | None = None, relax: Any = None,
         panel_size: Any = None, options: Any = None, *, executor: Any = None) -> SuperLU:
    """The sparse LU factorization of A, as ``scipy.sparse.linalg.splu``: an object whose
    ``solve(b)`` solves A x = b (on ``executor``).

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix.
    permc_spec : str, optional
        ``"NATURAL"``: no fill-reducing ordering; ``"COLAMD"``, ``"MMD_AT_PLUS_A"``: SuperLU's;
        None (default) or ``"MMD_ATA"``: chosen from the pattern (gk.factorization.Lu's default).
    diag_pivot_thresh : float, optional
        Threshold partial pivoting (default 0.1; 1.0 is partial pivoting).
    relax, panel_size, options
        SuperLU's tuning knobs: accepted and ignored.
    executor : executor or name, optional
        Where the triangular solves run (default: A's executor or the default one).

    Examples
    --------
    >>> from ginkpy.linalg import splu
    >>> lu = splu(A)
    >>> x = lu.solve(b)
    """
    return SuperLU(_direct(A, permc_spec, diag_pivot_thresh, executor))


# SciPy's spilu options (SuperLU's names) that Ilut takes, by their spilu keyword
_ILU_OPTIONS = {"ILU_DropTol": "drop_tol", "ILU_FillFactor": "fill_factor", "ILU_DropRule": "drop_rule",
                "ColPerm": "permc_spec", "DiagPivotThresh": "diag_pivot_thresh"}


def spilu(A: Any, drop_tol: float | None = None, fill_factor: float | None = None, drop_rule: str | None = None,
          permc_spec: str | None = None, diag_pivot_thresh: float | None = None, relax: Any = None,
          panel_size: Any = None, options: dict | None = None, *, executor: Any = None) -> SuperLU:
    """The incomplete LU factorization of A, as ``scipy.sparse.linalg.spilu``: an object whose
    ``solve(b)`` applies the preconditioner (L U)^-1 b with triangular solves on ``executor``.

    The factorization is SuperLU's threshold ILU with pivoting (ILUTP, computed on the host:
    gk.factorization.Ilut), so the factors are those of SciPy's spilu and ``solve`` agrees
    with SciPy's to rounding; the factors then move to the executor. The result is a ginkpy
    LinOp too: pass it as the ``M`` of gk.linalg's solvers (``gmres(A, b, M=spilu(A))``, the
    same preconditioner as ``M=("ilut", {"drop_tol": ...})``) and it is applied on the device.

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix.
    drop_tol : float, optional
        Entries below drop_tol times their row's (column's) norm are dropped (default 1e-4).
    fill_factor : float, optional
        At most about fill_factor times A's entries are kept (default 10).
    drop_rule : str, optional
        SuperLU's dropping rules, comma-separated (``"basic,area"`` is SuperLU's default).
    permc_spec : str, optional
        The column ordering: ``"COLAMD"`` (default), ``"NATURAL"``, ``"MMD_AT_PLUS_A"``,
        ``"MMD_ATA"``.
    diag_pivot_thresh : float, optional
        Threshold partial pivoting in [0, 1] (SuperLU's default 0.1).
    relax, panel_size
        Ignored: SuperLU's defaults (a relax of SciPy's other than its default can change the drops).
    options : dict, optional
        SuperLU's ``ILU_DropTol``, ``ILU_FillFactor``, ``ILU_DropRule``, ``ColPerm``,
        ``DiagPivotThresh`` override the keywords; other options are ignored.
    executor : executor or name, optional
        Where the triangular solves run (default: A's executor or the default one).

    Returns
    -------
    SuperLU
        ``solve(rhs, trans="N")`` (``"T"``, ``"H"``), ``shape``, ``nnz``, ``L``, ``U``, ``perm_r``,
        ``perm_c``, as SciPy's. A ValueError where A is not square or a column has no pivot left.

    Examples
    --------
    >>> ilu = ginkpy.linalg.spilu(A, drop_tol=1e-5)
    >>> y = ilu.solve(b)                          # y ~ A^-1 b
    >>> x, info = ginkpy.linalg.gmres(A, b, M=ilu)   # applied on the executor
    """
    keywords = {"drop_tol": drop_tol, "fill_factor": fill_factor, "drop_rule": drop_rule, "permc_spec": permc_spec,
                "diag_pivot_thresh": diag_pivot_thresh}
    if options is not None:
        if not isinstance(options, dict):
            raise TypeError(f"spilu: options must be a dict of SuperLU's options, not {type(options).__name__}")
        keywords.update({_ILU_OPTIONS[k]: v for k, v in options.items() if k in _ILU_OPTIONS})
    exec, op = _square_operator(A, executor)
    try:
        fact = _ilut(keywords).on(exec).generate(op)
    except ValueError as err:
        raise ValueError(f"spilu: {err}") from None
    return SuperLU(Ilu.build().with_l_solver(LowerTrs.build()).with_u_solver(UpperTrs.build()).on(exec)
                   .generate(fact))


def _ilut(keywords: dict) -> Any:
    """gk.factorization.Ilut's parameters from spilu's keywords (None: Ilut's default)."""
    ilut = Ilut.build()
    setters = {"drop_tol": (ilut.with_drop_tol, float), "fill_factor": (ilut.with_fill_factor, float),
               "drop_rule": (ilut.with_drop_rule, str), "permc_spec": (ilut.with_ordering, lambda v: str(v).lower()),
               "diag_pivot_thresh": (ilut.with_pivot_threshold, float)}
    for key, (setter, convert) in setters.items():
        if keywords[key] is not None:
            setter(convert(keywords[key]))
    return ilut


def spsolve(A: Any, b: Any, permc_spec: str | None = None, use_umfpack: bool = True, *,
            executor: Any = None) -> np.ndarray:
    """x with A x = b, as ``scipy.sparse.linalg.spsolve`` (b of shape (n,) or (n, k), or sparse),
    by ``gk.solver.Direct``.

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix.
    b : array or sparse matrix
        The right-hand side(s); x has b's shape (a sparse b gives a dense x).
    permc_spec : str, optional
        As :func:`splu`'s (default: chosen from the pattern).
    use_umfpack : bool
        Accepted and ignored (SciPy's switch).
    executor : executor or name, optional
        Where the triangular solves run.

    Examples
    --------
    >>> from ginkpy.linalg import spsolve
    >>> x = spsolve(A, b)
    >>> np.allclose(A @ x, b)
    """
    b = b.toarray() if sp.issparse(b) else np.asarray(b)
    return splu(A, permc_spec, executor=executor).solve(b)


def factorized(A: Any, *, executor: Any = None) -> Callable[[Any], np.ndarray]:
    """A function solving A x = b with A's LU factorization made once, as
    ``scipy.sparse.linalg.factorized``: ``gk.solver.Direct`` (:func:`splu`) on ``executor``.

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix, factorized at this call.
    executor : executor or name, optional
        Where the triangular solves run (default: A's executor or the default one).

    Returns
    -------
    solve : callable
        ``solve(b)`` gives x with A x = b, for b of shape (n,) or (n, k) (x has b's shape).

    Examples
    --------
    >>> from ginkpy.linalg import factorized
    >>> solve = factorized(A)                 # LU once
    >>> x = solve(b)                          # two triangular solves per call
    >>> np.allclose(A @ x, b)
    """
    lu = splu(A, executor=executor)

    def solve(b: Any) -> np.ndarray:
        return lu.solve(b)

    solve.__doc__ = "x with A x = b, by the LU factorization of ``factorized(A)`` (b: (n,) or (n, k))."
    return solve


def _square_operator(A: Any, executor: Any) -> tuple[Any, LinOp]:
    """The executor and A as a LinOp on it, A a square matrix."""
    if len(getattr(A, "shape", (0, 0))) != 2:
        raise ValueError(f"A has shape {getattr(A, 'shape', None)}: expected 2-D, an n x n matrix")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    exec = as_executor(executor, A)
    dtype = A.dtype if isinstance(A, LinOp) else exec.check_dtype(value_dtype(A.dtype, "A"))
    return exec, as_linop(A, exec, dtype)


def _direct(A: Any, permc_spec: str | None, diag_pivot_thresh: float | None, executor: Any) -> Direct:
    exec, op = _square_operator(A, executor)
    lu = Lu.build()
    spec = None if permc_spec is None else str(permc_spec).upper()
    if spec in ("NATURAL", "COLAMD", "MMD_AT_PLUS_A"):
        lu = lu.with_ordering(spec.lower())
    if diag_pivot_thresh is not None:
        lu = lu.with_pivot_threshold(float(diag_pivot_thresh))
    return Direct.build().with_factorization(lu).on(exec).generate(op)
