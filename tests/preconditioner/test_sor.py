"""Gauss-Seidel and (S)SOR (gk.preconditioner.GaussSeidel, Sor): the factor kernel against its
reference twin, the operator against a dense numpy reference of the same splitting (real and
complex, forward, symmetric and backward, transposed), the relaxation step a multigrid smoother
takes, bad input, Multigrid with a Gauss-Seidel smoother, Krylov solvers preconditioned by it,
and the doors (configuration, gk.linalg, command line)."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import ginkpy as gk
from conftest import assert_twins, tol, twin
from ginkpy.problems import convection_diffusion_2d, poisson_2d

GaussSeidel, Sor = gk.preconditioner.GaussSeidel, gk.preconditioner.Sor
Iteration, ResidualNorm = gk.stop.Iteration, gk.stop.ResidualNorm


def _random(rng, n, dtype=np.float64, density=0.05):
    """A random sparse n x n matrix with a dominant diagonal (values of ``dtype``)."""
    A = sp.random(n, n, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    if np.dtype(dtype).kind == "c":
        A = A + 1j * sp.random(n, n, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    A = A + sp.diags(np.abs(A).sum(axis=1).A1 + 1 + rng.random(n))
    return sp.csr_matrix(A, dtype=dtype)


def _splitting_inverse(A, omega=1.2, symmetric=False, backward=False):
    """M^-1 of (S)SOR from the dense splitting A = D + L + U."""
    A = A.toarray()
    D, L, U = np.diag(np.diag(A)), np.tril(A, -1), np.triu(A, 1)
    if symmetric:
        M = (D + omega * L) @ np.linalg.inv(D) @ (D + omega * U) / (omega * (2 - omega))
    else:
        M = (D + omega * U) / omega if backward else (D + omega * L) / omega
    return np.linalg.inv(M)


def _apply(op, exec, b, dtype):
    x = gk.matrix.Dense.zeros(exec, b.shape, dtype)
    op.apply(gk.matrix.Dense.from_numpy(exec, b, dtype), x)
    return x.to_numpy()


# -- the kernel ----------------------------------------------------------------------------------

def _patterns(A, dtype):
    """(A, L pattern, U pattern) on an executor, as Sor makes them."""
    def make(exec):
        a = gk.matrix.Csr.from_scipy(exec, A, dtype)
        l, u, row = exec.run("factorization.factorization.initialize_l_u", a)
        assert row == -1
        return a, gk.matrix.Csr(exec, A.shape, *l), gk.matrix.Csr(exec, A.shape, *u)
    return make


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
@pytest.mark.parametrize("symmetric, with_u", [(False, False), (True, True), (False, True)])
def test_initialize_weighted_l_u_twins(ref, ocl, rng, dtype, symmetric, with_u):
    n = 301  # more rows than a work-group, odd
    A = _random(rng, n, dtype)
    A[5, 5] = 0  # a zero diagonal entry (stored): reported as the first bad row
    A[200, 200] = 0
    made = {}

    def part(index):
        def get(exec):
            if exec not in made:
                made[exec] = _patterns(A, dtype)(exec)
            return made[exec][index]
        return get
    outs = twin(ref, ocl, "preconditioner.sor.initialize_weighted_l_u", part(0), 1.3, part(1),
                part(2) if with_u else None, symmetric, dtype=dtype)
    assert outs[0][-1] == outs[1][-1] == 5
    assert_twins(outs, dtype)
    # away from the zero pivots the factors are those of the splitting
    L = outs[0][2]
    Ad = A.toarray()
    np.testing.assert_allclose(np.tril(L, -1), np.tril(Ad, -1))
    np.testing.assert_allclose(np.diag(L), np.diag(Ad) / 1.3, rtol=tol(dtype))


# -- the operator against the dense splitting ----------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("omega, symmetric", [(1.2, False), (0.7, True), (1.0, True), (1.9, False)])
def test_sor_applies_the_inverse_of_its_splitting(exec, rng, dtype, omega, symmetric):
    n = 67
    A = _random(rng, n, dtype, density=0.1)
    b = rng.standard_normal((n, 3)).astype(dtype)
    M = Sor.build().with_relaxation_factor(omega).with_symmetric(symmetric).on(exec).generate(
        gk.matrix.Csr.from_scipy(exec, A, dtype))
    expected = _splitting_inverse(A, omega, symmetric) @ b
    np.testing.assert_allclose(_apply(M, exec, b, dtype), expected, rtol=1e-10, atol=1e-12)
    # M^-T and M^-H
    for method, inv in (("transpose", _splitting_inverse(A, omega, symmetric).T),
                        ("conj_transpose", _splitting_inverse(A, omega, symmetric).conj().T)):
        np.testing.assert_allclose(_apply(getattr(M, method)(), exec, b, dtype), inv @ b, rtol=1e-10, atol=1e-12)


def test_gauss_seidel_is_sor_with_omega_one(exec, rng):
    A = _random(rng, 40)
    b = rng.standard_normal((40, 1))
    a = gk.matrix.Csr.from_scipy(exec, A)
    gs = GaussSeidel.build().on(exec).generate(a)
    assert gs.relaxation_factor == 1.0 and gs.u_solver is None
    np.testing.assert_allclose(_apply(gs, exec, b, np.float64), _splitting_inverse(A, 1.0) @ b, rtol=1e-12)
    sgs = GaussSeidel.build().with_symmetric(True).on(exec).generate(a)
    np.testing.assert_allclose(_apply(sgs, exec, b, np.float64), _splitting_inverse(A, 1.0, True) @ b, rtol=1e-12)
    # the backward sweep: M = D + U
    back = gs.backward()
    assert back.l_solver is None and sgs.backward() is sgs
    np.testing.assert_allclose(_apply(back, exec, b, np.float64), _splitting_inverse(A, 1.0, backward=True) @ b,
                               rtol=1e-12)


def test_jacobi_sweeps_as_triangular_solvers(exec):
    # the triangles of a 1D Laplacian have n levels: n Jacobi sweeps solve them exactly
    n = 9
    A = sp.diags([-1, 2.5, -1], [-1, 0, 1], shape=(n, n), format="csr")
    b = np.arange(1.0, n + 1)[:, None]
    trs = gk.solver.LowerTrs.build().with_algorithm("jacobi").with_num_jacobi_sweeps(n)
    utrs = gk.solver.UpperTrs.build().with_algorithm("jacobi").with_num_jacobi_sweeps(n)
    M = (Sor.build().with_symmetric(True).with_l_solver(trs).with_u_solver(utrs).on(exec)
         .generate(gk.matrix.Csr.from_scipy(exec, A)))
    assert isinstance(M.l_solver, gk.solver.LowerTrs) and M.l_solver.jacobi
    np.testing.assert_allclose(_apply(M, exec, b, np.float64), _splitting_inverse(A, 1.2, True) @ b, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_relaxation_step_from_a_guess(exec, rng, dtype):
    n = 50
    A = _random(rng, n, dtype, density=0.1)
    b, x0 = rng.standard_normal((n, 2)).astype(dtype), rng.standard_normal((n, 2)).astype(dtype)
    M = Sor.build().with_relaxation_factor(1.4).on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype))
    x = gk.matrix.Dense.from_numpy(exec, x0, dtype)
    B = gk.matrix.Dense.from_numpy(exec, b, dtype)
    M.apply_with_initial_guess(B, x, False)
    expected = x0 + _splitting_inverse(A, 1.4) @ (b - A @ x0)
    np.testing.assert_allclose(x.to_numpy(), expected, rtol=1e-10, atol=1e-12)
    M.apply_with_initial_guess(B, x, True)  # from zero: M^-1 b
    np.testing.assert_allclose(x.to_numpy(), _splitting_inverse(A, 1.4) @ b, rtol=1e-10, atol=1e-12)


def test_float32(exec, rng):
    A = _random(rng, 80)
    b = rng.standard_normal((80, 1)).astype(np.float32)
    M = Sor.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, np.float32))
    np.testing.assert_allclose(_apply(M, exec, b, np.float32), _splitting_inverse(A) @ b, rtol=1e-4, atol=1e-5)


# -- bad input -----------------------------------------------------------------------------------

def test_bad_input(exec):
    A = sp.csr_matrix(np.array([[2.0, 1, 0], [1, 0, 1], [0, 1, 2]]))
    with pytest.raises(ValueError, match="row 1 is zero or not stored"):
        Sor.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    missing = sp.csr_matrix(np.array([[2.0, 1, 0], [1, 0, 1], [0, 1, 2]]))
    missing.eliminate_zeros()
    with pytest.raises(ValueError, match="row 1 is zero or not stored"):
        GaussSeidel.build().with_symmetric(True).on(exec).generate(gk.matrix.Csr.from_scipy(exec, missing))
    for omega in (0, 2, 2.5, -1, True, "1"):
        with pytest.raises(ValueError, match="strictly between 0 and 2"):
            Sor.build().with_relaxation_factor(omega)
    with pytest.raises(TypeError, match="True or False"):
        GaussSeidel.build().with_symmetric(1)
    with pytest.raises(AttributeError):
        GaussSeidel.build().with_relaxation_factor(1.5)  # Ginkgo's GaussSeidel has none
    with pytest.raises(ValueError, match="square"):
        Sor.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, sp.random(3, 4, density=0.5)))


# -- as a multigrid smoother and as a preconditioner ---------------------------------------------

def _run(exec, params, A, b, dtype=np.float64):
    """Solve A x = b from 0 with the solver of ``params``: x, its Convergence logger, the solver."""
    solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype))
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1), dtype)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b, dtype), x)
    return x.to_numpy()[:, 0], log, solver


def _amg_cg(exec, A, b, smoother=None, symmetric_post=None):
    # one Jacobi sweep without a smoother, as one Gauss-Seidel sweep (not each device's choice)
    mg = gk.solver.Multigrid.build().with_min_coarse_rows(20).with_cycle("v").with_smoother_iters(1)
    if smoother is not None:
        mg = mg.with_pre_smoother(smoother)
    if symmetric_post is not None:
        mg = mg.with_post_smoother(symmetric_post)
    params = gk.solver.Cg.build().with_preconditioner(mg).with_criteria(
        ResidualNorm.build().with_reduction_factor(1e-8), Iteration.build().with_max_iters(200))
    return _run(exec, params, A, b)


def test_gauss_seidel_smoother_in_amg_cg(exec):
    A = poisson_2d(40)
    b = A @ np.ones(A.shape[0])
    _, default, _ = _amg_cg(exec, A, b)
    x, gs, solver = _amg_cg(exec, A, b, GaussSeidel.build())
    assert gs.has_converged and default.has_converged
    np.testing.assert_allclose(x, 1, rtol=1e-6)
    assert gs.num_iterations < default.num_iterations
    # forward sweeps before, backward sweeps after: the cycle is symmetric, as Cg needs
    mg = solver.preconditioner
    assert not mg.pre_smoothers[0].is_backward and mg.post_smoothers[0].is_backward
    assert "GaussSeidel" in repr(mg)
    _, sgs, _ = _amg_cg(exec, A, b, Sor.build().with_symmetric(True).with_relaxation_factor(1.0))
    assert sgs.has_converged and sgs.num_iterations <= gs.num_iterations + 1


def test_multigrid_as_solver_with_sor_smoothers(exec):
    A = poisson_2d(30)
    b = A @ np.ones(A.shape[0])
    params = (gk.solver.Multigrid.build().with_min_coarse_rows(20)
              .with_pre_smoother(Sor.build().with_relaxation_factor(1.1))
              .with_post_smoother(Sor.build().with_symmetric(True))
              .with_criteria(ResidualNorm.build().with_reduction_factor(1e-8), Iteration.build().with_max_iters(100)))
    x, log, _ = _run(exec, params, A, b)
    assert log.has_converged and log.num_iterations < 30
    np.testing.assert_allclose(x, 1, rtol=1e-6)


@pytest.mark.parametrize("name", ["Gmres", "Bicgstab", "Bicg"])
def test_krylov_solvers_with_gauss_seidel(exec, name):
    A = convection_diffusion_2d(16, peclet=2.0)
    b = A @ np.ones(A.shape[0])
    iterations = {}
    for label, M in (("jacobi", gk.preconditioner.Jacobi.build().with_max_block_size(1)),
                     ("gs", GaussSeidel.build()), ("ssor", Sor.build().with_symmetric(True))):
        params = getattr(gk.solver, name).build().with_preconditioner(M).with_criteria(
            ResidualNorm.build().with_reduction_factor(1e-9), Iteration.build().with_max_iters(300))
        x, log, _ = _run(exec, params, A, b)
        assert log.has_converged, label
        np.testing.assert_allclose(x, 1, rtol=1e-6)
        iterations[label] = log.num_iterations
    assert iterations["gs"] < iterations["jacobi"] and iterations["ssor"] < iterations["jacobi"]


def test_complex_gmres_with_sor(exec, rng):
    n = 120
    A = _random(rng, n, np.complex128, density=0.04)
    b = A @ (np.ones(n) + 1j)
    params = gk.solver.Gmres.build().with_preconditioner(Sor.build()).with_criteria(
        ResidualNorm.build().with_reduction_factor(1e-10), Iteration.build().with_max_iters(100))
    x, log, _ = _run(exec, params, A, b, np.complex128)
    np.testing.assert_allclose(x, np.ones(n) + 1j, rtol=1e-8)


# -- the doors -----------------------------------------------------------------------------------

def test_configuration(ref):
    config = {"type": "solver::Cg",
              "preconditioner": {"type": "solver::Multigrid", "min_coarse_rows": 20,
                                 "pre_smoother": {"type": "preconditioner::GaussSeidel", "skip_sorting": True},
                                 "post_smoother": {"type": "preconditioner::Sor", "relaxation_factor": 1.0,
                                                   "symmetric": True,
                                                   "l_solver": {"type": "solver::LowerTrs"},
                                                   "u_solver": {"type": "solver::UpperTrs"}},
                                 "criteria": []},
              "criteria": {"iteration": 100, "relative_residual_norm": 1e-8}}
    params = gk.config.parse(config)
    mg = params.preconditioner
    (pre,), (post,) = mg.pre_smoother, mg.post_smoother  # Ginkgo's per-level lists, one for every level
    assert pre.product is GaussSeidel and pre.skip_sorting is True
    assert post.relaxation_factor == 1.0 and post.symmetric is True
    assert gk.config.parse(gk.config.to_dict(params)) == params
    A = poisson_2d(20)
    x, _, _ = _run(ref, params, A, A @ np.ones(A.shape[0]))
    np.testing.assert_allclose(x, 1, rtol=1e-6)
    with pytest.raises(ValueError, match="relaxation_factor"):
        gk.config.parse({"type": "preconditioner::GaussSeidel", "relaxation_factor": 1.5})
    with pytest.raises(ValueError, match="strictly between 0 and 2"):
        gk.config.parse({"type": "preconditioner::Sor", "relaxation_factor": 2.0})


def test_linalg(exec):
    from ginkpy.linalg import bicgstab, cg, gmres
    A = convection_diffusion_2d(12)
    b = A @ np.ones(A.shape[0])
    for function, M in ((gmres, "gauss_seidel"), (bicgstab, "sor"), (gmres, "gaussseidel")):
        x, info = function(A, b, rtol=1e-10, M=M, executor=exec)
        assert info == 0
        np.testing.assert_allclose(x, 1, rtol=1e-7)
    P = poisson_2d(12)
    for M in ("ssor", "symmetric_gauss_seidel"):
        x, info = cg(P, P @ np.ones(P.shape[0]), rtol=1e-10, M=M, executor=exec)
        assert info == 0
        np.testing.assert_allclose(x, 1, rtol=1e-7)


def test_command_line(capsys, tmp_path):
    from ginkpy.cli import main
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(path, convection_diffusion_2d(8))
    for name in ("gauss_seidel", "sor", "ssor"):
        rc = main(["solve", str(path), "--executor", "reference", "--preconditioner", name, "--rtol", "1e-8"])
        out, err = capsys.readouterr()
        assert rc == 0, err
        assert "converged" in out
    rc = main(["solve", str(path), "--executor", "reference", "--solver", "ir", "--preconditioner", "gauss_seidel",
               "--rtol", "1e-8"])
    out, err = capsys.readouterr()
    assert rc == 0 and "converged" in out, err
