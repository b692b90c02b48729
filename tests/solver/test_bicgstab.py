"""Bicgstab: hand-checked iterates, breakdowns, restarts when the shadow residual becomes
orthogonal to r, several right-hand sides, right preconditioning, each OpenCL kernel against its reference twin, and full solves on both
executors."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from conftest import (BREAKDOWN, CONVERGED, DIVERGED, LIMIT, PARTIAL_GROUPS as G, RUNNING, Same, Stop, assert_sums,
                      assert_twins, criteria as _criteria, matrix_path, random_partials, solve, tol, twin)
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d
import krylov_cases


def _solve(exec, A, b, **kwargs):
    return solve(exec, "Bicgstab", A, b, **kwargs)


# -- hand-checked values -----------------------------------------------------------------------

def test_one_iteration_by_hand(ref):
    # A = diag(1, 2), b = (1, 1): rho = 2, v = (1, 2), alpha = 2/3, s = (1/3, -1/3),
    # t = (1/3, -2/3), omega = (1/3) / (5/9) = 3/5: x = 2/3 (1, 1) + 3/5 s = (13/15, 7/15)
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(1, None))
    np.testing.assert_allclose(x[:, 0], [13 / 15, 7 / 15], rtol=1e-15)
    assert log.num_iterations == 1 and log.stop_reason == StopReason.ITERATION_LIMIT
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
    assert log.stop_reason == StopReason.BREAKDOWN and not log.has_converged
    assert log.num_iterations == 1
    np.testing.assert_array_equal(x, 0.0)


def test_zero_omega_restarts_into_a_breakdown(exec):
    # A = [[1, 1], [1, 0]], b = e_1: alpha = 1, s = (0, -1), t = (-1, 0): omega = t.s / t.t = 0,
    # x = (1, 0), r = s. The next rho = r_hat . r = e_1 . s = 0 restarts with r_hat = p = r, whose
    # r_hat . v = s . A s = t . s = 0 is a breakdown (after omega == 0 it always is): x is kept
    x, log = _solve(exec, sp.csr_matrix([[1.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
    assert log.stop_reason == StopReason.BREAKDOWN and log.num_iterations == 2
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
    assert log.stop_reason == StopReason.ITERATION_LIMIT
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
    krylov_cases.agree_with_spsolve(exec, _solve, problem)


def test_float32(exec):
    krylov_cases.float32_converges(exec, _solve, convection_diffusion_2d(10), max_iters=100)


def test_columns_stop_on_their_own(exec):
    krylov_cases.columns_stop_on_their_own(exec, _solve, first_iterations=5)


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
    krylov_cases.exact_inverse_takes_one_iteration(exec, _solve)


def test_preconditioned_residual_is_the_true_residual(ref):
    krylov_cases.preconditioned_residual_is_the_true_residual(ref, _solve)


@pytest.mark.parametrize("name", ["pde900.mtx", "cage8.mtx"])
def test_iterations_comparable_to_scipy(ref, name):
    krylov_cases.iterations_comparable_to_scipy(
        ref, _solve, name, lambda S, b, callback: spla.bicgstab(S, b, rtol=1e-8, atol=0.0, maxiter=2000,
                                                               callback=callback)[1], max_iters=2000)


# -- OpenCL kernels against their reference twin -----------------------------------------------

N = 1237  # more rows than a work-group, odd
# (n, k): one work-group and several per column on every device (in both launch layouts), and
# more columns than a work-group (consumers add the partial sums of the columns in turns)
SHAPES = [(N, 3), (5001, 1), (5001, 5), (7, 301)]
MAX_ITERS = 300


dtype = krylov_cases.dtype  # the kernel tests' fixture: float64, float32
_random = krylov_cases.random_values



def test_opencl_initialize(ref, ocl, rng, dtype):
    vecs = [_random(rng, (N, 3), dtype) for _ in range(4)]
    scalars = [_random(rng, (1, 3), dtype) for _ in range(3)]
    out = twin(ref, ocl, "solver.bicgstab.initialize", *vecs, *scalars, dtype=dtype)
    assert_twins(out, dtype)
    np.testing.assert_array_equal(out[1][1], vecs[0])  # r_hat = r
    assert not out[1][2].any() and not out[1][3].any() and all((out[1][i] == 1).all() for i in (4, 5, 6))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_opencl_prepare(ref, dev, rng, dtype, shape):
    n, k = shape
    r, r_hat = _random(rng, shape, dtype), _random(rng, shape, dtype)
    out = twin(ref, dev, "solver.bicgstab.prepare", r, r_hat, np.zeros((1, k)), np.zeros((1, k)), dtype=dtype)
    r64 = r.astype(np.float64)
    assert_sums(out[1][2], out[0][2], np.abs(r_hat * r64).sum(axis=0), n, dtype, "r_hat . r")
    assert_sums(out[1][3], out[0][3], (r64 * r64).sum(axis=0), n, dtype, "r . r")
    if n == 5001:
        assert out[1][3].shape[0] > 1  # several work-groups


def _step_1_args(rng, n, k, dtype, rho_sums, rr_sums, omega, stop, rhat_sq=None):
    # r, r_hat, p, v, rho_new, rr, rho, prev_rho, alpha, omega, rhat_sq, restart_tol, restarted, stop
    vecs = [_random(rng, (n, k), dtype) for _ in range(4)]
    scalars = [rng.uniform(0.5, 2, (1, k)).astype(dtype) for _ in range(3)]
    rhat_sq = rng.uniform(0.5, 2, (1, k)) if rhat_sq is None else rhat_sq
    restart_tol = 100 * float(np.finfo(dtype).eps)  # as the solver
    restarted = np.full(k, 7, np.uint8)  # to see which columns the kernel sets
    return [*vecs, random_partials(rng, rho_sums, dtype), random_partials(rng, rr_sums, dtype), *scalars,
            np.asarray([omega], dtype), rhat_sq.astype(dtype), restart_tol, restarted, stop]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_opencl_step_1(ref, dev, rng, dtype, shape):
    # every column runs on without a restart: p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
    n, k = shape
    norms = rng.uniform(1, 2, k)
    stop = Stop([RUNNING] * k, 0.5 * norms, MAX_ITERS, rng.integers(0, MAX_ITERS, k))
    args = _step_1_args(rng, n, k, dtype, rng.uniform(0.5, 2, k), norms ** 2, rng.uniform(0.5, 2, k), stop)
    out = twin(ref, dev, "solver.bicgstab.step_1", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 5))
    assert not out[1][12].any() and (out[1][13].checks == stop.checks + 1).all()


def test_opencl_step_1_columns(ref, dev, rng, dtype):
    # columns: runs; restarts on r_hat . r == 0; restarts on a tiny r_hat . r; omega == 0 (breakdown);
    # omega == 0 but restarts (the restart wins); converges; diverges (NaN norm); reaches its
    # limit; was stopped before
    k = 9
    bound = 100 * float(np.finfo(dtype).eps) * 2.0  # restart_tol ||r_hat|| ||r|| for ||r_hat|| = 1, ||r|| = 2
    rho = [1.5, 0.0, 0.01 * bound, -0.8, 0.0, 1.2, 1.1, 0.9, 1.3]
    norms = np.array([2.0, 2.0, 2.0, 2.0, 2.0, 0.5, np.nan, 2.0, 2.0])
    omega = [0.7, 0.8, 0.9, 0.0, 0.0, 1.1, 1.2, 1.3, 0.6]
    status = [RUNNING] * 8 + [BREAKDOWN]
    stop = Stop(status, np.ones(k), MAX_ITERS, [4] * 7 + [MAX_ITERS, 4])
    args = _step_1_args(rng, N, k, dtype, rho, norms ** 2, omega, stop, rhat_sq=np.ones((1, k)))
    out = twin(ref, dev, "solver.bicgstab.step_1", *args, dtype=dtype)
    # a column at its limit: only the check's writer stops it, the others may still update its r_hat
    # and p (which it no longer uses: common.cl, stop_check)
    for i in (1, 2):
        out[0][i][:, 7] = out[1][i][:, 7] = 0
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 5))
    r, r_hat, p = args[:3]
    (_, r_hat_dev, p_dev, _, _, _, rho_dev, *_), restarted, state = out[1][:7], out[1][12], out[1][13]
    assert list(state.status) == [RUNNING] * 3 + [BREAKDOWN, RUNNING, CONVERGED, DIVERGED, LIMIT, BREAKDOWN]
    assert list(restarted) == [0, 1, 1, 0, 1, 7, 7, 7, 7]
    for c in (1, 2, 4):  # restarted: r_hat = p = r, rho = r . r
        np.testing.assert_array_equal(r_hat_dev[:, c], r[:, c])
        np.testing.assert_array_equal(p_dev[:, c], r[:, c])
    np.testing.assert_allclose(rho_dev[0, [1, 2, 4]], 4.0, rtol=np.sqrt(G) * tol(dtype))
    for c in (3, 5, 6, 8):  # broken down or stopped: untouched
        np.testing.assert_array_equal(p_dev[:, c], p[:, c])
        np.testing.assert_array_equal(r_hat_dev[:, c], r_hat[:, c])
        assert rho_dev[0, c] == args[6][0, c]


def _step_2_args(rng, n, k, dtype, rv_sums, restarted, status):
    # r, s, v, rv, rho, prev_rho, alpha, rhat_sq, restarted, status
    r, s, v = (_random(rng, (n, k), dtype) for _ in range(3))
    scalars = [rng.uniform(0.5, 2, (1, k)).astype(dtype) for _ in range(4)]
    return [r, s, v, random_partials(rng, rv_sums, dtype), *scalars, np.asarray(restarted, np.uint8),
            np.asarray(status, STATUS_DTYPE)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_opencl_step_2(ref, dev, rng, dtype, shape):
    # alpha = rho / (r_hat . v);  s = r - alpha v;  prev_rho = rho;  ||r_hat||^2 = rho where restarted
    n, k = shape
    args = _step_2_args(rng, n, k, dtype, rng.uniform(-2, 2, k), rng.integers(0, 2, k), np.zeros(k))
    out = twin(ref, dev, "solver.bicgstab.step_2", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(3,))
    np.testing.assert_array_equal(out[1][5], args[4])  # prev_rho = rho


def test_opencl_step_2_columns(ref, dev, rng, dtype):
    # columns: runs, runs restarted (||r_hat||^2 = rho), r_hat . v == 0 (breakdown, untouched),
    # was stopped (untouched), runs
    k = 5
    args = _step_2_args(rng, N, k, dtype, [1.5, -0.7, 0.0, 1.0, 0.9], [0, 1, 1, 1, 0],
                        [RUNNING, RUNNING, RUNNING, CONVERGED, RUNNING])
    out = twin(ref, dev, "solver.bicgstab.step_2", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(3,))
    dev = out[1]
    assert list(dev[9]) == [RUNNING, RUNNING, BREAKDOWN, CONVERGED, RUNNING]
    for i in (1, 5, 6, 7):  # s, prev_rho, alpha, rhat_sq untouched where stopped
        np.testing.assert_array_equal(dev[i][:, [2, 3]], args[i][:, [2, 3]])
    np.testing.assert_array_equal(dev[7][0, [0, 1, 4]], [args[7][0, 0], args[4][0, 1], args[7][0, 4]])


def _step_3_args(mode, rng, n, k, dtype, ts, tt, status):
    # x, r, r_hat, s, t, y, z, diag, st, alpha, omega, rho_new, rr, status: y, z = p, s (M p and M s
    # with an operator of its own); diag = D^-1 with scalar Jacobi
    vecs = [_random(rng, (n, k), dtype) for _ in range(6)]
    z = _random(rng, (n, k), dtype) if mode == "operator" else Same(3)
    diag = rng.uniform(0.5, 2, n).astype(dtype) if mode == "jacobi" else None
    st = random_partials(rng, np.concatenate([ts, tt]), dtype)
    alpha, omega = (rng.uniform(0.5, 2, (1, k)).astype(dtype) for _ in range(2))
    return [*vecs, z, diag, st, alpha, omega, np.zeros((1, k)), np.zeros((1, k)), np.asarray(status, STATUS_DTYPE)]


def _assert_step_3_sums(out, n, dtype):
    """The partial sums of r_hat . r and r . r of the updated r (updated with omega from the
    partial sums st: as close as assert_twins allows), every column."""
    r64, r_hat = out[0][1].astype(np.float64), out[0][2]
    assert_sums(out[1][11], out[0][11], np.abs(r_hat * r64).sum(axis=0), n, dtype, "r_hat . r", factor=np.sqrt(G))
    assert_sums(out[1][12], out[0][12], (r64 * r64).sum(axis=0), n, dtype, "r . r", factor=np.sqrt(G))


@pytest.mark.parametrize("shape, mode", [((N, 3), "operator"), ((5001, 1), "none"), ((5001, 5), "jacobi"),
                                         ((7, 301), "jacobi")], ids=str)
def test_opencl_step_3(ref, dev, rng, dtype, shape, mode):
    # omega = (s . t) / (t . t);  x += alpha y + omega z (times diag);  r = s - omega t
    n, k = shape
    args = _step_3_args(mode, rng, n, k, dtype, rng.uniform(-2, 2, k), rng.uniform(0.5, 2, k), np.zeros(k))
    out = twin(ref, dev, "solver.bicgstab.step_3", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(8, 11, 12))
    _assert_step_3_sums(out, n, dtype)


@pytest.mark.parametrize("mode", ["none", "jacobi", "operator"])
def test_opencl_step_3_columns(ref, dev, rng, dtype, mode):
    # columns: runs, t . t == 0 (no breakdown: omega = 0, r = s), was stopped (untouched, but its
    # partial sums written), runs, s . t == 0 (omega = 0)
    k = 5
    args = _step_3_args(mode, rng, N, k, dtype, [1.5, 0.7, -0.3, -1.2, 0.0], [1.1, 0.0, 0.8, 1.9, 0.6],
                        [RUNNING, RUNNING, BREAKDOWN, RUNNING, RUNNING])
    out = twin(ref, dev, "solver.bicgstab.step_3", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(8, 11, 12))
    _assert_step_3_sums(out, N, dtype)
    x_dev, r_dev, omega_dev = out[1][0], out[1][1], out[1][10]
    assert omega_dev[0, 1] == omega_dev[0, 4] == 0
    np.testing.assert_array_equal(r_dev[:, [1, 4]], args[3][:, [1, 4]])  # r = s
    np.testing.assert_array_equal(x_dev[:, 2], args[0][:, 2])
    np.testing.assert_array_equal(r_dev[:, 2], args[1][:, 2])
    assert omega_dev[0, 2] == args[10][0, 2]


# -- full solves on both executors ------------------------------------------------------------

def test_executors_agree(ref, ocl):
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(7).standard_normal((A.shape[0], 2))
    (x_ref, log_ref), (x_ocl, log_ocl) = (_solve(e, A, b, criteria=_criteria(15, None)) for e in (ref, ocl))
    np.testing.assert_array_equal(log_ocl.iterations, log_ref.iterations)
    np.testing.assert_allclose(x_ocl, x_ref, rtol=1e-10, atol=1e-10 * np.abs(x_ref).max())
