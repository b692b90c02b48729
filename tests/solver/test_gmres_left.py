"""Gmres with left preconditioning (``preconditioner_side="left"``, SciPy's gmres; issue 32): the
restart_left kernel by hand and against its reference twin, solves on both executors (every
ortho_method, several right-hand sides, CbGmres), the verdict on the true residual alone, the
launches of an inner iteration, and ``gk.linalg.gmres`` (left with M) against SciPy's gmres with
the same M on ../shared/matrices and generated problems."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
import ginkpy.reference.solver.gmres_kernels as reference_gmres
from conftest import (PARTIAL_GROUPS as G, Stop, assert_twins, matrix_path, random_partials, tol, twin)
from ginkpy.core.base.types import real_dtype
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d
import krylov_cases

dtype = krylov_cases.dtype  # the kernel tests' fixture: float64, float32
RUNNING, CONVERGED, LIMIT, BREAKDOWN, PENDING = (StopReason.RUNNING, StopReason.CONVERGED,
                                                 StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN, StopReason.PENDING)
MAX_ITERS, M = 300, 6

# -- restart_left: the true residual's check, SciPy's inner tolerance as the scale of g ----------

# columns: first check, runs; first check, converges; PENDING, the true residual fails (f 0.5 ->
# 0.125); the cycle ran out (f 0.8 -> 1); ||M r|| = 0 where ||r|| > 0 (breakdown); PENDING,
# confirmed; r = 0 without a residual criterion (runs idle: v = 0, g_0 = 0); stopped before;
# PENDING failing again at f 1e-17 (-> eps); ||M r|| NaN (breakdown); the cycle ran out, its true
# residual meets the threshold (converged, its norm in place of the last estimate)
NORMS = np.array([2.0, 0.5, 2.0, 3.0, 2.0, 0.5, 0.0, 2.0, 2.0, 2.0, 0.5])
ZNORMS = np.array([4.0, 1.0, 0.5, 6.0, 0.0, 1.0, 0.0, 1.0, 3.0, np.nan, 2.0])
THRESHOLD = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0]
STATUS = [RUNNING, RUNNING, PENDING, RUNNING, RUNNING, PENDING, RUNNING, BREAKDOWN, PENDING, RUNNING, RUNNING]
CHECKS = [0, 0, 7, 9, 9, 7, 0, 9, 7, 9, 9]
FACTOR = np.array([0.3, 0.3, 0.5, 0.8, 0.8, 0.5, 0.3, 0.5, 1e-17, 0.8, 0.5])


def _restart_left_args(rng, n, dtype):
    k = len(NORMS)
    z = rng.standard_normal((n, k)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        z += 1j * rng.standard_normal((n, k))
    z[:, 4] = 0
    z[:, 6] = 0
    return [z, random_partials(rng, NORMS ** 2, dtype), random_partials(rng, ZNORMS ** 2, dtype),
            rng.standard_normal((n, k)).astype(dtype), rng.standard_normal((M + 1, k)).astype(dtype),
            rng.standard_normal((1, k)).astype(dtype), lambda exec: exec.from_host(FACTOR.astype(real_dtype(dtype))),
            np.full(k, 3, np.int32), np.array([5, 7], np.int32), Stop(STATUS, THRESHOLD, MAX_ITERS, CHECKS)]


def _check_restart_left(out, args, dtype, rtol):
    z, _, _, v, g, unscale = args[:6]
    v_out, g_out, unscale_out, factor, inner, step, state = out[3:10]
    assert list(state.status) == [RUNNING, CONVERGED, RUNNING, RUNNING, BREAKDOWN, CONVERGED, RUNNING, BREAKDOWN,
                                  RUNNING, BREAKDOWN, CONVERGED]
    for c in (2, 5, 8, 10):  # the true residual's norm in place of the estimate
        assert state.history[CHECKS[c] - 1, c] == pytest.approx(NORMS[c], rel=rtol)
    assert (state.history[:, [3, 4, 9]] == -1).all()  # (no check: the cycle restarts)
    assert list(state.checks) == [1, 1] + CHECKS[2:6] + [1] + CHECKS[7:]
    assert not inner.any() and step[0] == 0
    eps = np.finfo(dtype).eps
    runs = [0, 2, 3, 8]
    np.testing.assert_allclose(factor[runs], [1.0, 0.125, 1.0, eps], rtol=rtol)
    # g_0 = max(thr / f, ||r||), unscale = ||M r|| / g_0
    g0 = np.array([2.0, 8.0, 3.0, 1 / eps])
    np.testing.assert_allclose(g_out[0, runs], g0, rtol=rtol)
    np.testing.assert_allclose(unscale_out[0, runs], ZNORMS[runs] / g0, rtol=rtol)
    np.testing.assert_allclose(v_out[:, runs], z[:, runs] / ZNORMS[runs], rtol=rtol, atol=rtol)
    assert g_out[0, 6] == 0 and unscale_out[0, 6] == 0 and not v_out[:, 6].any()  # idle
    stopped = [1, 4, 5, 7, 9, 10]
    np.testing.assert_array_equal(g_out[:, stopped], g[:, stopped])
    np.testing.assert_array_equal(unscale_out[:, stopped], unscale[:, stopped])
    np.testing.assert_array_equal(v_out[:, [5, 7, 10]], v[:, [5, 7, 10]])  # (stopped by the restart or before)


def test_restart_left_by_hand(ref, rng):
    args = _restart_left_args(rng, 13, np.float64)
    out = twin(ref, ref, "solver.gmres.restart_left", *args)
    _check_restart_left(out[0], args, np.float64, 1e-14)


@pytest.mark.parametrize("n", [1237, 5001, 7])
def test_opencl_restart_left(ref, dev, rng, dtype, n):
    args = _restart_left_args(rng, n, dtype)
    out = twin(ref, dev, "solver.gmres.restart_left", *args, dtype=dtype)
    # (v of a column stopped at its first check may be written by work-groups that read its
    # status before the writer set it: compared on the other columns by _check_restart_left)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(1, 2, 3))
    _check_restart_left(out[1], args, dtype, np.sqrt(G) * tol(dtype))


def test_opencl_restart_left_complex(ref, ocl, rng):
    args = _restart_left_args(rng, 1237, np.complex128)
    out = twin(ref, ocl, "solver.gmres.restart_left", *args, dtype=np.complex128)
    assert_twins(out, np.complex128, factor=np.sqrt(G), skip=(1, 2, 3))
    _check_restart_left(out[1], args, np.complex128, np.sqrt(G) * tol(np.complex128))


# -- solves ------------------------------------------------------------------------------------

def _left(exec, S, M, *, rtol=1e-10, max_iters=3000, name="Gmres", **params):
    p = getattr(gk.solver, name).build().with_preconditioner_side("left").with_preconditioner(M).with_criteria(
        gk.stop.Iteration.build().with_max_iters(max_iters), gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    return p.on(exec).generate(gk.matrix.Csr.from_scipy(exec, S))


def _apply(solver, b):
    exec = solver.executor
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    x = gk.matrix.Dense.zeros(exec, b.shape, solver.dtype)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b, solver.dtype), x)
    return x.to_numpy(), logger


def test_left_with_the_exact_inverse_takes_one_iteration(exec):
    S = convection_diffusion_2d(6)
    inverse = gk.matrix.Dense.from_numpy(exec, np.linalg.inv(S.toarray()))
    b = np.random.default_rng(1).standard_normal((S.shape[0], 1))
    x, log = _apply(_left(exec, S, inverse), b)
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x, spla.spsolve(S.tocsc(), b)[:, None], rtol=1e-8)


@pytest.mark.parametrize("ortho", ["mgs", "cgs", "cgs2"])
@pytest.mark.parametrize("M", ["gauss_seidel", "jacobi"])
def test_left_solves_agree_on_both_executors(ref, ocl, ortho, M):
    # three right-hand sides (one converging at once: b = 0), restarts every 10 iterations
    S = convection_diffusion_2d(16)
    rng = np.random.default_rng(2)
    b = rng.standard_normal((S.shape[0], 3))
    b[:, 1] = 0
    prec = (gk.preconditioner.GaussSeidel.build() if M == "gauss_seidel"
            else gk.preconditioner.Jacobi.build().with_max_block_size(1))
    results = [_apply(_left(e, S, prec, krylov_dim=10, ortho_method=ortho), b) for e in (ref, ocl)]
    exact = spla.spsolve(S.tocsc(), b)
    for x, log in results:
        assert log.result.converged.all()
        assert np.linalg.norm(b - S @ x, axis=0).max() <= 1e-10 * np.linalg.norm(b, axis=0).max()
        assert (np.linalg.norm(x - exact, axis=0) <= 1e-6 * np.linalg.norm(exact, axis=0) + 1e-12).all()
    iterations = [log.result.iterations for _, log in results]
    assert (abs(iterations[0] - iterations[1]) <= 0.25 * iterations[0] + 2).all(), iterations


def test_left_complex_solves_agree(ref, ocl):
    from ginkpy.problems import helmholtz_2d
    S = helmholtz_2d(16).astype(np.complex128)
    rng = np.random.default_rng(5)
    b = rng.standard_normal((S.shape[0], 2)) + 1j * rng.standard_normal((S.shape[0], 2))
    results = [_apply(_left(e, S, gk.preconditioner.Ilu.build(), rtol=1e-10), b) for e in (ref, ocl)]
    exact = spla.spsolve(S.tocsc(), b)
    for x, log in results:
        assert log.result.converged.all()
        assert (np.linalg.norm(b - S @ x, axis=0) <= 1e-10 * np.linalg.norm(b, axis=0)).all()
        assert (np.linalg.norm(x - exact, axis=0) <= 1e-6 * np.linalg.norm(exact, axis=0)).all()


@pytest.mark.parametrize("precision", ["reduce1", "keep"])
def test_left_cb_gmres(exec, precision):
    S = convection_diffusion_2d(16)
    b = np.ones((S.shape[0], 1))
    x, log = _apply(_left(exec, S, gk.preconditioner.Ilu.build(), rtol=1e-8, name="CbGmres",
                          storage_precision=precision), b)
    assert log.has_converged and np.linalg.norm(b - S @ x) <= 1e-8 * np.linalg.norm(b)


def test_left_parameters(ref):
    assert gk.solver.Gmres.build().preconditioner_side == "right"
    S = poisson_2d(4)
    with pytest.raises(ValueError, match="preconditioner_side"):
        gk.solver.Gmres.build().with_preconditioner_side("up")
    with pytest.raises(ValueError, match="flexible"):
        _left(ref, S, gk.preconditioner.Ilu.build(), flexible=True)
    with pytest.raises(ValueError, match="right"):  # (SciPy's gcrotmk is right-preconditioned too)
        _left(ref, S, gk.preconditioner.Ilu.build(), name="Gcrotmk")
    # without a preconditioner left is right: the same iterations
    b = np.ones((S.shape[0], 1))
    logs = [_apply(gk.solver.Gmres.build().with_preconditioner_side(side).on(ref).generate(
        gk.matrix.Csr.from_scipy(ref, S)), b)[1] for side in ("left", "right")]
    assert logs[0].num_iterations == logs[1].num_iterations


def test_left_update_keeps_the_row_scaled_matrix(ref):
    # scalar Jacobi is folded into D^-1 A; new values of A reach it through update()
    S = convection_diffusion_2d(10)
    A = gk.matrix.Csr.from_scipy(ref, S)
    solver = (gk.solver.Gmres.build().with_preconditioner_side("left").with_preconditioner(
        gk.preconditioner.Jacobi.build().with_max_block_size(1)).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(ref).generate(A))
    b = np.ones((S.shape[0], 1))
    _apply(solver, b)
    S2 = (S + 3 * sp.identity(S.shape[0])).tocsr()
    A.copy_values_from(S2)
    solver.update()
    x, log = _apply(solver, b)
    assert log.has_converged and np.linalg.norm(b - S2 @ x) <= 1e-10 * np.linalg.norm(b)


# -- the verdict: the true residual alone -------------------------------------------------------

def _distorting_diagonal(S):
    """Jacobi's D^-1 times factors spread over 0.1 .. 10: ||M r|| weighs r's entries up to 100
    apart from Jacobi's, so that an estimate of ||M r|| that meets SciPy's inner tolerance may
    leave ||r|| above the criterion (SciPy's gmres and ginkpy's converge, in the same 337
    iterations on convection_diffusion_2d(12))."""
    n = S.shape[0]
    return sp.diags(np.logspace(-1, 1, n)[np.random.default_rng(3).permutation(n)] / S.diagonal()).tocsr()


def test_left_never_reports_a_convergence_the_true_residual_does_not_meet(exec, monkeypatch):
    # (on the reference executor the restarts count the columns whose estimate met SciPy's inner
    # tolerance but whose true residual did not: the path this test is about)
    S = convection_diffusion_2d(12)
    n = S.shape[0]
    b = np.random.default_rng(4).standard_normal((n, 2))
    false_estimates = []
    restart_left = reference_gmres.restart_left

    def counting(exec_, z, rr, zz, v, g, unscale, factor, inner, step, stop):
        pending = stop.status == PENDING
        restart_left(exec_, z, rr, zz, v, g, unscale, factor, inner, step, stop)
        false_estimates.append(int((pending & (stop.status == RUNNING)).sum()))

    if exec.backend == "reference":
        monkeypatch.setitem(exec._kernels, "solver.gmres.restart_left", counting)
    for rtol, max_iters in ((1e-8, 3000), (1e-9, 3000), (1e-12, 40)):
        x, log = _apply(_left(exec, S, gk.matrix.Csr.from_scipy(exec, _distorting_diagonal(S)), rtol=rtol,
                              max_iters=max_iters, krylov_dim=20), b)
        true = np.linalg.norm(b - S @ x, axis=0) / np.linalg.norm(b, axis=0)
        converged = log.result.converged
        for c in range(2):
            assert converged[c] == (true[c] <= rtol * (1 + 1e-6)), (rtol, c, true, log.result.stop_reasons)
        assert converged.all() == (max_iters == 3000)
    if exec.backend == "reference":  # the path the test is about was taken
        assert sum(false_estimates) > 0


def test_left_matches_scipy_on_the_distorting_preconditioner(ref):
    S = convection_diffusion_2d(12)
    b = np.random.default_rng(4).standard_normal(S.shape[0])
    M = _distorting_diagonal(S)
    ours, theirs = _linalg_and_scipy(ref, S, b, M, M, rtol=1e-9, restart=20)
    assert ours[0] == theirs[0] == 0
    assert ours[1] <= 1.5 * theirs[1], (ours, theirs)


# -- launches ------------------------------------------------------------------------------------

@pytest.mark.parametrize("M", ["jacobi", "gauss_seidel"])
def test_left_inner_iteration_costs_the_launches_of_right(ocl, M):
    # 40 and 100 inner iterations (iteration limit only): per inner iteration left costs what
    # right costs (scalar Jacobi 3, Gauss-Seidel 4 on PoCL); no allocation or read per iteration
    S = convection_diffusion_2d(30)
    b = np.random.default_rng(0).standard_normal((S.shape[0], 1))
    prec = (gk.preconditioner.GaussSeidel.build() if M == "gauss_seidel"
            else gk.preconditioner.Jacobi.build().with_max_block_size(1))
    per_iteration = {}
    for side in ("left", "right"):
        counts = []
        for iters in (40, 100):
            solver = (gk.solver.Gmres.build().with_preconditioner_side(side).with_preconditioner(prec)
                      .with_criteria(gk.stop.Iteration.build().with_max_iters(iters)).on(ocl)
                      .generate(gk.matrix.Csr.from_scipy(ocl, S)))
            _apply(solver, b)
            before = dict(ocl.counters)
            _apply(solver, b)
            counts.append({key: ocl.counters[key] - before[key] for key in before})
        assert counts[0]["allocations"] == counts[1]["allocations"]
        assert counts[0]["reads"] == counts[1]["reads"]
        per_iteration[side] = (counts[1]["launches"] - counts[0]["launches"]) / 60
    # (the end of a cycle every 30 iterations: right 6 to 9 launches, left 10 on PoCL; how many
    # launches Gauss-Seidel takes is the device's, the same on both sides)
    assert per_iteration["left"] <= per_iteration["right"] + 0.2, per_iteration
    if M == "jacobi":  # (folded into D^-1 A: no launch of its own, as on the right)
        assert per_iteration["left"] <= 3 + 0.35, per_iteration


# -- gk.linalg.gmres against SciPy's gmres --------------------------------------------------------

def _scipy_m(S, M):
    """SciPy's M equal to ginkpy's named one: scalar Jacobi, forward Gauss-Seidel (a triangular
    solve with tril(A)), or ginkpy's own ILU applied on the reference executor."""
    if M == "jacobi":
        d = S.diagonal()
        return spla.LinearOperator(S.shape, matvec=lambda r: r.ravel() / d)
    if M == "gauss_seidel":
        L = sp.tril(S, format="csr")
        return spla.LinearOperator(S.shape, matvec=lambda r: spla.spsolve_triangular(L, r.ravel()))
    ref = gk.ReferenceExecutor()
    op = gk.preconditioner.Ilu.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, S))

    def apply(r):
        out = gk.matrix.Dense.zeros(ref, (S.shape[0], 1))
        op.apply(gk.matrix.Dense.from_numpy(ref, r.ravel()), out)
        return out.to_numpy()[:, 0]
    return spla.LinearOperator(S.shape, matvec=apply)


