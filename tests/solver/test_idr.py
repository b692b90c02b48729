"""Idr (core/solver/idr.py): its shadow space, solves in one iteration by hand, kappa, its OpenCL
step kernels against their reference twins. The checks it shares with Bicg, Cgs, Fcg and Ir:
test_short_recurrence_solvers.py."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import solve, solver_params, tol
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import poisson_2d
from short_recurrence_cases import DTYPES, N, _check_both, _scalars, _status, _vectors


def test_idr_subspace_larger_than_the_system_is_reduced(ref):
    A = gk.matrix.Csr.from_scipy(ref, sp.diags([1.0, 2.0]))
    solver = solver_params("Idr", subspace_dim=5).on(ref).generate(A)
    assert solver.subspace_dim == 2
    P = solver.subspace_vectors
    np.testing.assert_allclose(P @ P.T, np.eye(2), atol=1e-15)


def test_idr_shadow_space_is_deterministic(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(5))
    P1 = solver_params("Idr", subspace_dim=3).on(ref).generate(A).subspace_vectors
    P2 = solver_params("Idr", subspace_dim=3).on(ref).generate(A).subspace_vectors
    np.testing.assert_array_equal(P1, P2)
    np.testing.assert_allclose(P1 @ P1.T, np.eye(3), atol=1e-14)


def test_idr_scaled_identity_solves_in_one_iteration(exec):
    # A = 2 I: the first step's beta = f_0 / (2 f_0) = 1/2 makes r exactly 0; the remaining
    # steps meet 0 / 0 (nothing left to reduce), which is no breakdown
    b = np.arange(1.0, 6.0)
    x, log = solve(exec, "Idr", sp.identity(5) * 2, b)
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_array_equal(x[:, 0], b / 2)


def test_idr_with_s_equal_n_solves_in_one_iteration(ref):
    # after s steps r is orthogonal to the s-dimensional shadow space, here all of R^2
    x, log = solve(ref, "Idr", sp.diags([1.0, 2.0]), np.ones(2), subspace_dim=2)
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x[:, 0], [1.0, 0.5], rtol=1e-14)


def test_idr_kappa_keeps_omega_away_from_zero(ref):
    # A skew-symmetric: t = A r is orthogonal to r, so the minimal-residual omega = t.r / t.t
    # is 0. With kappa = 0 that is a breakdown; kappa = 0.7 takes omega = kappa |r| / |t|.
    A, b = np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([1.0, 2.0])
    x, log = solve(ref, "Idr", A, b, subspace_dim=1, kappa=0)
    assert log.stop_reason == StopReason.BREAKDOWN and np.isfinite(x).all()
    x, log = solve(ref, "Idr", A, b, subspace_dim=1)
    assert log.has_converged
    np.testing.assert_allclose(x[:, 0], [-2.0, 1.0], rtol=1e-12)


S, KI = 3, 5  # Idr: subspace dimension; columns 0 and 4 run, 1 stopped, 2 breaks down, 3 meets 0 / 0


def _idr_data(rng):
    m = rng.uniform(0.5, 2.0, (S, S * KI)) * rng.choice([-1, 1], (S, S * KI))
    f = rng.standard_normal((S, KI))
    g, u = rng.standard_normal((S * N, KI)), rng.standard_normal((S * N, KI))
    return m, f, g, u


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("j", [0, 1])
def test_opencl_idr_step_1(ref, ocl, rng, dtype, j):
    m, f, g, _ = _idr_data(rng)
    r, v = _vectors(rng, 2, k=KI)
    c = rng.standard_normal((S, KI))
    m[S - 1, (S - 1) * KI + 2] = 0  # a zero diagonal of m under a nonzero numerator
    f[j:, 3] = 0
    m[j, j * KI + 3] = 0  # 0 / 0: c = 0
    (_, _, _, _, c_out, _), status = _check_both(ref, ocl, "solver.idr.step_1", [j, m, f, r, g, c, v],
                                                  _status(KI), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN, 0, 0]
    np.testing.assert_array_equal(c_out[j:, 3], 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_idr_step_2(ref, ocl, rng, dtype):
    _, _, _, u = _idr_data(rng)
    z, u_j = _vectors(rng, 2, k=KI)
    omega, = _scalars(rng, 1, k=KI)
    c = rng.standard_normal((S, KI))
    _check_both(ref, ocl, "solver.idr.step_2", [1, omega, z, c, u, u_j], _status(KI), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("j", [0, 1, 2])
def test_opencl_idr_step_3(ref, ocl, rng, dtype, j):
    m, f, g, u = _idr_data(rng)
    g_j, u_j, r, x = _vectors(rng, 4, k=KI)
    h, alpha = rng.standard_normal((S, KI)), rng.standard_normal((S, KI))
    if j == 0:
        h[0, 2] = 0  # m_{0,0} = h_0 = 0 under f_0 != 0
    else:
        m[0, 2] = 0  # the divisor m_{0,0} of alpha_0 under h_0 != 0
    h[:, 3] = 0
    f[j, 3] = 0  # alpha = 0, m_{i,j} = 0, beta = 0 / 0 = 0
    # alpha comes from a small triangular recurrence that divides by differences
    # (m_{j,j} = h_j - sum_l m_{j,l} alpha_l): its rounding grows with the cancellation there, and
    # a GPU's fused multiply-adds round differently, so the outputs get 10 times the tolerance
    out, status = _check_both(ref, ocl, "solver.idr.step_3", [j, h, m, f, alpha, g_j, u_j, g, u, r, x],
                              _status(KI), dtype, eps_factor=10)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN, 0, 0]
    np.testing.assert_array_equal(out[-2][:, 3], r[:, 3].astype(dtype))  # beta = 0 left r as it was


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_idr_step_4(ref, ocl, rng, dtype):
    k = 6  # 0: plain omega;  1: stopped;  2: t = 0 (breakdown);  3: r = 0;  4: |cos| < kappa;  5: t . r = 0
    z, t, r, x = _vectors(rng, 4, k=k)
    tt, r_norm, omega = rng.uniform(0.5, 2.0, (1, k)), rng.uniform(0.5, 2.0, (1, k)), np.ones((1, k))
    cos = np.array([[0.9, 0.9, 0.9, 0.9, -0.1, 0.0]])
    tr = cos * np.sqrt(tt) * r_norm
    tt[0, 2] = 0
    r_norm[0, 3] = 0
    (_, _, _, omega_out, *_), status = _check_both(
        ref, ocl, "solver.idr.step_4", [0.7, tr, tt, r_norm, omega, z, t, r, x], _status(k), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN, 0, 0, 0]
    w = omega_out[0]
    np.testing.assert_allclose(w[0], tr[0, 0] / tt[0, 0], rtol=tol(dtype))
    np.testing.assert_array_equal(w[1:4], 1)
    np.testing.assert_allclose(w[4:], [-0.7 * r_norm[0, 4] / np.sqrt(tt[0, 4]), 0.7 * r_norm[0, 5] / np.sqrt(tt[0, 5])],
                               rtol=tol(dtype))
