"""What :mod:`ginkpy.linalg`'s functions and :class:`~ginkpy.linalg.Solver` make of SciPy's ``M``:
a ginkpy preconditioner from a name (``M="ilu"``), ``(name, options)``, ginkpy parameters or
a factory, or an operator (a SciPy operator or matrix, a ginkpy LinOp) applied as M r.

A SciPy user's M runs on the executor where its form says what it is (:func:`device_form`):

- a sparse matrix or array that is diagonal: scalar Jacobi with M's diagonal as its D^-1
  (``gk.preconditioner.Jacobi.from_inverse_diagonal``), which Cg, Bicgstab and Chebyshev fuse
  into their kernels as they do ``M="jacobi"``;
- any other sparse matrix or array, or a NumPy array: copied to the executor once (a Csr) and
  applied there by SpMV;
- a ``LinearOperator`` whose ``matvec`` is the ``solve`` of a ``SuperLU`` (SciPy's ``splu`` or
  ``spilu``, or an object with its interface: ``L``, ``U``, ``perm_r``, ``perm_c``), or such an
  object itself: its factors copied to the executor once and applied there by exact
  triangular solves with the permutations (``gk.preconditioner.Ilu`` on
  ``gk.factorization.Factorization.from_factors``), as SciPy's ``solve`` computes them;
- any other ``LinearOperator`` (PyAMG's ``ml.aspreconditioner()``, a Python function): called on
  the host at each application, one round trip per application (r read to the host, M r written
  back; a solve then waits for the device at every iteration).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import scipy.sparse as sp

from ginkpy.config import Preset, short_names, with_options
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.factory import Factory, Parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import check_convertible, value_dtype
from ginkpy.core.matrix.permutation import Permutation
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs
from ginkpy.linalg._interface import ScipyOperator, as_linop


def preconditioner(M: Any, A: LinOp, exec: Executor, dtype: np.dtype) -> Any:
    """The solver's preconditioner parameter from any form of SciPy's ``M`` or a ginkpy one."""
    if M is None:
        return None
    if isinstance(M, str) or (isinstance(M, tuple) and len(M) == 2 and isinstance(M[0], str)):
        return named_preconditioner(*((M, {}) if isinstance(M, str) else M), A)
    if isinstance(M, (Parameters, Factory)):
        return M
    if getattr(M, "shape", A.shape) != A.shape:
        raise ValueError(f"M is {M.shape[0]} x {M.shape[1]} but A is {A.shape[0]} x {A.shape[1]}: M must be "
                         f"an approximate inverse of A of the same shape")
    M = device_form(M, exec, dtype)
    if M.shape != A.shape:
        raise ValueError(f"M is {M.shape[0]} x {M.shape[1]} but A is {A.shape[0]} x {A.shape[1]}: M must be "
                         f"an approximate inverse of A of the same shape")
    if hasattr(M, "is_finite") and not M.is_finite():
        raise ValueError("M contains NaN or Inf values")
    return M


def device_form(M: Any, exec: Executor, dtype: np.dtype) -> LinOp:
    """M (an operator: a SciPy sparse matrix or array, a NumPy array, a LinearOperator, a
    SuperLU or a ginkpy LinOp) as the LinOp that applies it on ``exec`` (the module says how
    each form runs)."""
    if sp.issparse(M) and M.ndim == 2 and M.shape[0] == M.shape[1] and _is_diagonal(M):
        check_convertible(value_dtype(M.dtype, "M"), dtype, "the values of M")
        diagonal = M.diagonal()  # (every sparse format has it; dok and lil have no .data)
        if not np.isfinite(diagonal).all():
            raise ValueError("M contains NaN or Inf values")
        # x = M b = diag(M) .* b: scalar Jacobi whose D^-1 is M's diagonal (fused into the solver's kernels)
        return Jacobi.from_inverse_diagonal(exec, diagonal.astype(dtype))
    lu = superlu_of(M)
    if isinstance(lu, LinOp) and lu.executor is exec and np.dtype(lu.dtype) == np.dtype(dtype):
        return lu  # (ginkpy's splu/spilu: its solves already run on exec, no second copy of the factors)
    if lu is not None:
        return _factors_preconditioner(lu, exec, dtype)
    return as_linop(M, exec, dtype, "M")


def _is_diagonal(M: Any) -> bool:
    """Whether every nonzero entry of the sparse M is on its diagonal (stored zeros aside)."""
    coo = M.tocoo()
    off = coo.row != coo.col
    return not np.any(coo.data[off])


def superlu_of(M: Any) -> Any:
    """The SuperLU behind M (SciPy's ``splu``/``spilu`` result, or an object with its interface:
    ``solve``, ``L``, ``U``, ``perm_r``, ``perm_c``) where M is one or a ``LinearOperator``
    made with ``matvec=lu.solve`` (the bound method); None otherwise."""
    if _has_factors(M) and callable(getattr(M, "solve", None)):
        return M
    # LinearOperator(shape, matvec=lu.solve) keeps the function given as its private __matvec_impl
    matvec = getattr(M, "_CustomLinearOperator__matvec_impl", None)
    owner = getattr(matvec, "__self__", None)
    if owner is not None and getattr(matvec, "__name__", "") == "solve" and _has_factors(owner):
        return owner
    return None


def _has_factors(lu: Any) -> bool:
    return not isinstance(lu, type) and all(hasattr(type(lu), name) or hasattr(lu, name)
                                            for name in ("L", "U", "perm_r", "perm_c"))


def _factors_preconditioner(lu: Any, exec: Executor, dtype: np.dtype) -> Ilu:
    """x = Pc U^-1 L^-1 Pr b with the factors of ``lu`` (SciPy's Pr A Pc = L U: A[R][:, C] = L U
    with R = argsort(perm_r), C = argsort(perm_c)) copied to ``exec`` once, solved exactly there
    (level-scheduled substitution on OpenCL), as ``lu.solve`` computes it."""
    L, U = (sp.csr_matrix(F) for F in (lu.L, lu.U))
    for what, F in (("L", L), ("U", U)):
        check_convertible(value_dtype(F.dtype, f"the factor {what} of M"), dtype, f"the factor {what} of M")
    L_dev, U_dev = (Csr.from_scipy(exec, F, dtype) for F in (L, U))
    R, C = (Permutation.from_numpy(exec, np.argsort(np.asarray(p))) for p in (lu.perm_r, lu.perm_c))
    fact = Factorization.from_factors(L_dev, U_dev, R, C)
    return Ilu.build().with_l_solver(LowerTrs.build()).with_u_solver(UpperTrs.build()).on(exec).generate(fact)


def named_preconditioner(name: str, options: Any, A: LinOp) -> Any:
    """The parameters of the preconditioner named ``name`` (``M="ilu"``), with ``options`` (a
    dict: ``M=("ilut", {"drop_tol": 1e-5})``), a preset's keywords or ``with_`` parameters."""
    names = short_names("preconditioner")
    key = name.lower()
    if key == "none" and not options:
        return None
    if key not in names:
        raise ValueError(f"unknown preconditioner {name!r}: use one of {', '.join([*sorted(names), 'none'])}")
    if not isinstance(options, dict):
        raise TypeError(f"M=({name!r}, options): options must be a dict of parameters, not {type(options).__name__}")
    if isinstance(A, ScipyOperator):
        raise ValueError(f"M={name!r} is built from the entries of A, which a LinearOperator does not "
                         f"expose: pass A as a sparse matrix or array, or M as an operator")
    try:
        return names[key].build(**options) if isinstance(names[key], Preset) else \
            with_options(names[key].build(), options)
    except ValueError as err:
        if "has no parameter" not in str(err):
            raise
        # where another name takes the key (M=("ilu", {"drop_tol": ...}) means "ilut"), say so
        elsewhere = sorted({f"M=({other!r}, {{{option!r}: ...}})" for option in options
                            for other, known in names.items() if other != key and isinstance(known, Preset)
                            and known.takes(option)})
        raise ValueError(f"M=({name!r}, {options!r}): {err}" +
                         (f"; did you mean {' or '.join(elsewhere)}?" if elsewhere else "")) from None
