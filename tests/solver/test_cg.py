"""Cg on the reference executor: hand-checked iterates, breakdown, several right-hand sides."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.core.stop.stopping_status import StopReason
from conftest import solve
from ginkpy.problems import poisson_2d


def _solve(exec, A, b, **kwargs):
    return solve(exec, "Cg", A, b, **kwargs)


def test_one_iteration_by_hand(ref):
    # A = diag(1, 2), b = (1, 1): r0 = p0 = (1, 1), alpha = r.r / p.Ap = 2/3, x1 = (2/3, 2/3)
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2), criteria=[gk.stop.Iteration.build().with_max_iters(1)])
    np.testing.assert_allclose(x[:, 0], [2 / 3, 2 / 3], rtol=1e-15)
    assert log.num_iterations == 1
    assert log.stop_reason == StopReason.ITERATION_LIMIT
    np.testing.assert_allclose(log.residual_norm, [np.sqrt(2) / 3], rtol=1e-15)


def test_two_iterations_solve_2x2_exactly(ref):
    # second step: beta = 1/9, p1 = (4/9, -2/9), alpha = 3/4 -> x2 = (1, 1/2), the exact solution
    x, log = _solve(ref, sp.diags([1.0, 2.0]), np.ones(2))
    np.testing.assert_allclose(x[:, 0], [1.0, 0.5], rtol=1e-14)
    assert log.has_converged and log.num_iterations == 2
    assert len(log.residual_norm_history) == 3


def test_indefinite_matrix_is_a_breakdown_not_nan(ref):
    # A = diag(1, -1), b = (1, 1): p.Ap = 0 in the first step
    x, log = _solve(ref, sp.diags([1.0, -1.0]), np.ones(2))
    assert log.stop_reason == StopReason.BREAKDOWN
    assert not log.has_converged
    assert np.isfinite(x).all()
    np.testing.assert_array_equal(x, 0.0)


def test_poisson_agrees_with_spsolve(ref):
    A = poisson_2d(12)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    x, log = _solve(ref, A, b)
    assert log.has_converged
    np.testing.assert_allclose(x[:, 0], spla.spsolve(A.tocsc(), b), rtol=1e-9, atol=1e-11)
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-12 * np.linalg.norm(b)


def test_columns_stop_on_their_own(ref):
    A = poisson_2d(8)
    n = A.shape[0]
    exact = np.linspace(1, 2, n)
    b = np.column_stack([np.ones(n), np.zeros(n), A @ exact])
    x0 = np.column_stack([np.zeros(n), np.zeros(n), exact])
    x, log = _solve(ref, A, b, x0=x0)
    assert log.has_converged
    # b = 0 and an exact initial guess stop before the first iteration; column 0 iterates
    assert log.iterations[1] == 0 and log.iterations[2] == 0 and log.iterations[0] > 5
    np.testing.assert_array_equal(x[:, 1], 0.0)
    np.testing.assert_array_equal(x[:, 2], exact)
    np.testing.assert_allclose(A @ x[:, 0], b[:, 0], rtol=1e-10)


def test_advanced_apply_scales_the_solution(ref):
    A = gk.matrix.Csr.from_scipy(ref, sp.diags([2.0, 4.0]))
    solver = gk.solver.Cg.build().with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-14)).on(ref).generate(A)
    b = gk.matrix.Dense.from_numpy(ref, [2.0, 4.0])
    x = gk.matrix.Dense.from_numpy(ref, [1.0, 1.0])
    # x = 2 * A^-1 b + 3 * x = 2 * (1, 1) + 3 * (1, 1)
    solver.apply(2.0, b, 3.0, x)
    np.testing.assert_allclose(x.to_numpy()[:, 0], [5.0, 5.0], rtol=1e-14)


def test_an_iteration_limit_is_added_when_none_is_given(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(4))
    solver = gk.solver.Cg.build().with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(ref).generate(A)
    limits = [c.parameters.max_iters for c in solver.criteria if isinstance(c.parameters, gk.stop.Iteration.Parameters)]
    assert limits == [1000]


def test_nan_in_rhs_or_initial_guess_is_an_error(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    solver = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(5)).on(ref).generate(A)
    b = np.ones(9)
    b[3] = np.nan
    with pytest.raises(ValueError, match="right-hand side"):
        solver.apply(gk.matrix.Dense.from_numpy(ref, b), gk.matrix.Dense.zeros(ref, (9, 1)))
    x0 = np.zeros(9)
    x0[0] = np.inf
    with pytest.raises(ValueError, match="initial guess"):
        solver.apply(gk.matrix.Dense.from_numpy(ref, np.ones(9)), gk.matrix.Dense.from_numpy(ref, x0))


def test_empty_system_gives_empty_solution(ref):
    A = gk.matrix.Csr.from_scipy(ref, sp.csr_matrix((0, 0)))
    solver = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(5)).on(ref).generate(A)
    x = gk.matrix.Dense.zeros(ref, (0, 1))
    assert solver.apply(gk.matrix.Dense.zeros(ref, (0, 1)), x).shape == (0, 1)


@pytest.mark.parametrize("outer", ["Cg", "Gmres"])
def test_an_iterative_solver_as_preconditioner(exec, outer):
    # The inner solver's initial guess is the outer solver's preconditioner output: it must start
    # at 0, so that 3 Jacobi-Richardson sweeps are a fixed SPD polynomial preconditioner.
    A_host = poisson_2d(10)
    A = gk.matrix.Csr.from_scipy(exec, A_host)
    inner = (gk.solver.Ir.build().with_solver(gk.preconditioner.Jacobi.build().with_max_block_size(1))
             .with_criteria(gk.stop.Iteration.build().with_max_iters(3)))
    solver = (getattr(gk.solver, outer).build().with_preconditioner(inner)
              .with_criteria(gk.stop.Iteration.build().with_max_iters(200),
                             gk.stop.ResidualNorm.build().with_reduction_factor(1e-10))
              .on(exec).generate(A))
    log = gk.log.Convergence()
    solver.add_logger(log)
    b = np.ones(A.shape[0])
    x = solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    assert log.has_converged
    assert np.linalg.norm(b - A_host @ x.to_numpy()[:, 0]) <= 1e-10 * np.linalg.norm(b)
