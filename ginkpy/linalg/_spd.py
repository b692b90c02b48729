"""What the methods for symmetric (Hermitian) positive definite systems need, checked at the
SciPy door before they run: a symmetric M where M is given by name (a nonsymmetric one is a
ValueError at once, naming the symmetric alternative), and a symmetric A (a matrix seen to be
nonsymmetric on the host, cheaply, is a UserWarning naming gmres and bicgstab). Without these,
``cg(A, b, M="ilut")`` ran to its iteration limit silently."""
from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

# the methods whose M must be symmetric positive definite (fcg takes a nonsymmetric or varying M)
SPD_PRECONDITIONED = ("cg", "pipecg", "minres")
# the methods that need a symmetric (Hermitian) A
SYMMETRIC_METHODS = ("cg", "fcg", "pipecg", "minres")
# a host matrix with at most this many stored entries is compared with its transpose (a few
# passes over it, ~0.1 s per million entries); larger ones are not checked
SYMMETRY_CHECK_NNZ = 4_000_000
_SYMMETRIC_CHOICES = '"ic", "ssor", "symmetric_gauss_seidel", "jacobi", "block_jacobi", "spdisai" or "amg"'


def nonsymmetric_preconditioner(params: Any) -> tuple[str, str] | None:
    """Why the preconditioner of ``params`` (the parameters a name such as ``"ilut"`` gives) is
    not symmetric, and the symmetric name to use instead; None where it is symmetric on a
    symmetric A (Jacobi, IC, ILU(0): L U = L D L^T there, symmetric Gauss-Seidel and SOR, SPD
    ISAI, multigrid)."""
    product = getattr(params, "product", None)
    name = getattr(product, "__name__", "")
    if name in ("GaussSeidel", "Sor") and not getattr(params, "symmetric", True):
        return (f"a forward {'Gauss-Seidel' if name == 'GaussSeidel' else 'SOR'} sweep is not symmetric",
                "symmetric_gauss_seidel" if name == "GaussSeidel" else "ssor")
    if getattr(params, "isai_type", "spd") != "spd":
        return f"a {params.isai_type} ISAI is not symmetric", "spdisai"
    factorization = getattr(getattr(params, "factorization", None), "product", None)
    if name == "Ilu" and getattr(factorization, "__name__", "") == "Ilut":
        return "threshold ILU drops entries of L and U unevenly, so L U is not symmetric", "ic"
    return None


def check_preconditioner(method: str, M: Any, params: Any) -> None:
    """Refuse a nonsymmetric preconditioner given by name (``M="ilut"``, ``("sor", {...})``) to
    a method that needs a symmetric positive definite one; parameters, factories and
    operators the caller made are taken as they are."""
    named = isinstance(M, str) or (isinstance(M, tuple) and len(M) == 2 and isinstance(M[0], str))
    if method not in SPD_PRECONDITIONED or not named:
        return
    found = nonsymmetric_preconditioner(params)
    if found is not None:
        why, instead = found
        raise ValueError(f"{method} needs a symmetric positive definite M, and M={M!r} is not symmetric ({why}): "
                         f"use M={instead!r} (or another symmetric one: {_SYMMETRIC_CHOICES}), or solve with "
                         f"gmres or bicgstab, which take any M")


def nonsymmetry(S: Any) -> str | None:
    """How a host matrix (SciPy sparse or a NumPy array) is seen to be nonsymmetric (complex:
    not Hermitian): max |S - S^H| above sqrt(eps) max |S|; None where it is symmetric up to
    that, not square, or too large to check cheaply (more than SYMMETRY_CHECK_NNZ entries).

    First a test that costs two products with S (a few ms per million entries, where forming
    S - S^H costs tens): for random u, v, u^H (S v) = (S u)^H v holds for a Hermitian S and,
    for any other, almost never; the gap allowed for rounding is sqrt(eps) (|u| |S v| +
    |S u| |v|). Only a matrix that fails it is compared entry by entry, for the message."""
    if sp.issparse(S):
        size = S.nnz
    elif isinstance(S, np.ndarray) and S.ndim == 2:
        size = S.size
    else:
        return None
    if size == 0 or size > SYMMETRY_CHECK_NNZ or S.shape[0] != S.shape[1] or S.dtype.kind not in "fc":
        return None
    u, v = np.random.default_rng(0).random((2, S.shape[0])) + 0.5
    with np.errstate(all="ignore"):
        Su, Sv = (np.asarray(S @ w).ravel() for w in (u, v))
        gap = abs(np.vdot(u, Sv) - np.vdot(Su, v))
        scale = float(np.linalg.norm(u) * np.linalg.norm(Sv) + np.linalg.norm(Su) * np.linalg.norm(v))
    if not np.isfinite(scale) or gap <= np.sqrt(np.finfo(S.dtype).eps) * scale:
        return None  # (symmetric up to rounding; or entries that are not finite, which the solve refuses)
    S = sp.csr_matrix(S)
    difference = S - S.conj().T
    asymmetry = float(abs(difference).max()) if difference.nnz else 0.0
    largest = float(abs(S).max())
    if asymmetry <= np.sqrt(np.finfo(S.dtype).eps) * largest:
        return None
    word = "Hermitian (A = A^H)" if S.dtype.kind == "c" else "symmetric"
    return f"A is not {word}: max |A - A^{'H' if S.dtype.kind == 'c' else 'T'}| = {asymmetry:.1e} of max |A| = {largest:.1e}"


def warn_nonsymmetric(method: str, S: Any, found: Any = ...) -> None:
    """A UserWarning where ``method`` needs a symmetric A and the host matrix S is seen not to be
    (``found``: :func:`nonsymmetry` of S where the caller knows it), pointing at the caller's
    line outside ginkpy."""
    if method not in SYMMETRIC_METHODS:
        return
    found = nonsymmetry(S) if found is ... else found
    if found is not None:
        warnings.warn(f"{method}: {found}; {method} needs a symmetric (Hermitian) "
                      f"{'' if method == 'minres' else 'positive definite '}matrix and may stall or break down on "
                      f"this one: use gmres or bicgstab for a nonsymmetric A", UserWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The stacklevel, for ``warnings.warn`` in the function calling this, of the first frame
    outside ginkpy (and contextlib, whose frames sit between ginkpy's)."""
    inside = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
              os.path.abspath(contextlib.__file__))
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
