"""Gmres: hand-checked iterates, happy and singular breakdowns, restarts (krylov_dim) against
SciPy, several right-hand sides, right preconditioning, each OpenCL kernel against its
reference twin, and full solves on both executors."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import (PARTIAL_GROUPS as G, Stop, assert_sums, assert_twins,
                      criteria as _criteria, matrix_path, random_partials, residual_rounding, solve, taken_for, tol,
                      twin)
from ginkpy.core.solver.cb_gmres import storage_dtype
from ginkpy.opencl import device_choices as opencl_choices
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import convection_diffusion_2d, helmholtz_2d, poisson_2d
import krylov_cases


def _solve(exec, A, b, name="Gmres", **kwargs):
    return solve(exec, name, A, b, **kwargs)


# Gmres, and CbGmres with its basis in float16 (the arithmetic in float64)
SOLVERS = [("Gmres", {}), ("CbGmres", {"storage_precision": "reduce2"})]


# -- hand-checked values -----------------------------------------------------------------------

def test_one_iteration_by_hand(ref):
    # A = diag(1, 2), b = (1, 1): v_0 = b / sqrt(2), h_00 = 3/2, h_10 = 1/2; the first step
    # minimises ||b - t A b|| at t = (Ab . b) / (Ab . Ab) = 3/5, residual (2/5, -1/5)
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(1, None))
    np.testing.assert_allclose(x[:, 0], [3 / 5, 3 / 5], rtol=1e-15)
    assert log.num_iterations == 1 and log.stop_reason == StopReason.ITERATION_LIMIT
    np.testing.assert_allclose(log.residual_norm, [np.sqrt(5) / 5], rtol=1e-15)


def test_two_iterations_solve_2x2_exactly(ref):
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2))
    np.testing.assert_allclose(x[:, 0], [1.0, 0.5], rtol=1e-15)
    assert log.has_converged and log.num_iterations == 2


@pytest.mark.parametrize("name, params", SOLVERS, ids=["Gmres", "CbGmres"])
@pytest.mark.parametrize("criteria", [_criteria(), _criteria(5, None)], ids=["residual", "iterations-only"])
def test_happy_breakdown_is_convergence_not_nan(exec, criteria, name, params):
    # A = 2 I and b with ||b|| a power of 2: v_0 = b / ||b|| and h_00 = 2 exactly, so w = A v_0 - 2 v_0 = 0:
    # h_10 = 0, the estimate is 0 and x = b / 2. Without a residual criterion the columns idle
    # (restart with r = 0) until the iteration limit.
    b = np.column_stack([[3.0, 0, 0, 0], np.ones(4)])
    x, log = _solve(exec, 2 * sp.identity(4), b, name, criteria=criteria, krylov_dim=3, **params)
    np.testing.assert_array_equal(x, b / 2)
    if len(criteria) == 2:
        assert log.has_converged and list(log.iterations) == [1, 1]
    else:
        assert log.stop_reason == StopReason.ITERATION_LIMIT and log.num_iterations == 5
        np.testing.assert_array_equal(log.residual_norm, 0.0)


@pytest.mark.parametrize("name, params", SOLVERS, ids=["Gmres", "CbGmres"])
def test_singular_hessenberg_is_a_breakdown(exec, name, params):
    # A = [[0, 1], [0, 0]], b = e_1: A v_0 = 0, so h_00 = h_10 = 0 and no rotation can make R nonsingular
    x, log = _solve(exec, sp.csr_matrix([[0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 0.0]), name, **params)
    assert log.stop_reason == StopReason.BREAKDOWN and log.num_iterations == 1
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
    A, b, x, log, true_norm = krylov_cases.agree_with_spsolve(exec, _solve, problem)
    # converged columns report the true residual of the updated x (up to its rounding), not the Givens estimate
    np.testing.assert_allclose(log.residual_norm, [true_norm], atol=residual_rounding(A, x, b)[0])


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
        assert log.stop_reason == StopReason.ITERATION_LIMIT and log.num_iterations == max_iters
        true = np.linalg.norm(b - A @ x[:, 0].astype(np.float64))
        assert log.residual_norm[0] > threshold and true > threshold and np.isfinite(x).all()


def test_float32(exec):
    krylov_cases.float32_converges(exec, _solve, convection_diffusion_2d(10), max_iters=200)


_four_columns = krylov_cases.four_columns


@pytest.mark.parametrize("name, params", SOLVERS, ids=["Gmres", "CbGmres"])
def test_columns_stop_on_their_own(exec, name, params):
    # column 0 restarts
    krylov_cases.columns_stop_on_their_own(exec, lambda *args, **kwargs: _solve(*args, name=name, **kwargs),
                                           first_iterations=20, krylov_dim=20, **params)


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
    krylov_cases.exact_inverse_takes_one_iteration(exec, _solve)


def test_preconditioned_residual_is_the_true_residual(ref):
    krylov_cases.preconditioned_residual_is_the_true_residual(ref, _solve)


@pytest.mark.parametrize("name", ["pde900.mtx", "cage8.mtx"])
def test_iterations_comparable_to_scipy(ref, name):
    krylov_cases.iterations_comparable_to_scipy(
        ref, _solve, name, lambda S, b, callback: spla.gmres(S, b, rtol=1e-8, atol=0.0, restart=30, maxiter=100,
                                                            callback_type="pr_norm", callback=callback)[1],
        max_iters=3000)


# -- CbGmres: the Krylov basis stored in a lower precision ---------------------------------------

def test_cb_gmres_parameters(ref):
    assert gk.solver.CbGmres.build().storage_precision == "reduce1"
    assert storage_dtype(np.float64, "reduce1") == np.float32
    assert storage_dtype(np.complex128, "reduce1") == np.complex64
    assert storage_dtype(np.float32, "reduce1") == np.float16 and storage_dtype(np.complex128, "reduce2") == np.float16
    assert storage_dtype(np.complex64, "keep") == np.complex64
    for bad in ("half", 1, None):
        with pytest.raises(ValueError, match="storage_precision must be one of 'keep', 'reduce1', 'reduce2'"):
            gk.solver.CbGmres.build().with_storage_precision(bad)
    with pytest.raises(ValueError, match="integer storage .* not implemented; use 'reduce2'"):
        gk.solver.CbGmres.build().with_storage_precision("ireduce2")


@pytest.mark.parametrize("precision", ["keep", "reduce1", "reduce2"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_cb_gmres_converges(exec, precision, dtype):
    # the arithmetic in the value type: the true residual meets 1e-10 whatever the basis's storage
    A = (helmholtz_2d(12) if np.dtype(dtype).kind == "c" else convection_diffusion_2d(12)).astype(dtype)
    b = A @ np.random.default_rng(8).standard_normal(A.shape[0]).astype(dtype)
    x, log = _solve(exec, A, b, "CbGmres", criteria=_criteria(600, 1e-10), dtype=dtype, storage_precision=precision)
    assert log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-10 * np.linalg.norm(b)
    if precision == "keep":  # Gmres itself
        _, plain = _solve(exec, A, b, criteria=_criteria(600, 1e-10), dtype=dtype)
        assert log.num_iterations == plain.num_iterations


# nonsymmetric and symmetric real matrices, with Jacobi (orsirr_1 without it, a badly scaled
# GMRES that needs 3800 iterations, takes 1.6x as many with a float32 basis; cage8 without it
# 21 instead of 19)
CB_MATRICES = ["pde900.mtx", "cage8.mtx", "orsirr_1.mtx", "watt_2.mtx", "add32.mtx", "ani4.mtx",
               "gr_900_900_crg.mtx", "lap3D_7pt_n20.mtx"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CB_MATRICES)
def test_cb_gmres_iterations_within_1_1x_of_gmres(exec, name):
    # reduce1 (float32 basis) against Gmres, Jacobi-preconditioned, rtol 1e-8, on each executor
    S = scipy.io.mmread(matrix_path(name)).tocsr()
    b = S @ np.ones(S.shape[0])
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    counts = []
    for solver, params in (("Gmres", {}), ("CbGmres", {"storage_precision": "reduce1"})):
        x, log = _solve(exec, S, b, solver, criteria=_criteria(3000, 1e-8), preconditioner=jacobi, **params)
        assert log.has_converged and np.linalg.norm(b - S @ x[:, 0]) <= 1e-8 * np.linalg.norm(b)
        counts.append(log.num_iterations)
    assert counts[1] <= 1.1 * counts[0], counts


# -- flexible GMRES -------------------------------------------------------------------------------

def _changing_preconditioner():
    """Three iterations of Cg: a preconditioner that is another operator at every application."""
    return gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(3))


def test_flexible_gmres_converges_where_plain_gmres_stagnates(exec):
    A = poisson_2d(20)
    b = A @ np.ones(A.shape[0])
    x, log = _solve(exec, A, b, criteria=_criteria(200, 1e-10), preconditioner=_changing_preconditioner(),
                    flexible=True)
    _, plain = _solve(exec, A, b, criteria=_criteria(200, 1e-10), preconditioner=_changing_preconditioner())
    assert log.has_converged and log.num_iterations < 40
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-10 * np.linalg.norm(b)
    assert not plain.has_converged  # x0 + M (V y) with an M other than the one that built V


def test_flexible_gmres_with_a_fixed_preconditioner_is_gmres(ref):
    # x = x0 + Z y with z_j = M v_j is x0 + M V y for a linear M: the same iterations
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(9).standard_normal(A.shape[0])
    M = gk.matrix.Csr.from_scipy(ref, sp.diags(1 / A.diagonal()) @ sp.diags(np.linspace(1, 2, A.shape[0])))
    logs = [_solve(ref, A, b, criteria=_criteria(300, 1e-10), preconditioner=M, flexible=flexible)
            for flexible in (False, True)]
    np.testing.assert_allclose(logs[1][0], logs[0][0], rtol=1e-8)
    assert logs[0][1].num_iterations == logs[1][1].num_iterations
    with pytest.raises(ValueError, match="with_flexible"):
        gk.solver.Gmres.build().with_flexible(1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_flexible_cb_gmres(exec, dtype):
    A = (helmholtz_2d(12) if np.dtype(dtype).kind == "c" else convection_diffusion_2d(12)).astype(dtype)
    b = A @ np.ones(A.shape[0], dtype)
    inner = gk.solver.Bicgstab.build().with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    x, log = _solve(exec, A, b, "CbGmres", criteria=_criteria(300, 1e-10), dtype=dtype, preconditioner=inner,
                    flexible=True, storage_precision="reduce1")
    assert log.has_converged and np.linalg.norm(b - A @ x[:, 0]) <= 1e-10 * np.linalg.norm(b)


# -- the doors: gk.linalg, the command line, the configuration -----------------------------------

def test_linalg_gmres_storage_precision_and_flexible(ref):
    A = poisson_2d(20)
    b = A @ np.ones(A.shape[0])
    x, info = gk.linalg.gmres(A, b, rtol=1e-10, restart=30, storage_precision="reduce2", executor=ref)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    x, info = gk.linalg.gmres(A, b, rtol=1e-10, restart=30, maxiter=3, M=_changing_preconditioner(), flexible=True,
                              executor=ref)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    with pytest.raises(ValueError, match="storage_precision"):
        gk.linalg.gmres(A, b, storage_precision="float16", executor=ref)


def test_config_and_command_line(tmp_path, capsys):
    config = {"type": "solver::CbGmres", "storage_precision": "reduce2", "krylov_dim": 20, "flexible": True}
    params = gk.config.parse(config)
    assert params.product is gk.solver.CbGmres and params.storage_precision == "reduce2"
    assert params.krylov_dim == 20 and params.flexible
    assert gk.config.to_dict(params) == config
    assert gk.config.short_names("solver")["cb_gmres"] is gk.solver.CbGmres
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(path, convection_diffusion_2d(10))
    from ginkpy.cli import main
    assert main(["solve", str(path), "--solver", "cb_gmres", "--storage-precision", "reduce2", "--executor",
                 "reference"]) == 0
    assert "CbGmres" in capsys.readouterr().out
    assert main(["solve", str(path), "--solver", "gmres", "--storage-precision", "reduce2", "--executor",
                 "reference"]) == 2
    assert "--storage-precision is the Krylov basis's storage of CbGmres" in capsys.readouterr().err


# -- OpenCL kernels against their reference twin -----------------------------------------------

N, M = 1237, 12  # more rows than a work-group (odd), Krylov dimension (a full chunk of dot products and more)
# (n, k): one work-group and several per column on every device (in both launch layouts), and
# more columns than a work-group (consumers add the partial sums of the columns in turns); 263
# columns, not more: orthogonalize keeps (M + 2) k values beside a 16 KiB scratch in local memory,
# which at M = 12 and 301 columns needs 50096 bytes against an NVIDIA GPU's 49152 (the kernel says
# so; an H100 run of 2026-12-07 found it)
SHAPES = [(N, 3), (5001, 1), (5001, 5), (7, 263)]
MAX_ITERS = 300
RUNNING, CONVERGED, LIMIT, BREAKDOWN, DIVERGED, PENDING = (
    StopReason.RUNNING, StopReason.CONVERGED, StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN,
    StopReason.DIVERGED, StopReason.PENDING)



dtype = krylov_cases.dtype  # the kernel tests' fixture: float64, float32

# (n, k) and the basis's storage precision (CbGmres's; keep: Gmres's): every shape with the
# value type, the reduced precisions on fewer
STORED_SHAPES = [(shape, "keep") for shape in SHAPES] + [((N, 3), "reduce1"), ((5001, 1), "reduce2"),
                                                          ((7, 263), "reduce2")]


_random = krylov_cases.random_values


def _basis(rng, n, k, storage, count=M + 1):
    """A random basis of ``count`` vectors of about unit norm in its storage type (numpy)."""
    return (rng.standard_normal((count * n, k)) * np.sqrt(2 / n)).astype(storage)


def _on(array):
    """A raw array (the basis in its storage type) made on each executor by ``twin``."""
    return lambda exec: exec.from_host(array)


def _dot_partials(partials):
    """The partial sums of the dot products with the basis as each executor makes them: one row
    (their sums) on the reference, the rows as given on the device."""
    summed = partials.astype(np.float64).sum(axis=0, keepdims=True)
    return lambda exec: gk.matrix.Dense.from_numpy(exec, summed if exec.backend == "reference" else partials,
                                                   partials.dtype)


def _dots_magnitude(basis, w, num):
    """Per dot product v_i . w (i < num, column c at i k + c): the sum of |terms|."""
    n, k = w.shape
    return np.einsum("inc,nc->ic", np.abs(basis.reshape(-1, n, k)[:num]).astype(np.float64), np.abs(w)).ravel()


def _multi_dot_magnitude(basis, w, num):
    """Of multi_dot's partial sums: the dot products with the basis, then w . w."""
    return np.concatenate([_dots_magnitude(basis, w, num), (w.astype(np.float64) ** 2).sum(axis=0)])


