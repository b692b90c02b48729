"""Gmres: hand-checked iterates, happy and singular breakdowns, restarts (krylov_dim) against
SciPy, several right-hand sides, right preconditioning, each OpenCL kernel against its
reference twin, and full solves on both executors."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import criteria as _criteria, matrix_path, residual_rounding, solve, tol
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d


def _solve(exec, A, b, **kwargs):
    return solve(exec, "Gmres", A, b, **kwargs)


# -- hand-checked values -----------------------------------------------------------------------

def test_one_iteration_by_hand(ref):
    # A = diag(1, 2), b = (1, 1): v_0 = b / sqrt(2), h_00 = 3/2, h_10 = 1/2; the first step
    # minimises ||b - t A b|| at t = (Ab . b) / (Ab . Ab) = 3/5, residual (2/5, -1/5)
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(1, None))
    np.testing.assert_allclose(x[:, 0], [3 / 5, 3 / 5], rtol=1e-15)
    assert log.num_iterations == 1 and log.stop_reason == "iteration limit"
    np.testing.assert_allclose(log.residual_norm, [np.sqrt(5) / 5], rtol=1e-15)


def test_two_iterations_solve_2x2_exactly(ref):
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2))
    np.testing.assert_allclose(x[:, 0], [1.0, 0.5], rtol=1e-15)
    assert log.has_converged and log.num_iterations == 2


@pytest.mark.parametrize("criteria", [_criteria(), _criteria(5, None)], ids=["residual", "iterations-only"])
def test_happy_breakdown_is_convergence_not_nan(exec, criteria):
    # A = 2 I and b with ||b|| a power of 2: v_0 = b / ||b|| and h_00 = 2 exactly, so w = A v_0 - 2 v_0 = 0:
    # h_10 = 0, the estimate is 0 and x = b / 2. Without a residual criterion the columns idle
    # (restart with r = 0) until the iteration limit.
    b = np.column_stack([[3.0, 0, 0, 0], np.ones(4)])
    x, log = _solve(exec, 2 * sp.identity(4), b, criteria=criteria, krylov_dim=3)
    np.testing.assert_array_equal(x, b / 2)
    if len(criteria) == 2:
        assert log.has_converged and list(log.iterations) == [1, 1]
    else:
        assert log.stop_reason == "iteration limit" and log.num_iterations == 5
        np.testing.assert_array_equal(log.residual_norm, 0.0)


def test_singular_hessenberg_is_a_breakdown(exec):
    # A = [[0, 1], [0, 0]], b = e_1: A v_0 = 0, so h_00 = h_10 = 0 and no rotation can make R nonsingular
    x, log = _solve(exec, sp.csr_matrix([[0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 0.0]))
    assert log.stop_reason == "breakdown" and log.num_iterations == 1
    np.testing.assert_array_equal(x, 0.0)


# -- restarts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("krylov_dim, restart, cycles", [(5, 5, 2), (30, 10, 1)])
def test_krylov_dim_matches_scipy_restarts(exec, krylov_dim, restart, cycles):
    # 10 iterations of GMRES(krylov_dim): two cycles of 5, or one cycle stopped after 10 of 30
    A = convection_diffusion_2d(8)
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    expected, _ = spla.gmres(A, b, rtol=0.0, atol=0.0, restart=restart, maxiter=cycles)
    x, log = _solve(exec, A, b, criteria=_criteria(10, None), krylov_dim=krylov_dim)
    assert log.num_iterations == 10
    np.testing.assert_allclose(x[:, 0], expected, rtol=1e-10)


def test_krylov_dim_default_and_validation(ref):
    assert gk.solver.Gmres.build().krylov_dim == 30
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    for bad in (0, -2, 2.5, True, "30"):
        with pytest.raises(ValueError, match="with_krylov_dim"):
            gk.solver.Gmres.build().with_krylov_dim(bad).with_criteria(*_criteria()).on(ref).generate(A)


# -- convergence ---------------------------------------------------------------------------

@pytest.mark.parametrize("problem", [convection_diffusion_2d, poisson_2d])
def test_generated_problems_agree_with_spsolve(exec, problem):
    A = problem(15)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    x, log = _solve(exec, A, b)
    assert log.has_converged
    true_norm = np.linalg.norm(b - A @ x[:, 0])
    assert true_norm <= 1e-12 * np.linalg.norm(b)
    # converged columns report the true residual of the updated x (up to its rounding), not the Givens estimate
    np.testing.assert_allclose(log.residual_norm, [true_norm], atol=residual_rounding(A, x, b)[0])
    np.testing.assert_allclose(x[:, 0], spla.spsolve(A.tocsc(), b), rtol=1e-9, atol=1e-10)


def test_estimate_below_an_unreachable_tolerance_is_not_convergence(ref):
    # in float32 the Givens estimate keeps falling while the true residual stalls near 1e-7 ||b||:
    # a column that meets 1e-9 on the estimate is reopened by the true residual at the end of the
    # cycle, and stops at the iteration limit with the true residual, whatever the limit is
    A = convection_diffusion_2d(10)
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    threshold = 1e-9 * np.linalg.norm(b.astype(np.float32))

    def run(max_iters):
        criteria = [gk.stop.ResidualNorm.build().with_reduction_factor(1e-9),
                    gk.stop.Iteration.build().with_max_iters(max_iters)]
        return _solve(ref, A, b, criteria=criteria, krylov_dim=15, dtype=np.float32)

    for max_iters in (14, 15, 16, 30, 45, 60, 100, 200):
        x, log = run(max_iters)
        assert log.stop_reason == "iteration limit" and log.num_iterations == max_iters
        true = np.linalg.norm(b - A @ x[:, 0].astype(np.float64))
        assert log.residual_norm[0] > threshold and true > threshold and np.isfinite(x).all()


def test_float32(exec):
    A = convection_diffusion_2d(10)
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    x, log = _solve(exec, A, b, criteria=_criteria(200, 1e-5), dtype=np.float32)
    assert x.dtype == np.float32 and log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0].astype(np.float64)) <= 2e-5 * np.linalg.norm(b)


def _four_columns(A, rng):
    n = A.shape[0]
    exact = rng.standard_normal(n)
    b = np.column_stack([rng.standard_normal(n), np.zeros(n), A @ exact, A @ np.ones(n)])
    x0 = np.column_stack([np.zeros(n), np.zeros(n), exact, np.zeros(n)])
    return b, x0, exact


def test_columns_stop_on_their_own(exec):
    A = convection_diffusion_2d(10)
    b, x0, exact = _four_columns(A, np.random.default_rng(3))
    x, log = _solve(exec, A, b, x0=x0, krylov_dim=20)
    assert log.has_converged
    assert log.iterations[1] == 0 and log.iterations[2] == 0
    assert log.iterations[0] > 20 and log.iterations[3] > 5  # column 0 restarts
    np.testing.assert_array_equal(x[:, 1], 0.0)
    np.testing.assert_array_equal(x[:, 2], exact)
    for j in (0, 3):
        assert np.linalg.norm(b[:, j] - A @ x[:, j]) <= 1e-12 * np.linalg.norm(b[:, j])


def test_columns_are_independent(ref):
    # each column updates x with its own number of inner iterations, exactly as if alone
    A = convection_diffusion_2d(10)
    b, x0, _ = _four_columns(A, np.random.default_rng(4))
    x, log = _solve(ref, A, b, x0=x0, krylov_dim=20)
    assert log.iterations[0] != log.iterations[3]
    for j in range(4):
        xj, logj = _solve(ref, A, b[:, j], x0=x0[:, j], krylov_dim=20)
        assert logj.num_iterations == log.iterations[j]
        np.testing.assert_allclose(x[:, j], xj[:, 0], rtol=1e-13)


def test_right_preconditioning_with_the_exact_inverse_takes_one_iteration(exec):
    # A M = I: w = v_0 and h_10 = 0 up to rounding
    A = convection_diffusion_2d(4)
    inverse = gk.matrix.Dense.from_numpy(exec, np.linalg.inv(A.toarray()))
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    x, log = _solve(exec, A, b, preconditioner=inverse, criteria=_criteria(10, 1e-12))
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x[:, 0], np.linalg.solve(A.toarray(), b), rtol=1e-12)


def test_preconditioned_residual_is_the_true_residual(ref):
    base = convection_diffusion_2d(12)
    A = (sp.diags(np.logspace(0, 4, base.shape[0])) @ base).tocsr()
    b = A @ np.random.default_rng(6).standard_normal(A.shape[0])
    jacobi = gk.matrix.Csr.from_scipy(ref, sp.diags(1 / A.diagonal()))
    x, log = _solve(ref, A, b, preconditioner=jacobi, criteria=_criteria(500, 1e-10))
    _, plain = _solve(ref, A, b, criteria=_criteria(500, 1e-10))
    assert log.has_converged and log.num_iterations < plain.num_iterations
    true_norm = np.linalg.norm(b - A @ x[:, 0])
    assert true_norm <= 1e-10 * np.linalg.norm(b)
    np.testing.assert_allclose(log.residual_norm, [true_norm], rtol=0, atol=residual_rounding(A, x, b)[0])


@pytest.mark.parametrize("name", ["pde900.mtx", "cage8.mtx"])
def test_iterations_comparable_to_scipy(ref, name):
    S = scipy.io.mmread(matrix_path(name)).tocsr()
    b = S @ np.ones(S.shape[0])
    count = [0]
    _, info = spla.gmres(S, b, rtol=1e-8, atol=0.0, restart=30, maxiter=100, callback_type="pr_norm",
                         callback=lambda _: count.__setitem__(0, count[0] + 1))
    assert info == 0
    x, log = _solve(ref, S, b, criteria=_criteria(3000, 1e-8))
    assert log.has_converged
    assert np.linalg.norm(b - S @ x[:, 0]) <= 1e-8 * np.linalg.norm(b)
    assert log.num_iterations <= 1.5 * count[0] + 2, (log.num_iterations, count[0])


# -- OpenCL kernels against their reference twins -----------------------------------------------

N, K, M = 301, 5, 6  # more rows than a work-group, an odd number of columns, Krylov dimension


def _run_both(ref, ocl, kernel, args, dtype):
    """Run ``kernel`` on both executors with the same inputs: float arrays become Dense of
    ``dtype``, uint8/int32 arrays raw device arrays, numbers stay. The arrays afterwards."""
    outs = []
    for exec in (ref, ocl):
        dev = [a if not isinstance(a, np.ndarray) else
               gk.matrix.Dense.from_numpy(exec, a.astype(dtype)) if a.dtype.kind == "f" else exec.from_host(a)
               for a in args]
        exec.run(kernel, *dev)
        outs.append([d.to_numpy() if isinstance(d, gk.matrix.Dense) else exec.to_host(d)
                     for d, a in zip(dev, args) if isinstance(a, np.ndarray)])
    return outs


def _assert_close(device, reference, dtype):
    """Relative to ~10 machine epsilons of the entry, or of the largest entry where terms cancel."""
    np.testing.assert_allclose(device, reference, rtol=tol(dtype), atol=tol(dtype) * np.abs(reference).max(initial=0))


def _status():
    """Column 1 already stopped."""
    status = np.zeros(K, STATUS_DTYPE)
    status[1] = StopReason.CONVERGED
    return status


def _estimate(rng):
    """Residual estimates, 0 (idle: the Krylov space holds the solution) in column 3."""
    estimate = rng.uniform(0.5, 2, (1, K))
    estimate[0, 3] = 0
    return estimate


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_restart(ref, ocl, rng, dtype):
    r_norm = rng.uniform(0.5, 2, (1, K))
    r_norm[0, 3] = 0  # r = 0: v_0 = 0 instead of 0 / 0
    args = [rng.standard_normal((N, K)), r_norm, rng.standard_normal(((M + 1) * N, K)), rng.standard_normal((N, K)),
            rng.standard_normal((M + 1, K)), rng.standard_normal((1, K)), rng.integers(0, M, K).astype(np.int32),
            _status()]
    want, dev = _run_both(ref, ocl, "solver.gmres.restart", args, dtype)
    for i in (2, 3, 4, 5):  # basis, v, g, estimate
        _assert_close(dev[i], want[i], dtype)
    np.testing.assert_array_equal(dev[6], 0)  # inner, in every column
    np.testing.assert_array_equal(dev[3][:, 3], 0)
    np.testing.assert_array_equal(dev[3][:, 1], args[3][:, 1].astype(dtype))  # stopped: v untouched
    np.testing.assert_array_equal(dev[2][N:], args[2][N:].astype(dtype))  # only v_0 is written


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, k, num", [(N, K, 4), (5001, 1, 1)])  # one pass; partial sums added in a second
def test_opencl_multi_dot(ref, ocl, rng, dtype, n, k, num):
    args = [rng.standard_normal(((M + 1) * n, k)), rng.standard_normal((n, k)), num, np.zeros((M + 1, k))]
    (_, _, h), (_, _, h_dev) = _run_both(ref, ocl, "solver.gmres.multi_dot", args, dtype)
    # a sum of n products: its rounding grows with the sum of their magnitudes, not with the sum
    basis = args[0].reshape(M + 1, n, k)[:num]
    magnitude = np.einsum("inc,nc->ic", np.abs(basis), np.abs(args[1]))
    np.testing.assert_array_less(np.abs(h_dev[:num] - h[:num]), tol(dtype) * magnitude)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("accumulate", [False, True])
def test_opencl_orthogonalize(ref, ocl, rng, dtype, accumulate):
    j = 3
    args = [rng.standard_normal(((M + 1) * N, K)), rng.standard_normal((M + 1, K)), j, accumulate,
            rng.standard_normal((N, K)), rng.standard_normal((M + 1, M * K)), _estimate(rng), _status()]
    want, dev = _run_both(ref, ocl, "solver.gmres.orthogonalize", args, dtype)
    _assert_close(dev[2], want[2], dtype)  # w
    _assert_close(dev[3], want[3], dtype)  # H
    for c in (1, 3):  # stopped and idle columns untouched
        np.testing.assert_array_equal(dev[2][:, c], args[4][:, c].astype(dtype))
        np.testing.assert_array_equal(dev[3][:, c::K], args[5][:, c::K].astype(dtype))
    np.testing.assert_array_equal(dev[3][j + 1:, j * K:(j + 1) * K], args[5][j + 1:, j * K:(j + 1) * K].astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_next_basis(ref, ocl, rng, dtype):
    j = 2
    w_norm = rng.uniform(0.5, 2, (1, K))
    w_norm[0, 2] = 0  # happy breakdown: v_{j+1} = 0
    args = [rng.standard_normal((N, K)), w_norm, j, rng.standard_normal(((M + 1) * N, K)),
            rng.standard_normal((N, K)), _estimate(rng), _status()]
    want, dev = _run_both(ref, ocl, "solver.gmres.next_basis", args, dtype)
    _assert_close(dev[2], want[2], dtype)
    _assert_close(dev[3], want[3], dtype)
    np.testing.assert_array_equal(dev[3][:, 2], 0)
    np.testing.assert_array_equal(dev[3][:, [1, 3]], args[4][:, [1, 3]].astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("j", [0, 3])
def test_opencl_givens(ref, ocl, rng, dtype, j):
    angles = rng.uniform(0, 2 * np.pi, (M, K))
    hessenberg = rng.standard_normal((M + 1, M * K))
    w_norm = rng.uniform(0.5, 2, (1, K))
    # column 4: h_{0:j+1,j} = 0 and ||w|| = 0: a singular Hessenberg matrix, a breakdown
    hessenberg[: j + 1, j * K + 4] = 0
    w_norm[0, 4] = 0
    args = [w_norm, j, hessenberg, rng.standard_normal((M + 1, K)), np.cos(angles), np.sin(angles),
            _estimate(rng), np.full(K, j, np.int32), _status()]
    want, dev = _run_both(ref, ocl, "solver.gmres.givens", args, dtype)
    for d, w in zip(dev, want):
        _assert_close(d, w, dtype)
    assert list(dev[6]) == [j + 1, j, j + 1, j, j]  # inner: stopped, idle and broken-down columns keep theirs
    assert list(dev[7]) == [0, StopReason.CONVERGED, 0, 0, StopReason.BREAKDOWN]
    # the new rotation makes h_{j+1,j} zero and g_{j+1} the residual estimate
    for c in (0, 2):
        assert dev[1][j + 1, j * K + c] == 0
        assert dev[5][0, c] == abs(dev[2][j + 1, c])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_solve_krylov(ref, ocl, rng, dtype):
    hessenberg = rng.standard_normal((M + 1, M * K))
    for i in range(M):  # a well-conditioned triangle
        hessenberg[i, i * K:(i + 1) * K] += 4 * np.sign(hessenberg[i, i * K:(i + 1) * K])
    inner = np.array([0, 1, M, 3, M], np.int32)
    args = [hessenberg, rng.standard_normal((M + 1, K)), inner, np.zeros((M, K))]
    want, dev = _run_both(ref, ocl, "solver.gmres.solve_krylov", args, dtype)
    for c in range(K):
        _assert_close(dev[3][: inner[c], c], want[3][: inner[c], c], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_opencl_multi_axpy(ref, ocl, rng, dtype):
    inner = np.array([0, 1, M, 3, 2], np.int32)
    args = [rng.standard_normal(((M + 1) * N, K)), rng.standard_normal((M, K)), inner, rng.standard_normal((N, K))]
    want, dev = _run_both(ref, ocl, "solver.gmres.multi_axpy", args, dtype)
    _assert_close(dev[3], want[3], dtype)
    np.testing.assert_array_equal(dev[3][:, 0], 0)


# -- full solves on both executors ------------------------------------------------------------

def test_executors_agree(ref, ocl):
    # 25 iterations of GMRES(10): two restarts, two columns
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(7).standard_normal((A.shape[0], 2))
    (x_ref, log_ref), (x_ocl, log_ocl) = (_solve(e, A, b, criteria=_criteria(25, None), krylov_dim=10)
                                          for e in (ref, ocl))
    np.testing.assert_array_equal(log_ocl.iterations, log_ref.iterations)
    np.testing.assert_allclose(x_ocl, x_ref, rtol=1e-10, atol=1e-10 * np.abs(x_ref).max())