_SCIPY_RESULTS: dict = {}  # SciPy's (info, count) per case: the same for the case's two executors


def _scipy_once(key, run):
    """``run()`` (a SciPy solve's (info, count)) once per process for ``key`` (None: every time):
    a case's reference and OpenCL runs compare with the same SciPy solve, which is often the
    slower half (tests/conftest.py keeps a file on one xdist worker)."""
    if key is None:
        return run()
    if key not in _SCIPY_RESULTS:
        _SCIPY_RESULTS[key] = run()
    return _SCIPY_RESULTS[key]


def _counted(solve, S, b, m, **kwargs):
    """(info, callbacks) of ``solve(S, b, M=m, **kwargs)``; a ginkpy solve that converged has its
    true residual within rtol ||b||."""
    count = [0]
    with np.errstate(all="ignore"):
        x, info = solve(S, b, atol=0.0, M=m, callback=lambda *_: count.__setitem__(0, count[0] + 1), **kwargs)
    if "executor" in kwargs and info == 0:
        assert np.linalg.norm(b - S @ x) <= kwargs["rtol"] * np.linalg.norm(b) * (1 + 1e-6)
    return info, count[0]


def _linalg_and_scipy(exec, S, b, M, M_scipy, rtol=1e-8, restart=30, maxiter=100, scipy_key=None):
    """(info, inner iterations) of gk.linalg.gmres with M and of SciPy's gmres with M_scipy (None:
    ``_scipy_m(S, M)``, made only where SciPy runs), the same restart, rtol and limit of restart
    cycles; SciPy's once per ``scipy_key`` (:func:`_scipy_once`)."""
    kwargs = {"rtol": rtol, "restart": restart, "maxiter": maxiter, "callback_type": "pr_norm"}
    ours = _counted(gk.linalg.gmres, S, b, M, executor=exec, **kwargs)
    gk.linalg.clear_cache()
    key = None if scipy_key is None else ("gmres", scipy_key, rtol, restart, maxiter)
    return ours, _scipy_once(key, lambda: _counted(spla.gmres, S, b, _scipy_m(S, M) if M_scipy is None else M_scipy,
                                                   **kwargs))


