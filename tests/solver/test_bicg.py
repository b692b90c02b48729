"""Bicg (core/solver/bicg.py): the transposed preconditioner it needs, a breakdown by hand, its
OpenCL step kernels against their reference twins. The checks it shares with Cgs, Fcg, Idr and
Ir: test_short_recurrence_solvers.py."""
import numpy as np
import pytest

import ginkpy as gk
from conftest import solve, solver_params
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import poisson_2d
from short_recurrence_cases import DTYPES, _check_both, _scalars, _status, _vectors


class _NoTranspose(gk.LinOp):
    """An operator without transpose(): x = b."""

    def _apply_impl(self, b, x):
        x.copy_from(b)


def test_bicg_needs_the_transposed_preconditioner(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    with pytest.raises(TypeError, match="transpose"):
        solver_params("Bicg", preconditioner=_NoTranspose(ref, A.shape, A.dtype)).on(ref).generate(A)


def test_bicg_breakdown_when_the_shadow_residual_vanishes(ref):
    # A = [[2, 1], [0, 1]], b = (1, 1): alpha = 2/4, x = (1/2, 1/2), r2 = b - A^T b / 2 = 0,
    # so the next rho = z . r2 is 0: a breakdown that keeps the first iterate
    x, log = solve(ref, "Bicg", np.array([[2.0, 1.0], [0.0, 1.0]]), np.ones(2))
    assert log.stop_reason == StopReason.BREAKDOWN
    np.testing.assert_array_equal(x[:, 0], [0.5, 0.5])


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_bicg_steps(ref, ocl, rng, dtype):
    p, z, p2, z2, x, r, r2, q, q2 = _vectors(rng, 9)
    rho, prev_rho, beta = _scalars(rng, 3)
    prev_rho[0, 2] = 0  # step_1 takes rho / prev_rho as 0: no breakdown
    _, status = _check_both(ref, ocl, "solver.bicg.step_1", [p, z, p2, z2, rho, prev_rho], _status(), dtype)
    assert list(status) == [0, StopReason.CONVERGED, 0]
    beta[0, 2] = 0
    _, status = _check_both(ref, ocl, "solver.bicg.step_2", [x, r, r2, p, q, q2, beta, rho, prev_rho],
                            _status(), dtype)
    assert list(status) == [0, StopReason.CONVERGED, StopReason.BREAKDOWN]
