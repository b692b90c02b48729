"""Bicgstab: hand-checked iterates, breakdowns, restarts when the shadow residual becomes
orthogonal to r, several right-hand sides, right preconditioning, each OpenCL kernel against its reference twin, and full solves on both
executors."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import criteria as _criteria, matrix_path, solve, tol
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d


def _solve(exec, A, b, **kwargs):
    return solve(exec, "Bicgstab", A, b, **kwargs)


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


def test_zero_omega_restarts_into_a_breakdown(exec):
    # A = [[1, 1], [1, 0]], b = e_1: alpha = 1, s = (0, -1), t = (-1, 0): omega = t.s / t.t = 0,
    # x = (1, 0), r = s. The next rho = r_hat . r = e_1 . s = 0 restarts with r_hat = p = r, whose
    # r_hat . v = s . A s = t . s = 0 is a breakdown (after omega == 0 it always is): x is kept
    x, log = _solve(exec, sp.csr_matrix([[1.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
    assert log.stop_reason == "breakdown" and log.num_iterations == 2
    np.testing.assert_array_equal(x[:, 0], [1.0, 0.0])
    np.testing.assert_allclose(log.residual_norm, [1.0])


# A x = e_1 where r_hat = e_1 is exactly orthogonal to the residual after the first iteration, which
# is not 0: v = A e_1 = (2, 1, -1), alpha = 1/2, s = (0, -1, 1) / 2, t = A s = (0, -3, 4) / 2,
# omega = 7/25, r = s - omega t = (0, -2, -1.5) / 25 (its first entry exactly 0 - omega 0), so
# rho = r_hat . r = 0: a breakdown without the restart
RESTART_A = sp.csr_matrix([[2.0, 1.0, 1.0], [1.0, 3.0, 0.0], [-1.0, 0.0, 4.0]])
RESTART_B = np.array([1.0, 0.0, 0.0])


def test_orthogonal_shadow_residual_restarts(exec):
    A = RESTART_A.toarray()
    x1, _ = _solve(exec, RESTART_A, RESTART_B, criteria=_criteria(1, None))
    r1 = RESTART_B - A @ x1[:, 0]
    assert r1 @ RESTART_B == 0 and np.linalg.norm(r1) > 0.09
    # the second iteration is the first step of the method again, from x1 with r_hat = r1
    v = A @ r1
    alpha = (r1 @ r1) / (r1 @ v)
    s = r1 - alpha * v
    t = A @ s
    omega = (t @ s) / (t @ t)
    x2, log = _solve(exec, RESTART_A, RESTART_B, criteria=_criteria(2, None))
    assert log.stop_reason == "iteration limit"
    np.testing.assert_allclose(x2[:, 0], x1[:, 0] + alpha * r1 + omega * s, rtol=1e-14)
    # and the solve converges
    x, log = _solve(exec, RESTART_A, RESTART_B)
    assert log.has_converged and 2 < log.num_iterations <= 5
    np.testing.assert_allclose(x[:, 0], np.linalg.solve(A, RESTART_B), rtol=1e-12)


def test_restart_is_per_column(exec):
    # a column that restarts next to one that does not: each iterates as it would alone
    b = np.column_stack([RESTART_B, [1.0, 2.0, 3.0]])
    x, log = _solve(exec, RESTART_A, b)
    assert log.has_converged
    for j in range(2):
        xj, logj = _solve(exec, RESTART_A, b[:, j])
        assert logj.num_iterations == log.iterations[j]
        np.testing.assert_allclose(x[:, j], xj[:, 0], rtol=1e-14)


def test_watt_2_restarts_and_converges(exec):
    # INDEX.md: plain BiCGStab breaks down on watt_2 (SciPy at iteration 21, on |rho| < eps^2): r_hat
    # becomes orthogonal to r within rounding. Restarting, the solve converges
    S = scipy.io.mmread(matrix_path("watt_2.mtx")).tocsr()
    b = S @ np.ones(S.shape[0])
    x, log = _solve(exec, S, b, criteria=_criteria(1000, 1e-8))
    assert log.has_converged and log.num_iterations < 200
    assert np.linalg.norm(b - S @ x[:, 0]) <= 1e-8 * np.linalg.norm(b)


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
    x, log = _solve(exec, A, b, preconditioner=inverse, criteria=_criteria(10, 1e-12))
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
    x, log = _solve(ref, A, b, preconditioner=jacobi, criteria=_criteria(500, 1e-10))
    _, plain = _solve(ref, A, b, criteria=_criteria(500, 1e-10))
    assert log.has_converged and log.num_iterations < plain.num_iterations
    true_norm = np.linalg.norm(b - A @ x[:, 0])
    assert true_norm <= 1e-10 * np.linalg.norm(b)
    # the solver's b - A x sums the rows of this unsorted matrix in another order than SciPy
    from conftest import residual_rounding
    np.testing.assert_allclose(log.residual_norm, [true_norm], rtol=0, atol=residual_rounding(A, x, b)[0])


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


def _run_both(ref, ocl, kernel, args, dtype):
    """Run ``kernel`` on both executors with the same inputs: float arrays become Dense of
    ``dtype``, uint8 arrays (stop status, flags) device arrays, numbers stay; the outputs on the host."""
    outs = []
    for exec in (ref, ocl):
        dev = [a if not isinstance(a, np.ndarray) else exec.from_host(a.copy()) if a.dtype == np.uint8
               else gk.matrix.Dense.from_numpy(exec, a.astype(dtype)) for a in args]
        exec.run(kernel, *dev)
        outs.append([d.to_numpy() if isinstance(d, gk.matrix.Dense) else d if isinstance(d, float)
                     else exec.to_host(d) for d in dev])
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
    ref_out, dev_out = _run_both(ref, ocl, "solver.bicgstab.initialize", vecs + scalars, dtype)
    for d, r in zip(dev_out, ref_out):
        np.testing.assert_array_equal(d, r)
    np.testing.assert_array_equal(dev_out[1], vecs[0].astype(dtype))  # r_hat = r
    assert (dev_out[5] == 1).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, k", [(N, K), (1501, 3), (0, 2)])
def test_opencl_compute_dots(ref, ocl, rng, dtype, n, k):
    # one work-group per column on a CPU device for (N, K), several for (1501, 3) (and on a GPU)
    a, b = rng.standard_normal((n, k)), rng.standard_normal((n, k))
    ref_out, dev_out = _run_both(ref, ocl, "solver.bicgstab.compute_dots", [a, b, np.ones((1, k)), np.ones((1, k))],
                                 dtype)
    for d, w in zip(dev_out[2:], ref_out[2:]):
        _assert_close(d, w, dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    _assert_close(dev_out[3][0], (b * b).sum(axis=0), dtype)  # bb = b . b
    _assert_close(dev_out[2][0], (a * b).sum(axis=0), dtype)  # ab = a . b


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_step_1(ref, ocl, rng, dtype):
    # r, r_hat, p, v, rho, rr, rhat_sq, prev_rho, alpha, omega, restart_tol, restarted, status.
    # Column 1 is stopped; column 2 restarts on a tiny rho, column 4 on rho == 0 although omega == 0
    # there; omega == 0 without a restart is column 3's breakdown
    vecs = [rng.standard_normal((N, K)) for _ in range(4)]
    scalars = [rng.uniform(0.5, 2, (1, K)) for _ in range(6)]
    rho, rr, rhat_sq, omega = scalars[0], scalars[1], scalars[2], scalars[5]
    restart_tol = 100 * float(np.finfo(dtype).eps)  # as the solver
    rho[0, 2] = 0.5 * restart_tol * np.sqrt(rhat_sq[0, 2] * rr[0, 2])
    rho[0, 4] = 0
    omega[0, [3, 4]] = 0
    status = np.zeros(K, STATUS_DTYPE)
    status[1] = StopReason.CONVERGED
    restarted = np.full(K, 7, np.uint8)
    args = vecs + scalars + [restart_tol, restarted, status]
    want, dev = _run_both(ref, ocl, "solver.bicgstab.step_1", args, dtype)
    assert list(dev[-1]) == list(want[-1]) == [0, StopReason.CONVERGED, 0, StopReason.BREAKDOWN, 0]
    assert list(dev[-2]) == list(want[-2]) == [0, 7, 1, 0, 1]  # restarted; the stopped column untouched
    for d, w in zip(dev[:10], want[:10]):
        _assert_close(d, w, dtype)
    r, r_hat, p = (v.astype(dtype) for v in vecs[:3])
    np.testing.assert_array_equal(dev[1][:, [2, 4]], r[:, [2, 4]])  # r_hat = r where restarted
    np.testing.assert_array_equal(dev[2][:, [2, 4]], r[:, [2, 4]])  # p = r where restarted
    np.testing.assert_array_equal(dev[1][:, [0, 1, 3]], r_hat[:, [0, 1, 3]])
    np.testing.assert_array_equal(dev[2][:, [1, 3]], p[:, [1, 3]])  # stopped and broken down: untouched


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_step_2(ref, ocl, rng, dtype):
    # r, s, v, rho, rr, rhat_sq, prev_rho, alpha, rv, restarted, status: columns 2, 3 and 4 restarted
    # in step_1, column 3 with rv == 0 breaks down
    arrays = [rng.standard_normal((N, K)) for _ in range(3)] + [rng.uniform(0.5, 2, (1, K)) for _ in range(6)]
    status = _stopped_and_zero(arrays, 8)
    restarted = np.array([0, 1, 1, 1, 1], np.uint8)
    want, dev = _run_both(ref, ocl, "solver.bicgstab.step_2", arrays + [restarted, status], dtype)
    assert list(dev[-1]) == list(want[-1]) == [0, StopReason.CONVERGED, 0, StopReason.BREAKDOWN, 0]
    for d, w in zip(dev[:9], want[:9]):
        _assert_close(d, w, dtype)
    rho, rr, rhat_sq = (a.astype(dtype)[0] for a in arrays[3:6])
    for i in (1, 5, 6, 7):  # s, rhat_sq, prev_rho, alpha untouched in the stopped and broken-down columns
        np.testing.assert_array_equal(dev[i][:, [1, 3]], arrays[i].astype(dtype)[:, [1, 3]])
    np.testing.assert_array_equal(dev[6][0, [0, 2, 4]], [rho[0], rr[2], rr[4]])  # prev_rho = rho, rr where restarted
    np.testing.assert_array_equal(dev[5][0, [0, 2, 4]], [rhat_sq[0], rr[2], rr[4]])  # rhat_sq = rr where restarted
    _assert_close(dev[7][0, [0, 2]], [rho[0] / arrays[8][0, 0], rr[2] / arrays[8][0, 2]], dtype)  # alpha


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_step_3(ref, ocl, rng, dtype):
    # x, r, s, t, y, z, alpha, omega, ts, tt;  tt = 0 in column 3 is no breakdown: omega = 0
    arrays = [rng.standard_normal((N, K)) for _ in range(6)] + [rng.uniform(0.5, 2, (1, K)) for _ in range(4)]
    status = _stopped_and_zero(arrays, 9)
    want, dev = _run_both(ref, ocl, "solver.bicgstab.step_3", arrays + [status], dtype)
    assert list(dev[-1]) == list(want[-1]) == [0, StopReason.CONVERGED, 0, 0, 0]
    for d, w in zip(dev[:-1], want[:-1]):
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
