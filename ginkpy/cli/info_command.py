"""What the command line finds in a matrix: ``ginkpy info``'s report (size, row lengths, entries
that are not finite, symmetry, diagonal dominance) and the symmetry and diagonal that
``ginkpy solve --solver auto`` chooses a method by."""
from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp

from ginkpy.core.matrix.mtx_io import read
from ginkpy.reference.executor import ReferenceExecutor


def matrix_kind(S: sp.csr_matrix) -> tuple[bool, str]:
    """Whether Cg suits the matrix (symmetric, or Hermitian for complex values, up to rounding,
    with a positive diagonal: what every symmetric / Hermitian positive definite matrix has) and
    a few words on why (not)."""
    if S.shape[0] != S.shape[1]:
        return False, "not square"
    symmetry = matrix_symmetry(S)
    word = "Hermitian" if S.dtype.kind == "c" else "symmetric"
    nonpositive = int(np.count_nonzero(S.diagonal().real <= 0))
    if not symmetry.startswith((word, f"numerically {word}")):
        return False, "complex symmetric, not Hermitian" if symmetry.startswith("complex symmetric") else \
            f"non{word.lower()}" if word == "symmetric" else "not Hermitian"
    if nonpositive:
        entries = "1 diagonal entry is" if nonpositive == 1 else f"{nonpositive} diagonal entries are"
        return False, f"{word}, but {entries} zero or negative"
    return True, f"{word} with a positive diagonal"


# what makes a symmetric matrix with a positive diagonal look like a PDE's (where algebraic
# multigrid pays): the sign pattern of an M-matrix (off-diagonal entries not positive) in all but
# this fraction of its off-diagonal entries, or weak diagonal dominance in at least this fraction
# of its rows
M_MATRIX_POSITIVE = 0.01
DOMINANT_ROWS = 0.9


def pde_like(S: sp.csr_matrix) -> str | None:
    """Why a real symmetric matrix with a positive diagonal looks like a discretized elliptic PDE
    (a stencil or FEM Laplacian: where algebraic multigrid beats Jacobi): the sign pattern of an
    M-matrix, or weak diagonal dominance in most rows; None where it looks like neither."""
    if S.dtype.kind != "f" or S.shape[0] == 0:
        return None
    S = sp.csr_matrix(S)
    diag = S.diagonal()
    rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    off = (rows != S.indices) & (S.data != 0)
    positive = float(np.count_nonzero(S.data[off] > 0)) / max(int(np.count_nonzero(off)), 1)
    if np.count_nonzero(off) and positive <= M_MATRIX_POSITIVE:
        return "its off-diagonal entries are not positive (an M-matrix's sign pattern, as a Laplacian's)"
    sums = np.bincount(rows[off], weights=np.abs(S.data[off]), minlength=S.shape[0])
    dominant = float(np.count_nonzero(np.abs(diag) >= sums)) / S.shape[0]
    if dominant >= DOMINANT_ROWS:
        return f"{100 * dominant:.0f}% of its rows are diagonally dominant (as a PDE stencil's)"
    return None


def symmetric_kind(kind: str) -> bool:
    """Whether :func:`matrix_kind`'s words say symmetric (Hermitian), whatever the diagonal."""
    return kind.startswith(("symmetric", "Hermitian"))


def matrix_symmetry(A: sp.csr_matrix) -> str:
    """How symmetric a square matrix is, for ``ginkpy info`` and --solver auto: a complex matrix
    is "Hermitian" (A = A^H, what Cg needs) or "complex symmetric" (A = A^T)."""
    scale = abs(A).max() if A.nnz else 0.0
    pattern = A != 0
    if A.dtype.kind == "c":
        herm = abs(A - A.conj().T).max() if A.nnz else 0.0
        if herm == 0:
            return "Hermitian"
        if herm <= 1e-12 * scale:
            return f"numerically Hermitian (max |A - A^H| = {herm:.1e} of max |A| = {scale:.1e})"
        if A.nnz and abs(A - A.T).max() <= 1e-12 * scale:
            return "complex symmetric (A = A^T), not Hermitian"
    asym = abs(A - A.T).max() if A.nnz else 0.0
    if asym == 0:
        return "symmetric"
    if asym <= 1e-12 * scale:
        return f"numerically symmetric (max |A - A^T| = {asym:.1e} of max |A| = {scale:.1e})"
    if (pattern != pattern.T).nnz == 0:
        return "structurally symmetric, values nonsymmetric"
    return "nonsymmetric"


