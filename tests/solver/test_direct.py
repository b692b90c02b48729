"""gk.solver.Direct with gk.factorization.Lu / Cholesky: against SciPy's spsolve on the real
matrices (both executors), pivoting on zero diagonals, the errors of singular and indefinite
matrices, and every door: Multigrid's coarsest solver, the configuration, the CLI, gk.linalg."""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import ginkpy as gk
from conftest import matrix_path
from ginkpy import problems
from ginkpy.cli import main

SPD = ["nos6", "1138_bus", "gr_900_900_crg"]
GENERAL = ["pde900", "cage8", "orsirr_1", "watt_2", "add32"]


def real(name: str) -> sp.csr_matrix:
    return sp.csr_matrix(scipy.io.mmread(matrix_path(f"{name}.mtx")))


def direct(exec, A, factorization=None):
    params = gk.solver.Direct.build()
    if factorization is not None:
        params = params.with_factorization(factorization)
    return params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))


def solve(solver, b):
    exec = solver.executor
    B = gk.matrix.Dense.from_numpy(exec, b)
    return solver.apply(B, B.empty_like()).to_numpy().reshape(b.shape)


def assert_exact(A, x, b, expected=None, tol=1e-12):
    """Round-off accurate: the backward error |b - A x| / (|A| |x| + |b|) near machine epsilon
    and, where given, x close to SciPy's."""
    r = np.abs(b - A @ x)
    scale = abs(A) @ np.abs(x) + np.abs(b)
    assert np.max(r / np.where(scale > 0, scale, 1)) < tol
    if expected is not None:
        cond_tol = 1e-6  # the systems' condition numbers go up to ~1e8
        assert np.linalg.norm(x - expected) <= cond_tol * np.linalg.norm(expected)


@pytest.mark.parametrize("name", SPD + GENERAL)
def test_lu_matches_spsolve_on_real_matrices(exec, rng, name):
    A = real(name)
    b = rng.standard_normal(A.shape[0])
    x = solve(direct(exec, A), b)
    assert_exact(A, x, b, sla.spsolve(A.tocsc(), b))


@pytest.mark.parametrize("name", SPD)
def test_cholesky_matches_spsolve(exec, rng, name):
    A = real(name)
    b = rng.standard_normal((A.shape[0], 2))
    solver = direct(exec, A, gk.factorization.Cholesky.build())
    L = solver.factorization.l_factor.to_scipy()
    assert sp.triu(L, 1).nnz == 0
    assert abs(solver.factorization.u_factor.to_scipy() - L.T).max() < 1e-12 * abs(L).max()
    x = solve(solver, b)
    assert_exact(A, x, b, sla.spsolve(A.tocsc(), b))


@pytest.mark.parametrize("ordering", [None, gk.reorder.Rcm.build(), gk.reorder.Amd.build(), "natural", "colamd",
                                      "mmd_at_plus_a"])
def test_orderings_and_generated_problems(exec, rng, ordering):
    for A in (problems.poisson_2d(20), problems.convection_diffusion_2d(20), problems.poisson_3d(7)):
        b = rng.standard_normal(A.shape[0])
        x = solve(direct(exec, A, gk.factorization.Lu.build().with_ordering(ordering)), b)
        assert_exact(A, x, b, sla.spsolve(A.tocsc(), b))


def test_orderings_cut_the_fill(ref):
    A = problems.poisson_2d(30)
    orderings = {"natural": "natural", "auto": None, "colamd": "colamd", "amd": gk.reorder.Amd.build()}
    fill = {name: sum(f.nnz for f in direct(ref, A, gk.factorization.Lu.build().with_ordering(o)).factorization.factors)
            for name, o in orderings.items()}
    assert max(fill.values()) == fill["natural"]
    assert fill["auto"] < 0.6 * fill["natural"]


def test_default_ordering_follows_the_pattern(ref, rng):
    from ginkpy.reference.factorization.sparse_lu import pattern_symmetry
    A = problems.convection_diffusion_2d(12)
    assert pattern_symmetry(A) == 1.0
    upper = sp.csr_matrix(sp.triu(A) + sp.eye(A.shape[0]))  # no entry mirrored: COLAMD's
    assert pattern_symmetry(upper) == 0.0
    half = sp.csr_matrix(np.array([[1.0, 1, 0], [0, 1, 1], [0, 1, 1]]))
    assert pattern_symmetry(half) == pytest.approx(2 / 3)
    for M, spec in ((A, "mmd_at_plus_a"), (upper + sp.random(144, 144, 0.02, random_state=2), "colamd")):
        M = sp.csr_matrix(M)
        auto, named = (direct(ref, M, gk.factorization.Lu.build().with_ordering(o)).factorization
                       for o in (None, spec))
        np.testing.assert_array_equal(auto.column_permutation.to_numpy(), named.column_permutation.to_numpy())
        b = rng.standard_normal(M.shape[0])
        assert_exact(M, solve(direct(ref, M), b), b, sla.spsolve(M.tocsc(), b))


