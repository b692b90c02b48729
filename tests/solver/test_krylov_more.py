"""Bicg, Cgs, Fcg, Idr and Ir (and Csr.transpose, which Bicg needs): parameters and errors,
hand-checked iterates, breakdowns without NaN, convergence on generated problems against
spsolve with several right-hand sides, each OpenCL kernel against its reference twin, and
full solves on both executors."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import criteria as _criteria, matrix_path, solve, solver_params, tol
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d

SOLVERS = ["Bicg", "Cgs", "Fcg", "Idr", "Ir"]


# -- parameters and errors ---------------------------------------------------------------------

def test_defaults():
    idr = gk.solver.Idr.build()
    assert idr.subspace_dim == 2 and idr.kappa == 0.7
    ir = gk.solver.Ir.build()
    assert ir.relaxation_factor == 1.0 and ir.solver is None


@pytest.mark.parametrize("name, param, value, match", [
    ("Idr", "subspace_dim", 0, "subspace_dim"),
    ("Idr", "subspace_dim", 1.5, "subspace_dim"),
    ("Idr", "kappa", 1.5, "kappa"),
    ("Idr", "kappa", -0.1, "kappa"),
    ("Ir", "relaxation_factor", np.nan, "relaxation_factor"),
    ("Ir", "relaxation_factor", "1", "relaxation_factor"),
])
def test_bad_parameters_are_value_errors(ref, name, param, value, match):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    with pytest.raises(ValueError, match=match):
        solver_params(name, **{param: value}).on(ref).generate(A)


def test_ir_takes_no_preconditioner_and_checks_its_inner_solver(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    # Ir's parameters have no preconditioner (give it to the inner solver, or make it the inner solver)
    assert not hasattr(gk.solver.Ir.build(), "with_preconditioner")
    assert hasattr(gk.solver.Cg.build(), "with_preconditioner")
    with pytest.raises(TypeError, match="inner solver must be"):
        solver_params("Ir", solver=5).on(ref).generate(A)


class _NoTranspose(gk.LinOp):
    """An operator without transpose(): x = b."""

    def _apply_impl(self, b, x):
        x.copy_from(b)


def test_bicg_needs_the_transposed_preconditioner(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    with pytest.raises(TypeError, match="transpose"):
        solver_params("Bicg", preconditioner=_NoTranspose(ref, A.shape, A.dtype)).on(ref).generate(A)


def test_idr_subspace_larger_than_the_system_is_reduced(ref):
    A = gk.matrix.Csr.from_scipy(ref, sp.diags([1.0, 2.0]))
    solver = solver_params("Idr", subspace_dim=5).on(ref).generate(A)
    assert solver.subspace_dim == 2
    P = solver.subspace_vectors
    np.testing.assert_allclose(P @ P.T, np.eye(2), atol=1e-15)


def test_idr_shadow_space_is_deterministic(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(5))
    P1 = solver_params("Idr", subspace_dim=3).on(ref).generate(A).subspace_vectors
    P2 = solver_params("Idr", subspace_dim=3).on(ref).generate(A).subspace_vectors
    np.testing.assert_array_equal(P1, P2)
    np.testing.assert_allclose(P1 @ P1.T, np.eye(3), atol=1e-14)


# -- hand-checked values -----------------------------------------------------------------------

@pytest.mark.parametrize("name, first", [
    # Bicg and Fcg: the first iteration of Cg, alpha = r.r / p.Ap = 2/3
    ("Bicg", [2 / 3, 2 / 3]),
    ("Fcg", [2 / 3, 2 / 3]),
    # Cgs: alpha = 2/3, q = u - alpha A u = (1/3, -1/3), x = alpha (u + q) = (8/9, 4/9)
    ("Cgs", [8 / 9, 4 / 9]),
])
def test_diagonal_2x2_by_hand(ref, name, first):
    # A = diag(1, 2), b = (1, 1): one iteration gives `first`, two the exact solution (1, 1/2)
    x, log = solve(ref, name, sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(1, None))
    np.testing.assert_allclose(x[:, 0], first, rtol=1e-15)
    np.testing.assert_allclose(log.residual_norm, [np.linalg.norm(1 - np.array([1, 2]) * first)], rtol=1e-14)
    x, log = solve(ref, name, sp.diags([1.0, 2.0]), np.ones(2))
    np.testing.assert_allclose(x[:, 0], [1.0, 0.5], rtol=1e-14)
    assert log.has_converged and log.num_iterations == 2


def test_bicg_breakdown_when_the_shadow_residual_vanishes(ref):
    # A = [[2, 1], [0, 1]], b = (1, 1): alpha = 2/4, x = (1/2, 1/2), r2 = b - A^T b / 2 = 0,
    # so the next rho = z . r2 is 0: a breakdown that keeps the first iterate
    x, log = solve(ref, "Bicg", np.array([[2.0, 1.0], [0.0, 1.0]]), np.ones(2))
    assert log.stop_reason == StopReason.BREAKDOWN
    np.testing.assert_array_equal(x[:, 0], [0.5, 0.5])


@pytest.mark.parametrize("name", ["Bicg", "Cgs"])
def test_skew_symmetric_system_is_a_breakdown_not_nan(exec, name):
    # r . A r = 0 for every r: the first divisor (p2 . A p, r_tld . A M p) is 0
    x, log = solve(exec, name, np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([1.0, 2.0]))
    assert log.stop_reason == StopReason.BREAKDOWN and not log.has_converged
    np.testing.assert_array_equal(x, 0.0)


def test_fcg_indefinite_matrix_is_a_breakdown_not_nan(exec):
    x, log = solve(exec, "Fcg", sp.diags([1.0, -1.0]), np.ones(2))
    assert log.stop_reason == StopReason.BREAKDOWN
    np.testing.assert_array_equal(x, 0.0)


def test_idr_scaled_identity_solves_in_one_iteration(exec):
    # A = 2 I: the first step's beta = f_0 / (2 f_0) = 1/2 makes r exactly 0; the remaining
    # steps meet 0 / 0 (nothing left to reduce), which is no breakdown
    b = np.arange(1.0, 6.0)
    x, log = solve(exec, "Idr", sp.identity(5) * 2, b)
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_array_equal(x[:, 0], b / 2)


def test_idr_with_s_equal_n_solves_in_one_iteration(ref):
    # after s steps r is orthogonal to the s-dimensional shadow space, here all of R^2
    x, log = solve(ref, "Idr", sp.diags([1.0, 2.0]), np.ones(2), subspace_dim=2)
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x[:, 0], [1.0, 0.5], rtol=1e-14)


def test_idr_kappa_keeps_omega_away_from_zero(ref):
    # A skew-symmetric: t = A r is orthogonal to r, so the minimal-residual omega = t.r / t.t
    # is 0. With kappa = 0 that is a breakdown; kappa = 0.7 takes omega = kappa |r| / |t|.
    A, b = np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([1.0, 2.0])
    x, log = solve(ref, "Idr", A, b, subspace_dim=1, kappa=0)
    assert log.stop_reason == StopReason.BREAKDOWN and np.isfinite(x).all()
    x, log = solve(ref, "Idr", A, b, subspace_dim=1)
    assert log.has_converged
    np.testing.assert_allclose(x[:, 0], [-2.0, 1.0], rtol=1e-12)


def test_ir_richardson_by_hand(ref):
    # A = diag(1, 2), b = (1, 1), omega = 1/2: x_k = (1 - 2^-k, 1/2)
    x, log = solve(ref, "Ir", sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(3, None),
                    relaxation_factor=0.5)
    np.testing.assert_array_equal(x[:, 0], [0.875, 0.5])
    assert log.num_iterations == 3
    np.testing.assert_allclose(log.residual_norm, [0.125], rtol=1e-15)


def test_ir_with_jacobi_solves_a_diagonal_system_in_one_iteration(exec):
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    x, log = solve(exec, "Ir", sp.diags([2.0, 4.0, 8.0]), np.ones(3), solver=jacobi)
    np.testing.assert_array_equal(x[:, 0], [0.5, 0.25, 0.125])
    assert log.has_converged and log.num_iterations == 1


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_ir_a_diverging_column_leaves_the_inner_solver_to_the_others(ref):
    # inner solver: two Richardson steps from z = 0 (z = r, then z = 2 r - A r), so x changes by
    # (2 I - A) r and the error by (I - A)^2: factor 1/4 on column 0 (converges), 4 on column 1
    # (overflows at about 256 iterations, DIVERGED), 0.98 on column 2 (still running then). The
    # diverged column must not reach the inner solver, which would refuse its infinite right-hand side.
    inner = gk.solver.Ir.build().with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    x, log = solve(ref, "Ir", sp.diags([0.5, 3.0, 0.01]), np.eye(3) + np.eye(3, k=1) * [0, 1, 0],
                    criteria=_criteria(300), solver=inner)
    assert log.result.stop_reasons == [StopReason.CONVERGED, StopReason.DIVERGED, StopReason.ITERATION_LIMIT]
    assert log.iterations[1] < log.iterations[2] == 300
    np.testing.assert_allclose(x[:, 0], [2.0, 0.0, 0.0], rtol=1e-12)


# -- generated problems ------------------------------------------------------------------------

def _inner_cg():
    return gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(4))


def _inner_gmres():
    return gk.solver.Gmres.build().with_krylov_dim(10).with_criteria(gk.stop.Iteration.build().with_max_iters(5))


CASES = [
    ("Bicg", convection_diffusion_2d, {}),
    ("Cgs", convection_diffusion_2d, {}),
    ("Fcg", poisson_2d, {}),
    ("Idr", convection_diffusion_2d, {}),
    ("Idr", convection_diffusion_2d, {"subspace_dim": 4}),
    ("Ir", convection_diffusion_2d, {"solver": _inner_gmres()}),
    ("Ir", poisson_2d, {"solver": _inner_cg(), "relaxation_factor": 0.9}),
]


@pytest.mark.parametrize("name, problem, params", CASES)
def test_generated_problems_agree_with_spsolve(exec, name, problem, params):
    A = problem(9)
    n = A.shape[0]
    b = np.random.default_rng(0).standard_normal((n, 3))
    x, log = solve(exec, name, A, b, **params)
    assert log.has_converged
    exact = spla.spsolve(A.tocsc(), b)
    np.testing.assert_allclose(x, exact, rtol=1e-8, atol=1e-10 * np.abs(exact).max())
    assert (np.linalg.norm(b - A @ x, axis=0) <= 1e-12 * np.linalg.norm(b, axis=0) * (1 + 1e-6)).all()


@pytest.mark.parametrize("name", SOLVERS)
def test_columns_stop_on_their_own(exec, name):
    # b = 0 and an exact initial guess stop before the first iteration and keep their x
    A = convection_diffusion_2d(6) if name != "Fcg" else poisson_2d(6)
    n = A.shape[0]
    exact = np.linspace(1, 2, n)
    b = np.column_stack([np.ones(n), np.zeros(n), A @ exact])
    x0 = np.column_stack([np.zeros(n), np.zeros(n), exact])
    params = {"solver": _inner_gmres()} if name == "Ir" else {}
    x, log = solve(exec, name, A, b, x0=x0, **params)
    assert log.has_converged
    assert log.iterations[1] == 0 and log.iterations[2] == 0 and log.iterations[0] > 0
    np.testing.assert_array_equal(x[:, 1], 0.0)
    np.testing.assert_array_equal(x[:, 2], exact)
    np.testing.assert_allclose(A @ x[:, 0], b[:, 0], rtol=1e-10, atol=1e-12)


def test_fcg_with_a_changing_preconditioner(ref):
    # a few Cg iterations as preconditioner: a different (nonlinear) operator each application
    A = poisson_2d(10)
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    x, log = solve(ref, "Fcg", A, b, preconditioner=_inner_cg())
    assert log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-12 * np.linalg.norm(b) * (1 + 1e-6)


@pytest.mark.parametrize("name", SOLVERS)
def test_float32(exec, name):
    A = convection_diffusion_2d(6) if name != "Fcg" else poisson_2d(6)
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    params = {"solver": _inner_gmres()} if name == "Ir" else {}
    x, log = solve(exec, name, A, b, criteria=_criteria(300, 1e-5), dtype=np.float32, **params)
    assert x.dtype == np.float32 and log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0].astype(np.float64)) <= 2e-5 * np.linalg.norm(b)


# -- real matrices (b = A * ones, ||b - A x|| <= 1e-8 ||b||) -----------------------------------

def _scipy_iterations(method, A, b, jacobi):
    d = A.diagonal()
    M = spla.LinearOperator(A.shape, matvec=lambda v: v / d.reshape(v.shape[:1] + (1,) * (v.ndim - 1)))
    count = [0]
    _, info = getattr(spla, method)(A, b, rtol=1e-8, atol=0.0, maxiter=10000, M=M if jacobi else None,
                                    callback=lambda *_: count.__setitem__(0, count[0] + 1))
    assert info == 0
    return count[0]


# (solver, matrix, Jacobi?, SciPy method, products by A per iteration of each: ginkpy, SciPy, slack)
REAL = [
    ("Bicg", "cage8.mtx", False, "bicg", 2, 2, 0.25),
    ("Bicg", "pde900.mtx", False, "bicg", 2, 2, 0.25),
    ("Cgs", "cage8.mtx", True, "cgs", 2, 2, 0.5),
    ("Cgs", "pde900.mtx", True, "cgs", 2, 2, 0.5),
    ("Fcg", "nos6.mtx", True, "cg", 1, 1, 0.1),
    ("Fcg", "gr_900_900_crg.mtx", True, "cg", 1, 1, 0.1),
    # IDR(2) against BiCGStab, by products with A: 3 per IDR(2) iteration, 2 per BiCGStab one
    ("Idr", "pde900.mtx", True, "bicgstab", 3, 2, 0.5),
    ("Idr", "cage8.mtx", True, "bicgstab", 3, 2, 0.5),
    # not orsirr_1: SciPy's BiCGStab count there is chaotic in rounding (377 to 488 iterations
    # with Jacobi on different machines), no stable yardstick
    ("Idr", "watt_2.mtx", True, "bicgstab", 3, 2, 0.5),
]


@pytest.mark.parametrize("name, matrix, jacobi, method, cost, scipy_cost, slack", REAL)
def test_real_matrices_against_scipy(exec, name, matrix, jacobi, method, cost, scipy_cost, slack):
    A = gk.read(matrix_path(matrix), exec)
    S = A.to_scipy()
    b = S @ np.ones(S.shape[0])
    params = {"preconditioner": gk.preconditioner.Jacobi.build().with_max_block_size(1)} if jacobi else {}
    solver = solver_params(name, _criteria(10000, 1e-8), **params).on(exec).generate(A)
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = gk.matrix.Dense.zeros(exec, (S.shape[0], 1))
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    x = x.to_numpy()[:, 0]
    assert log.has_converged
    assert np.linalg.norm(b - S @ x) <= 1e-8 * np.linalg.norm(b) * (1 + 1e-6)
    products, scipy_products = cost * log.num_iterations, scipy_cost * _scipy_iterations(method, S, b, jacobi)
    assert products <= (1 + slack) * scipy_products + 2 * cost, (products, scipy_products)


# -- Csr.transpose -----------------------------------------------------------------------------

def test_csr_transpose(exec):
    # rectangular, with empty rows and columns and an explicitly stored zero
    S = sp.random(37, 23, density=0.15, format="lil", random_state=np.random.default_rng(3))
    S[4, :] = 0
    S[:, 7] = 0
    S = S.tocsr()
    S.data[0] = 0.0  # stored
    A = gk.matrix.Csr.from_scipy(exec, S)
    T = A.transpose()
    assert T.shape == (23, 37) and T.nnz == A.nnz and T.executor is exec
    t = T.to_scipy()
    assert t.has_sorted_indices
    np.testing.assert_array_equal(t.toarray(), S.toarray().T)
    np.testing.assert_array_equal(T.transpose().to_scipy().indices, A.to_scipy().indices)


# -- each OpenCL kernel against its reference twin ---------------------------------------------

N, K = 301, 3  # more rows than a work-group; column 1 already stopped, column 2 meets a zero divisor


def _assert_close(device, reference, dtype, eps_factor=1):
    """Within ~10 machine epsilons (times ``eps_factor``) of the entry, or of the largest entry
    where terms cancel."""
    np.testing.assert_allclose(device, reference, rtol=eps_factor * tol(dtype),
                               atol=eps_factor * tol(dtype) * np.abs(reference).max(initial=0))


def _run_both(ref, ocl, kernel, args, status, dtype):
    """Run ``kernel`` on both executors; numpy arrays become Dense, the status (unless None)
    goes last. Returns, per executor, the host copies of the Dense arguments and the status."""
    results = []
    for exec in (ref, ocl):
        converted = [gk.matrix.Dense.from_numpy(exec, a, dtype) if isinstance(a, np.ndarray) else a
                     for a in args]
        st = () if status is None else (exec.from_host(status),)
        exec.run(kernel, *converted, *st)
        results.append(([c.to_numpy() for c in converted if isinstance(c, gk.matrix.Dense)],
                        exec.to_host(*st) if st else None))
    return results


def _check_both(ref, ocl, kernel, args, status, dtype, eps_factor=1):
    (ref_out, ref_status), (dev_out, dev_status) = _run_both(ref, ocl, kernel, args, status, dtype)
    if status is not None:
        np.testing.assert_array_equal(dev_status, ref_status)
    for d, r in zip(dev_out, ref_out):
        _assert_close(d, r, dtype, eps_factor)
    return ref_out, ref_status


def _status(k=K):
    status = np.zeros(k, STATUS_DTYPE)
    status[1] = StopReason.CONVERGED
    return status


def _vectors(rng, count, n=N, k=K):
    return [rng.standard_normal((n, k)) for _ in range(count)]


def _scalars(rng, count, k=K):
    return [rng.uniform(0.5, 2.0, (1, k)) * rng.choice([-1, 1], (1, k)) for _ in range(count)]


DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["bicg", "cgs", "fcg"])
def test_opencl_initialize(ref, ocl, rng, dtype, name):
    r, a, p, q = _vectors(rng, 4)
    prev_rho, = _scalars(rng, 1)
    out, _ = _check_both(ref, ocl, f"solver.{name}.initialize", [r, a, p, q, prev_rho], None, dtype)
    # bicg: r2 = r, p = p2 = 0;  cgs: r_tld = r, p = q = 0;  fcg: t = r, p = q = 0;  prev_rho = 1
    np.testing.assert_array_equal(out[1], r.astype(dtype))
    np.testing.assert_array_equal(out[2], 0)
    np.testing.assert_array_equal(out[3], 0)
    np.testing.assert_array_equal(out[4], 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_bicg_steps(ref, ocl, rng, dtype):
    p, z, p2, z2, x, r, r2, q, q2 = _vectors(rng, 9)
    rho, prev_rho, beta = _scalars(rng, 3)
    prev_rho[0, 2] = 0  # step_1 takes rho / prev_rho as 0: no breakdown
    _, status = _check_both(ref, ocl, "solver.bicg.step_1", [p, z, p2, z2, rho, prev_rho], _status(), dtype)
    assert list(status) == [0, StopReason.CONVERGED, 0]
    beta[0, 2] = 0
    _, status = _check_both(ref, ocl, "solver.bicg.step_2", [x, r, r2, p, q, q2, beta, rho, prev_rho],
                            _status(), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN]


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_cgs_steps(ref, ocl, rng, dtype):
    r, u, p, q, v_hat, t, u_hat, x = _vectors(rng, 8)
    rho, prev_rho, gamma, alpha = _scalars(rng, 4)
    breakdown = [0, StopReason.CONVERGED, StopReason.BREAKDOWN]
    zero_rho = rho.copy()
    zero_rho[0, 2] = 0
    _, status = _check_both(ref, ocl, "solver.cgs.step_1", [r, u, p, q, zero_rho, prev_rho], _status(), dtype)
    assert list(status) == breakdown
    gamma[0, 2] = 0
    _, status = _check_both(ref, ocl, "solver.cgs.step_2", [u, v_hat, q, t, alpha, rho, gamma], _status(), dtype)
    assert list(status) == breakdown
    _check_both(ref, ocl, "solver.cgs.step_3", [u_hat, x, alpha, rho, prev_rho], _status(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_fcg_steps(ref, ocl, rng, dtype):
    p, z, x, r, t, q = _vectors(rng, 6)
    rho, rho_t, prev_rho, beta = _scalars(rng, 4)
    prev_rho[0, 2] = 0  # step_1 takes rho_t / prev_rho as 0: no breakdown
    _check_both(ref, ocl, "solver.fcg.step_1", [p, z, rho_t, prev_rho], _status(), dtype)
    beta = np.abs(beta)
    beta[0, 2] = -1  # p . A p < 0: a breakdown, as in Cg
    _, status = _check_both(ref, ocl, "solver.fcg.step_2", [x, r, t, p, q, beta, rho, prev_rho], _status(), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN]


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_ir_kernels(ref, ocl, rng, dtype):
    r, z, x = _vectors(rng, 3)
    (r_out, z_out), _ = _check_both(ref, ocl, "solver.ir.prepare", [r, z], _status(), dtype)
    np.testing.assert_array_equal(r_out[:, 1], 0)
    np.testing.assert_array_equal(z_out, r_out)
    (_, _, x_out), _ = _check_both(ref, ocl, "solver.ir.update", [np.array([[0.7]]), z, x], _status(), dtype)
    np.testing.assert_array_equal(x_out[:, 1], x[:, 1].astype(dtype))


S, KI = 3, 5  # Idr: subspace dimension; columns 0 and 4 run, 1 stopped, 2 breaks down, 3 meets 0 / 0


def _idr_data(rng):
    m = rng.uniform(0.5, 2.0, (S, S * KI)) * rng.choice([-1, 1], (S, S * KI))
    f = rng.standard_normal((S, KI))
    g, u = rng.standard_normal((S * N, KI)), rng.standard_normal((S * N, KI))
    return m, f, g, u


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("j", [0, 1])
def test_opencl_idr_step_1(ref, ocl, rng, dtype, j):
    m, f, g, _ = _idr_data(rng)
    r, v = _vectors(rng, 2, k=KI)
    c = rng.standard_normal((S, KI))
    m[S - 1, (S - 1) * KI + 2] = 0  # a zero diagonal of m under a nonzero numerator
    f[j:, 3] = 0
    m[j, j * KI + 3] = 0  # 0 / 0: c = 0
    (_, _, _, _, c_out, _), status = _check_both(ref, ocl, "solver.idr.step_1", [j, m, f, r, g, c, v],
                                                  _status(KI), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN, 0, 0]
    np.testing.assert_array_equal(c_out[j:, 3], 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_idr_step_2(ref, ocl, rng, dtype):
    _, _, _, u = _idr_data(rng)
    z, u_j = _vectors(rng, 2, k=KI)
    omega, = _scalars(rng, 1, k=KI)
    c = rng.standard_normal((S, KI))
    _check_both(ref, ocl, "solver.idr.step_2", [1, omega, z, c, u, u_j], _status(KI), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("j", [0, 1, 2])
def test_opencl_idr_step_3(ref, ocl, rng, dtype, j):
    m, f, g, u = _idr_data(rng)
    g_j, u_j, r, x = _vectors(rng, 4, k=KI)
    h, alpha = rng.standard_normal((S, KI)), rng.standard_normal((S, KI))
    if j == 0:
        h[0, 2] = 0  # m_{0,0} = h_0 = 0 under f_0 != 0
    else:
        m[0, 2] = 0  # the divisor m_{0,0} of alpha_0 under h_0 != 0
    h[:, 3] = 0
    f[j, 3] = 0  # alpha = 0, m_{i,j} = 0, beta = 0 / 0 = 0
    # alpha comes from a small triangular recurrence that divides by differences
    # (m_{j,j} = h_j - sum_l m_{j,l} alpha_l): its rounding grows with the cancellation there, and
    # a GPU's fused multiply-adds round differently, so the outputs get 10 times the tolerance
    out, status = _check_both(ref, ocl, "solver.idr.step_3", [j, h, m, f, alpha, g_j, u_j, g, u, r, x],
                              _status(KI), dtype, eps_factor=10)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN, 0, 0]
    np.testing.assert_array_equal(out[-2][:, 3], r[:, 3].astype(dtype))  # beta = 0 left r as it was


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_idr_step_4(ref, ocl, rng, dtype):
    k = 6  # 0: plain omega;  1: stopped;  2: t = 0 (breakdown);  3: r = 0;  4: |cos| < kappa;  5: t . r = 0
    z, t, r, x = _vectors(rng, 4, k=k)
    tt, r_norm, omega = rng.uniform(0.5, 2.0, (1, k)), rng.uniform(0.5, 2.0, (1, k)), np.ones((1, k))
    cos = np.array([[0.9, 0.9, 0.9, 0.9, -0.1, 0.0]])
    tr = cos * np.sqrt(tt) * r_norm
    tt[0, 2] = 0
    r_norm[0, 3] = 0
    (_, _, _, omega_out, *_), status = _check_both(
        ref, ocl, "solver.idr.step_4", [0.7, tr, tt, r_norm, omega, z, t, r, x], _status(k), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN, 0, 0, 0]
    w = omega_out[0]
    np.testing.assert_allclose(w[0], tr[0, 0] / tt[0, 0], rtol=tol(dtype))
    np.testing.assert_array_equal(w[1:4], 1)
    np.testing.assert_allclose(w[4:], [-0.7 * r_norm[0, 4] / np.sqrt(tt[0, 4]), 0.7 * r_norm[0, 5] / np.sqrt(tt[0, 5])],
                               rtol=tol(dtype))


# -- full solves on both executors -------------------------------------------------------------

@pytest.mark.parametrize("name, problem, params", CASES)
def test_executors_agree(ref, ocl, name, problem, params):
    A = problem(7)
    b = np.random.default_rng(4).standard_normal((A.shape[0], 2))
    x_ref, log_ref = solve(ref, name, A, b, **params)
    x_dev, log_dev = solve(ocl, name, A, b, **params)
    assert log_ref.has_converged and log_dev.has_converged
    assert abs(log_ref.num_iterations - log_dev.num_iterations) <= 1
    np.testing.assert_allclose(x_dev, x_ref, rtol=1e-9, atol=1e-11 * np.abs(x_ref).max())