def _assert_like_scipy(ours, theirs):
    """Where SciPy's gmres converges, ginkpy's does, in at most 1.5x its inner iterations; where
    it does not, ginkpy's converges (its true residual checked) or has SciPy's info."""
    if theirs[0] == 0:
        assert ours[0] == 0 and ours[1] <= 1.5 * theirs[1], (ours, theirs)
    else:
        assert ours[0] in (0, theirs[0]), (ours, theirs)


GENERATED = {"convection_diffusion_2d(24)": lambda: convection_diffusion_2d(24),
             "poisson_2d(24)": lambda: poisson_2d(24)}


@pytest.mark.parametrize("M", ["jacobi", "gauss_seidel", "ilu"])
@pytest.mark.parametrize("problem", list(GENERATED))
def test_linalg_gmres_like_scipy_on_generated_problems(exec, problem, M):
    S = GENERATED[problem]().tocsr()
    b = S @ np.ones(S.shape[0])
    _assert_like_scipy(*_linalg_and_scipy(exec, S, b, M, None, scipy_key=(problem, M)))


MATRICES = ["cage8", "gr_900_900_crg", "pde900", "orsirr_1", "watt_2", "add32", "ani4", "lap3D_7pt_n20", "nos6",
            "1138_bus"]
FAST = {("cage8", "jacobi"), ("pde900", "gauss_seidel")}  # one real matrix per M in the fast tier


