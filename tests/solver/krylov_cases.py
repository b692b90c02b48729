"""Checks shared by the tests of the Krylov solvers through their builders (tests/solver/
test_bicgstab.py, test_gmres.py): each takes ``solve(exec, A, b, **kwargs) -> (x, log)``, the
test module's solve with its solver, and the settings that differ per solver."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import criteria, matrix_path, residual_rounding
from ginkpy.problems import convection_diffusion_2d


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    """The value types of the kernel twin tests."""
    return np.dtype(request.param)


def random_values(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def agree_with_spsolve(exec, solve, problem):
    """``problem(15)`` solved to 1e-12 (the true residual) and as spsolve; returns A, b, x, log and
    the true residual's norm."""
    A = problem(15)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    x, log = solve(exec, A, b)
    assert log.has_converged
    true_norm = np.linalg.norm(b - A @ x[:, 0])
    assert true_norm <= 1e-12 * np.linalg.norm(b)
    np.testing.assert_allclose(x[:, 0], spla.spsolve(A.tocsc(), b), rtol=1e-9, atol=1e-10)
    return A, b, x, log, true_norm


def float32_converges(exec, solve, A, max_iters):
    """A float32 solve to 1e-5 within ``max_iters``: x float32, the true residual within 2e-5."""
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    x, log = solve(exec, A, b, criteria=criteria(max_iters, 1e-5), dtype=np.float32)
    assert x.dtype == np.float32 and log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0].astype(np.float64)) <= 2e-5 * np.linalg.norm(b)


def four_columns(A, rng):
    """b and x0 of four columns: random, b = 0, x0 exact, b = A 1; and the exact x0."""
    n = A.shape[0]
    exact = rng.standard_normal(n)
    b = np.column_stack([rng.standard_normal(n), np.zeros(n), A @ exact, A @ np.ones(n)])
    x0 = np.column_stack([np.zeros(n), np.zeros(n), exact, np.zeros(n)])
    return b, x0, exact


def columns_stop_on_their_own(exec, solve, first_iterations: int, **kwargs):
    """The four columns of :func:`four_columns`: b = 0 and an exact initial guess stop before the
    first iteration, untouched; the others converge after more than ``first_iterations`` (column
    0) and 5 (column 3) iterations."""
    A = convection_diffusion_2d(10)
    b, x0, exact = four_columns(A, np.random.default_rng(3))
    x, log = solve(exec, A, b, x0=x0, **kwargs)
    assert log.has_converged
    assert log.iterations[1] == 0 and log.iterations[2] == 0
    assert log.iterations[0] > first_iterations and log.iterations[3] > 5
    np.testing.assert_array_equal(x[:, 1], 0.0)
    np.testing.assert_array_equal(x[:, 2], exact)
    for j in (0, 3):
        assert np.linalg.norm(b[:, j] - A @ x[:, j]) <= 1e-12 * np.linalg.norm(b[:, j])


def exact_inverse_takes_one_iteration(exec, solve):
    """Preconditioned with A^-1 (a Dense LinOp): converged in one iteration to x = A^-1 b."""
    A = convection_diffusion_2d(4)
    inverse = gk.matrix.Dense.from_numpy(exec, np.linalg.inv(A.toarray()))
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    x, log = solve(exec, A, b, preconditioner=inverse, criteria=criteria(10, 1e-12))
    assert log.has_converged and log.num_iterations == 1
    np.testing.assert_allclose(x[:, 0], np.linalg.solve(A.toarray(), b), rtol=1e-12)


def preconditioned_residual_is_the_true_residual(ref, solve):
    """A badly row-scaled system, scalar Jacobi as a LinOp: fewer iterations, and the criterion
    holds for b - A x, not for a preconditioned residual (the log's residual norm is that of b - A
    x up to the rounding of the solver's row order, which for this unsorted matrix is not SciPy's)."""
    base = convection_diffusion_2d(12)
    A = (sp.diags(np.logspace(0, 4, base.shape[0])) @ base).tocsr()
    b = A @ np.random.default_rng(6).standard_normal(A.shape[0])
    jacobi = gk.matrix.Csr.from_scipy(ref, sp.diags(1 / A.diagonal()))
    x, log = solve(ref, A, b, preconditioner=jacobi, criteria=criteria(500, 1e-10))
    _, plain = solve(ref, A, b, criteria=criteria(500, 1e-10))
    assert log.has_converged and log.num_iterations < plain.num_iterations
    true_norm = np.linalg.norm(b - A @ x[:, 0])
    assert true_norm <= 1e-10 * np.linalg.norm(b)
    np.testing.assert_allclose(log.residual_norm, [true_norm], rtol=0, atol=residual_rounding(A, x, b)[0])


def iterations_comparable_to_scipy(ref, solve, name, scipy_solve, max_iters):
    """The matrix ``name`` with b = A 1: SciPy's ``scipy_solve(S, b, callback) -> info`` converges,
    and ginkpy to 1e-8 (the true residual) within 1.5 times SciPy's callbacks + 2 iterations."""
    S = scipy.io.mmread(matrix_path(name)).tocsr()
    b = S @ np.ones(S.shape[0])
    count = [0]
    info = scipy_solve(S, b, lambda _: count.__setitem__(0, count[0] + 1))
    assert info == 0
    x, log = solve(ref, S, b, criteria=criteria(max_iters, 1e-8))
    assert log.has_converged
    assert np.linalg.norm(b - S @ x[:, 0]) <= 1e-8 * np.linalg.norm(b)
    assert log.num_iterations <= 1.5 * count[0] + 2, (log.num_iterations, count[0])