def test_host_solve_and_factors_agree(exec, rng):
    # on the host Direct solves with SuperLU's own factorization; its explicit factors (made on
    # first use) give the same solution through the triangular solvers
    A = problems.convection_diffusion_2d(10)
    solver = direct(exec, A)
    lu = solver.factorization
    R, C = lu.row_permutation.to_numpy(), lu.column_permutation.to_numpy()
    assert abs(lu.l_factor.to_scipy() @ lu.u_factor.to_scipy() - A[R][:, C]).max() < 1e-12
    b = rng.standard_normal((A.shape[0], 3))
    x = solve(solver, b)
    y = solve(gk.solver.Direct.build().on(exec).generate(lu), b)
    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
    assert_exact(A, x[:, 0], b[:, 0])


def test_zero_diagonal_pivots(exec, rng):
    # a saddle point [[A, B], [B^T, 0]]: zero diagonal in the second block
    n, m = 36, 10
    K = problems.poisson_2d(6)
    B = sp.random(n, m, 0.3, random_state=1) + sp.eye(n, m)
    A = sp.bmat([[K, B], [B.T, None]]).tocsr()
    assert np.count_nonzero(A.diagonal()) == n
    b = rng.standard_normal(n + m)
    x = solve(direct(exec, A), b)
    assert_exact(A, x, b, sla.spsolve(A.tocsc(), b))
    lu = direct(exec, A).factorization
    # A[R][:, C] = L U
    R, C = lu.row_permutation.to_numpy(), lu.column_permutation.to_numpy()
    LU = lu.l_factor.to_scipy() @ lu.u_factor.to_scipy()
    assert abs(LU - A[R][:, C]).max() < 1e-12


def test_factorization_applies_a(exec, rng):
    A = problems.convection_diffusion_2d(9)
    b = rng.standard_normal(A.shape[0])
    for fact in (gk.factorization.Lu, gk.factorization.Cholesky):
        M = A if fact is gk.factorization.Lu else problems.poisson_2d(9)
        f = fact.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, M))
        np.testing.assert_allclose(solve(f, b), M @ b, rtol=1e-12, atol=1e-12)


def test_singular_matrices_name_the_column(exec):
    A = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 0.0], [4.0, 5.0, 0.0]]))  # column 2 empty
    with pytest.raises(ValueError, match="structurally singular: column 2"):
        direct(exec, A)
    numeric = sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match="numerically singular"):
        direct(exec, numeric)


def test_cholesky_refuses_what_is_not_spd(exec):
    indefinite = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [1.0, -3.0, 1.0], [0.0, 1.0, 2.0]]))
    with pytest.raises(ValueError, match="not positive definite: the pivot of column"):
        direct(exec, indefinite, gk.factorization.Cholesky.build())
    with pytest.raises(ValueError, match="not symmetric"):
        direct(exec, problems.convection_diffusion_2d(4), gk.factorization.Cholesky.build())


def test_complex_and_float32(exec, rng):
    A = problems.helmholtz_2d(12)
    b = rng.standard_normal(A.shape[0]) + 1j * rng.standard_normal(A.shape[0])
    x = solve(direct(exec, A), b)
    assert_exact(A, x, b, sla.spsolve(A.tocsc(), b))
    A32 = problems.poisson_2d(10).astype(np.float32)
    b32 = rng.standard_normal(100).astype(np.float32)
    x32 = solve(direct(exec, A32), b32)
    assert x32.dtype == np.float32
    assert np.linalg.norm(A32 @ x32 - b32) < 1e-4 * np.linalg.norm(b32)


def test_direct_errors(ref):
    A = gk.matrix.Csr.from_scipy(ref, problems.poisson_2d(3))
    with pytest.raises(TypeError, match="Lu or Cholesky"):
        gk.solver.Direct.build().with_factorization(gk.factorization.Ilu.build()).on(ref).generate(A)
    with pytest.raises(ValueError, match="ordering 'amd' is not known"):
        gk.solver.Direct.build().with_factorization(gk.factorization.Lu.build().with_ordering("amd")).on(ref).generate(A)
    with pytest.raises(TypeError, match="symmetric reordering"):
        gk.factorization.Lu.build().with_ordering(gk.reorder.Mc64.build()).on(ref).generate(A)
    with pytest.raises(ValueError, match="pivot_threshold"):
        gk.factorization.Lu.build().with_pivot_threshold(2.0)