def _cases():
    for name in MATRICES:
        for M in ("jacobi", "gauss_seidel", "ilu"):
            marks = () if (name, M) in FAST else (pytest.mark.slow,)
            yield pytest.param(name, M, marks=marks, id=f"{name}-{M}")


@pytest.mark.parametrize("name, M", list(_cases()))
def test_linalg_gmres_like_scipy_on_real_matrices(exec, name, M):
    # b = A 1, rtol 1e-8, GMRES(30), at most 100 restart cycles (SciPy's own does not converge on
    # nos6 with Jacobi nor on 1138_bus: nothing to match there but the honest verdict)
    S = sp.csr_matrix(scipy.io.mmread(matrix_path(f"{name}.mtx")))
    b = S @ np.ones(S.shape[0])
    _assert_like_scipy(*_linalg_and_scipy(exec, S, b, M, None, scipy_key=(name, M)))


def test_linalg_solver_takes_the_side(ref):
    # gk.linalg.Solver keeps Ginkgo's right side unless told (gk.linalg.gmres: left with M)
    S = convection_diffusion_2d(12)
    b = S @ np.ones(S.shape[0])
    for side in ("left", "right", None):
        options = {} if side is None else {"preconditioner_side": side}
        solver = gk.linalg.Solver(S, "gmres", M="gauss_seidel", rtol=1e-10, executor=ref, **options)
        assert solver.solver.parameters.preconditioner_side == (side or "right")
        x, info = solver.solve(b)
        assert info == 0 and np.linalg.norm(b - S @ x) <= 1e-10 * np.linalg.norm(b)


