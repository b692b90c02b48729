"""Bicgstab: hand-checked iterates, breakdowns, several right-hand sides, right
preconditioning, each OpenCL kernel against its reference twin, and full solves on both
executors."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import matrix_path, tol
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d


def _criteria(max_iters=200, reduction=1e-12):
    crit = [gk.stop.Iteration.build().with_max_iters(max_iters)]
    if reduction is not None:
        crit.append(gk.stop.ResidualNorm.build().with_reduction_factor(reduction))
    return crit


def _solve(exec, A, b, x0=None, criteria=None, precond=None, dtype=np.float64):
    A = gk.matrix.Csr.from_scipy(exec, A, dtype)
    b = gk.matrix.Dense.from_numpy(exec, b, dtype)
    x = gk.matrix.Dense.from_numpy(exec, np.zeros(b.shape) if x0 is None else x0, dtype)
    params = gk.solver.Bicgstab.build().with_criteria(*(criteria or _criteria()))
    if precond is not None:
        params.with_preconditioner(precond)
    solver = params.on(exec).generate(A)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(b, x)
    return x.to_numpy(), logger


# -- hand-checked values -----------------------------------------------------------------------

def test_one_iteration_by_hand(ref):
    # A = diag(1, 2), b = (1, 1): rho = 2, v = (1, 2), alpha = 2/3, s = (1/3, -1/3),
    # t = (1/3, -2/3), omega = (1/3) / (5/9) = 3/5: x = 2/3 (1, 1) + 3/5 s = (13/15, 7/15)
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(1, None))
    np.testing.assert_allclose(x[:, 0], [13 / 15, 7 / 15], rtol=1e-15)
    assert log.num_iterations == 1 and log.stop_reason == "iteration limit"
    # r = s - omega t = (2/15, 1/15) = b - A x
    np.testing.assert_allclose(log.residual_norm, [np.sqrt(5) / 15], rtol=1e-15)


def test_multiple_of_identity_converges_in_one_iteration(exec):
    # A = 2 I: alpha = 1/2 exactly, s = 0, so t . t = 0 gives omega = 0 (not a breakdown) and x = b / 2
    b = np.random.default_rng(1).standard_normal((7, 2))
    x, log = _solve(exec, 2 * sp.identity(7), b)
    assert log.has_converged and list(log.iterations) == [1, 1]
    np.testing.assert_array_equal(x, b / 2)


def test_zero_alpha_divisor_is_a_breakdown(exec):
    # A = [[0, 1], [1, 0]], b = e_1: v = A r = e_2, so r_hat . v = 0 in the first step
    x, log = _solve(exec, sp.csr_matrix([[0.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
    assert log.stop_reason == "breakdown" and not log.has_converged
    assert log.num_iterations == 1
    np.testing.assert_array_equal(x, 0.0)


def test_zero_omega_then_zero_rho_is_a_breakdown(exec):
    # A = [[1, 1], [1, 0]], b = e_1: alpha = 1, s = (0, -1), t = (-1, 0): omega = t.s / t.t = 0,
    # x = (1, 0), r = s; the next rho = r_hat . r = e_1 . s = 0 breaks down and keeps x
    x, log = _solve(exec, sp.csr_matrix([[1.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
    assert log.stop_reason == "breakdown" and log.num_iterations == 2
    np.testing.assert_array_equal(x[:, 0], [1.0, 0.0])
    np.testing.assert_allclose(log.residual_norm, [1.0])


def test_watt_2_fails_without_nan(ref):
    # INDEX.md: plain BiCGStab breaks down on watt_2 (SciPy at iteration 21, on |rho| < eps^2). Here rho
    # gets tiny but (depending on rounding) not exactly 0, so the solve stagnates near 3e-8 or stops
    # with an exact breakdown: either way it must not claim convergence, and x must stay finite
    # with the residual it reports
    S = scipy.io.mmread(matrix_path("watt_2.mtx")).tocsr()
    b = S @ np.ones(S.shape[0])
    x, log = _solve(ref, S, b, criteria=_criteria(300, 1e-10))
    assert not log.has_converged and log.stop_reason in ("breakdown", "iteration limit")
    assert np.isfinite(x).all()
    np.testing.assert_allclose(log.residual_norm, [np.linalg.norm(b - S @ x[:, 0])], rtol=1e-6)


# -- convergence ---------------------------------------------------------------------------

@pytest.mark.parametrize("problem", [convection_diffusion_2d, poisson_2d])
def test_generated_problems_agree_with_spsolve(exec, problem):
    A = problem(15)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    x, log = _solve(exec, A, b)
    assert log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-12 * np.linalg.norm(b)
    np.testing.assert_allclose(x[:, 0], spla.spsolve(A.tocsc(), b), rtol=1e-9, atol=1e-10)


def test_float32(exec):
    A = convection_diffusion_2d(10)
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    x, log = _solve(exec, A, b, criteria=_criteria(100, 1e-5), dtype=np.float32)
    assert x.dtype == np.float32 and log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0].astype(np.float64)) <= 2e-5 * np.linalg.norm(b)


def test_columns_stop_on_their_own(exec):
    A = convection_diffusion_2d(10)
    n = A.shape[0]
    rng = np.random.default_rng(3)
    exact = rng.standard_normal(n)
    b = np.column_stack([rng.standard_normal(n), np.zeros(n), A @ exact, A @ np.ones(n)])
    x0 = np.column_stack([np.zeros(n), np.zeros(n), exact, np.zeros(n)])
    x, log = _solve(exec, A, b, x0=x0)
    assert log.has_converged
    # b = 0 and an exact initial guess stop before the first iteration, untouched
    assert log.iterations[1] == 0 and log.iterations[2] == 0
    assert log.iterations[0] > 5 and log.iterations[3] > 5
    np.testing.assert_array_equal(x[:, 1], 0.0)
    np.testing.assert_array_equal(x[:, 2], exact)
    for j in (0, 3):
        assert np.linalg.norm(b[:, j] - A @ x[:, j]) <= 1e-12 * np.linalg.norm(b[:, j])


def test_columns_are_independent(ref):
    # each column of a multi-column solve iterates exactly as it would alone
    A = convection_diffusion_2d(10)
    rng = np.random.default_rng(4)
    b = np.column_stack([rng.standard_normal(A.shape[0]), A @ np.ones(A.shape[0])])
    x, log = _solve(ref, A, b)
    for j in range(2):
        xj, logj = _solve(ref, A, b[:, j])
        assert logj.num_iterations == log.iterations[j]
        np.testing.assert_allclose(x[:, j], xj[:, 0], rtol=1e-13)
    assert log.iterations[0] != log.iterations[1]


def test_right_preconditioning_with_the_exact_inverse_takes_one_iteration(exec):
    # y = M p = A^-1 r, v = A y = r: alpha = 1 and s = r - v = 0 up to rounding
    A = convection_diffusion_2d(4)
    inverse = gk.matrix.Dense.from_numpy(exec, np.linalg.inv(A.toarray()))
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    x, log = _solve(exec, A, b, precond=inverse, criteria=_criteria(10, 1e-12))
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x[:, 0], np.linalg.solve(A.toarray(), b), rtol=1e-12)


def test_preconditioned_residual_is_the_true_residual(ref):
    # badly row-scaled system, scalar Jacobi as a LinOp: fewer iterations, and the criterion holds
    # for b - A x, not for a preconditioned residual
    base = convection_diffusion_2d(12)
    scale = sp.diags(np.logspace(0, 4, base.shape[0]))
    A = (scale @ base).tocsr()
    b = A @ np.random.default_rng(6).standard_normal(A.shape[0])
    jacobi = gk.matrix.Csr.from_scipy(ref, sp.diags(1 / A.diagonal()))
    x, log = _solve(ref, A, b, precond=jacobi, criteria=_criteria(500, 1e-10))
    _, plain = _solve(ref, A, b, criteria=_criteria(500, 1e-10))
    assert log.has_converged and log.num_iterations < plain.num_iterations
    true_norm = np.linalg.norm(b - A @ x[:, 0])
    assert true_norm <= 1e-10 * np.linalg.norm(b)
    np.testing.assert_allclose(log.residual_norm, [true_norm], rtol=1e-6)


@pytest.mark.parametrize("name", ["pde900.mtx", "cage8.mtx"])
def test_iterations_comparable_to_scipy(ref, name):
    S = scipy.io.mmread(matrix_path(name)).tocsr()
    b = S @ np.ones(S.shape[0])
    count = [0]
    _, info = spla.bicgstab(S, b, rtol=1e-8, atol=0.0, maxiter=2000,
                            callback=lambda _: count.__setitem__(0, count[0] + 1))
    assert info == 0
    x, log = _solve(ref, S, b, criteria=_criteria(2000, 1e-8))
    assert log.has_converged
    assert np.linalg.norm(b - S @ x[:, 0]) <= 1e-8 * np.linalg.norm(b)
    assert log.num_iterations <= 1.5 * count[0] + 2, (log.num_iterations, count[0])


# -- OpenCL kernels against their reference twins -----------------------------------------------

N, K = 301, 5  # more rows than a work-group, an odd number of columns


def _both(ref, ocl, array):
    return gk.matrix.Dense.from_numpy(ref, array), gk.matrix.Dense.from_numpy(ocl, array)


def _assert_close(device, reference, dtype):
    """Relative to ~10 machine epsilons of the entry, or of the largest entry where terms cancel."""
    device, reference = np.asarray(device), np.asarray(reference)
    np.testing.assert_allclose(device, reference, rtol=tol(dtype),
                               atol=tol(dtype) * np.abs(reference).max(initial=0))


def _run_both(ref, ocl, kernel, arrays, status, dtype):
    """Run ``kernel`` on both executors with the same inputs; the outputs as host arrays."""
    outs = []
    for exec in (ref, ocl):
        dense = [gk.matrix.Dense.from_numpy(exec, a.astype(dtype)) for a in arrays]
        st = exec.from_host(status.copy())
        exec.run(kernel, *dense, st)
        outs.append(([d.to_numpy() for d in dense], exec.to_host(st)))
    return outs


def _stopped_and_zero(arrays, zero_scalar_index):
    """Column 1 already stopped; column 3 gets a zero divisor in arrays[zero_scalar_index]."""
    status = np.zeros(K, STATUS_DTYPE)
    status[1] = StopReason.CONVERGED
    arrays[zero_scalar_index][0, 3] = 0
    return status


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_initialize(ref, ocl, rng, dtype):
    vecs = [rng.standard_normal((N, K)) for _ in range(5)]
    scalars = [rng.standard_normal((1, K)) for _ in range(3)]
    outs = []
    for exec in (ref, ocl):
        dense = [gk.matrix.Dense.from_numpy(exec, a.astype(dtype)) for a in vecs + scalars]
        exec.run("solver.bicgstab.initialize", *dense)
        outs.append([d.to_numpy() for d in dense])
    for d, r in zip(*outs):
        np.testing.assert_array_equal(d, r)
    np.testing.assert_array_equal(outs[1][1], vecs[0].astype(dtype))  # r_hat = r
    assert (outs[1][5] == 1).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("zero", ["rho", "omega"])
def test_opencl_step_1(ref, ocl, rng, dtype, zero):
    # r, p, v, rho, prev_rho, alpha, omega
    arrays = [rng.standard_normal((N, K)) for _ in range(3)] + [rng.uniform(0.5, 2, (1, K)) for _ in range(4)]
    status = _stopped_and_zero(arrays, 3 if zero == "rho" else 6)
    (want, want_status), (dev, dev_status) = _run_both(ref, ocl, "solver.bicgstab.step_1", arrays, status, dtype)
    np.testing.assert_array_equal(dev_status, want_status)
    assert list(dev_status) == [0, StopReason.CONVERGED, 0, StopReason.BREAKDOWN, 0]
    for d, w in zip(dev, want):
        _assert_close(d, w, dtype)
    p = arrays[1].astype(dtype)
    np.testing.assert_array_equal(dev[1][:, [1, 3]], p[:, [1, 3]])  # stopped and broken down: untouched


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_step_2(ref, ocl, rng, dtype):
    # r, s, v, rho, prev_rho, alpha, rv
    arrays = [rng.standard_normal((N, K)) for _ in range(3)] + [rng.uniform(0.5, 2, (1, K)) for _ in range(4)]
    status = _stopped_and_zero(arrays, 6)
    (want, want_status), (dev, dev_status) = _run_both(ref, ocl, "solver.bicgstab.step_2", arrays, status, dtype)
    np.testing.assert_array_equal(dev_status, want_status)
    assert list(dev_status) == [0, StopReason.CONVERGED, 0, StopReason.BREAKDOWN, 0]
    for d, w in zip(dev, want):
        _assert_close(d, w, dtype)
    for i in (1, 4, 5):  # s, prev_rho, alpha untouched in the stopped and broken-down columns
        np.testing.assert_array_equal(dev[i][:, [1, 3]], arrays[i].astype(dtype)[:, [1, 3]])
    np.testing.assert_array_equal(dev[4][0, [0, 2, 4]], dev[3][0, [0, 2, 4]])  # prev_rho = rho


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_step_3(ref, ocl, rng, dtype):
    # x, r, s, t, y, z, alpha, omega, ts, tt;  tt = 0 in column 3 is no breakdown: omega = 0
    arrays = [rng.standard_normal((N, K)) for _ in range(6)] + [rng.uniform(0.5, 2, (1, K)) for _ in range(4)]
    status = _stopped_and_zero(arrays, 9)
    (want, want_status), (dev, dev_status) = _run_both(ref, ocl, "solver.bicgstab.step_3", arrays, status, dtype)
    assert list(dev_status) == list(want_status) == [0, StopReason.CONVERGED, 0, 0, 0]
    for d, w in zip(dev, want):
        _assert_close(d, w, dtype)
    assert dev[7][0, 3] == 0  # omega
    np.testing.assert_array_equal(dev[1][:, 3], arrays[2].astype(dtype)[:, 3])  # r = s
    for i in (0, 1, 7):  # x, r, omega untouched in the stopped column
        np.testing.assert_array_equal(dev[i][:, 1], arrays[i].astype(dtype)[:, 1])


# -- full solves on both executors ------------------------------------------------------------

def test_executors_agree(ref, ocl):
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(7).standard_normal((A.shape[0], 2))
    (x_ref, log_ref), (x_ocl, log_ocl) = (_solve(e, A, b, criteria=_criteria(15, None)) for e in (ref, ocl))
    np.testing.assert_array_equal(log_ocl.iterations, log_ref.iterations)
    np.testing.assert_allclose(x_ocl, x_ref, rtol=1e-10, atol=1e-10 * np.abs(x_ref).max())
