"""Honest ends (issue 21 item 5): a solve that does not converge returns the best iterate it had,
never worse than x0, with SciPy's info; never an x whose residual is above ||b|| from x0 = 0."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import convection_diffusion_2d


def _wandering():
    """A nonsymmetric indefinite system on which BiCGStab, CGS, BiCG and IDR wander off: a sparse
    random matrix with a random diagonal (their residual ends 2-130 times ||b|| after 60 iterations
    without the best iterate)."""
    n = 100
    rng = np.random.default_rng(0)
    return (sp.random(n, n, density=0.05, random_state=1) + sp.diags(rng.standard_normal(n))).tocsr()


METHODS = ["bicgstab", "cgs", "bicg", "idr", "cg", "fcg", "gmres", "qmr", "tfqmr", "lgmres", "gcrotmk"]
# maxiter counts restart cycles of lgmres and gcrotmk (30 and 20-40 steps each)
MAXITER = {"lgmres": 2, "gcrotmk": 2}


@pytest.mark.parametrize("method", METHODS)
def test_never_worse_than_x0(exec, method, monkeypatch):
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = _wandering()
    b = np.ones(S.shape[0])
    x, info = getattr(gk.linalg, method)(S, b, maxiter=MAXITER.get(method, 60), executor=exec)
    assert info != 0
    assert np.linalg.norm(b - S @ x) <= np.linalg.norm(b) * (1 + 1e-12)
    # from a nonzero x0: never worse than it
    x0 = np.random.default_rng(1).standard_normal(S.shape[0]) * 0.1
    x, info = getattr(gk.linalg, method)(S, b, x0=x0, maxiter=MAXITER.get(method, 60), executor=exec)
    assert np.linalg.norm(b - S @ x) <= np.linalg.norm(b - S @ x0) * (1 + 1e-12)


# (not Tfqmr: the norms it records are its bound tau sqrt(m), so the iterate it keeps at the sampled
# iterations is the one of the lowest bound, not always of the lowest true residual)
@pytest.mark.parametrize("name", ["Bicgstab", "Cgs", "Bicg", "Idr"])
def test_the_best_iterate_is_returned(exec, name, monkeypatch):
    # a system where the method wanders off after getting close: the x returned has a true
    # residual no larger than the iterates of the sampled iterations (4, 8, 16, 32, 64), and the
    # result reports that true residual
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = (convection_diffusion_2d(10) - 3.0 * sp.identity(100)).tocsr()
    b = np.ones(S.shape[0])
    A = gk.matrix.Csr.from_scipy(exec, S)
    residuals = {}
    for iters in (4, 8, 16, 32, 64, 90):
        solver = getattr(gk.solver, name).build().with_criteria(
            gk.stop.Iteration.build().with_max_iters(iters)).on(exec).generate(A)
        solver.add_logger(log := gk.log.Convergence())
        X = gk.matrix.Dense.zeros(exec, (100, 1))
        solver.apply(gk.matrix.Dense.from_numpy(exec, b), X)
        residuals[iters] = np.linalg.norm(b - S @ X.to_numpy()[:, 0])
        np.testing.assert_allclose(log.residual_norm[0], residuals[iters], rtol=1e-8, atol=1e-12 * np.linalg.norm(b))
        assert log.stop_reasons[0] in (StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN, StopReason.DIVERGED)
    # each run returns what is at most the best of the shorter runs' (deterministic) iterates
    for iters in (8, 16, 32, 64, 90):
        assert residuals[iters] <= min(r for i, r in residuals.items() if i < iters) * (1 + 1e-6), residuals


def test_a_converging_solve_keeps_its_answer(exec):
    # the best-iterate machinery never replaces a converged x
    S = convection_diffusion_2d(12)
    b = np.random.default_rng(2).standard_normal(S.shape[0])
    x, info = gk.linalg.bicgstab(S, b, rtol=1e-10, executor=exec)
    assert info == 0 and np.linalg.norm(b - S @ x) <= 1e-10 * np.linalg.norm(b)


def test_several_columns_each_their_own_best(exec, monkeypatch):
    # column 0 converges, column 1 wanders off: each ends with its own best
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = sp.block_diag([convection_diffusion_2d(7), _wandering()[:51, :51]]).tocsr()
    n = S.shape[0]
    b = np.zeros((n, 2))
    b[:49, 0] = 1.0
    b[49:, 1] = 1.0
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = gk.solver.Bicgstab.build().with_criteria(
        gk.stop.Iteration.build().with_max_iters(80),
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(exec).generate(A)
    solver.add_logger(log := gk.log.Convergence())
    X = gk.matrix.Dense.zeros(exec, (n, 2))
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), X)
    x = X.to_numpy()
    true = np.linalg.norm(b - S @ x, axis=0)
    assert log.stop_reasons[0] == StopReason.CONVERGED and true[0] <= 1e-10 * np.linalg.norm(b[:, 0])
    assert true[1] <= np.linalg.norm(b[:, 1]) * (1 + 1e-12)
    np.testing.assert_allclose(log.residual_norm[1], true[1], rtol=1e-8)


@pytest.mark.parametrize("method", ["batched_bicgstab", "batched_cg", "batched_gmres"])
def test_batched_solvers_never_worse_than_x0(exec, method):
    # items of a system on which the methods wander off, and one that converges: no item ends
    # with a residual above ||b|| (x0 = 0), the converged one is untouched
    S = _wandering()
    items = [S, S + 0.5 * sp.identity(100), 4.0 * sp.identity(100) + 0.01 * S]
    pattern = sum(abs(m) for m in items).tocsr()
    As = [sp.csr_matrix((np.asarray(m[pattern.nonzero()]).ravel(), pattern.nonzero()), shape=pattern.shape)
          for m in items]
    B = np.ones((3, 100))
    X, info = getattr(gk.linalg, method)(As, B, maxiter=40, executor=exec)
    for A, x, b in zip(As, X, B):
        assert np.linalg.norm(b - A @ x) <= np.linalg.norm(b) * (1 + 1e-12)
    assert info[2] == 0 and info[0] != 0