@pytest.mark.slow
def test_nos6_gauss_seidel_does_not_stall(exec):
    # issue 32: right-preconditioned GMRES(30) with forward Gauss-Seidel stalls at 9e-6 on nos6
    # (kappa ~ 8e6); SciPy's left-preconditioned gmres converges in 2520 inner iterations, and
    # so does ginkpy's with M (reference 2729, PoCL 1980)
    S = sp.csr_matrix(scipy.io.mmread(matrix_path("nos6.mtx")))
    b = S @ np.ones(S.shape[0])
    ours, theirs = _linalg_and_scipy(exec, S, b, "gauss_seidel", None, maxiter=200,
                                     scipy_key=("nos6", "gauss_seidel"))
    assert theirs[0] == 0
    _assert_like_scipy(ours, theirs)


# -- the configuration and the command line --------------------------------------------------------

def test_config_and_command_line(tmp_path, capsys):
    import json
    from ginkpy import config
    from ginkpy.cli.command_line import main
    params = config.parse({"type": "solver::Gmres", "preconditioner_side": "left",
                           "preconditioner": {"type": "preconditioner::GaussSeidel"}})
    assert params.preconditioner_side == "left"
    assert config.to_dict(params)["preconditioner_side"] == "left"
    S = convection_diffusion_2d(10)
    path = tmp_path / "cd.mtx"
    scipy.io.mmwrite(str(path), S)
    (tmp_path / "left.json").write_text(json.dumps(config.to_dict(params)))
    for args in (["--solver", "gmres", "--preconditioner", "gauss_seidel", "--preconditioner-side", "left"],
                 ["--config", str(tmp_path / "left.json")]):
        assert main(["solve", str(path), "--executor", "reference", *args]) == 0
        out = capsys.readouterr().out
        assert "Gmres (30), left preconditioner GaussSeidel" in out and "converged" in out, out
    assert main(["solve", str(path), "--executor", "reference", "--solver", "bicgstab", "--preconditioner-side",
                 "left"]) != 0
    assert "--preconditioner-side applies to gmres and cb_gmres" in capsys.readouterr().err


