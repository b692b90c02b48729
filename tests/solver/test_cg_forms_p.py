"""Cg's iteration whose SpMV forms p (``solver.cg.forms_p``: a GPU's classical SpMV): check,
spmv_p and step_2 with beta against their reference twins, where a device takes that iteration,
and whole solves through it (the GPU layout) against the reference's iteration with step_1."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.opencl.matrix import csr_strategy
from ginkpy.opencl.solver import cg_kernels as ocl_cg_kernels
from ginkpy.problems import poisson_2d

from conftest import (BREAKDOWN, CONVERGED, DIVERGED, LIMIT, PARTIAL_GROUPS as G, RUNNING, Same, Stop,
                      assert_sums, assert_twins, random_partials, sum_tol, taken_for, tol, twin)
from test_cg_kernels import (COLUMNS_AFTER, COLUMNS_PQ, COLUMNS_RHO, MAX_ITERS, MODES, N, _preconditioner, _random,
                             _step_2_args, _z, step_2_columns_args)


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


@pytest.mark.parametrize("mode", MODES)
def test_check_columns(ref, dev, rng, dtype, mode):
    # columns: runs, runs with prev_rho == 0 (beta = 0), converges, diverges (NaN norm), reaches
    # its limit, was stopped before, runs with the history ring wrapped: rho = r . z and beta =
    # rho / prev_rho where the column runs on, beta = 0 where it does not
    k = 7
    norms = np.array([2.0, 2.0, 0.5, np.nan, 2.0, 2.0, 2.0])
    stop = Stop([RUNNING] * 5 + [BREAKDOWN, RUNNING], np.ones(k), MAX_ITERS, [3, 3, 3, 3, MAX_ITERS, 3, 299])
    rz_sums = norms ** 2 if mode == "none" else rng.uniform(0.5, 2, k)
    prev_rho = np.array([[0.7, 0.0, 1.3, 1.1, 0.9, 1.2, 0.8]], dtype)
    rho, beta = _random(rng, (1, k), dtype), np.full((1, k), np.nan, dtype)
    z, diag = _preconditioner(mode, rng, 5, k, dtype)
    rz, rr = random_partials(rng, rz_sums, dtype), random_partials(rng, norms ** 2, dtype)
    args = [_random(rng, (5, k), dtype), z, diag, rz, rr, rho, prev_rho, beta, stop]
    if mode == "none":
        args[3:5] = [rr, Same(3)]
    out = twin(ref, dev, "solver.cg.check", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(3, 4))
    state = out[1][8]
    assert list(state.status) == [RUNNING, RUNNING, CONVERGED, DIVERGED, LIMIT, BREAKDOWN, RUNNING]
    assert list(state.checks) == [4, 4, 4, 4, MAX_ITERS + 1, 3, 300]
    rho_dev, beta_dev = out[1][5][0], out[1][7][0]
    sums = args[3].astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(rho_dev[[0, 1, 6]], sums[[0, 1, 6]], rtol=np.sqrt(G) * tol(dtype))
    np.testing.assert_array_equal(rho_dev[2:6], rho[0, 2:6])  # stopped: rho untouched
    np.testing.assert_allclose(beta_dev[[0, 6]], sums[[0, 6]] / prev_rho[0, [0, 6]], rtol=np.sqrt(G) * tol(dtype))
    assert (beta_dev[1:6] == 0).all()


@pytest.fixture(scope="module")
def spmv_p_matrix():
    """5001 x 5001 with 0 to 12 entries a row (a fifth of the rows empty): more rows than the
    kernels' work-items, each takes several."""
    rng = np.random.default_rng(11)
    n = 5001
    counts = np.where(rng.random(n) < 0.2, 0, rng.integers(1, 13, n))
    indices = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts])
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_matrix((rng.standard_normal(indptr[-1]), indices, indptr), shape=(n, n))


# the SpMV that forms p takes the classical layout (forced here on every device), its loop also
# unrolled to 12 turns with 3 rows a work-item at once as on a GPU
SPMV_P_STRATEGIES = {"classical": dict(name="classical"), "classical_unrolled": dict(name="classical", max_row=12)}
SPMV_P_CASES = [("classical", 1, "jacobi"), ("classical", 5, "operator"), ("classical", 2, "none"),
                ("classical_unrolled", 3, "none"), ("classical_unrolled", 1, "operator")]


