"""Minres: its OpenCL kernels against their reference twins, and whole solves of symmetric
indefinite systems (saddle points, shifted Laplacians, Hermitian ones) against SciPy's minres
and numpy on both executors."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
import ginkpy.linalg as gl
from ginkpy.core.base.types import real_dtype
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import magnetic_laplacian_2d, poisson_2d, saddle_point

from conftest import Same, Stop, assert_twins, sum_tol, tol, twin

RUNNING, CONVERGED, LIMIT, BREAKDOWN = (StopReason.RUNNING, StopReason.CONVERGED, StopReason.ITERATION_LIMIT,
                                        StopReason.BREAKDOWN)
N = 1237  # more than a work-group, odd
G = 37    # rows of the partial sums given to the kernels
MAX_ITERS = 300
MODES = ["none", "jacobi", "operator"]
# (n, k) and a mode: one work-group and several per column on every device (in both launch
# layouts), and more columns than a work-group; each mode with each shape over the kernels
CASES = [((N, 3), "operator"), ((5001, 1), "none"), ((5001, 5), "jacobi"), ((7, 301), "jacobi")]
CASES_2 = [((N, 3), "none"), ((5001, 1), "jacobi"), ((5001, 5), "operator"), ((7, 301), "none")]
# state rows (core/solver/minres.py): beta_k, delta, cos, sin, cos_prev, sin_prev, eta
GAMMA, DELTA, COS, SIN, COS_PREV, SIN_PREV, ETA = range(7)


@pytest.fixture(params=[np.float64, np.float32, np.complex128, np.complex64],
                ids=["float64", "float32", "complex128", "complex64"])
def dtype(request, ocl):
    if np.dtype(request.param).itemsize in (8, 16) and np.dtype(request.param) != np.complex64 \
            and not ocl.info.fp64:
        pytest.skip("needs fp64")
    return np.dtype(request.param)


def _random(rng, shape, dtype):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def _partials(rng, sums, dtype, groups=G):
    """``groups`` rows of partial sums adding up to ``sums`` (random shares of each)."""
    sums = np.asarray(sums, np.complex128 if np.dtype(dtype).kind == "c" else np.float64).ravel()
    weights = rng.uniform(0.5, 1.5, (groups, sums.size))
    return (weights / weights.sum(axis=0) * sums).astype(dtype)


def _modes(mode, rng, n, k, dtype):
    """(M r or M v given, diag) of a mode: an operator's product n x k, or Jacobi's positive D^-1."""
    given = _random(rng, (n, k), dtype) if mode == "operator" else None
    diag = rng.uniform(0.5, 2, n).astype(dtype) if mode == "jacobi" else None
    return given, diag


def _state(rng, k, dtype):
    """A plausible state: rotations of modulus 1 (cos, sin), beta_k > 0, eta and delta random."""
    state = _random(rng, (7, k), dtype)
    for c, s in ((COS, SIN), (COS_PREV, SIN_PREV)):
        angle = rng.uniform(0, 2 * np.pi, k)
        phase = np.exp(1j * rng.uniform(0, 2 * np.pi, k)) if dtype.kind == "c" else 1
        state[c] = (np.cos(angle) * phase).astype(dtype)
        state[s] = np.abs(np.sin(angle)).astype(dtype)
    state[GAMMA] = rng.uniform(0.5, 2, k).astype(dtype)
    return state


@pytest.mark.parametrize("mode, masked", [("none", True), ("jacobi", False), ("operator", True)])
def test_initialize(ref, dev, rng, dtype, mode, masked):
    # columns: run, beta = 0 (r = 0: q = z = 0), r . M r < 0 and NaN (breakdowns), stopped, not in
    # the mask (with one), run
    k = 7
    r = _random(rng, (N, k), dtype)
    r[:, 1] = 0
    zr, diag = _modes(mode, rng, N, k, dtype)
    q, z, q_prev, p, p_prev = (_random(rng, (N, k), dtype) for _ in range(5))
    rz = _partials(rng, [2.0, 0.0, -1.0, np.nan, 1.5, 1.0, 0.7], dtype)
    state = _state(rng, k, dtype)
    status = np.array([RUNNING] * 4 + [CONVERGED] + [RUNNING] * 2, np.uint8)
    mask = np.array([1, 1, 1, 1, 1, 0, 1], np.uint8) if masked else None
    z_arg = None if mode == "none" else z
    out = twin(ref, dev, "solver.minres.initialize", r, zr, np.asarray(diag).reshape(-1, 1) if diag is not None
               else None, q, z_arg, q_prev, p, p_prev, rz, state, status, mask, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G))
    q_d, z_d, state_d, status_d = out[1][3], out[1][4], out[1][9], out[1][10]
    assert list(status_d) == [RUNNING, RUNNING, BREAKDOWN, BREAKDOWN, CONVERGED, RUNNING, RUNNING]
    started = [0, 1, 6] + ([] if masked else [5])
    untouched = [2, 3, 4] + ([5] if masked else [])
    beta = np.sqrt(rz.astype(np.complex128).sum(axis=0).real[started])
    np.testing.assert_allclose(np.abs(state_d[ETA, started]), beta, rtol=np.sqrt(G) * tol(dtype))
    assert (state_d[COS, started] == 1).all() and not state_d[[GAMMA, DELTA, SIN, COS_PREV, SIN_PREV]][:, started].any()
    assert not q_d[:, 1].any() and not out[1][5][:, started].any() and not out[1][6][:, started].any()
    np.testing.assert_allclose(q_d[:, 0], r[:, 0] / beta[0], rtol=np.sqrt(G) * tol(dtype))
    if mode != "none":
        assert not z_d[:, 1].any()
    for i, before in ((3, q), (5, q_prev), (9, state)):
        np.testing.assert_array_equal(out[1][i][:, untouched], before[:, untouched])


def _step_1_args(mode, rng, n, k, dtype, stop, norms, check):
    v, q, q_prev = (_random(rng, (n, k), dtype) for _ in range(3))
    _, diag = _modes(mode, rng, n, k, dtype)
    za = _partials(rng, rng.uniform(-2, 2, k), dtype)
    state = _state(rng, k, dtype)
    rr = None
    if mode == "none":
        state[ETA] = norms.astype(dtype)  # the check's norm is |eta|
    else:
        rr = _partials(rng, norms ** 2, dtype)
    vz = None if mode == "operator" else np.zeros((1, k))
    return [v, q, q_prev, None if diag is None else diag.reshape(-1, 1), za, rr, vz, state,
            _random(rng, (7, k), dtype), stop, check]


def _assert_vz(out, mode, args, n, dtype, columns):
    """The partial sums of v . M v of the updated v (those of ``columns``)."""
    if mode == "operator":
        return
    v = out[0][0].astype(np.complex128)
    diag = np.ones((n, 1)) if args[3] is None else args[3].real.astype(np.float64)
    magnitude = (np.abs(v) ** 2 * diag).sum(axis=0)
    err = np.abs(out[1][6].astype(np.complex128).sum(axis=0) - out[0][6].astype(np.complex128).sum(axis=0))
    bound = np.sqrt(G) * sum_tol(dtype, n) * magnitude
    assert (err[columns] <= bound[columns]).all(), err / bound


@pytest.mark.parametrize("shape, mode", CASES, ids=str)
def test_step_1(ref, dev, rng, dtype, mode, shape):
    # every column runs on: the check records its norm; v = v - alpha q - beta q_prev; state_old = state
    n, k = shape
    norms = rng.uniform(1, 2, k)
    stop = Stop([RUNNING] * k, 0.5 * norms, MAX_ITERS, rng.integers(0, MAX_ITERS, k))
    args = _step_1_args(mode, rng, n, k, dtype, stop, norms, 1)
    out = twin(ref, dev, "solver.minres.step_1", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(6,))
    _assert_vz(out, mode, args, n, dtype, slice(None))
    assert (out[1][9].status == RUNNING).all() and (out[1][9].checks == stop.checks + 1).all()
    np.testing.assert_array_equal(out[1][8], args[7])  # state_old = state


@pytest.mark.parametrize("mode, check", [("none", 1), ("jacobi", 1), ("operator", 1), ("jacobi", 0)])
def test_step_1_columns(ref, dev, rng, dtype, mode, check):
    # columns: runs, converges, diverges (NaN norm), reaches its limit, was stopped, runs;
    # without the check only the stopped one stays untouched and nothing is recorded
    k = 6
    norms = np.array([2.0, 0.5, np.nan, 2.0, 2.0, 2.0])
    stop = Stop([RUNNING] * 4 + [BREAKDOWN, RUNNING], np.ones(k), MAX_ITERS, [3, 3, 3, MAX_ITERS, 3, 299])
    args = _step_1_args(mode, rng, N, k, dtype, stop, norms, check)
    out = twin(ref, dev, "solver.minres.step_1", *args, dtype=dtype)
    state = out[1][9]
    if check:
        # a column at its limit: only the check's writer stops it, the others may still update
        # its v (which it no longer uses: common.cl, stop_check)
        out[0][0][:, 3] = out[1][0][:, 3] = 0
        assert list(state.status) == [RUNNING, CONVERGED, StopReason.DIVERGED, LIMIT, BREAKDOWN, RUNNING]
        assert list(state.checks) == [4, 4, 4, MAX_ITERS + 1, 3, 300]
        stopped = [1, 2, 4]
    else:
        assert list(state.status) == [RUNNING] * 4 + [BREAKDOWN, RUNNING]
        assert list(state.checks) == list(stop.checks)
        stopped = [4]
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(6,))
    _assert_vz(out, mode, args, N, dtype, [c for c in range(k) if c != 3 or not check])
    np.testing.assert_array_equal(out[1][0][:, stopped], args[0][:, stopped])


def _step_2_args(mode, rng, n, k, dtype, alpha, beta2, status, state_old=None):
    x, r, p, p_prev, q, q_prev, z, v = (_random(rng, (n, k), dtype) for _ in range(8))
    z_tilde, diag = _modes(mode, rng, n, k, dtype)
    if mode == "none":
        r = z = None
    rr = None if mode == "none" else np.zeros((1, k))
    state_old = _state(rng, k, dtype) if state_old is None else state_old
    return [x, r, p, p_prev, q, q_prev, z, v, z_tilde, None if diag is None else diag.reshape(-1, 1),
            _partials(rng, alpha, dtype), _partials(rng, beta2, dtype), state_old, _random(rng, (7, k), dtype),
            rr, np.asarray(status, np.uint8)]


@pytest.mark.parametrize("shape, mode", CASES_2, ids=str)
def test_step_2(ref, dev, rng, dtype, mode, shape):
    # every column runs: the rotations, p, x, q, z (and r) updated, the state written
    n, k = shape
    args = _step_2_args(mode, rng, n, k, dtype, rng.uniform(-2, 2, k), rng.uniform(0.5, 2, k), [RUNNING] * k)
    out = twin(ref, dev, "solver.minres.step_2", *args, dtype=dtype)
    assert_twins(out, dtype, factor=4 * np.sqrt(G), skip=(14,))
    _assert_rr(out, mode, n, dtype)


def _assert_rr(out, mode, n, dtype):
    """The partial sums of r . r of the (updated) r of every column."""
    if mode == "none":
        return
    r = out[0][1].astype(np.complex128)
    err = np.abs(out[1][14].astype(np.complex128).sum(axis=0) - out[0][14].astype(np.complex128).sum(axis=0))
    assert (err <= 4 * np.sqrt(G) * sum_tol(dtype, n) * (np.abs(r) ** 2).sum(axis=0)).all()


@pytest.mark.parametrize("mode", MODES)
def test_step_2_columns(ref, dev, rng, dtype, mode):
    # columns: runs, was stopped (untouched), v . M v < 0 beyond rounding (breakdown), v . M v = 0
    # (the Krylov space holds the solution: q = z = 0, s = 0, eta = 0), a singular rotated T
    # (alpha = beta_k = 0 and v . M v = 0: breakdown), v . M v NaN (breakdown), runs
    k = 7
    state_old = _state(rng, k, dtype)
    state_old[GAMMA, 4] = 0
    args = _step_2_args(mode, rng, N, k, dtype, [1.0, 1.0, 1.0, 0.7, 0.0, 1.0, -1.3],
                        [1.5, 1.0, -1.0, 0.0, 0.0, np.nan, 0.8], [RUNNING, CONVERGED] + [RUNNING] * 5, state_old)
    out = twin(ref, dev, "solver.minres.step_2", *args, dtype=dtype)
    assert_twins(out, dtype, factor=4 * np.sqrt(G), skip=(14,))
    _assert_rr(out, mode, N, dtype)
    status, state = out[1][15], out[1][13]
    assert list(status) == [RUNNING, CONVERGED, BREAKDOWN, RUNNING, BREAKDOWN, BREAKDOWN, RUNNING]
    untouched = [1, 2, 4, 5]
    for i in (0, 2, 3, 4, 5, 13):
        np.testing.assert_array_equal(out[1][i][:, untouched], args[i][:, untouched])
    assert not out[1][4][:, 3].any() and state[SIN, 3] == 0 and state[ETA, 3] == 0 and state[GAMMA, 3] == 0
    np.testing.assert_array_equal(out[1][5][:, 3], args[4][:, 3])  # q_prev = q


# -- whole solves ---------------------------------------------------------------------------------

def _shifted_laplacian(n, shift):
    return (poisson_2d(n) - shift * sp.identity(n * n)).tocsr()


PROBLEMS = {"saddle_point": lambda: saddle_point(12), "shifted_laplacian": lambda: _shifted_laplacian(20, 0.5),
            "negative_definite": lambda: -poisson_2d(15)}


@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_against_scipy_on_indefinite_systems(exec, problem):
    # the same verdict as SciPy's minres (converged), a residual that meets the tolerance (SciPy's
    # minres stops on weaker estimates), and the same solution as a direct solve
    A = PROBLEMS[problem]()
    b = np.random.default_rng(3).standard_normal(A.shape[0])
    x_scipy, info_scipy = spla.minres(A, b, rtol=1e-10)
    x, info = gl.minres(A, b, rtol=1e-10, executor=exec)
    assert info == info_scipy == 0
    assert np.linalg.norm(A @ x - b) <= 1e-10 * np.linalg.norm(b)
    exact = spla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(x - exact) <= 1e-7 * np.linalg.norm(exact)
    assert np.linalg.norm(x_scipy - exact) <= 1e-5 * np.linalg.norm(exact)


def test_iterations_as_scipy_at_the_same_accuracy(exec):
    # SciPy's minres (the same Lanczos process and rotations) first has ||b - A x|| <= 1e-8 ||b||
    # at about the iteration where ginkpy's stops
    A = _shifted_laplacian(20, 0.5)
    b = np.random.default_rng(4).standard_normal(A.shape[0])
    residuals = []
    spla.minres(A, b, rtol=1e-14, maxiter=2000,
                callback=lambda xk: residuals.append(np.linalg.norm(A @ xk - b) / np.linalg.norm(b)))
    scipy_iterations = 1 + next(i for i, r in enumerate(residuals) if r <= 1e-8)
    solver = gk.solver.Minres.build().with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)) \
        .on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    log = gk.log.Convergence()
    solver.add_logger(log)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    assert log.has_converged and abs(log.num_iterations - scipy_iterations) <= 3, (log.num_iterations,
                                                                                   scipy_iterations)


PRECONDITIONERS = {
    "none": lambda A, exec: None,
    "jacobi": lambda A, exec: gk.preconditioner.Jacobi.build().with_max_block_size(1),
    # an operator of its own: the inverse of |diag A| (SPD where A's diagonal has both signs)
    "operator": lambda A, exec: gk.matrix.Csr.from_scipy(exec, sp.diags(1 / np.abs(A.diagonal())).tocsr(), A.dtype),
}


@pytest.mark.parametrize("precond", list(PRECONDITIONERS))
def test_several_right_hand_sides_each_as_alone(exec, precond):
    # each column stops on its own at the iteration and with the x of its own solve
    A = _shifted_laplacian(16, 0.7)
    b = np.random.default_rng(5).standard_normal((A.shape[0], 3))
    b[:, 1] = A @ np.ones(A.shape[0])

    def solve(rhs):
        params = gk.solver.Minres.build().with_criteria(
            gk.stop.ResidualNorm.build().with_reduction_factor(1e-9), gk.stop.Iteration.build().with_max_iters(1000))
        M = PRECONDITIONERS[precond](A, exec)
        if M is not None:
            params.with_preconditioner(M)
        solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
        log = gk.log.Convergence()
        solver.add_logger(log)
        x = gk.matrix.Dense.zeros(exec, rhs.shape)
        solver.apply(gk.matrix.Dense.from_numpy(exec, rhs), x)
        return x.to_numpy(), log

    x, log = solve(b)
    assert log.stop_reasons == [CONVERGED] * 3
    for c in range(3):
        x_c, log_c = solve(b[:, [c]])
        assert abs(int(log_c.iterations[0]) - int(log.iterations[c])) <= 2
        np.testing.assert_allclose(x[:, c], x_c[:, 0], rtol=1e-6, atol=1e-7 * np.abs(x_c).max())
        assert np.linalg.norm(A @ x[:, c] - b[:, c]) <= 1e-9 * np.linalg.norm(b[:, c])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_hermitian_indefinite_complex(exec, dtype):
    # the magnetic Laplacian shifted into indefiniteness: complex rotations (Ginkgo's kernels, which
    # leave out conj(c), part from the residual here after ~45 iterations)
    if dtype == np.complex128 and exec.backend == "opencl" and not exec.info.fp64:
        pytest.skip("needs fp64")
    A = magnetic_laplacian_2d(14, shift=-0.7)
    rng = np.random.default_rng(6)
    b = (rng.standard_normal(A.shape[0]) + 1j * rng.standard_normal(A.shape[0])).astype(dtype)
    rtol = 1e-9 if dtype == np.complex128 else 1e-4
    x, info = gl.minres(A.astype(dtype), b, rtol=rtol, executor=exec)
    assert info == 0 and x.dtype == dtype
    assert np.linalg.norm(A @ x - b) <= rtol * np.linalg.norm(b) * (1 + 1e-5)
    # fewer iterations than unknowns (without conj(c) it reaches the 5 n limit)
    its = []
    gl.minres(A.astype(dtype), b, rtol=rtol, executor=exec, callback=lambda xk: its.append(1))
    assert len(its) < A.shape[0]


def test_float32_converges_where_float32_resolves(exec):
    A = _shifted_laplacian(16, 0.5).astype(np.float32)
    b = np.random.default_rng(7).standard_normal(A.shape[0]).astype(np.float32)
    x, info = gl.minres(A, b, rtol=1e-4, executor=exec)
    assert info == 0 and x.dtype == np.float32
    assert np.linalg.norm(A @ x - b) <= 1e-4 * np.linalg.norm(b) * (1 + 1e-5)


def test_an_indefinite_preconditioner_is_a_breakdown_not_nan(exec):
    # Jacobi of a matrix whose diagonal has both signs: M is indefinite, r . M r < 0 at the start
    A = sp.diags([2.0, -3.0, 1.0, -1.0]).tocsr()
    b = np.array([0.1, 5.0, 0.1, 0.1])
    x, info = gl.minres(A, b, M="jacobi", executor=exec)
    assert info == -1 and np.isfinite(x).all()


def test_a_non_symmetric_matrix(exec):
    # SciPy's test_asymmetric_fail: check=True refuses it; without, the solve ends honestly
    A = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [5.0, 0.0, 2.0]])
    b = np.ones(3)
    with pytest.raises(ValueError, match="A is not symmetric"):
        gl.minres(A, b, check=True, executor=exec)
    x, info = gl.minres(A, b, maxiter=50, executor=exec)
    assert np.isfinite(x).all() and (info == 0) == (np.linalg.norm(A @ x - b) <= 1e-5 * np.linalg.norm(b))


def test_check_refuses_a_non_symmetric_preconditioner(exec):
    A = _shifted_laplacian(5, 0.5)
    M = sp.diags([np.ones(25), 0.5 * np.ones(24)], [0, 1]).tocsr()
    with pytest.raises(ValueError, match="preconditioner M is not symmetric"):
        gl.minres(A, np.ones(25), M=M, check=True, executor=exec)
    x, info = gl.minres(A, np.ones(25), M=sp.identity(25).tocsr(), check=True, executor=exec)
    assert info == 0


def test_shift_solves_the_shifted_system(exec):
    A = poisson_2d(10)
    b = np.random.default_rng(8).standard_normal(100)
    x, info = gl.minres(A, b, shift=1.3, rtol=1e-10, executor=exec)
    shifted = (A - 1.3 * sp.identity(100)).tocsr()
    assert info == 0 and np.linalg.norm(shifted @ x - b) <= 1e-10 * np.linalg.norm(b)
    # a ginkpy matrix and a LinearOperator take the same shift
    x2, _ = gl.minres(gk.matrix.Csr.from_scipy(exec, A), b, shift=1.3, rtol=1e-10)
    x3, _ = gl.minres(spla.aslinearoperator(A), b, shift=1.3, rtol=1e-10, executor=exec)
    np.testing.assert_allclose(x2, x, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(x3, x, rtol=1e-7, atol=1e-9)
    with pytest.raises(ValueError, match="shift must be a finite number"):
        gl.minres(A, b, shift=np.nan, executor=exec)


def test_show_prints_the_solve(capsys, ref):
    gl.minres(_shifted_laplacian(6, 0.5), np.ones(36), show=True, executor=ref)
    out = capsys.readouterr().out
    assert out.startswith("Enter minres.") and "Exit  minres.   converged" in out


def test_the_doors(ref):
    # builder, configuration, the command line's names
    assert gk.config.parse({"type": "solver::Minres"}).product is gk.solver.Minres
    assert gk.config.short_names("solver")["minres"] is gk.solver.Minres
    assert real_dtype(np.complex64) == np.float32