# -- doors -----------------------------------------------------------------------------------

def test_multigrid_coarsest_solver(exec):
    A = gk.matrix.Csr.from_scipy(exec, problems.poisson_2d(40))
    mg = (gk.solver.Multigrid.build().with_mg_level(gk.multigrid.Pgm.build()).with_max_levels(3)
          .with_coarsest_solver(gk.solver.Direct.build())
          .with_criteria(gk.stop.Iteration.build().with_max_iters(200),
                         gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A))
    assert isinstance(mg.coarsest_solver, gk.solver.Direct)
    log = gk.log.Convergence()
    mg.add_logger(log)
    b = gk.matrix.Dense.from_numpy(exec, np.ones(A.shape[0]))
    mg.apply(b, gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    assert log.has_converged


def test_configuration(ref, rng):
    config = {"type": "solver::Direct",
              "factorization": {"type": "factorization::Cholesky", "ordering": {"type": "reorder::Rcm"}}}
    params = gk.config.parse(config)
    assert gk.config.to_dict(params) == config
    A = problems.poisson_2d(8)
    b = rng.standard_normal(64)
    x = solve(params.on(ref).generate(gk.matrix.Csr.from_scipy(ref, A)), b)
    assert_exact(A, x, b)
    lu = gk.config.parse({"type": "solver::Direct", "factorization": {"type": "factorization::Lu",
                                                                       "pivot_threshold": 1.0}})
    assert lu.factorization.pivot_threshold == 1.0


def _mtx(tmp_path, name, A):
    path = tmp_path / name
    scipy.io.mmwrite(str(path), A)
    return path


def test_cli_solver_direct(capsys, tmp_path):
    spd = _mtx(tmp_path, "spd.mtx", problems.poisson_2d(10))
    general = _mtx(tmp_path, "cd.mtx", problems.convection_diffusion_2d(10))
    out_path = tmp_path / "x.mtx"
    assert main(["solve", str(spd), "--solver", "direct", "--executor", "reference", "--out", str(out_path)]) == 0
    out = capsys.readouterr().out
    assert "Direct, factorization Cholesky" in out and "relative" in out
    np.testing.assert_allclose(scipy.io.mmread(str(out_path)).ravel(), np.ones(100), rtol=1e-12)
    assert main(["solve", str(general), "--solver", "direct", "--executor", "reference"]) == 0
    assert "Direct, factorization Lu" in capsys.readouterr().out
    config = tmp_path / "direct.json"
    config.write_text(json.dumps({"type": "solver::Direct"}))
    assert main(["solve", str(general), "--config", str(config), "--executor", "reference"]) == 0
    assert "from --config" in capsys.readouterr().out


def test_cli_direct_on_the_device(capsys, ocl, tmp_path):
    path = _mtx(tmp_path, "cd.mtx", problems.convection_diffusion_2d(12))
    assert main(["solve", str(path), "--solver", "direct", "--executor", "opencl"]) == 0
    assert "Direct, factorization Lu" in capsys.readouterr().out


def test_linalg_spsolve_and_splu(exec, rng):
    from ginkpy.linalg import splu, spsolve
    A = problems.convection_diffusion_2d(12)
    b = rng.standard_normal(A.shape[0])
    np.testing.assert_allclose(spsolve(A, b, executor=exec), sla.spsolve(A.tocsc(), b), rtol=1e-11, atol=1e-13)
    B = rng.standard_normal((A.shape[0], 3))
    np.testing.assert_allclose(spsolve(A, sp.csr_matrix(B), executor=exec), sla.spsolve(A.tocsc(), B), rtol=1e-11,
                               atol=1e-13)
    lu = splu(A, executor=exec)
    assert lu.shape == A.shape and lu.nnz > A.nnz
    np.testing.assert_allclose(lu.solve(B), sla.spsolve(A.tocsc(), B), rtol=1e-11, atol=1e-13)
    # SciPy's convention: Pr^T L U Pc^T = A
    n = A.shape[0]
    Pr = sp.csc_matrix((np.ones(n), (lu.perm_r, np.arange(n))))
    Pc = sp.csc_matrix((np.ones(n), (np.arange(n), lu.perm_c)))
    assert abs(Pr.T @ (lu.L @ lu.U) @ Pc.T - A).max() < 1e-12
    for spec in ("NATURAL", "COLAMD", "MMD_AT_PLUS_A", "MMD_ATA"):
        np.testing.assert_allclose(splu(A, permc_spec=spec, executor=exec).solve(b), sla.spsolve(A.tocsc(), b),
                                   rtol=1e-11, atol=1e-13)
    with pytest.raises(ValueError, match="rhs has shape"):
        lu.solve(np.ones(3))