def _step(j, parity):
    """The device's inner iteration counter: step[parity] = j (the other entry -1, which
    multi_dot sets to j + 1)."""
    step = np.full(2, -1, np.int32)
    step[parity] = j
    return step


def _padded(sums, length):
    """Sums at the kernels' fixed row length of partial sums ((M + 2) k or (M + 1) k)."""
    sums = np.asarray(sums)
    return np.pad(sums, [(0, 0)] * (sums.ndim - 1) + [(0, length - sums.shape[-1])])


def _storage_tol(storage, dtype):
    """The tolerance of a value computed from the basis in its storage type."""
    return max(tol(dtype), 10 * np.finfo(storage).eps)


# -- restart: the true residual's check, v = r / ||r||, g = ||r|| e_1 ----------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_opencl_restart(ref, dev, rng, dtype, shape):
    # every column's first check: it runs on
    n, k = shape
    norms = rng.uniform(1, 2, k)
    args = [_random(rng, (n, k), dtype), random_partials(rng, norms ** 2, dtype), _random(rng, (n, k), dtype),
            _random(rng, (M + 1, k), dtype), rng.integers(0, M, k).astype(np.int32), np.array([5, 7], np.int32),
            Stop([RUNNING] * k, 0.5 * norms, MAX_ITERS)]
    out = twin(ref, dev, "solver.gmres.restart", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(1,))
    assert not out[1][4].any()  # inner = 0
    assert list(out[1][5]) == [0, 7]  # the cycle's inner iteration 0


