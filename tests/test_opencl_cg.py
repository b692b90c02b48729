"""The OpenCL Cg kernels against their reference twins, and whole Cg solves on both executors."""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import poisson_2d

from conftest import reduction_tol, tol

N = 1237  # more than a work-group, odd
RUNNING, BREAKDOWN = StopReason.RUNNING, StopReason.BREAKDOWN


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


def run_both(ref, ocl, kernel, arrays, status):
    """Run ``solver.cg.<kernel>`` on copies of ``arrays`` (numpy, in argument order) and of the
    stop ``status`` on each executor; returns the arrays and the status afterwards, per executor."""
    out = []
    for exec in (ref, ocl):
        args = [Dense.from_numpy(exec, a) for a in arrays]
        dev_status = exec.from_host(np.array(status, dtype=STATUS_DTYPE))
        exec.run(f"solver.cg.{kernel}", *args, dev_status)
        out.append(([a.to_numpy() for a in args], exec.to_host(dev_status)))
    return out


def assert_same(out, dtype):
    (ref_arrays, ref_status), (dev_arrays, dev_status) = out
    np.testing.assert_array_equal(dev_status, ref_status)
    n = max(a.shape[0] for a in ref_arrays)
    for dev, ref in zip(dev_arrays, ref_arrays):
        # (1, k) scalars are inputs or sums over the n rows (||r||), which round by order
        t = reduction_tol(dtype, n) if ref.shape[0] == 1 else tol(dtype)
        np.testing.assert_allclose(dev, ref, rtol=t, atol=t)


def test_initialize(ref, ocl, rng, dtype):
    k = 3
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((N, k), (N, k), (1, k), (1, k))]
    out = run_both(ref, ocl, "initialize", arrays, [RUNNING, BREAKDOWN, RUNNING])
    assert_same(out, dtype)
    p, q, rho, prev_rho = out[1][0]
    assert not p.any() and not q.any() and not rho.any() and (prev_rho == 1).all()


def test_step_1(ref, ocl, rng, dtype):
    # columns: running, stopped (left untouched), running with prev_rho == 0 (p = z)
    k = 3
    p, z = (rng.standard_normal((N, k)).astype(dtype) for _ in range(2))
    rho = rng.standard_normal((1, k)).astype(dtype)
    prev_rho = np.array([[0.7, 1.3, 0.0]], dtype)
    out = run_both(ref, ocl, "step_1", [p, z, rho, prev_rho], [RUNNING, BREAKDOWN, RUNNING])
    assert_same(out, dtype)
    p_dev = out[1][0][0]
    assert np.array_equal(p_dev[:, 1], p[:, 1])
    assert np.array_equal(p_dev[:, 2], z[:, 2])


@pytest.fixture(params=["cpu_layout", "gpu_layout"])
def dev(request, ocl):
    """The device executor launching as on a CPU or as on a GPU, whatever the device is."""
    import attrs
    exe = gk.OpenCLExecutor(ocl.device)
    gpu = request.param == "gpu_layout"
    exe.info = attrs.evolve(ocl.info, is_cpu=not gpu, is_gpu=gpu)
    return exe


@pytest.mark.parametrize("n", [N, 5001])  # one work-group per column, and several
def test_step_2(ref, dev, rng, dtype, n):
    # columns: running, stopped, beta < 0, beta == 0, rho == 0 (the last three break down);
    # r_norm is ||r|| of every column after the update
    k = 5
    x, r, p, q = (rng.standard_normal((n, k)).astype(dtype) for _ in range(4))
    beta = np.array([[2.5, 1.0, -1.0, 0.0, 3.0]], dtype)
    rho = np.array([[0.5, 2.0, 1.0, 1.0, 0.0]], dtype)
    prev_rho = np.full((1, k), 9.0, dtype)
    r_norm = np.full((1, k), -1.0, dtype)
    status = [RUNNING, StopReason.CONVERGED, RUNNING, RUNNING, RUNNING]
    out = run_both(ref, dev, "step_2", [x, r, p, q, beta, rho, prev_rho, r_norm], status)
    assert_same(out, dtype)
    (x_dev, r_dev, _, _, _, _, prev_dev, norm_dev), status_dev = out[1]
    assert list(status_dev) == [RUNNING, StopReason.CONVERGED, BREAKDOWN, BREAKDOWN, BREAKDOWN]
    assert np.array_equal(x_dev[:, 1:], x[:, 1:]) and np.array_equal(r_dev[:, 1:], r[:, 1:])
    assert list(prev_dev[0]) == [0.5, 9.0, 9.0, 9.0, 9.0]
    np.testing.assert_allclose(norm_dev[0], np.linalg.norm(r_dev.astype(np.float64), axis=0),
                               rtol=reduction_tol(dtype, n))