# -- Lgmres: left-preconditioned with M, as SciPy's lgmres -------------------------------------------

def _lgmres_and_scipy(exec, S, b, M, M_scipy, scipy_key=None, **kwargs):
    """(info, callbacks: restart cycles) of gk.linalg.lgmres with M and SciPy's lgmres with M_scipy
    (None: ``_scipy_m(S, M)``); SciPy's once per ``scipy_key`` (:func:`_scipy_once`)."""
    kwargs.update(rtol=1e-8, maxiter=100)
    ours = _counted(gk.linalg.lgmres, S, b, M, executor=exec, **kwargs)
    gk.linalg.clear_cache()
    key = None if scipy_key is None else ("lgmres", scipy_key)
    return [ours, _scipy_once(key, lambda: _counted(spla.lgmres, S, b, _scipy_m(S, M) if M_scipy is None else M_scipy,
                                                    **kwargs))]


def _lgmres_cases():
    for name in ("nos6", "pde900", "orsirr_1", "watt_2", "ani4", "1138_bus"):
        for M in ("jacobi", "gauss_seidel", "ilu"):
            fast = (name, M) in {("nos6", "gauss_seidel"), ("pde900", "ilu")}
            yield pytest.param(name, M, marks=() if fast else (pytest.mark.slow,), id=f"{name}-{M}")


