"""Generated test problems as scipy.sparse CSR matrices, for examples, tests and benchmarks."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.mtx_io import read


def _laplacian_1d(n: int) -> sp.csr_matrix:
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def poisson_2d(n: int) -> sp.csr_matrix:
    """5-point Laplacian on an n x n grid (n^2 rows, SPD)."""
    return sp.kronsum(_laplacian_1d(n), _laplacian_1d(n), format="csr")


def poisson_3d(n: int) -> sp.csr_matrix:
    """7-point Laplacian on an n x n x n grid (n^3 rows, SPD)."""
    t = _laplacian_1d(n)
    return sp.kronsum(sp.kronsum(t, t), t, format="csr")


def variable_3d(n: int, sigma: float = 1.5, seed: int = 0) -> sp.csr_matrix:
    """7-point -div(k grad u) on an n x n x n grid (n^3 rows, SPD, Dirichlet boundary):
    A = G^T K G with G the differences across every face (boundary faces included) and K
    log-normal per face (exp of a normal with deviation ``sigma``: contrasts of 1e4 and more),
    the coefficient jumps of a porous medium.

    Parameters
    ----------
    n : int
        Cells along each axis (n^3 rows).
    sigma : float, default 1.5
        Deviation of log k; 0 gives the 7-point Laplacian of ``poisson_3d``.
    seed : int, default 0
        Seed of the coefficients (the same matrix for the same seed).

    Examples
    --------
    >>> A = variable_3d(32)                       # 32768 rows
    >>> x, info = gk.linalg.cg(A, A @ np.ones(A.shape[0]), M="amg")
    """
    d = sp.diags([np.ones(n), -np.ones(n)], [0, -1], shape=(n + 1, n))  # (n + 1) faces x n cells
    eye = sp.identity(n)
    G = sp.vstack([sp.kron(sp.kron(d, eye), eye), sp.kron(sp.kron(eye, d), eye),
                   sp.kron(sp.kron(eye, eye), d)]).tocsr()
    k = np.exp(np.random.default_rng(seed).normal(0.0, sigma, G.shape[0]))
    return (G.T @ sp.diags(k) @ G).tocsr()


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


def saddle_point(n: int) -> sp.csr_matrix:
    """A saddle-point (KKT) system [[L, B^T], [B, 0]] of a constrained 2D Poisson problem: L =
    poisson_2d(n) (n^2 rows), B the forward differences along the grid's rows (n (n - 1) rows,
    full row rank). Symmetric, nonsingular and indefinite (n^2 positive and n (n - 1) negative
    eigenvalues), a zero diagonal block: a system for Minres (Cg breaks down, Jacobi cannot
    be formed)."""
    d = sp.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n))
    B = sp.kron(sp.identity(n), d, format="csr")
    return sp.bmat([[poisson_2d(n), B.T], [B, None]], format="csr")


def power_law(n: int, mean_nnz: float = 8, exponent: float = 2.0, seed: int = 0) -> sp.csr_matrix:
    """Rows with power-law distributed lengths (a few very long rows) plus a dominant diagonal."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.ceil(rng.pareto(exponent - 1, n) * mean_nnz / 2 + 1), n).astype(np.int64)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, rows.size)
    return _dominant_diagonal(sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(n, n)))


