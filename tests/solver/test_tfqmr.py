"""Tfqmr (gk.solver.Tfqmr, gk.linalg.tfqmr): against SciPy's tfqmr on generated and real
matrices (iterations and info), complex systems, several right-hand sides, breakdowns without
NaN, the configuration and the command line (these for Qmr too), the SciPy door with a
preconditioner, callback and show, and each OpenCL kernel against its reference twin."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import as_scipy, assert_columns_as_alone, assert_twins, matrix_path, random_values, solve, twin
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d, helmholtz_2d

RUNNING, CONVERGED, BREAKDOWN = StopReason.RUNNING, StopReason.CONVERGED, StopReason.BREAKDOWN


def _ours(exec, A, b, rtol, **kwargs):
    """gk.linalg.tfqmr on ``exec``: (x, info, copies of the iterates the callback saw)."""
    calls = []
    x, info = gk.linalg.tfqmr(A, b, rtol=rtol, executor=exec, callback=lambda xk: calls.append(xk.copy()), **kwargs)
    return x, info, calls


# the tests both QMR methods share run here for each (Qmr's own: test_qmr.py)
METHODS = ["tfqmr", "qmr"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("problem", ["convection_diffusion", "pde900"])
def test_iterations_and_info_as_scipy(exec, method, problem):
    A = convection_diffusion_2d(15) if problem == "convection_diffusion" else \
        sp.csr_matrix(scipy.io.mmread(matrix_path("pde900.mtx")))
    as_scipy(exec, method, A, np.random.default_rng(3).standard_normal(A.shape[0]))


@pytest.mark.parametrize("method", METHODS)
def test_complex_system(exec, method):
    A = helmholtz_2d(10, wavenumber=8.0).tocsr()
    x, _ = as_scipy(exec, method, A, random_values(np.random.default_rng(4), A.shape[0], np.complex128))
    assert x.dtype == np.complex128


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_several_right_hand_sides_through_the_builder(exec, method, dtype):
    assert_columns_as_alone(exec, method.capitalize(), convection_diffusion_2d(9), dtype)


@pytest.mark.parametrize("method, scipy_info", [("tfqmr", -1), ("qmr", -14)])
def test_skew_symmetric_system_is_a_breakdown_not_nan(exec, method, scipy_info):
    # r . A r = 0 for every r: Tfqmr's first divisor r_tld . v = r . A r is 0, and so is Qmr's
    # epsilon = q^H A p (SciPy's qmr: info -14)
    A, b = np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([1.0, 2.0])
    x, log = solve(exec, method.capitalize(), A, b)
    assert log.stop_reason == BREAKDOWN and not log.has_converged
    np.testing.assert_array_equal(x, 0.0)
    x, info = getattr(gk.linalg, method)(sp.csr_matrix(A), b, executor=exec)
    assert info == scipy_info == getattr(spla, method)(sp.csr_matrix(A), b)[1]
    assert np.isfinite(x).all()


def test_scaled_identity_converges_in_one_iteration(exec):
    x, log = solve(exec, "Tfqmr", sp.identity(5) * 2, np.arange(1.0, 6.0))
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x[:, 0], np.arange(1.0, 6.0) / 2)


def test_linalg_with_jacobi_callback_and_show(exec, capsys):
    # a varying diagonal, so that Jacobi is not a multiple of the identity
    A = (convection_diffusion_2d(12) + sp.diags(np.linspace(0.0, 20.0, 144))).tocsr()
    b = np.random.default_rng(6).standard_normal(144)
    x, info, calls = _ours(exec, A, b, 1e-9, M="jacobi", show=True)
    assert info == 0
    assert np.linalg.norm(b - A @ x) <= 1e-9 * np.linalg.norm(b)
    plain = _ours(exec, A, b, 1e-9)[2]
    assert len(calls) < len(plain)
    # one call per iteration, each with the iterate of that iteration (the last one is x)
    assert all(c.shape == (144,) for c in calls)
    np.testing.assert_allclose(calls[-1], x)
    assert capsys.readouterr().out == f"TFQMR: Linear solve converged due to reach TOL iterations {len(calls)}\n"
    x, info = gk.linalg.tfqmr(A, b, rtol=1e-12, maxiter=5, executor=exec)
    assert info == 5


def test_maxiter_default_is_scipys(ref, monkeypatch):
    # min(10000, 10 n), where the other functions take 10 n
    seen = []
    real_solve = gk.linalg._isolve._solve
    monkeypatch.setattr(gk.linalg._isolve, "_solve",
                        lambda *a, **kw: seen.append(kw["maxiter"]) or real_solve(*a, **kw))
    for n in (3, 1001):
        x, info = gk.linalg.tfqmr(sp.identity(n, format="csr"), np.ones(n), executor=ref)
        assert info == 0
    assert seen == [30, 10000]


@pytest.mark.parametrize("method, extra", [("tfqmr", {}),
                                           ("qmr", {"left_preconditioner": {"type": "preconditioner::Jacobi"}})])
def test_configuration_and_command_line(ref, capsys, tmp_path, method, extra):
    name = method.capitalize()
    config = {"type": f"solver::{name}", "preconditioner": {"type": "preconditioner::Jacobi"},
              "criteria": {"iteration": 200, "relative_residual_norm": 1e-8}, **extra}
    params = gk.config.parse(config)
    assert params.product is getattr(gk.solver, name)
    written = gk.config.to_dict(params)
    assert written["type"] == config["type"] and all(written[key]["type"] == extra[key]["type"] for key in extra)
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(path, convection_diffusion_2d(6))
    from ginkpy.cli import main
    assert main(["solve", str(path), "--solver", method, "--executor", "reference"]) == 0
    assert name in capsys.readouterr().out


# -- the kernels --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_kernels_against_their_reference_twins(ref, ocl, dtype):
    """Random data larger than a work-group, odd sizes; per column k = 5: even running, odd
    running, even with r_tld . v = 0 (a breakdown), stopped, odd with rho = 0 (no breakdown:
    an odd half step divides by the alpha of the even one)."""
    rng = np.random.default_rng(7)
    n, k = 1237, 5
    vec = lambda: random_values(rng, (n, k), dtype)  # noqa: E731
    sca = lambda: random_values(rng, (1, k), dtype)  # noqa: E731
    real = lambda a: np.asarray(a, dtype)  # noqa: E731
    status = np.array([RUNNING, RUNNING, RUNNING, CONVERGED, RUNNING], STATUS_DTYPE)
    phase = real([[0, 1, 0, 0, 1]])
    mask = np.array([1, 0, 1, 1, 0], np.uint8)
    positive = real(np.abs(random_values(rng, (1, k), np.float64)) + 0.5)
    out = twin(ref, ocl, "solver.tfqmr.initialize", vec(), vec(), vec(), vec(), vec(), vec(), sca(), sca(), sca(),
               sca(), sca(), sca(), sca(), mask, dtype=dtype)
    assert_twins(out, dtype)
    out = twin(ref, ocl, "solver.tfqmr.step_1", vec(), vec(), phase, status.copy(), dtype=dtype)
    assert_twins(out, dtype)
    rv = sca()
    rv[0, 2] = 0
    rho = sca()
    rho[0, 4] = 0
    out = twin(ref, ocl, "solver.tfqmr.step_2", vec(), vec(), vec(), vec(), vec(), rv, sca(), rho, positive,
               sca(), phase, status.copy(), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    assert list(out[1][-2]) == [RUNNING, RUNNING, BREAKDOWN, CONVERGED, RUNNING]
    tau = positive.copy()
    tau[0, 1] = 0  # tau = 0 in a running column: a breakdown
    rho = sca()
    out = twin(ref, ocl, "solver.tfqmr.step_3", positive, sca(), sca(), rho, sca(), sca(), tau, sca(),
               real([[3, 4, 0, 1, 7]]), phase, sca(), status.copy(), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    assert list(out[1][-2]) == [RUNNING, BREAKDOWN, RUNNING, CONVERGED, RUNNING]
    np.testing.assert_array_equal(out[1][9].real, [[1, 1, 1, 0, 0]])  # phase flipped where running
    out = twin(ref, ocl, "solver.tfqmr.step_4", vec(), vec(), vec(), vec(), vec(), vec(), sca(), sca(),
               real([[0, 1, 0, 0, 0]]), status.copy(), dtype=dtype)
    assert_twins(out, dtype, factor=4)


def test_kernels_leave_stopped_columns_untouched(ref, ocl):
    rng = np.random.default_rng(8)
    n, k = 301, 3
    status = np.array([CONVERGED] * k, STATUS_DTYPE)
    args = [rng.standard_normal((n, k)) for _ in range(6)]
    out = twin(ref, ocl, "solver.tfqmr.step_4", *args, np.ones((1, k)), np.ones((1, k)), np.zeros((1, k)), status)
    for o in out:
        for before, after in zip(args, o):
            np.testing.assert_array_equal(after, before)