def _non_finite(A: sp.csr_matrix) -> str | None:
    """How many stored entries are NaN and how many infinite, with the first of each (1-based
    row and column, as in the Matrix Market file); None where every entry is finite."""
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    parts = []
    for name, mask in (("NaN", np.isnan(A.data)), ("infinite", np.isinf(A.data))):
        first = np.flatnonzero(mask)
        if first.size:
            parts.append(f"{first.size} {name} (the first at row {rows[first[0]] + 1}, column "
                         f"{A.indices[first[0]] + 1})")
    return ", ".join(parts) if parts else None


def matrix_info(A: sp.csr_matrix) -> list[tuple[str, str]]:
    """What ``ginkpy info`` reports about a matrix: size, nonzeros, row lengths, value type,
    whether every entry is finite, symmetry and diagonal dominance, as (name, value) rows."""
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    n, m = A.shape
    lengths = np.diff(A.indptr)
    explicit_zeros = int(np.count_nonzero(A.data == 0))
    non_finite = _non_finite(A)
    rows = [
        ("size", f"{n} x {m}"),
        ("nonzeros", f"{A.nnz} stored ({explicit_zeros} of them zero), {A.nnz / max(n, 1):.2f} per row"),
        ("row lengths", f"min {lengths.min() if n else 0}, mean {lengths.mean() if n else 0:.2f}, "
                        f"max {lengths.max() if n else 0}, std {lengths.std() if n else 0:.2f}, "
                        f"{int(np.count_nonzero(lengths == 0))} empty rows"),
        ("value type", str(A.dtype)),
        ("values", "all finite" if non_finite is None else
         f"{non_finite}: no solver takes this matrix (fix those entries in the file)"),
    ]
    if n != m:
        return rows + [("symmetry", "not square"), ("diagonal", "not square")]
    if non_finite is not None:
        unknown = "unknown (NaN or infinite entries)"
        return rows + [("symmetry", unknown), ("dominance", unknown), ("diagonal", unknown)]
    diag = np.abs(A.diagonal())
    off = np.asarray(abs(A).sum(axis=1)).ravel() - diag
    strict, weak = int(np.count_nonzero(diag > off)), int(np.count_nonzero(diag >= off))
    if strict == n:
        dominance = "strictly diagonally dominant"
    elif weak == n:
        dominance = f"weakly diagonally dominant ({strict} of {n} rows strictly)"
    else:
        dominance = f"not diagonally dominant ({weak} of {n} rows are, {strict} strictly)"
    signs = A.diagonal()
    diagonal = (f"{int(np.count_nonzero(signs > 0))} positive, {int(np.count_nonzero(signs < 0))} negative, "
                f"{int(np.count_nonzero(signs == 0))} zero or missing")
    return rows + [("symmetry", matrix_symmetry(A)), ("dominance", dominance), ("diagonal", diagonal)]


def spmv_row(S: sp.csr_matrix, executor_name: str) -> tuple[str, str]:
    """``ginkpy info --executor``'s row: how the SpMV of ``S`` runs on that executor (the
    strategy the OpenCL backend chose from its row lengths and the device)."""
    from ginkpy.cli.devices_command import open_executor
    from ginkpy.core.matrix.csr import Csr
    exec = open_executor(executor_name)
    name = getattr(getattr(exec, "info", None), "name", None) or type(exec).__name__
    return "SpMV", f"{Csr.from_scipy(exec, S).spmv_strategy()} (on {name.strip()})"


def info(args: argparse.Namespace) -> int:
    """``ginkpy info``: print what :func:`matrix_info` finds in a Matrix Market file, and with
    ``--executor`` how its SpMV runs there."""
    S = read(args.matrix, ReferenceExecutor()).to_scipy()
    rows = [("matrix", args.matrix)] + matrix_info(S)
    if getattr(args, "executor", None):
        rows.append(spmv_row(sp.csr_matrix(S), args.executor))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0