def webbase_like(n: int, exponent: float = 2.3, max_row: int = 4700, local: float = 0.7,
                 seed: int = 0) -> sp.csr_matrix:
    """A web-crawl-like matrix in the manner of webbase-1M (1M rows, 3.1 entries a row, the
    longest row 4700): row lengths from a power law of ``exponent`` (P(length >= L) ~ L^(1 -
    exponent), 1 to ``max_row``), so most rows hold a few entries and a few hold thousands; a
    share ``local`` of each row's links point near the row (pages of one site, crawled
    together), the rest anywhere; plus a dominant diagonal (nonsingular, for solvers too). What
    a CSR SpMV that gives every row the same work does worst on.

    Examples
    --------
    >>> S = webbase_like(100_000)
    >>> lengths = np.diff(S.indptr)   # a mean of about 4.6 with the diagonal, the longest 4505
    """
    rng = np.random.default_rng(seed)
    tail = rng.random(n)
    lengths = np.minimum(np.floor(np.maximum(tail, 1e-300) ** (-1.0 / (exponent - 1.0))), min(max_row, n))
    lengths = lengths.astype(np.int64)
    rows = np.repeat(np.arange(n), lengths)
    near = rng.random(rows.size) < local
    # a near link: a geometric step either way, of mean 20 pages plus twice the row's length
    # (a long row's links stay distinct); a far one: any page
    spread = 20.0 + 2.0 * np.repeat(lengths, lengths)
    step = rng.geometric(1.0 / spread) * rng.choice(np.array([-1, 1]), rows.size)
    cols = np.where(near, np.clip(rows + step, 0, n - 1), rng.integers(0, n, rows.size))
    return _dominant_diagonal(sp.csr_matrix((rng.random(rows.size) + 0.1, (rows, cols)), shape=(n, n)))


def _dominant_diagonal(a: sp.csr_matrix) -> sp.csr_matrix:
    """``a`` (duplicates summed) plus a diagonal of its rows' absolute sums + 1: strictly
    diagonally dominant, so nonsingular (the generated irregular matrices serve solvers too)."""
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


def olmstead(m: int = 500, coupling: float = 0.9, reaction: float = 4.7, relaxation: float = 2.0) -> sp.csr_matrix:
    """The linearized Olmstead model of a viscoelastic fluid layer (Bai et al.'s NEP collection,
    Bai/olm*): u_t = (1 - C) u_xx + C v_xx + R u, B v_t = u - v on (0, pi) with u = v = 0 at
    both ends, central differences on m interior points (h = pi / (m + 1)), unknowns u_1, v_1,
    u_2, v_2, ... (2 m rows, 6 m - 4 + 2 m entries). Nonsymmetric and very non-normal;
    ``olmstead(500)`` is the collection's olm1000 entry for entry (its values rounded to 9
    significant digits, as the file stores them)."""
    h = np.pi / (m + 1)
    s = 1 / h ** 2
    c, r, b = coupling, reaction, relaxation
    i = np.arange(m)
    u, v = 2 * i, 2 * i + 1
    rows = [u, u, v, v]
    cols = [u, v, u, v]
    vals = [np.full(m, -2 * (1 - c) * s + r), np.full(m, -2 * c * s), np.full(m, 1 / b), np.full(m, -1 / b)]
    for step in (-1, 1):
        inside = (i + step >= 0) & (i + step < m)
        rows += [u[inside], u[inside]]
        cols += [2 * (i[inside] + step), 2 * (i[inside] + step) + 1]
        vals += [np.full(inside.sum(), (1 - c) * s), np.full(inside.sum(), c * s)]
    data = np.array([float(f"{x:.9g}") for x in np.concatenate(vals)])
    return sp.csr_matrix((data, (np.concatenate(rows), np.concatenate(cols))), shape=(2 * m, 2 * m))


