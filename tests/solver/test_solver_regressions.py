"""Nothing wrong, ever (issue 9), in whole solves: norms that neither underflow nor overflow
(tiny and huge right-hand sides and initial guesses), no NaN returned from a singular system,
b = 0 solved at once, Gmres never worse than its start, a Krylov dimension capped at n.
(Formerly tests/base/test_nothing_wrong.py; its concurrent solves are in tests/base/test_threads.py,
its parameter, executor and device errors in tests/base/test_core.py and
tests/base/test_opencl_executor.py, its configuration check in tests/config/test_config.py.)"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import solve
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import poisson_2d

SOLVERS = ["Cg", "Bicgstab", "Gmres", "Bicg", "Cgs", "Fcg", "Idr", "Ir", "Tfqmr", "Qmr"]


def _criteria(max_iters=500, reduction=1e-8):
    return [gk.stop.Iteration.build().with_max_iters(max_iters),
            gk.stop.ResidualNorm.build().with_reduction_factor(reduction)]


# -- scaled norms: tiny and huge right-hand sides and initial guesses ----------------------------

@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e-300), (np.float64, 1e300), (np.float32, 1e-25),
                                          (np.float32, 1e20),
                                          # subnormal b: the scale stops at 2^1023 (2^1030 overflowed: a ValueError)
                                          (np.float64, 1e-310), (np.float32, 1e-42)])
@pytest.mark.parametrize("name", ["Cg", "Bicgstab", "Gmres", "Tfqmr", "Qmr"])
def test_tiny_and_huge_right_hand_sides_converge_honestly(exec, name, dtype, scale):
    # the solution of A x = s b is s x: the solve must not conclude "converged" from an
    # underflowed ||b|| (x = 0 has relative residual 1), nor call a finite b NaN or Inf
    S = poisson_2d(8)
    b = np.random.default_rng(0).uniform(0.5, 1.5, S.shape[0])
    x, log = solve(exec, name, S, (b * scale).astype(dtype), criteria=_criteria(reduction=1e-5), dtype=dtype)
    assert log.has_converged
    x_unit = np.linalg.solve(S.toarray(), b)
    np.testing.assert_allclose(x[:, 0] / scale, x_unit, rtol=1e-3)


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e-310), (np.float64, 1e200), (np.float32, 1e-25)])
@pytest.mark.parametrize("method, M", [("bicgstab", None), ("cg", "jacobi"), ("gmres", "jacobi")])
def test_a_whole_system_too_small_or_too_large_is_solved_or_says_how_to_scale(exec, dtype, scale, method, M):
    # issue 33's fuzz: A and b scaled by 1e-310 were reported as diverged (reference) or broken
    # down (OpenCL); now the right answer or a clear error whose recipe solves the system
    S = (poisson_2d(8) * scale).astype(dtype).tocsr()
    x_true = np.linspace(1.0, 2.0, S.shape[0])
    b = ((poisson_2d(8) @ x_true) * scale).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (Jacobi's warning of diagonal entries too small to invert)
        try:
            x, info = getattr(gk.linalg, method)(S, b, M=M, executor=exec, rtol=1e-4)
        except ValueError as err:
            assert "scale A and b by 2**" in str(err)
        else:  # the right answer, where the method copes (Jacobi-preconditioned CG often does)
            assert info == 0 and np.allclose(x, x_true, rtol=1e-2)
            return
    gk.linalg.clear_cache()
    k = -int(np.round(np.log2(np.abs(S.data).max())))
    S.data, b = np.ldexp(S.data, k), np.ldexp(b, k)
    x, info = getattr(gk.linalg, method)(S, b, M=M, executor=exec, rtol=1e-4)
    assert info == 0 and np.allclose(x, x_true, rtol=1e-2)
    gk.linalg.clear_cache()


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e307), (np.float32, 1e37)])
def test_a_huge_initial_guess_is_not_an_error(exec, dtype, scale):
    # a finite x0 is no "NaN or Inf" error; the solve ends honestly: x finite, and converged only
    # where the true residual says so (x = x0 - (x0 - 2) cancels to 0 in floating point: the
    # first step from such an x0 cannot hold the answer)
    S = sp.identity(5, format="csr") * 0.5
    b = np.ones(5)
    x0 = np.full((5, 1), scale)
    x, log = solve(exec, "Cg", S, b.astype(dtype), x0=x0.astype(dtype), criteria=_criteria(), dtype=dtype)
    assert np.isfinite(x).all()
    true = np.linalg.norm(b - S @ x[:, 0].astype(np.float64))
    assert log.has_converged == (true <= 1e-8 * np.linalg.norm(b) * (1 + 1e-6))


def test_linalg_norms_of_tiny_and_huge_vectors(exec):
    S = poisson_2d(8).tocsr()
    b = np.random.default_rng(1).uniform(0.5, 1.5, S.shape[0])
    for scale in (1e-300, 1e300):
        x, info = gk.linalg.cg(S, b * scale, rtol=1e-8, executor=exec)
        assert info == 0
        np.testing.assert_allclose(x / scale, np.linalg.solve(S.toarray(), b), rtol=1e-6)


@pytest.mark.parametrize("name", ["Cg", "Gmres", "Bicgstab"])
def test_b_zero_gives_x_zero_at_once_whatever_x0(exec, name):
    x, log = solve(exec, name, poisson_2d(5), np.zeros(25), x0=np.ones((25, 1)), criteria=_criteria())
    assert log.has_converged and log.num_iterations == 0
    assert not x.any()


# -- no NaN returned ----------------------------------------------------------------------------

def _singular(n=20):
    """A matrix with an empty last row and column: b = ones has no solution."""
    A = poisson_2d(5).tolil()[:n, :n]
    A[n - 1, :] = 0
    A[:, n - 1] = 0
    return A.tocsr()


@pytest.mark.parametrize("name", SOLVERS)
def test_a_singular_system_returns_no_nan(exec, name):
    # (Ir: Richardson's iteration, which diverges on this matrix)
    x, log = solve(exec, name, _singular(), np.ones(20), criteria=_criteria(300))
    assert np.isfinite(x).all(), log.stop_reasons
    assert not log.has_converged
    assert log.stop_reasons[0] in (StopReason.BREAKDOWN, StopReason.DIVERGED, StopReason.ITERATION_LIMIT)


def test_gmres_is_never_worse_than_its_start(exec):
    # a singular 2 x 2 block: the Hessenberg matrix is rank-deficient; x must not blow up
    A = sp.csr_matrix([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])
    b = np.array([1.0, 0.0, 1.0])
    x, log = solve(exec, "Gmres", A, b, criteria=_criteria(50))
    assert np.isfinite(x).all()
    assert np.linalg.norm(b - A @ x[:, 0]) <= np.linalg.norm(b) * (1 + 1e-12)
    assert not log.has_converged


def test_krylov_dim_is_capped_at_n(exec):
    # a Krylov space of 10^6 vectors for 100 unknowns: capped at n, as linalg.gmres does
    x, log = solve(exec, "Gmres", poisson_2d(10), np.ones(100), criteria=_criteria(), krylov_dim=10 ** 6)
    assert log.has_converged
