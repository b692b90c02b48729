"""PipeCg (pipelined CG) on one device: its kernels against their reference twins, whole solves
against Cg on both executors, what an iteration costs, and the doors (configuration, CLI).
Distributed PipeCg: tests/distributed/test_distributed.py."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse

import ginkpy as gk
from ginkpy.cli import main
from ginkpy.core.matrix.dense import Dense
from ginkpy.problems import magnetic_laplacian_2d, poisson_2d

from conftest import (BREAKDOWN, CONVERGED, DIVERGED, LIMIT, PARTIAL_GROUPS as G, RUNNING, Stop, assert_sums,
                      assert_twins, random_partials, twin)

N = 1237  # more than a work-group, odd
MAX_ITERS = 300
# m of the kernels: none (m = w), scalar Jacobi (m = diag w inside), an operator of its own (m given)
MODES = ["none", "jacobi", "operator"]


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


def _vectors(rng, n, k, dtype, count):
    return [rng.standard_normal((n, k)).astype(dtype) for _ in range(count)]


def _dot_sums(r, u, w):
    """(r, u), (u, w), (r, r) per column in float64, and the sums of the terms' magnitudes."""
    r, u, w = (v.astype(np.float64) for v in (r, u, w))
    pairs = [(r, u), (u, w), (r, r)]
    return (np.concatenate([(a * b).sum(axis=0) for a, b in pairs]),
            np.concatenate([np.abs(a * b).sum(axis=0) for a, b in pairs]))


@pytest.mark.parametrize("shape", [(N, 3), (5001, 1), (7, 301)], ids=str)
@pytest.mark.parametrize("masked", [False, True], ids=["all", "columns"])
def test_initialize(ref, dev, rng, dtype, shape, masked):
    # z = q = s = p = 0 and gamma_prev = 0 in the columns; the partial sums of every column
    n, k = shape
    r, u, w, z, q, s, p = _vectors(rng, n, k, dtype, 7)
    gamma_prev = rng.uniform(0.5, 2, (1, k)).astype(dtype)
    columns = (np.arange(k) % 2).astype(np.uint8) if masked else None
    out = twin(ref, dev, "solver.pipe_cg.initialize", r, u, w, z, q, s, p, gamma_prev, np.zeros((1, 3 * k)),
               columns, dtype=dtype)
    assert_twins(out, dtype, skip=(8,))
    reset = np.ones(k, bool) if columns is None else columns.astype(bool)
    for index, before in zip((3, 4, 5, 6), (z, q, s, p)):
        np.testing.assert_array_equal(out[1][index][:, reset], 0)
        np.testing.assert_array_equal(out[1][index][:, ~reset], before[:, ~reset])
    np.testing.assert_array_equal(out[1][7][0, reset], 0)
    sums, magnitude = _dot_sums(r, u, w)
    assert_sums(out[1][8], out[0][8], magnitude, n, dtype, "(r, u), (u, w), (r, r)")
    assert_sums(out[0][8], sums[None], magnitude, n, dtype, "the reference's sums")