def test_steps_on_empty_vectors(ref, dev, dtype):
    # n == 0: nothing to update, but step_2 still flags breakdowns and sets prev_rho
    k = 2
    e = np.zeros((0, k), dtype)
    scalars = [np.array([[1.0, -1.0]], dtype), np.array([[2.0, 2.0]], dtype), np.ones((1, k), dtype)]
    assert_same(run_both(ref, dev, "initialize", [e, e, *scalars[:2]], [RUNNING] * k), dtype)
    assert_same(run_both(ref, dev, "step_1", [e, e, *scalars[1:]], [RUNNING] * k), dtype)
    out = run_both(ref, dev, "step_2", [e, e, e, e, *scalars, np.ones((1, k), dtype)], [RUNNING] * k)
    assert_same(out, dtype)
    assert list(out[1][1]) == [RUNNING, BREAKDOWN]
    assert not out[1][0][-1].any()  # the norm of no entries is 0


def solve(exec, A, b, criteria, fmt):
    A = gk.matrix.Csr.from_scipy(exec, A) if fmt == "csr" else Dense.from_numpy(exec, A.toarray())
    x = Dense.zeros(exec, b.shape)
    solver = gk.solver.Cg.build().with_criteria(*criteria).on(exec).generate(A)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(Dense.from_numpy(exec, b), x)
    return x.to_numpy(), logger


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_fixed_iterations_agree(ref, ocl, rng, fmt):
    A, b = poisson_2d(20), rng.standard_normal((400, 2))
    criteria = [gk.stop.Iteration.build().with_max_iters(25)]
    (x_ref, log_ref), (x_dev, log_dev) = (solve(e, A, b, criteria, fmt) for e in (ref, ocl))
    assert list(log_ref.iterations) == list(log_dev.iterations) == [25, 25]
    np.testing.assert_allclose(x_dev, x_ref, rtol=1e-10, atol=1e-10 * np.abs(x_ref).max())


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_converged_solves_agree(ref, ocl, rng, fmt):
    # column 1 combines three eigenvectors of A: it converges in about 3 iterations and must
    # then stay untouched while column 0 goes on
    A, b = poisson_2d(20), rng.standard_normal((400, 2))
    modes = [np.sin(np.pi * m * np.arange(1, 21) / 21) for m in (1, 2)]
    b[:, 1] = sum(np.kron(modes[i], modes[j]) for i, j in ((0, 0), (0, 1), (1, 1)))
    criteria = [gk.stop.Iteration.build().with_max_iters(1000),
                gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)]
    (x_ref, log_ref), (x_dev, log_dev) = (solve(e, A, b, criteria, fmt) for e in (ref, ocl))
    assert log_dev.has_converged and log_ref.has_converged
    assert list(log_dev.iterations) == list(log_ref.iterations)
    assert log_dev.iterations[1] < 10 < log_dev.iterations[0]
    np.testing.assert_allclose(A @ x_dev, b, rtol=0, atol=1e-9 * np.abs(b).max())
    np.testing.assert_allclose(x_dev, x_ref, rtol=1e-8, atol=1e-8 * np.abs(x_ref).max())