def test_opencl_restart_columns(ref, dev, rng, dtype):
    # columns: first check (runs, converges, diverges on NaN, r = 0 without a norm criterion:
    # runs with v = 0); converged on an estimate, confirmed by the true residual (converges;
    # runs on, its estimate having been its last check before the limit; at its limit; diverges;
    # runs on with the history ring wrapped); runs (no check: only its cycle restarts); was
    # stopped before
    k = 11
    norms = np.array([2.0, 0.5, np.nan, 0.0, 0.5, 2.0, 2.0, np.nan, 2.0, 2.0, 2.0])
    threshold = [1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    status = [RUNNING] * 4 + [PENDING] * 5 + [RUNNING, BREAKDOWN]
    checks = [0, 0, 0, 0, 7, MAX_ITERS, MAX_ITERS + 1, 7, 257, 9, 9]
    r, v, g = (_random(rng, shape, dtype) for shape in ((N, k), (N, k), (M + 1, k)))
    args = [r, random_partials(rng, norms ** 2, dtype), v, g, np.full(k, 3, np.int32), np.array([5, 7], np.int32),
            Stop(status, threshold, MAX_ITERS, checks)]
    out = twin(ref, dev, "solver.gmres.restart", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(1,))
    v_dev, g_dev, inner, _, state = out[1][2:7]
    assert list(state.status) == [RUNNING, CONVERGED, DIVERGED, RUNNING, CONVERGED, RUNNING, LIMIT, DIVERGED,
                                  RUNNING, RUNNING, BREAKDOWN]
    assert list(state.checks) == [1, 1, 1, 1] + checks[4:]  # a confirmation replaces its check
    assert not inner.any()
    runs = [0, 3, 5, 8, 9]
    np.testing.assert_array_equal(v_dev[:, 3], 0)
    others = [0, 5, 8, 9]
    np.testing.assert_allclose(v_dev[:, others], r[:, others] / norms[others], rtol=np.sqrt(G) * tol(dtype))
    np.testing.assert_allclose(g_dev[0, runs], norms[runs], rtol=np.sqrt(G) * tol(dtype))
    stopped = [1, 2, 4, 6, 7, 10]
    np.testing.assert_array_equal(g_dev[:, stopped], g[:, stopped])
    # v untouched where the column had stopped or stops by its confirmation; a column stopping
    # at its first check (1, 2) may get it written by work-groups that read its status before the
    # writer set it (harmless: nothing reads a stopped column's v)
    untouched = [4, 6, 7, 10]
    np.testing.assert_array_equal(v_dev[:, untouched], v[:, untouched])
    for c in (4, 5, 6, 7, 8):  # the true residual's norm in place of the estimate (compared above)
        assert state.history[(checks[c] - 1) % state.history.shape[0], c] != -1
    assert (state.history != -1).sum() == 4 + 5


# -- the first pass: v_j into the basis, the dot products, the Givens step it carries ------------

@pytest.mark.parametrize("j, parity", [(0, 0), (3, 1), (9, 0)])  # (j + 1 >= 8: a full chunk of DOTS)
@pytest.mark.parametrize("shape, precision", STORED_SHAPES, ids=str)
def test_opencl_multi_dot(ref, dev, rng, dtype, shape, precision, j, parity):
    # inner iteration j = step[parity]: v_j = v / ||v|| into the basis (in its storage type:
    # numpy's rounding of the same value); h = V_{0..j}^H w, w^H w (partial sums); step[1 - parity]
    # = j + 1; with j > 0 the Givens step of column j - 1 first (its detailed cases:
    # test_opencl_multi_dot_givens)
    n, k = shape
    storage = storage_dtype(dtype, precision)
    basis, v, w = _basis(rng, n, k, storage), _random(rng, (n, k), dtype), _random(rng, (n, k), dtype)
    hessenberg, g, cos, sin = (_random(rng, shape, dtype) for shape in ((M + 1, M * k), (M + 1, k), (M, k), (M, k)))
    norms = rng.uniform(0.5, 2, k)
    # ||v||^2 as one partial sum: both executors get the same norm, to the last bit
    # (with k = 3, flexible GMRES's z_j = z / ||v|| into zbasis too)
    flexible = k == 3
    z, zbasis = (_random(rng, (n, k), dtype), _random(rng, ((M + 1) * n, k), dtype)) if flexible else (None, None)
    args = [_step(j, parity), parity, True, v, _on(basis), z, zbasis if zbasis is None else _on(zbasis), w,
            (norms ** 2).astype(dtype)[None],
            np.zeros((1, k)), np.zeros((1, k)), hessenberg, g, cos, sin, np.full(k, j, np.int32),
            Stop([RUNNING] * k, np.ones(k), MAX_ITERS)]
    out = twin(ref, dev, "solver.gmres.multi_dot", *args, dtype=dtype)
    if flexible:
        nrm = np.sqrt(norms ** 2) if j > 0 else np.ones(k)
        np.testing.assert_allclose(out[1][6][j * n:(j + 1) * n], z / nrm, rtol=tol(dtype))
        np.testing.assert_array_equal(np.delete(out[1][6], np.s_[j * n:(j + 1) * n], axis=0),
                                      np.delete(zbasis, np.s_[j * n:(j + 1) * n], axis=0))
    out = [o[:5] + o[7:] for o in out]  # as without z and zbasis
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 8))
    assert out[1][0][1 - parity] == j + 1 and out[1][0][parity] == j
    stored = out[1][4]
    nrm = np.sqrt(norms ** 2) if j > 0 else np.ones(k)
    np.testing.assert_allclose(out[1][7][0], nrm, rtol=tol(dtype))
    vj = stored[j * n:(j + 1) * n]
    if dtype == np.float64:  # correctly rounded 1 / ||v|| and product: numpy's rounding exactly
        inv = 1 / np.sqrt((norms ** 2).astype(dtype)) if j > 0 else np.ones(k)
        np.testing.assert_array_equal(vj, (v * inv).astype(storage))
    else:
        np.testing.assert_allclose(vj, v / nrm, rtol=_storage_tol(storage, dtype), atol=np.finfo(storage).tiny)
    np.testing.assert_array_equal(np.delete(stored, np.s_[j * n:(j + 1) * n], axis=0),
                                  np.delete(basis, np.s_[j * n:(j + 1) * n], axis=0))
    used = (j + 2) * k
    assert out[1][8].shape[1] == (M + 2) * k
    assert_sums(out[1][8][:, :used], out[0][8][:, :used], _multi_dot_magnitude(out[0][4], w, j + 1), n, dtype,
                "V^T w, w . w")
    if n == 5001 and k == 1 and j == 0 and not dev.info.is_cpu:
        assert out[1][8].shape[0] > 1  # several work-groups for one dot product


