"""Real Matrix Market systems: ginkpy's Jacobi-preconditioned solvers against SciPy's.

Where SciPy's method with the same Jacobi preconditioner reaches ||b - Ax|| <= 1e-8 ||b||
(b = A * ones), ginkpy's must too, in a comparable number of iterations (within 25% for CG,
50% for BiCGStab and GMRES(30)), and its reported convergence must hold for the true residual.
Skipped when ../shared/matrices is absent.
"""
import numpy as np
import pytest
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import matrix_path

RTOL = 1e-8
SPD = ["nos6.mtx", "gr_900_900_crg.mtx", "ani4.mtx", "lap3D_7pt_n20.mtx"]
NONSYMMETRIC = ["pde900.mtx", "cage8.mtx", "orsirr_1.mtx", "add32.mtx"]


def _scipy_iterations(method, A, b, d):
    M = spla.LinearOperator(A.shape, matvec=lambda v: v / d.reshape(v.shape[:1] + (1,) * (v.ndim - 1)))
    count = [0]

    def callback(*_):
        count[0] += 1

    kwargs = dict(rtol=RTOL, atol=0.0, maxiter=10000, M=M, callback=callback)
    if method == "gmres":
        kwargs.update(restart=30, callback_type="pr_norm")
    x, info = getattr(spla, method)(A, b, **kwargs)
    return info == 0 and np.linalg.norm(b - A @ x) <= 1.01 * RTOL * np.linalg.norm(b), count[0]


def _ginkpy_solve(exec, solver_type, name, b):
    A = gk.read(matrix_path(name), exec)
    params = (solver_type.build()
              .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
              .with_criteria(gk.stop.Iteration.build().with_max_iters(10000),
                             gk.stop.ResidualNorm.build().with_reduction_factor(RTOL)))
    solver = params.on(exec).generate(A)
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1))
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    return x.to_numpy()[:, 0], log


def _check(exec, name, method, solver_name, slack):
    A = gk.read(matrix_path(name), gk.ReferenceExecutor()).to_scipy()
    b = A @ np.ones(A.shape[0])
    scipy_ok, scipy_iters = _scipy_iterations(method, A, b, A.diagonal())
    x, log = _ginkpy_solve(exec, getattr(gk.solver, solver_name), name, b)
    true_res = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    if log.has_converged:
        assert true_res <= RTOL * (1 + 1e-6), f"converged, but the true residual is {true_res:.2e}"
    if scipy_ok:
        assert log.has_converged, f"SciPy converged in {scipy_iters}, ginkpy: {log.stop_reason}"
        assert log.num_iterations <= (1 + slack) * scipy_iters + 2, (log.num_iterations, scipy_iters)
    assert np.isfinite(x).all()


@pytest.mark.parametrize("name", SPD)
def test_jacobi_cg(exec, name):
    _check(exec, name, "cg", "Cg", 0.25)


@pytest.mark.parametrize("name", NONSYMMETRIC)
def test_jacobi_bicgstab(exec, name):
    _check(exec, name, "bicgstab", "Bicgstab", 0.5)


@pytest.mark.parametrize("name", NONSYMMETRIC)
def test_jacobi_gmres(exec, name):
    _check(exec, name, "gmres", "Gmres", 0.5)
