"""The OpenCL Cg kernels against their reference twin, and whole Cg solves on both executors."""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.matrix.dense import Dense
from ginkpy.problems import poisson_2d

from conftest import (BREAKDOWN, CONVERGED, DIVERGED, LIMIT, PARTIAL_GROUPS as G, RUNNING, Same, Stop,
                      assert_sums, assert_twins, random_partials, tol, twin)

N = 1237  # more than a work-group, odd
MAX_ITERS = 300
# the preconditioner of the kernels: none (z = r: r . z is r . r, the same partial sums), scalar
# Jacobi (diag = D^-1, z = diag r computed where it is used), an operator of its own (z given)
MODES = ["none", "jacobi", "operator"]
# (n, k) and a mode: one work-group and several per column on every device (in both launch
# layouts), and more columns than a work-group (the partial sums of 2 k columns added in turns);
# each mode once with each shape over the kernels (a mode changes only what z is)
CASES = [((N, 3), "operator"), ((5001, 1), "none"), ((5001, 5), "jacobi"), ((7, 301), "jacobi")]
CASES_1 = [((N, 3), "jacobi"), ((5001, 1), "operator"), ((5001, 5), "none"), ((7, 301), "operator")]
CASES_2 = [((N, 3), "none"), ((5001, 1), "jacobi"), ((5001, 5), "operator"), ((7, 301), "jacobi")]


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


def _random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _preconditioner(mode, rng, n, k, dtype):
    """(z, diag) of a mode: z n x k for an operator, diag n x 1 (positive, as a D^-1) for Jacobi."""
    z = _random(rng, (n, k), dtype) if mode == "operator" else None
    diag = rng.uniform(0.5, 2, n).astype(dtype) if mode == "jacobi" else None
    return z, diag


def _z(mode, r, z, diag):
    """z = M r as the kernels see it, in float64."""
    r = r.astype(np.float64)
    return r if mode == "none" else r * diag[:, None] if mode == "jacobi" else z.astype(np.float64)



def test_initialize(ref, ocl, rng, dtype):
    p, prev_rho = _random(rng, (N, 3), dtype), _random(rng, (1, 3), dtype)
    out = twin(ref, ocl, "solver.cg.initialize", p, prev_rho, dtype=dtype)
    assert_twins(out, dtype)
    assert not out[1][0].any() and (out[1][1] == 1).all()


@pytest.mark.parametrize("shape, mode", CASES, ids=str)
def test_prepare(ref, dev, rng, dtype, shape, mode):
    n, k = shape
    r = _random(rng, shape, dtype)
    z, diag = _preconditioner(mode, rng, n, k, dtype)
    rz, rr = np.zeros((1, k)), np.zeros((1, k))
    args = [r, z, diag, rz, rr] if mode != "none" else [r, z, diag, rr, Same(3)]
    out = twin(ref, dev, "solver.cg.prepare", *args, dtype=dtype)
    assert_twins(out, dtype, skip=(3, 4))
    # partial sums of r . r and r . z
    r64 = r.astype(np.float64)
    assert_sums(out[1][4], out[0][4], (r64 * r64).sum(axis=0), n, dtype, "r . r")
    if mode != "none":
        assert_sums(out[1][3], out[0][3], np.abs(r64 * _z(mode, r, z, diag)).sum(axis=0), n, dtype, "r . z")
    if n == 5001:
        assert out[1][4].shape[0] > 1  # several work-groups


def _step_1_args(mode, rng, n, k, dtype, rz_sums, rr_sums, stop, prev_rho=None):
    p, r = _random(rng, (n, k), dtype), _random(rng, (n, k), dtype)
    z, diag = _preconditioner(mode, rng, n, k, dtype)
    rho = _random(rng, (1, k), dtype)
    prev_rho = rng.uniform(0.5, 2, (1, k)) if prev_rho is None else np.asarray([prev_rho], np.float64)
    rz, rr = random_partials(rng, rz_sums, dtype), random_partials(rng, rr_sums, dtype)
    if mode == "none":
        rz, rr = rr, Same(4)
    return [p, r, z, diag, rz, rr, rho, prev_rho.astype(dtype), stop]


@pytest.mark.parametrize("shape, mode", CASES_1, ids=str)
def test_step_1(ref, dev, rng, dtype, shape, mode):
    # every column runs on: rho = r . z (sum of rz), p = z + (rho / prev_rho) p, the norm in the history
    n, k = shape
    norms = rng.uniform(1, 2, k)
    stop = Stop([RUNNING] * k, 0.5 * norms, MAX_ITERS, rng.integers(0, MAX_ITERS, k))
    args = _step_1_args(mode, rng, n, k, dtype, rng.uniform(0.5, 2, k), norms ** 2, stop)
    out = twin(ref, dev, "solver.cg.step_1", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 5))
    assert (out[1][8].status == RUNNING).all() and (out[1][8].checks == stop.checks + 1).all()