def _givens_case(rng, jj, dtype, k=9):
    """The inputs of the Givens step of Hessenberg column jj (rotations 0..jj-1 given) and the
    statuses expected. Columns: runs; converges on the estimate (a tiny ||w||: PENDING); idles
    (g_jj = 0: its estimate 0 checked); singular (h_{:,jj} = 0, ||w|| = 0: breakdown); reaches its
    limit; was stopped; pending already; ||w|| NaN (breakdown); runs with the history ring wrapped.
    For jj > 0 the singular column is rank-deficient without being 0: h_{0,jj} = 1, h_{jj,jj} =
    1e-20 (no earlier rotation), a rotated diagonal of 1e-20 against a column norm of 1."""
    hessenberg = rng.standard_normal((M + 1, M * k))
    angles = rng.uniform(0, 2 * np.pi, (M, k))
    g = rng.uniform(0.5, 2, (M + 1, k)) * rng.choice([-1, 1], (M + 1, k))
    nrm = rng.uniform(0.5, 2, k)
    angles[:jj, 1] = 0  # column 1: no earlier rotation, h_jj = 1.5, so that ||w|| = 1e-6 makes the estimate tiny
    hessenberg[jj, jj * k + 1], nrm[1] = 1.5, 1e-6
    g[jj, 2] = 0
    hessenberg[: jj + 1, jj * k + 3], nrm[3] = 0, 0
    if jj > 0:
        angles[:jj, 3] = 0
        hessenberg[0, jj * k + 3], hessenberg[jj, jj * k + 3] = 1, 1e-20
    nrm[7] = np.nan
    status = [RUNNING] * 5 + [CONVERGED, PENDING, RUNNING, RUNNING]
    checks = [4, 4, 4, 4, MAX_ITERS, 4, 4, 4, 299]
    stop = Stop(status, np.full(k, 1e-3), MAX_ITERS, checks)
    arrays = [random_partials(rng, nrm ** 2, dtype), hessenberg, g, np.cos(angles), np.sin(angles),
              np.full(k, jj, np.int32), stop]
    expected = [RUNNING, PENDING, PENDING, BREAKDOWN, LIMIT, CONVERGED, PENDING, BREAKDOWN, RUNNING]
    return arrays, expected


