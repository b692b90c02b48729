"""Reorderings (gk.reorder.Rcm, Amd, Mc64), gk.matrix.Permutation and permute, and
gk.solver.ScaledReordered: the permutation and scaling kernels against their reference twins,
round trips, RCM's bandwidth and AMD's fill against SciPy's orderings on the real matrices."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as sla

import ginkpy as gk
from conftest import assert_twins, matrix_path, twin
from ginkpy import problems

REAL = ["nos6", "gr_900_900_crg", "1138_bus", "ani4", "lap3D_7pt_n20", "pde900", "cage8", "orsirr_1", "watt_2",
        "add32"]
NONSYMMETRIC = ["pde900", "cage8", "orsirr_1", "watt_2", "add32"]


def real(name: str) -> sp.csr_matrix:
    return sp.csr_matrix(scipy.io.mmread(matrix_path(f"{name}.mtx")))


def bandwidth(A: sp.spmatrix, perm: np.ndarray) -> int:
    B = sp.csr_matrix(A)[perm][:, perm].tocoo()
    return int(np.abs(B.row - B.col).max())


def lu_fill(A: sp.spmatrix, perm: np.ndarray) -> int:
    """Entries of L + U of A[perm][:, perm] factored in that order with diagonal pivots."""
    lu = sla.splu(sp.csc_matrix(A)[perm][:, perm].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0,
                  options={"SymmetricMode": True})
    return lu.L.nnz + lu.U.nnz


def random_sparse(rng, n: int, density: float, dtype=np.float64) -> sp.csr_matrix:
    A = sp.random(n, n, density, random_state=rng, format="csr", dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * sp.random(n, n, density, random_state=rng, format="csr")
    A = A + sp.eye(n)
    A[3, :] = rng.standard_normal(n)  # one long row (beyond a work-group)
    return sp.csr_matrix(A, dtype=dtype)


# -- kernel twins ----------------------------------------------------------------------------

def test_invert_twins(ref, ocl, rng):
    perm = rng.permutation(1037).astype(np.int32)
    outs = twin(ref, ocl, "matrix.permutation.invert", perm, np.zeros(1037, np.int32))
    assert_twins(outs, np.float64)
    np.testing.assert_array_equal(outs[0][1], np.argsort(perm))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("which", ["rows", "cols", "both", "none"])
def test_dense_permute_twins(ref, ocl, rng, dtype, which):
    n, k = 517, 3
    a = rng.standard_normal((n, k)) if which != "cols" and which != "both" else rng.standard_normal((n, n))
    a = (a + 1j * rng.standard_normal(a.shape)) if np.dtype(dtype).kind == "c" else a
    rows = rng.permutation(a.shape[0]).astype(np.int32) if which in ("rows", "both") else None
    cols = rng.permutation(a.shape[1]).astype(np.int32) if which in ("cols", "both") else None
    outs = twin(ref, ocl, "matrix.dense.permute", a, rows, cols, np.zeros(a.shape), dtype=dtype)
    assert_twins(outs, dtype)
    expected = a[rows if rows is not None else slice(None)][:, cols if cols is not None else slice(None)]
    np.testing.assert_allclose(outs[0][3], expected.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("which", ["rows", "cols", "both", "none"])
def test_csr_permute_twins(ref, ocl, rng, dtype, which):
    n = 701
    A = random_sparse(rng, n, 0.01, dtype)
    rows = rng.permutation(n).astype(np.int32) if which in ("rows", "both") else None
    col_inverse = rng.permutation(n).astype(np.int32) if which in ("cols", "both") else None
    arrays = []
    for exec in (ref, ocl):
        M = gk.matrix.Csr.from_scipy(exec, A)
        args = [None if v is None else exec.from_host(v) for v in (rows, col_inverse)]
        arrays.append(exec.to_host(*exec.run("matrix.csr.permute", M, *args)))
    for r, d in zip(*arrays):
        np.testing.assert_array_equal(d, r)  # entries move, nothing is computed
    ptrs, idxs, vals = arrays[0]
    B = sp.csr_matrix((vals, idxs, ptrs), shape=A.shape)
    assert B.has_sorted_indices
    gather_cols = np.argsort(col_inverse) if col_inverse is not None else slice(None)
    expected = A[rows if rows is not None else slice(None)][:, gather_cols]
    assert abs(B - expected).max() == 0


def test_csr_permute_empty_rows_twins(ref, ocl, rng):
    A = sp.csr_matrix((5, 5))
    A[1, 2] = 3.0
    perm = np.array([4, 1, 0, 3, 2], np.int32)
    for exec in (ref, ocl):
        B = gk.matrix.Csr.from_scipy(exec, A).permute(perm).to_scipy()
        assert abs(B - A[perm][:, perm]).max() == 0


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_scale_rows_twins(ref, ocl, rng, dtype):
    n = 613
    A = random_sparse(rng, n, 0.02, dtype)
    diag = rng.standard_normal(n)
    diag[5] = 0.0  # a zero scale: the row becomes zero
    outs = twin(ref, ocl, "matrix.csr.scale_rows", A, diag,
                lambda exec: exec.alloc((A.nnz,), np.dtype(dtype)), dtype=dtype)
    assert_twins(outs, dtype)
    b = rng.standard_normal((n, 3))
    outs = twin(ref, ocl, "matrix.dense.scale_rows", diag, b, np.zeros((n, 3)), dtype=dtype)
    assert_twins(outs, dtype)
    np.testing.assert_allclose(outs[0][2], (diag[:, None] * b).astype(dtype), rtol=1e-6)


# -- Permutation and permute -----------------------------------------------------------------

def test_permutation_round_trips(exec, rng):
    n = 300
    perm = rng.permutation(n)
    P = gk.matrix.Permutation.from_numpy(exec, perm)
    Pinv = P.compute_inverse()
    np.testing.assert_array_equal(Pinv.to_numpy(), np.argsort(perm))
    assert P.transpose() is Pinv and Pinv.compute_inverse() is P
    b = gk.matrix.Dense.from_numpy(exec, rng.standard_normal((n, 2)))
    # P^T P b = b
    y = Pinv.apply(P.apply(b, b.empty_like()), b.empty_like())
    np.testing.assert_array_equal(y.to_numpy(), b.to_numpy())
    np.testing.assert_array_equal(P.apply(b, b.empty_like()).to_numpy(), b.to_numpy()[perm])
    # any value type
    c = gk.matrix.Dense.from_numpy(exec, rng.standard_normal(n).astype(np.float32))
    assert P.apply(c, c.empty_like()).dtype == np.float32


@pytest.mark.parametrize("mode", ["rows", "columns", "symmetric", "inverse_rows", "inverse_columns",
                                  "inverse_symmetric"])
def test_permute_modes(exec, rng, mode):
    n = 120
    A = random_sparse(rng, n, 0.05)
    perm = rng.permutation(n)
    p = np.argsort(perm) if mode.startswith("inverse") else perm
    kind = mode.removeprefix("inverse_")
    rows = p if kind in ("rows", "symmetric") else slice(None)
    cols = p if kind in ("columns", "symmetric") else slice(None)
    expected = A.toarray()[rows][:, cols]
    M = gk.matrix.Csr.from_scipy(exec, A)
    np.testing.assert_array_equal(M.permute(perm, mode).to_scipy().toarray(), expected)
    D = gk.matrix.Dense.from_numpy(exec, A.toarray())
    np.testing.assert_array_equal(D.permute(gk.matrix.Permutation.from_numpy(exec, perm), mode).to_numpy(), expected)
    # and back
    inverse = mode.replace("inverse_", "") if mode.startswith("inverse") else "inverse_" + mode
    np.testing.assert_array_equal(gk.matrix.permute(M.permute(perm, mode), perm, inverse).to_scipy().toarray(),
                                  A.toarray())


def test_nonsymmetric_permute(exec, rng):
    A = random_sparse(rng, 90, 0.05)
    p, q = rng.permutation(90), rng.permutation(90)
    M = gk.matrix.Csr.from_scipy(exec, A)
    np.testing.assert_array_equal(M.permute(p, column_permutation=q).to_scipy().toarray(), A.toarray()[p][:, q])
    back = M.permute(p, column_permutation=q).permute(p, "inverse_symmetric", column_permutation=q)
    np.testing.assert_array_equal(back.to_scipy().toarray(), A.toarray())


def test_permutation_errors(ref):
    with pytest.raises(ValueError, match="index 1 does not occur"):
        gk.matrix.Permutation.from_numpy(ref, [0, 0, 2])
    with pytest.raises(ValueError, match="1-D array of integers"):
        gk.matrix.Permutation.from_numpy(ref, [0.0, 1.0])
    A = gk.matrix.Csr.from_scipy(ref, sp.eye(4))
    with pytest.raises(ValueError, match="has 3 indices but the matrix needs 4"):
        A.permute([0, 1, 2])
    with pytest.raises(ValueError, match="unknown mode"):
        A.permute([0, 1, 2, 3], "diagonal")
    P = gk.matrix.Permutation.from_numpy(ref, [1, 0])
    with pytest.raises(ValueError, match="dimension mismatch"):
        P.apply(gk.matrix.Dense.zeros(ref, (3, 1)), gk.matrix.Dense.zeros(ref, (3, 1)))


# -- orderings -------------------------------------------------------------------------------

def _valid(perm: np.ndarray, n: int) -> None:
    assert perm.dtype == np.int32
    np.testing.assert_array_equal(np.sort(perm), np.arange(n))


@pytest.mark.parametrize("name", REAL)
def test_rcm_bandwidth_no_worse_than_scipy(ref, name):
    A = real(name)
    P = gk.reorder.Rcm.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))
    assert isinstance(P, gk.matrix.Permutation)
    perm = P.to_numpy()
    _valid(perm, A.shape[0])
    scipy_perm = csgraph.reverse_cuthill_mckee(A, symmetric_mode=False)
    assert bandwidth(A, perm) <= bandwidth(A, scipy_perm)


def test_rcm_on_disconnected_and_generated(exec):
    # two components, an isolated node and a 2D grid in a shuffled numbering
    n = 30
    grid = problems.poisson_2d(n)
    shuffle = np.random.default_rng(1).permutation(n * n)
    A = sp.block_diag([grid[shuffle][:, shuffle], sp.eye(1), problems.poisson_2d(4)]).tocsr()
    perm = gk.reorder.Rcm.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, A)).to_numpy()
    _valid(perm, A.shape[0])
    assert bandwidth(A, perm) <= n + 1


@pytest.mark.parametrize("name", ["nos6", "1138_bus", "pde900", "orsirr_1", "add32", "cage8"])
def test_amd_fill_near_superlu_orderings(ref, name):
    A = real(name)
    perm = gk.reorder.Amd.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A)).to_numpy()
    _valid(perm, A.shape[0])
    mmd = sla.splu(sp.csc_matrix(A), permc_spec="MMD_AT_PLUS_A")
    colamd = sla.splu(sp.csc_matrix(A), permc_spec="COLAMD")
    best = min(mmd.L.nnz + mmd.U.nnz, colamd.L.nnz + colamd.U.nnz)
    assert lu_fill(A, perm) <= 1.25 * best


def test_amd_dense_row_and_empty(ref):
    A = problems.arrow(200)  # one dense row and column: ordered last
    perm = gk.reorder.Amd.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A)).to_numpy()
    _valid(perm, 200)
    assert lu_fill(A, perm) == A.nnz + 200  # no fill: L and U hold A (the diagonal twice)
    empty = gk.reorder.Amd.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, sp.csr_matrix((0, 0))))
    assert empty.size == 0


def test_mc64_maximizes_the_diagonal_product(exec, rng):
    n = 6
    A = sp.random(n, n, 0.6, random_state=rng, format="csr") + sp.csr_matrix(np.fliplr(np.eye(n)))
    A.setdiag(0)
    A.eliminate_zeros()
    M = gk.matrix.Csr.from_scipy(exec, A)
    perm = gk.reorder.Mc64.build().on(exec).generate(M).to_numpy()
    _valid(perm, n)
    dense = np.abs(A.toarray())
    best = max(np.prod(dense[list(p), range(n)]) for p in itertools.permutations(range(n)))
    assert np.prod(dense[perm, range(n)]) == pytest.approx(best)
    assert np.all(M.permute(perm, "rows").to_scipy().diagonal() != 0)
    total = max(np.sum(dense[list(p), range(n)]) for p in itertools.permutations(range(n))
                if np.all(dense[list(p), range(n)] > 0))
    perm = gk.reorder.Mc64.build().with_strategy("max_diagonal_sum").on(exec).generate(M).to_numpy()
    assert np.sum(dense[perm, range(n)]) == pytest.approx(total)


def test_mc64_structurally_singular(ref):
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 0.0], [5.0, 6.0, 0.0]]))
    with pytest.raises(ValueError, match="structurally singular: column 2"):
        gk.reorder.Mc64.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))


def test_reordering_parameters_and_config():
    with pytest.raises(ValueError, match="strategy"):
        gk.reorder.Mc64.build().with_strategy("largest")
    params = gk.config.parse({"type": "solver::ScaledReordered", "reordering": {"type": "reorder::Rcm"},
                              "inner_operator": {"type": "solver::Direct"}})
    assert params.reordering.product is gk.reorder.Rcm
    assert gk.config.parse(gk.config.to_dict(params)) == params


# -- ScaledReordered -------------------------------------------------------------------------

def _criteria():
    return (gk.stop.Iteration.build().with_max_iters(400), gk.stop.ResidualNorm.build().with_reduction_factor(1e-11))


@pytest.mark.parametrize("inner, A", [("cg", problems.poisson_2d(24)), ("gmres", problems.convection_diffusion_2d(24))])
@pytest.mark.parametrize("reordering", [None, gk.reorder.Rcm, gk.reorder.Amd, gk.reorder.Mc64])
@pytest.mark.parametrize("scaled", [False, True])
def test_scaled_reordered_solves_the_same_system(exec, rng, inner, A, reordering, scaled):
    n = A.shape[0]
    if scaled and inner == "cg":  # symmetric scaling keeps A SPD
        d = rng.uniform(0.5, 2.0, n)
        row, col = d, d
    else:
        row, col = (rng.uniform(0.5, 2.0, n), rng.uniform(0.5, 2.0, n)) if scaled else (None, None)
    if inner == "cg" and reordering is gk.reorder.Mc64:
        pytest.skip("a row permutation makes the matrix nonsymmetric: Cg does not apply")
    solver = gk.solver.Cg if inner == "cg" else gk.solver.Gmres
    params = (gk.solver.ScaledReordered.build().with_inner_operator(solver.build().with_criteria(*_criteria()))
              .with_row_scaling(row).with_col_scaling(col))
    if reordering is not None:
        params = params.with_reordering(reordering.build())
    b = rng.standard_normal(n)
    s = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    x = s.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (n, 1))).to_numpy()[:, 0]
    exact = sla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(x - exact) <= 1e-8 * np.linalg.norm(exact)


def test_scaled_reordered_with_direct_and_initial_guess(exec, rng):
    A = problems.convection_diffusion_2d(15)
    n = A.shape[0]
    b = rng.standard_normal((n, 2))
    s = (gk.solver.ScaledReordered.build().with_reordering(gk.reorder.Amd.build())
         .with_inner_operator(gk.solver.Direct.build()).on(exec).generate(gk.matrix.Csr.from_scipy(exec, A)))
    x = gk.matrix.Dense.from_numpy(exec, rng.standard_normal((n, 2)))  # ignored by a direct solve
    s.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    np.testing.assert_allclose(x.to_numpy(), sla.spsolve(A.tocsc(), b), rtol=1e-10, atol=1e-12)


def test_scaled_reordered_errors(ref):
    A = gk.matrix.Csr.from_scipy(ref, problems.poisson_2d(4))
    with pytest.raises(ValueError, match="needs an inner operator"):
        gk.solver.ScaledReordered.build().on(ref).generate(A)
    with pytest.raises(ValueError, match="finite and nonzero"):
        (gk.solver.ScaledReordered.build().with_inner_operator(gk.solver.Direct.build())
         .with_row_scaling(np.zeros(16)).on(ref).generate(A))
    with pytest.raises(ValueError, match="needs 16 values"):
        (gk.solver.ScaledReordered.build().with_inner_operator(gk.solver.Direct.build())
         .with_col_scaling(np.ones(3)).on(ref).generate(A))
    with pytest.raises(TypeError, match="must generate a gk.matrix.Permutation"):
        (gk.solver.ScaledReordered.build().with_inner_operator(gk.solver.Direct.build())
         .with_reordering(gk.preconditioner.Jacobi.build()).on(ref).generate(A))
