"""``--solver auto`` and ``--preconditioner auto``: the method and the preconditioner chosen
from what the matrix is (:mod:`ginkpy.cli.info_command`), each with the reason the summary prints."""
from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy.cli.info_command import pde_like, symmetric_kind


def choose_solver(suits_cg: bool, kind: str, krylov_dim: int | None = None) -> tuple[str, str]:
    """--solver auto: Cg where it applies (see :func:`matrix_kind`), Minres for another symmetric
    (Hermitian) matrix, else Bicgstab (Gmres where --krylov-dim asks for it); and why.

    Bicgstab is the fastest here for a nonsymmetric matrix: on the nonsymmetric test matrices
    and generated problems (PoCL, whole solves, none and ilu preconditioners) it was faster than
    Gmres(30) on 17 of 20 (convection-diffusion 200^2: 0.52 s against 8.7 s unpreconditioned,
    0.49 s against 3.2 s with ilu; Gmres ahead by at most 1.3x elsewhere), with fewer and
    cheaper iterations; where it breaks down, :func:`solve` runs Gmres instead. Minres keeps
    the short recurrences of Cg for symmetric indefinite matrices, where Bicgstab may break down."""
    if suits_cg:
        return "cg", f"auto: the matrix is {kind}"
    need = "Hermitian" if "Hermitian" in kind else "symmetric"  # a complex matrix's kind names it
    if krylov_dim is not None:
        return "gmres", f"auto: the matrix is {kind}; Cg needs a {need} positive definite one; --krylov-dim: Gmres"
    if symmetric_kind(kind):
        return "minres", f"auto: the matrix is {kind}; Minres takes a {need} indefinite one"
    return "bicgstab", (f"auto: the matrix is {kind}; Cg needs a {need} positive definite one; Bicgstab is the "
                        f"fastest then, and Gmres takes over if it breaks down")


# the solvers whose preconditioner must be symmetric positive definite (as their matrix)
_SPD_PRECONDITIONED = ("Cg", "PipeCg", "Minres")  # (Fcg takes a nonsymmetric one)


def choose_preconditioner(product: type, S: sp.csr_matrix, suits_cg: bool, kind: str) -> tuple[str, str]:
    """--preconditioner auto (the default) for the solver ``product``: algebraic multigrid for a
    symmetric matrix with a positive diagonal that looks like a PDE's (:func:`pde_like`: an
    M-matrix's sign pattern or diagonal dominance; nos6: 84 Jacobi-Cg iterations, 11 with amg),
    ILU for a nonsymmetric one (where the solver takes a nonsymmetric preconditioner), else
    scalar Jacobi, the cheapest that rarely hurts; and why, for the summary."""
    name = product.__name__
    fields = attrs.fields_dict(product.Parameters)
    if name == "Multigrid" or ("preconditioner" not in fields and "solver" not in fields):
        return "none", f"auto: {name} takes no preconditioner" + (": its smoothers play that part"
                                                                  if name == "Multigrid" else "")
    if name == "Chebyshev":
        return "jacobi", "auto: Chebyshev takes scalar Jacobi or none"
    if suits_cg:
        why = pde_like(S)
        if why is not None and name not in ("Bicg", "Qmr"):  # (these apply M^H, which amg has not)
            return "amg", f"auto: the matrix is {kind} and {why}: algebraic multigrid"
        return "jacobi", (f"auto: the matrix is {kind}" + (f" (amg's case, but {name} applies M^H, which amg "
                                                           f"lacks)" if why else ", but not PDE-like (amg's case)") +
                          ": scalar Jacobi")
    zeros = int(np.count_nonzero(S.diagonal() == 0)) if S.shape[0] == S.shape[1] else 0
    if name in _SPD_PRECONDITIONED:
        if symmetric_kind(kind):
            return "none", (f"auto: the matrix is {kind}: {name} needs a symmetric positive definite "
                            f"preconditioner, and Jacobi of this diagonal is not one")
        return "jacobi", f"auto: {name} needs a symmetric preconditioner: scalar Jacobi (the matrix is {kind})"
    if symmetric_kind(kind) and not zeros:
        return "jacobi", f"auto: the matrix is {kind}: scalar Jacobi"
    return "ilu", (f"auto: the matrix is {kind}" + (f", with {zeros} zero diagonal entries" if zeros else "") +
                   ": incomplete LU")