def _assert_givens(out, arrays, expected, jj, dtype, first):
    """The Givens step of column jj against the reference; then what it must have done. ``first``:
    the position of the first array (ww) among the kernel's arguments."""
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(first,))
    hessenberg, g, cos, sin, inner, state = out[1][first + 1:first + 7]
    k = g.shape[1]
    assert list(state.status) == expected
    rotated = [0, 1, 4, 8]  # the columns that took the step
    assert list(inner) == [jj + 1 if c in rotated else jj for c in range(k)]
    assert list(state.checks) == [c + 1 if s == RUNNING and e != BREAKDOWN else c
                                  for c, s, e in zip(arrays[-1].checks, arrays[-1].status, expected)]
    for c in rotated:
        assert hessenberg[jj + 1, jj * k + c] == 0
        estimate = state.history[(arrays[-1].checks[c]) % state.history.shape[0], c]
        assert estimate == abs(g[jj + 1, c])
    assert state.history[4, 2] == 0  # the idle column's estimate
    for c in (2, 5, 6):  # idle, stopped, pending: untouched
        np.testing.assert_array_equal(hessenberg[:, c::k], arrays[1][:, c::k].astype(dtype))
        np.testing.assert_array_equal(g[:, c], arrays[2][:, c].astype(dtype))