@pytest.mark.parametrize("name, k, mode", SPMV_P_CASES, ids=str)
def test_spmv_p(ref, dev, rng, dtype, spmv_p_matrix, name, k, mode, monkeypatch):
    # q = A (M r + beta p) and the partial sums of (M r + beta p) . q; p itself unchanged
    if name == "classical_unrolled":
        monkeypatch.setattr(ocl_cg_kernels, "rows_at_once", lambda info: 3)
    monkeypatch.setenv("GINKPY_CG_FORM_P", "1")
    S, config, strategies = spmv_p_matrix.astype(dtype), SPMV_P_STRATEGIES[name], []
    n = S.shape[0]

    def matrix(exec):
        A = gk.matrix.Csr.from_scipy(exec, S)
        if exec is dev:
            strategies.append(csr_strategy.select_strategy(dev, A, **config))
            assert exec.run("solver.cg.forms_p", A, Dense.zeros(exec, (n, k), dtype))
        return A

    p, r = _random(rng, (n, k), dtype), _random(rng, (n, k), dtype)
    z, diag = _preconditioner(mode, rng, n, k, dtype)
    beta = rng.uniform(0.5, 2, (1, k)).astype(dtype)
    out = twin(ref, dev, "solver.cg.spmv_p", matrix, p, r, z, diag, beta, np.full((n, k), np.nan),
               np.zeros((1, k)), dtype=dtype)
    assert strategies[0].name == "classical"
    np.testing.assert_array_equal(out[1][1], p)
    # q, every entry within the rounding of its row's sum (of terms that are sums themselves)
    m = _z(mode, r, z, diag)
    scale = abs(S).astype(np.float64) @ (np.abs(m) + beta * np.abs(p))
    err = np.abs(out[1][6].astype(np.float64) - out[0][6])
    assert (err <= 2 * sum_tol(dtype, 12) * scale).all()
    assert_sums(out[1][7], out[0][7], ((np.abs(m) + beta * np.abs(p)) * scale).sum(axis=0), n, dtype, "p . q",
                factor=2)


@pytest.mark.parametrize("mode", MODES)
def test_step_2_forms_p(ref, dev, rng, dtype, mode):
    # with beta, first p = M r + beta p (of the r before its update), stored, in the columns that
    # go on; then as step_2 (the columns of test_step_2_columns)
    args = step_2_columns_args(mode, rng, dtype)
    z = _random(rng, (N, 7), dtype) if mode == "operator" else None
    beta = rng.uniform(0.5, 2, (1, 7)).astype(dtype)
    out = twin(ref, dev, "solver.cg.step_2", *args, z, beta, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(5, 8, 9))
    assert list(out[1][10].status) == COLUMNS_AFTER
    x, r, p = (a.astype(np.float64) for a in args[:3])
    x_dev, p_dev = out[1][0], out[1][2]
    go, untouched = [0, 6], [1, 2, 3, 4, 5]
    m = _z(mode, args[1], z, args[4])
    p_new = m + beta * p
    bound = 10 * tol(dtype) * (np.abs(m) + beta * np.abs(p))
    assert (np.abs(p_dev[:, go] - p_new[:, go]) <= bound[:, go]).all()
    np.testing.assert_array_equal(p_dev[:, untouched], args[2][:, untouched])
    alpha = np.array(COLUMNS_RHO)[go] / np.array(COLUMNS_PQ)[go]
    np.testing.assert_allclose(x_dev[:, go], x[:, go] + alpha * p_new[:, go], rtol=30 * tol(dtype),
                               atol=30 * tol(dtype) * np.abs(p_new).max())
    np.testing.assert_array_equal(x_dev[:, untouched], args[0][:, untouched])


@pytest.mark.parametrize("mode", MODES)
def test_step_2_forms_p_one_column(ref, dev, rng, dtype, mode):
    # one column (the reference's plain-number path): p = M r + beta p, then x and r
    stop = Stop([RUNNING], np.ones(1), MAX_ITERS)
    args = _step_2_args(mode, rng, 5001, 1, dtype, [1.5], [0.5], stop)
    z = _random(rng, (5001, 1), dtype) if mode == "operator" else None
    beta = np.array([[0.8]], dtype)
    out = twin(ref, dev, "solver.cg.step_2", *args, z, beta, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(5, 8, 9))
    m, p = _z(mode, args[1], z, args[4]), args[2].astype(np.float64)
    bound = 10 * tol(dtype) * (np.abs(m) + 0.8 * np.abs(p))
    assert (np.abs(out[0][2] - (m + 0.8 * p)) <= bound).all()
    assert list(out[1][10].status) == [RUNNING]