@pytest.mark.parametrize("name, M", list(_lgmres_cases()))
def test_linalg_lgmres_like_scipy(exec, name, M):
    # right-preconditioned LGMRES(30, 3) stalls on nos6 with Gauss-Seidel (8.9e-6 after 100
    # cycles), where SciPy's left-preconditioned lgmres converges in 7: ginkpy's with M now too
    S = sp.csr_matrix(scipy.io.mmread(matrix_path(f"{name}.mtx")))
    b = S @ np.ones(S.shape[0])
    (info, cycles), (scipy_info, scipy_cycles) = _lgmres_and_scipy(exec, S, b, M, None, scipy_key=(name, M))
    if scipy_info == 0:
        assert info == 0 and cycles <= 1.5 * scipy_cycles + 1, ((info, cycles), (scipy_info, scipy_cycles))
    else:
        assert info in (0, scipy_info)


def test_left_lgmres_solves_agree_and_keep_their_augmentation(ref, ocl):
    # several right-hand sides on both executors; outer_v (v, M A v) carried to a second solve
    S = convection_diffusion_2d(16)
    rng = np.random.default_rng(6)
    b = rng.standard_normal((S.shape[0], 2))
    results = [_apply(_left(e, S, gk.preconditioner.GaussSeidel.build(), name="Lgmres", krylov_dim=10,
                            augmentation_dim=2), b) for e in (ref, ocl)]
    for x, log in results:
        assert log.result.converged.all()
        assert (np.linalg.norm(b - S @ x, axis=0) <= 1e-10 * np.linalg.norm(b, axis=0)).all()
    exact = spla.spsolve(S.tocsc(), b)
    for x, _ in results:
        assert (np.linalg.norm(x - exact, axis=0) <= 1e-6 * np.linalg.norm(exact, axis=0)).all()
    for exec in (ref, ocl):
        outer_v = []
        first = _lgmres_and_scipy(exec, S, b[:, 0], "gauss_seidel", _scipy_m(S, "gauss_seidel"), inner_m=10,
                                  outer_v=outer_v)
        assert first[0][0] == 0 and len(outer_v) == 3
        z, w = outer_v[-1]  # (w = M A z, as SciPy's left-preconditioned lgmres keeps it)
        L = sp.tril(S, format="csr")
        np.testing.assert_allclose(w, spla.spsolve_triangular(L, S @ z), rtol=1e-6, atol=1e-8 * np.abs(w).max())


def test_left_solves_in_threads(ocl):
    # eight threads on one device, each its own left-preconditioned solver (its restart_left
    # launches among the others'), then gk.linalg.gmres with M from each
    from concurrent.futures import ThreadPoolExecutor
    S = convection_diffusion_2d(12)
    b = S @ np.ones(S.shape[0])

    def solve(i):
        x, log = _apply(_left(ocl, S, gk.preconditioner.GaussSeidel.build(), krylov_dim=8), b[:, None] * (i + 1))
        y, info = gk.linalg.gmres(S, b * (i + 1), rtol=1e-10, M="jacobi", executor=ocl)
        return log.has_converged and info == 0 and np.allclose(x[:, 0], i + 1) and np.allclose(y, i + 1)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(solve, range(8)))