def circuit_mna(nodes: int = 800, sources: int = 40, seed: int = 0) -> sp.csr_matrix:
    """A circuit's modified nodal analysis matrix (as in SPICE's DC operating point, the
    Sandia/adder_dcop and memplus family): the conductance matrix of a connected random
    resistor network (a ring plus random branches, conductances over six decades, a tiny
    conductance to ground at every node), transconductances that make it nonsymmetric, and
    ``sources`` grounded voltage sources, each an extra row and column [0 ... 1 ... 0] with no
    diagonal entry, numbered just before its node. Nonsingular; ILU(0) meets an exact zero
    pivot in every source row (its diagonal is not stored)."""
    rng = np.random.default_rng(seed)
    ring = np.arange(nodes)
    extra = rng.integers(0, nodes, (2, 2 * nodes))
    a, b = np.concatenate([ring, extra[0]]), np.concatenate([(ring + 1) % nodes, extra[1]])
    a, b = a[a != b], b[a != b]
    g = 10.0 ** rng.uniform(-3, 3, a.size)
    G = sp.coo_matrix((np.concatenate([-g, -g]), (np.concatenate([a, b]), np.concatenate([b, a]))),
                      shape=(nodes, nodes)).tocsr()
    G = G - sp.diags(np.asarray(G.sum(axis=1)).ravel() - 1e-9)
    # transconductances: a current into node p controlled by the voltage at node q
    count = int(0.3 * nodes)
    p, q = rng.integers(0, nodes, count), rng.integers(0, nodes, count)
    gm = 10.0 ** rng.uniform(-3, 0, count)
    G = G + sp.coo_matrix((gm, (p, q)), shape=G.shape) - sp.coo_matrix((gm, (p, p)), shape=G.shape)
    at = rng.choice(nodes, sources, replace=False)
    B = sp.coo_matrix((np.ones(sources), (at, np.arange(sources))), shape=(nodes, sources))
    A = sp.bmat([[G, B], [B.T, None]]).tocsr()
    order = np.argsort(np.concatenate([np.arange(nodes), at - 0.5]), kind="stable")
    A = A[order][:, order].tocsr()
    A.eliminate_zeros()
    A.sort_indices()
    return A


def ic_breakdown(blocks: int = 625, coupling: float = 0.05) -> sp.csr_matrix:
    """A symmetric positive definite matrix on which IC(0) breaks down (a pivot becomes
    negative): Kershaw's 4 x 4 matrix [[3, -2, 0, 2], [-2, 3, -2, 0], [0, -2, 3, -2],
    [2, 0, -2, 3]] (eigenvalues 3 +- 2 sqrt(2)) repeated ``blocks`` times along the diagonal,
    coupled by ``coupling`` times a 2D Laplacian (4 blocks rows; a square number of rows)."""
    kershaw = np.array([[3.0, -2, 0, 2], [-2, 3, -2, 0], [0, -2, 3, -2], [2, 0, -2, 3]])
    side = int(round(np.sqrt(4 * blocks)))
    if side * side != 4 * blocks:
        raise ValueError(f"blocks must make a square number of rows (4 blocks = side^2), got {blocks}")
    return (sp.kron(sp.identity(blocks), kershaw) + coupling * poisson_2d(side)).tocsr()


def dense_row(n: int = 60, length: int = 200) -> sp.csr_matrix:
    """convection_diffusion_2d(n) with its last row coupled to ``length`` evenly spread earlier
    unknowns (a supply node, a global constraint): a row longer than ISAI's row limit, as
    circuit matrices have."""
    A = convection_diffusion_2d(n).tolil()
    rows = n * n
    cols = np.linspace(0, rows - 2, length).astype(np.int64)
    A[rows - 1, cols] = -1.0 / length
    return A.tocsr()


def system(exec, path: str | None = None, grid: int = 300) -> tuple:
    """A system to solve on ``exec``: the Matrix Market matrix at ``path``, or without one the 2D
    Poisson problem of a ``grid`` x ``grid`` grid, with b = A * ones (so that x = 1 solves it).

    Parameters
    ----------
    exec : Executor
        Where A and b are made.
    path : str, default None
        A Matrix Market file; None generates the Poisson problem.
    grid : int, default 300
        The Poisson problem's grid size (grid^2 rows).

    Returns
    -------
    A : gk.matrix.Csr
    b : gk.matrix.Dense
        n x 1, A times a vector of ones.
    name : str
        The file, or "2D Poisson <grid> x <grid>", for reports.

    Examples
    --------
    >>> A, b, name = system(gk.ReferenceExecutor(), grid=10)
    >>> A.shape, name
    ((100, 100), '2D Poisson 10 x 10')
    """
    if path:
        A, name = read(path, exec), str(path)
    else:
        A, name = Csr.from_scipy(exec, poisson_2d(grid)), f"2D Poisson {grid} x {grid}"
    n = A.shape[0]
    b = A.apply(Dense.full(exec, (n, 1), 1.0, A.dtype), Dense.zeros(exec, (n, 1), A.dtype))
    return A, b, name