@pytest.mark.parametrize("jj", [0, 3])
def test_opencl_multi_dot_givens(ref, dev, rng, dtype, jj):
    # the first pass of inner iteration j = jj + 1 takes the Givens step of Hessenberg column jj
    arrays, expected = _givens_case(rng, jj, dtype)
    k = 9
    basis, v, w = _basis(rng, N, k, dtype), _random(rng, (N, k), dtype), _random(rng, (N, k), dtype)
    j = jj + 1
    out = twin(ref, dev, "solver.gmres.multi_dot", _step(j, 0), 0, True, v, _on(basis), None, None, w, arrays[0],
               np.zeros((1, k)), np.zeros((1, k)), *arrays[1:], dtype=dtype)
    out = [o[:5] + o[7:] for o in out]  # as without z and zbasis
    # (without the basis, whose v_j is v / ||v|| with ||v|| from partial sums, and the norms)
    _assert_givens([o[:4] + o[5:7] + o[9:] for o in out], arrays, expected, jj, dtype, first=5)
    used = (j + 2) * k
    assert_sums(out[1][8][:, :used], out[0][8][:, :used], _multi_dot_magnitude(out[0][4], w, j + 1), N, dtype,
                "V^T w, w . w", factor=np.sqrt(G))


@pytest.mark.parametrize("jj", [0, 3])
def test_opencl_givens(ref, ocl, rng, dtype, jj):
    # the Givens step of Hessenberg column jj at the end of a cycle
    arrays, expected = _givens_case(rng, jj, dtype)
    out = twin(ref, ocl, "solver.gmres.givens", jj, *arrays, dtype=dtype)
    _assert_givens(out, arrays, expected, jj, dtype, first=1)


def test_opencl_givens_many_columns(ref, ocl, rng, dtype):
    # more columns than the kernel's work-group: each work-item takes several
    k, jj = 301, 2
    hessenberg = rng.standard_normal((M + 1, M * k))
    angles = rng.uniform(0, 2 * np.pi, (M, k))
    status = np.where(rng.random(k) < 0.2, CONVERGED, RUNNING)
    ww = random_partials(rng, rng.uniform(0.5, 2, k) ** 2, dtype)
    out = twin(ref, ocl, "solver.gmres.givens", jj, ww, hessenberg, rng.standard_normal((M + 1, k)), np.cos(angles),
               np.sin(angles), np.full(k, jj, np.int32), Stop(status, np.full(k, 1e-3), MAX_ITERS), dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(1,))
    assert (out[1][6] == np.where(status == RUNNING, jj + 1, jj)).all()


# -- the second pass (the update) and the DGKS correction ---------------------------------------

def _orthogonalize_args(rng, n, k, j, dtype, storage, nrm, status, parity=0, eta2=0.05):
    # step, parity, basis, w, nrm, h (V^H w and w . w), hessenberg, v (out), ww (out), h2 (out),
    # reorth (out), eta2 (the DGKS test), stop. w . w is chosen far from the DGKS threshold, so that both executors
    # decide alike: even columns lose little of their norm (no second pass), odd columns nearly
    # all of it (a second pass)
    dots = rng.uniform(-2, 2, (j + 1, k))
    h_sq = (dots ** 2).sum(axis=0)
    before = np.where(np.arange(k) % 2 == 0, 50.0, 1.01) * h_sq
    h = _padded(random_partials(rng, np.concatenate([dots.ravel(), before]), dtype), (M + 2) * k)
    return [_step(j, parity), parity, _on(_basis(rng, n, k, storage)), _random(rng, (n, k), dtype),
            np.asarray(nrm, np.float64)[None], _dot_partials(h), _random(rng, (M + 1, M * k), dtype),
            np.zeros((n, k)), np.zeros((1, k)), np.zeros((1, (M + 1) * k)), np.zeros(k, np.uint8), eta2,
            Stop(status, np.ones(k), MAX_ITERS)]