@pytest.mark.parametrize("mode", MODES)
def test_step_1_columns(ref, dev, rng, dtype, mode):
    # columns: runs, runs with prev_rho == 0 (p = z), converges, diverges (NaN norm), reaches its
    # limit, was stopped before, runs with the history ring wrapped
    k = 7
    norms = np.array([2.0, 2.0, 0.5, np.nan, 2.0, 2.0, 2.0])
    status = [RUNNING] * 5 + [BREAKDOWN, RUNNING]
    stop = Stop(status, np.ones(k), MAX_ITERS, [3, 3, 3, 3, MAX_ITERS, 3, 299])
    args = _step_1_args(mode, rng, N, k, dtype, rng.uniform(0.5, 2, k), norms ** 2, stop,
                        prev_rho=[0.7, 0.0, 1.3, 1.1, 0.9, 1.2, 0.8])
    out = twin(ref, dev, "solver.cg.step_1", *args, dtype=dtype)
    # a column at its limit: only the check's writer stops it, the others may still update its p
    # (which it no longer uses: common.cl, stop_check)
    p_ref, p_dev = out[0][0], out[1][0]
    p_ref[:, 4] = p_dev[:, 4] = 0
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 5))
    state = out[1][8]
    assert list(state.status) == [RUNNING, RUNNING, CONVERGED, DIVERGED, LIMIT, BREAKDOWN, RUNNING]
    assert list(state.checks) == [4, 4, 4, 4, MAX_ITERS + 1, 3, 300]
    p, r, z, diag = args[:4]
    np.testing.assert_allclose(p_dev[:, 1], _z(mode, r, z, diag)[:, 1], rtol=tol(dtype))  # beta = 0
    for c in (2, 3, 5):  # stopped: p and rho untouched
        np.testing.assert_array_equal(p_dev[:, c], p[:, c])
        assert out[1][6][0, c] == args[6][0, c]


def _step_2_args(mode, rng, n, k, dtype, pq_sums, rho, stop):
    x, r, p, q = (_random(rng, (n, k), dtype) for _ in range(4))
    _, diag = _preconditioner(mode, rng, n, k, dtype)
    prev_rho = rng.uniform(0.5, 2, (1, k)).astype(dtype)
    # rz, rr: r . z is r . r, the same partial sums, without a preconditioner
    rz_rr = (np.zeros((1, k)), np.zeros((1, k))) if mode != "none" else (np.zeros((1, k)), Same(8))
    return [x, r, p, q, diag, random_partials(rng, pq_sums, dtype), np.asarray([rho], dtype), prev_rho, *rz_rr, stop]


def _assert_step_2_sums(out, mode, diag, n, dtype):
    """The partial sums of r . r (and of r . diag r with Jacobi) of the updated r, every column.
    (With an operator step_2 leaves rz to the next dots: not compared.)"""
    r64 = out[0][1].astype(np.float64)
    # (r is updated with alpha from the partial sums of p . q: as close as assert_twins allows)
    assert_sums(out[1][9], out[0][9], (r64 * r64).sum(axis=0), n, dtype, "r . r", factor=np.sqrt(G))
    if mode == "jacobi":
        assert_sums(out[1][8], out[0][8], (r64 * r64 * diag[:, None]).sum(axis=0), n, dtype, "r . z",
                    factor=np.sqrt(G))


@pytest.mark.parametrize("shape, mode", CASES_2, ids=str)
def test_step_2(ref, dev, rng, dtype, shape, mode):
    # every column runs: alpha = rho / (p . q);  x += alpha p;  r -= alpha q;  prev_rho = rho
    n, k = shape
    stop = Stop([RUNNING] * k, np.ones(k), MAX_ITERS)
    args = _step_2_args(mode, rng, n, k, dtype, rng.uniform(0.5, 2, k), rng.uniform(0.5, 2, k), stop)
    out = twin(ref, dev, "solver.cg.step_2", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(5, 8, 9))
    _assert_step_2_sums(out, mode, args[4], n, dtype)
    np.testing.assert_array_equal(out[1][7], args[6])  # prev_rho = rho


# columns: runs, was stopped (untouched, but its partial sums written), p . q < 0, p . q == 0,
# p . q NaN, rho == 0 (the last four break down, untouched), runs
COLUMNS_PQ = [1.5, 1.0, -1.0, 0.0, np.nan, 2.0, 0.7]
COLUMNS_RHO = [0.5, 2.0, 1.0, 1.0, 1.0, 0.0, 1.3]
COLUMNS_AFTER = [RUNNING, CONVERGED] + [BREAKDOWN] * 4 + [RUNNING]  # the status step_2 leaves


def step_2_columns_args(mode, rng, dtype):
    """step_2's arguments for those columns (N rows)."""
    stop = Stop([RUNNING, CONVERGED] + [RUNNING] * 5, np.ones(7), MAX_ITERS)
    return _step_2_args(mode, rng, N, 7, dtype, COLUMNS_PQ, COLUMNS_RHO, stop)


@pytest.mark.parametrize("mode", MODES)
def test_step_2_columns(ref, dev, rng, dtype, mode):
    args = step_2_columns_args(mode, rng, dtype)
    out = twin(ref, dev, "solver.cg.step_2", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(5, 8, 9))
    _assert_step_2_sums(out, mode, args[4], N, dtype)
    x_dev, r_dev, prev_dev, state = out[1][0], out[1][1], out[1][7], out[1][10]
    assert list(state.status) == COLUMNS_AFTER
    untouched = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(x_dev[:, untouched], args[0][:, untouched])
    np.testing.assert_array_equal(r_dev[:, untouched], args[1][:, untouched])
    np.testing.assert_array_equal(prev_dev[0, untouched], args[7][0, untouched])
    np.testing.assert_array_equal(prev_dev[0, [0, 6]], args[6][0, [0, 6]])


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