def test_forms_p_in_a_gpus_classical_spmv_when_asked(ref, ocl, monkeypatch):
    # (off by default until a GPU has measured it: GINKPY_CG_FORM_P=1 turns it on)
    S = poisson_2d(20)
    gpu, cpu = taken_for(ocl, "gpu"), taken_for(ocl, "cpu")

    def forms_p(exec, A, dtype=np.float64):
        return exec.run("solver.cg.forms_p", A, Dense.zeros(exec, (S.shape[0], 1), dtype))

    monkeypatch.delenv("GINKPY_CG_FORM_P", raising=False)
    assert not forms_p(gpu, gk.matrix.Csr.from_scipy(gpu, S))
    monkeypatch.setenv("GINKPY_CG_FORM_P", "1")
    assert forms_p(gpu, gk.matrix.Csr.from_scipy(gpu, S))
    assert not forms_p(cpu, gk.matrix.Csr.from_scipy(cpu, S))  # a CPU's row blocks: SpMV, then step_1
    assert not forms_p(gpu, gk.matrix.Csr.from_scipy(gpu, S), np.float32)  # another value type
    assert not forms_p(gpu, Dense.from_numpy(gpu, S.toarray()))  # not a Csr
    split = gk.matrix.Csr.from_scipy(gpu, S)
    csr_strategy.select_strategy(gpu, split, name="merge_path", work_group=96, items=7)
    assert not forms_p(gpu, split)  # another layout
    assert not forms_p(ref, gk.matrix.Csr.from_scipy(ref, S))  # the reference's iteration has step_1
    monkeypatch.setenv("GINKPY_CG_FORM_P", "0")
    assert not forms_p(gpu, gk.matrix.Csr.from_scipy(gpu, S))


def _solve(exec, S, b, M, criteria):
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = gk.solver.Cg.build().with_criteria(*criteria)
    if M is not None:
        solver = solver.with_preconditioner(M)
    solver = solver.on(exec).generate(A)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    x = Dense.zeros(exec, b.shape)
    solver.apply(Dense.from_numpy(exec, b), x)
    return x.to_numpy(), logger


# scalar Jacobi (D^-1 r formed in the kernels) and block Jacobi (an operator: z given)
PRECONDITIONERS = {"none": None, "jacobi": gk.preconditioner.Jacobi.build().with_max_block_size(1),
                   "block_jacobi": gk.preconditioner.Jacobi.build().with_max_block_size(4)}


@pytest.mark.parametrize("mode", list(PRECONDITIONERS))
def test_solves_agree_with_the_reference(ref, dev, rng, mode, monkeypatch):
    # three columns, fixed iterations: a GPU's iteration forms p, the reference's has step_1
    monkeypatch.setenv("GINKPY_CG_FORM_P", "1")
    S = poisson_2d(24) + sp.diags(rng.uniform(0, 1, 576))
    b = rng.standard_normal((576, 3))
    criteria = [gk.stop.Iteration.build().with_max_iters(30)]
    assert dev.run("solver.cg.forms_p", gk.matrix.Csr.from_scipy(dev, S), Dense.zeros(dev, b.shape)) == dev.info.is_gpu
    (x_ref, log_ref), (x_dev, log_dev) = (_solve(e, S, b, PRECONDITIONERS[mode], criteria) for e in (ref, dev))
    assert list(log_ref.iterations) == list(log_dev.iterations) == [30] * 3
    np.testing.assert_allclose(x_dev, x_ref, rtol=1e-9, atol=1e-9 * np.abs(x_ref).max())


def test_a_failed_confirmation_resumes_the_column(ref, dev, monkeypatch):
    # 1D Laplacian of 1000 rows (condition ~4e5) and b = A x for its smoothest mode: the true
    # residual can fall little below 1e-11 while the recurrence's goes on down, so confirmations
    # fail (on this system 11-18 times) and the column resumes with the true residual as r (p =
    # z, beta = 0) until the true residual meets the threshold; the same verdict on both
    resumed = []
    run = IterationMonitor.run

    def counting_run(self, iteration, resume=None, steps=None):
        def counted(columns):
            resumed.append(1)
            resume(columns)
        return run(self, iteration, resume=None if resume is None else counted, steps=steps)

    monkeypatch.setattr(IterationMonitor, "run", counting_run)
    monkeypatch.setenv("GINKPY_CG_FORM_P", "1")  # (a GPU's iteration forms p)
    n = 1000
    S = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]).tocsr()
    b = (S @ np.sin(np.pi * np.arange(1, n + 1) / (n + 1)))[:, None]
    criteria = [gk.stop.Iteration.build().with_max_iters(4 * n),
                gk.stop.ResidualNorm.build().with_reduction_factor(1e-11)]
    for exec in (ref, dev):
        resumed.clear()
        x, log = _solve(exec, S, b, PRECONDITIONERS["jacobi"], criteria)
        assert resumed and log.has_converged, (exec, len(resumed), log.iterations)
        assert np.linalg.norm(b - S @ x) <= 1e-11 * np.linalg.norm(b)