def _assert_orthogonalize(out, n, j, dtype):
    """The twins agree (the second pass flagged in the odd columns), the partial sums ww add up
    to ||v||^2, and where the second pass runs h2 to V^H v."""
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(5, 8, 9))
    k = out[0][3].shape[1]
    np.testing.assert_array_equal(out[1][10], np.arange(k) % 2)
    v = out[0][7].astype(np.float64)
    assert_sums(out[1][8], out[0][8], (v * v).sum(axis=0), n, dtype, "w' . w'", factor=np.sqrt(G))
    basis = out[0][2].astype(np.float64)
    again = np.tile(np.arange(k) % 2 == 1, j + 1)
    h2_dev, h2_ref = out[1][9][:, :(j + 1) * k], out[0][9][:, :(j + 1) * k]
    assert_sums(h2_dev[:, again], h2_ref[:, again], _dots_magnitude(basis, v, j + 1)[again], n, dtype,
                "V^T w'", factor=np.sqrt(G))


@pytest.mark.parametrize("j, parity", [(0, 0), (3, 1), (9, 0)])  # (ten basis vectors: loops of several turns)
@pytest.mark.parametrize("shape, precision", STORED_SHAPES, ids=str)
def test_opencl_orthogonalize(ref, dev, rng, dtype, shape, precision, j, parity):
    # v = w / nrm - V h (h = (V^H w) / nrm);  H[0:j+1, j] = h;  ww: ||v||^2;  the DGKS test; h2 = V^H v
    n, k = shape
    args = _orthogonalize_args(rng, n, k, j, dtype, storage_dtype(dtype, precision), rng.uniform(0.5, 2, k),
                               [RUNNING] * k, parity)
    out = twin(ref, dev, "solver.gmres.orthogonalize", *args, dtype=dtype)
    _assert_orthogonalize(out, n, j, dtype)


@pytest.mark.slow  # (the GPU layout: PoCL compiles orthogonalize for each row count)
@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("shape, precision", [((5001, 1), "keep"), ((N, 3), "reduce1")], ids=str)
def test_opencl_orthogonalize_rows_per_turn(ref, ocl, rng, monkeypatch, shape, precision, rows):
    # the GPU layout's work-items take UPDATE_ROWS rows per turn (a GPU's choice: 2), then the
    # rows left one at a time (5001 rows in 3 work-groups of 256 lanes: 6 or 7 rows a lane; 1237
    # rows, 3 columns: 4 or 5): the reference's values for any count, the same update per row
    monkeypatch.setitem(opencl_choices.UPDATE_ROWS, "gpu", rows)
    n, k = shape
    dtype = np.dtype(np.float64)
    args = _orthogonalize_args(rng, n, k, 10, dtype, storage_dtype(dtype, precision), rng.uniform(0.5, 2, k),
                               [RUNNING] * k, 1)
    out = twin(ref, taken_for(ocl, "gpu"), "solver.gmres.orthogonalize", *args, dtype=dtype)
    _assert_orthogonalize(out, n, 10, dtype)


def test_update_rows_is_a_gpus_choice(ocl):
    # two rows per turn in a GPU's layout; a CPU device's layout has no such loop (PoCL's stays)
    update_rows = opencl_choices.update_rows
    assert update_rows(taken_for(ocl, "gpu").info) == 2 and update_rows(taken_for(ocl, "cpu").info) == 1


@pytest.mark.parametrize("j", [0, 3])
def test_opencl_orthogonalize_columns(ref, dev, rng, dtype, j):
    # columns: runs; was stopped (v updated, H untouched); nrm = 0 (v = 0); runs; runs
    k = 5
    args = _orthogonalize_args(rng, N, k, j, dtype, dtype, [1.5, 0.7, 0.0, 1.2, 0.9],
                               [RUNNING, BREAKDOWN] + [RUNNING] * 3)
    out = twin(ref, dev, "solver.gmres.orthogonalize", *args, dtype=dtype)
    _assert_orthogonalize(out, N, j, dtype)
    np.testing.assert_array_equal(out[1][6][:, 1::k], args[6][:, 1::k])
    np.testing.assert_array_equal(out[1][7][:, 2], 0)


