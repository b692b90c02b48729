"""Fcg (core/solver/fcg.py): an indefinite matrix is a breakdown, a changing (nonlinear)
preconditioner, its OpenCL step kernels against their reference twins. The checks it shares
with Bicg, Cgs, Idr and Ir: test_short_recurrence_solvers.py."""
import numpy as np
import pytest
import scipy.sparse as sp

from conftest import solve
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import poisson_2d
from short_recurrence_cases import DTYPES, _check_both, _inner_cg, _scalars, _status, _vectors


def test_fcg_indefinite_matrix_is_a_breakdown_not_nan(exec):
    x, log = solve(exec, "Fcg", sp.diags([1.0, -1.0]), np.ones(2))
    assert log.stop_reason == StopReason.BREAKDOWN
    np.testing.assert_array_equal(x, 0.0)


def test_fcg_with_a_changing_preconditioner(ref):
    # a few Cg iterations as preconditioner: a different (nonlinear) operator each application
    A = poisson_2d(10)
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    x, log = solve(ref, "Fcg", A, b, preconditioner=_inner_cg())
    assert log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-12 * np.linalg.norm(b) * (1 + 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_fcg_steps(ref, ocl, rng, dtype):
    p, z, x, r, t, q = _vectors(rng, 6)
    rho, rho_t, prev_rho, beta = _scalars(rng, 4)
    prev_rho[0, 2] = 0  # step_1 takes rho_t / prev_rho as 0: no breakdown
    _check_both(ref, ocl, "solver.fcg.step_1", [p, z, rho_t, prev_rho], _status(), dtype)
    beta = np.abs(beta)
    beta[0, 2] = -1  # p . A p < 0: a breakdown, as in Cg
    _, status = _check_both(ref, ocl, "solver.fcg.step_2", [x, r, t, p, q, beta, rho, prev_rho], _status(), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN]