def test_step_1_columns(ref, ocl, rng, dtype):
    # columns: runs (beta = gamma / gamma_prev), a first step (gamma_prev = 0: beta = 0, alpha =
    # gamma / delta), converges, diverges (NaN norm), reaches its limit, was stopped before,
    # breaks down (denominator <= 0), breaks down (gamma == 0), runs with the history ring wrapped
    k = 9
    gamma = np.array([1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.5])
    delta = np.array([3.0, 4.0, 3.0, 3.0, 3.0, 3.0, 0.5, 3.0, 4.0])
    norms = np.array([2.0, 2.0, 0.5, np.nan, 2.0, 2.0, 2.0, 2.0, 2.0])
    gamma_prev = np.array([[0.8, 0.0, 1.0, 1.0, 1.0, 1.0, 0.4, 1.0, 1.1]]).astype(dtype)
    alpha_prev = np.array([[0.9, 0.7, 0.5, 0.5, 0.5, 0.5, 0.9, 0.5, 0.9]]).astype(dtype)
    status = [RUNNING] * 5 + [BREAKDOWN] + [RUNNING] * 3
    stop = Stop(status, np.ones(k), MAX_ITERS, [3, 3, 3, 3, MAX_ITERS, 3, 3, 3, 299])
    dots = random_partials(rng, np.concatenate([gamma, delta, norms ** 2]), dtype)
    alpha, beta = (np.full((1, k), -7.0, dtype) for _ in range(2))
    out = twin(ref, ocl, "solver.pipe_cg.step_1", dots, gamma_prev, alpha_prev, alpha, beta, stop, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G))
    state = out[1][5]
    assert list(state.status) == [RUNNING, RUNNING, CONVERGED, DIVERGED, LIMIT, BREAKDOWN, BREAKDOWN, BREAKDOWN,
                                  RUNNING]
    assert list(state.checks) == [4, 4, 4, 4, MAX_ITERS + 1, 3, 4, 4, 300]
    b0 = gamma[0] / gamma_prev[0, 0]
    expected_alpha = {0: gamma[0] / (delta[0] - b0 * gamma[0] / alpha_prev[0, 0]), 1: gamma[1] / delta[1]}
    for c, a in expected_alpha.items():
        np.testing.assert_allclose(out[1][3][0, c], a, rtol=1e-5)
    np.testing.assert_allclose(out[1][4][0, :2], [b0, 0.0], rtol=1e-5)
    np.testing.assert_allclose(out[1][1][0, :2], gamma[:2], rtol=1e-5)  # gamma_prev = gamma
    for c in (2, 3, 4, 5, 6, 7):  # stopped or broken down: the scalars untouched
        assert out[1][3][0, c] == -7.0 and out[1][1][0, c] == gamma_prev[0, c]


@pytest.mark.parametrize("shape, mode", [((N, 3), "operator"), ((5001, 1), "none"), ((5001, 5), "jacobi"),
                                         ((7, 301), "jacobi")], ids=str)
def test_step_2(ref, dev, rng, dtype, shape, mode):
    # running columns updated, a stopped one untouched; the partial sums of the new vectors
    n, k = shape
    x, r, u, w, am, z, q, s, p = _vectors(rng, n, k, dtype, 9)
    m = rng.standard_normal((n, k)).astype(dtype) if mode == "operator" else None
    diag = rng.uniform(0.5, 2, (n, 1)).astype(dtype) if mode == "jacobi" else None
    alpha, beta = rng.uniform(0.2, 1, (1, k)).astype(dtype), rng.uniform(0.2, 1, (1, k)).astype(dtype)
    status = [RUNNING] * k
    status[k // 2] = CONVERGED
    stop = Stop(status, np.ones(k), MAX_ITERS)
    out = twin(ref, dev, "solver.pipe_cg.step_2", x, r, u, w, m, am, z, q, s, p, diag, alpha, beta,
               np.zeros((1, 3 * k)), stop, dtype=dtype)
    assert_twins(out, dtype, skip=(13,))
    # the updates, in float64
    b, a = beta.astype(np.float64), alpha.astype(np.float64)
    mm = m if mode == "operator" else w * diag if mode == "jacobi" else w
    z_, q_, s_, p_ = (new.astype(np.float64) + b * old for new, old in ((am, z), (mm, q), (w, s), (u, p)))
    expected = {0: x + a * p_, 1: r - a * s_, 2: u - a * q_, 3: w - a * z_, 6: z_, 7: q_, 8: s_, 9: p_}
    stopped = k // 2
    for index, value in expected.items():
        before = (x, r, u, w, m, am, z, q, s, p)[index]
        np.testing.assert_array_equal(out[1][index][:, stopped], before[:, stopped])
        keep = np.arange(k) != stopped
        np.testing.assert_allclose(out[1][index][:, keep], value[:, keep], rtol=30 * np.finfo(dtype).eps,
                                   atol=30 * np.finfo(dtype).eps * np.abs(value).max())
    sums, magnitude = _dot_sums(out[0][1], out[0][2], out[0][3])
    assert_sums(out[1][13], out[0][13], magnitude, n, dtype, "(r, u), (u, w), (r, r)")


def _solve(exec, solver, A, b, criteria, preconditioner=None, dtype=np.float64):
    params = solver.build().with_criteria(*criteria)
    if preconditioner is not None:
        params = params.with_preconditioner(preconditioner)
    s = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype))
    logger = gk.log.Convergence()
    s.add_logger(logger)
    x = Dense.zeros(exec, b.shape, dtype)
    s.apply(Dense.from_numpy(exec, b, dtype), x)
    return x.to_numpy(), logger


CRITERIA = [gk.stop.Iteration.build().with_max_iters(2000), gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)]


