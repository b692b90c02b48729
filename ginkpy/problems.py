"""Generated test problems as scipy.sparse CSR matrices, for examples, tests and benchmarks."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _laplacian_1d(n: int) -> sp.csr_matrix:
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def poisson_2d(n: int) -> sp.csr_matrix:
    """5-point Laplacian on an n x n grid (n^2 rows, SPD)."""
    return sp.kronsum(_laplacian_1d(n), _laplacian_1d(n), format="csr")


def poisson_3d(n: int) -> sp.csr_matrix:
    """7-point Laplacian on an n x n x n grid (n^3 rows, SPD)."""
    t = _laplacian_1d(n)
    return sp.kronsum(sp.kronsum(t, t), t, format="csr")


def convection_diffusion_2d(n: int, peclet: float = 0.5) -> sp.csr_matrix:
    """Upwind convection-diffusion on an n x n grid: nonsymmetric, diagonally dominant."""
    c = peclet  # convection strength per cell, upwinded along the first axis
    t = sp.diags([-(1 + c) * np.ones(n - 1), (2 + c) * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    return sp.kronsum(t, _laplacian_1d(n), format="csr")


def helmholtz_2d(n: int, wavenumber: float = 10.0, damping: float = 0.5) -> sp.csr_matrix:
    """Shifted Laplacian of a damped Helmholtz problem on the unit square, n x n interior grid
    points (spacing h = 1 / (n + 1)): -Laplace u - k^2 (1 + i damping) u = f times h^2, that
    is L - (k h)^2 (1 + i damping) I with L = poisson_2d(n). Complex
    symmetric (A^T = A, not Hermitian), indefinite for k h beyond the smallest eigenvalues of L:
    a system for Gmres, Bicgstab, Bicg and Cgs (the damping keeps it nonsingular; larger
    damping converges faster)."""
    h = 1.0 / (n + 1)
    shift = (wavenumber * h) ** 2 * (1 + 1j * damping)
    return (poisson_2d(n) - shift * sp.identity(n * n, format="csr")).tocsr()


def magnetic_laplacian_2d(n: int, flux: float = 0.1, shift: float = 0.0) -> sp.csr_matrix:
    """Hermitian positive definite 5-point Laplacian with Peierls phases (a charged particle in
    a uniform magnetic field, flux per grid cell in units of the flux quantum) on an n x n grid,
    Dirichlet boundary: a_ii = 4 + shift, a_ij = -exp(i theta_ij) for the neighbours, with
    theta_ji = -theta_ij (Landau gauge: phase 2 pi flux x along the y links). A system for Cg,
    Fcg and Bicg with complex values; its spectrum lies in (shift, 8 + shift)."""
    x = np.arange(n * n) % n
    along_x = np.ones(n * n - 1, dtype=complex)
    along_x[x[:-1] == n - 1] = 0  # no link across the rows' ends
    along_y = np.exp(2j * np.pi * flux * x[: n * n - n])
    upper = sp.diags([-along_x, -along_y], [1, n], shape=(n * n, n * n))
    return (upper + upper.conj().T + (4.0 + shift) * sp.identity(n * n)).tocsr()


def power_law(n: int, mean_nnz: float = 8, exponent: float = 2.0, seed: int = 0) -> sp.csr_matrix:
    """Rows with power-law distributed lengths (a few very long rows) plus a dominant diagonal."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.ceil(rng.pareto(exponent - 1, n) * mean_nnz / 2 + 1), n).astype(np.int64)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, rows.size)
    a = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(n, n))
    a.sum_duplicates()
    return (a + sp.diags(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0)).tocsr()


def arrow(n: int) -> sp.csr_matrix:
    """Arrow matrix: a diagonal plus one full first row and column (SPD, diagonally dominant)."""
    a = sp.lil_matrix((n, n))
    a[0, :] = 1.0
    a[:, 0] = 1.0
    a.setdiag(np.full(n, 2.0))
    a[0, 0] = float(n + 1)
    return a.tocsr()


def poisson_3d_rows(shape: tuple[int, int, int], first: int, end: int) -> sp.csr_matrix:
    """Rows ``first .. end - 1`` of the 7-point Laplacian on an nx x ny x nz grid (row
    i = x + nx (y + ny z)), as an (end - first) x (nx ny nz) CSR matrix with global column
    indices: what one rank of a distributed solve assembles, without the whole matrix. The rows
    0 .. nx ny nz - 1 together are ``poisson_3d(n)`` for nx = ny = nz = n."""
    nx, ny, nz = shape
    rows = np.arange(first, end, dtype=np.int64)
    x, y, z = rows % nx, (rows // nx) % ny, rows // (nx * ny)
    entries_r, entries_c, entries_v = [rows], [rows], [np.full(rows.size, 6.0)]
    # the six neighbours that exist: -1 each
    for coord, size, stride in ((x, nx, 1), (y, ny, nx), (z, nz, nx * ny)):
        for step in (-1, 1):
            inside = (coord + step >= 0) & (coord + step < size)
            entries_r.append(rows[inside])
            entries_c.append(rows[inside] + step * stride)
            entries_v.append(np.full(int(inside.sum()), -1.0))
    r, c, v = (np.concatenate(a) for a in (entries_r, entries_c, entries_v))
    return sp.csr_matrix((v, (r - first, c)), shape=(end - first, nx * ny * nz))