def _reorthogonalize_args(rng, dev, n, k, j, dtype, storage, status):
    # step, parity, basis, v, h2, hessenberg, reorth (the second pass in the even columns), ww
    # (the partial sums of orthogonalize, in the device's layout), stop
    from ginkpy.opencl.launch import reduction_shape
    h2 = _padded(random_partials(rng, rng.uniform(-2, 2, (j + 1) * k), dtype), (M + 1) * k)
    ww = random_partials(rng, rng.uniform(0.5, 2, k), dtype, groups=reduction_shape(dev.info, n, k).groups)
    return [_step(j, 1), 1, _on(_basis(rng, n, k, storage)), _random(rng, (n, k), dtype), _dot_partials(h2),
            _random(rng, (M + 1, M * k), dtype), (np.arange(k) % 2 == 0).astype(np.uint8), _dot_partials(ww),
            Stop(status, np.ones(k), MAX_ITERS)], ww


def _assert_reorthogonalize(out, ww, n, dtype):
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 7))
    # the second pass's columns: ||v||^2 of the new v; the others: orthogonalize's partial sums
    v = out[0][3].astype(np.float64)
    again = np.arange(v.shape[1]) % 2 == 0
    assert_sums(out[1][7][:, again], out[0][7][:, again], (v * v).sum(axis=0)[again], n, dtype, "v . v",
                factor=np.sqrt(G))
    np.testing.assert_array_equal(out[1][7][:, ~again], ww[:, ~again])


@pytest.mark.parametrize("shape, precision", STORED_SHAPES, ids=str)
def test_opencl_reorthogonalize(ref, dev, rng, dtype, shape, precision):
    # where flagged: v = v - V h2;  H[0:j+1, j] += h2;  ww: ||v||^2
    n, k = shape
    args, ww = _reorthogonalize_args(rng, dev, n, k, 3, dtype, storage_dtype(dtype, precision), [RUNNING] * k)
    out = twin(ref, dev, "solver.gmres.reorthogonalize", *args, dtype=dtype)
    _assert_reorthogonalize(out, ww, n, dtype)
    # the odd columns take no second pass: v as it was, H untouched
    np.testing.assert_array_equal(out[1][3][:, 1::2], args[3][:, 1::2])
    for c in range(1, k, 2):
        np.testing.assert_array_equal(out[1][5][:, c::k], args[5][:, c::k])


def test_opencl_reorthogonalize_columns(ref, dev, rng, dtype):
    # columns: runs; was stopped (v updated and its ||v||^2 summed, H untouched); runs; none
    # flagged at all (nothing happens)
    k = 3
    args, ww = _reorthogonalize_args(rng, dev, N, k, 0, dtype, dtype, [RUNNING, PENDING, RUNNING])
    out = twin(ref, dev, "solver.gmres.reorthogonalize", *args, dtype=dtype)
    _assert_reorthogonalize(out, ww, N, dtype)
    np.testing.assert_array_equal(out[1][5][:, 1::k], args[5][:, 1::k])
    args[6] = np.zeros(k, np.uint8)
    out = twin(ref, dev, "solver.gmres.reorthogonalize", *args, dtype=dtype)
    np.testing.assert_array_equal(out[1][3], args[3])
    np.testing.assert_array_equal(out[1][7], ww)


# -- the update of x at the end of a cycle -------------------------------------------------------

@pytest.mark.parametrize("diagonal", [False, True], ids=["plain", "jacobi"])
@pytest.mark.parametrize("n, inner, precision", [(N, [0, 1, M, 3, 2], "keep"), (5001, [M], "keep"),
                                                 (N, [0, 1, M, 3, 2], "reduce2"), (5001, [M], "reduce1")], ids=str)
def test_opencl_update(ref, dev, rng, dtype, n, inner, precision, diagonal):
    # y = R^-1 g (R the leading inner x inner triangle of H, per column);  x += V y (times diag)
    k = len(inner)
    hessenberg = rng.standard_normal((M + 1, M * k))
    for i in range(M):  # a well-conditioned triangle
        hessenberg[i, i * k:(i + 1) * k] += 4 * np.sign(hessenberg[i, i * k:(i + 1) * k])
    diag = rng.uniform(0.5, 2, n) if diagonal else None
    x = _random(rng, (n, k), dtype)
    out = twin(ref, dev, "solver.gmres.update", _on(_basis(rng, n, k, storage_dtype(dtype, precision))), hessenberg,
               _random(rng, (M + 1, k), dtype), np.asarray(inner, np.int32), diag, x, dtype=dtype)
    # y from a back substitution of up to M steps, then a sum of M products: M roundings each
    assert_twins(out, dtype, factor=M)
    for c in np.flatnonzero(np.asarray(inner) == 0):  # nothing where a column took no step
        np.testing.assert_array_equal(out[1][5][:, c], x[:, c])


# -- full solves on both executors ------------------------------------------------------------

def test_executors_agree(ref, ocl):
    # 25 iterations of GMRES(10): two restarts, two columns
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(7).standard_normal((A.shape[0], 2))
    (x_ref, log_ref), (x_ocl, log_ocl) = (_solve(e, A, b, criteria=_criteria(25, None), krylov_dim=10)
                                          for e in (ref, ocl))
    np.testing.assert_array_equal(log_ocl.iterations, log_ref.iterations)
    np.testing.assert_allclose(x_ocl, x_ref, rtol=1e-10, atol=1e-10 * np.abs(x_ref).max())