@pytest.mark.parametrize("preconditioner", [None, "jacobi", "ic"])
def test_solves_as_cg(exec, rng, preconditioner):
    # the same iterations as Cg (CG in exact arithmetic), each column converged to the tolerance
    A = poisson_2d(36)
    b = rng.standard_normal((A.shape[0], 3))
    b[:, 1] = 0
    M = {None: None, "jacobi": gk.preconditioner.Jacobi.build().with_max_block_size(1),
         "ic": gk.preconditioner.Ic.build()}[preconditioner]
    x, logger = _solve(exec, gk.solver.PipeCg, A, b, CRITERIA, M)
    _, cg = _solve(exec, gk.solver.Cg, A, b, CRITERIA, M)
    assert list(logger.stop_reasons) == [CONVERGED] * 3
    assert np.abs(np.asarray(logger.num_iterations) - np.asarray(cg.num_iterations)).max() <= 2
    np.testing.assert_array_equal(x[:, 1], 0)
    for c in (0, 2):
        assert np.linalg.norm(A @ x[:, c] - b[:, c]) <= 1.01e-10 * np.linalg.norm(b[:, c])


def test_iteration_limit_and_history(ref, rng):
    # an iteration limit stops at exactly max_iters, the history has every iteration's norm
    A = poisson_2d(30)
    b = rng.standard_normal((A.shape[0], 1))
    crit = [gk.stop.Iteration.build().with_max_iters(17)]
    x, logger = _solve(ref, gk.solver.PipeCg, A, b, crit)
    _, cg = _solve(ref, gk.solver.Cg, A, b, crit)
    assert logger.num_iterations == 17 and logger.stop_reason == LIMIT
    np.testing.assert_allclose(logger.residual_norm_history, cg.residual_norm_history, rtol=1e-8)


def test_complex_hermitian(exec, rng):
    A = magnetic_laplacian_2d(20, shift=0.05)
    b = rng.standard_normal(A.shape[0]) + 1j * rng.standard_normal(A.shape[0])
    x, logger = _solve(exec, gk.solver.PipeCg, A, b[:, None], CRITERIA,
                       gk.preconditioner.Jacobi.build().with_max_block_size(1), np.complex128)
    assert logger.stop_reason == CONVERGED
    assert np.linalg.norm(A @ x[:, 0] - b) <= 1.01e-10 * np.linalg.norm(b)


def test_indefinite_breaks_down(ref):
    # delta - beta gamma / alpha_prev <= 0: a breakdown, not a wrong answer
    A = poisson_2d(10) - 3.0 * scipy.sparse.eye(100)
    b = np.ones((100, 1))
    _, logger = _solve(ref, gk.solver.PipeCg, A, b, CRITERIA)
    assert logger.stop_reason == BREAKDOWN


def test_launches_per_iteration(ocl, rng):
    # with scalar Jacobi: the product by A D^-1, step_1 and step_2; nothing allocated or read
    A = gk.matrix.Csr.from_scipy(ocl, poisson_2d(40))
    b = Dense.from_numpy(ocl, rng.standard_normal((1600, 1)))
    counts = []
    for iters in (40, 100):
        solver = (gk.solver.PipeCg.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                  .with_criteria(gk.stop.Iteration.build().with_max_iters(iters)).on(ocl).generate(A))
        solver.apply(b, Dense.zeros(ocl, (1600, 1)))
        before = dict(ocl.counters)
        solver.apply(b, Dense.zeros(ocl, (1600, 1)))
        counts.append({key: ocl.counters[key] - before[key] for key in before})
    assert counts[0]["allocations"] == counts[1]["allocations"] and counts[0]["reads"] == counts[1]["reads"]
    assert (counts[1]["launches"] - counts[0]["launches"]) / 60 <= 3.05


def test_doors(capsys, tmp_path, rng):
    # the configuration's solver::PipeCg and the command line's --solver pipecg
    params = gk.config.parse({"type": "solver::PipeCg", "preconditioner": {"type": "preconditioner::Jacobi",
                                                                           "max_block_size": 1},
                              "criteria": {"type": "Iteration", "max_iters": 5}})
    assert params.product is gk.solver.PipeCg
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(path, poisson_2d(8))
    rc = main(["solve", str(path), "--solver", "pipecg", "--executor", "reference"])
    out, _ = capsys.readouterr()
    assert rc == 0 and "PipeCg" in out
