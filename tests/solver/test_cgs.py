"""Cgs (core/solver/cgs.py): its OpenCL step kernels against their reference twins. The checks it
shares with Bicg, Fcg, Idr and Ir: test_short_recurrence_solvers.py."""
import pytest

from ginkpy.core.stop.stopping_status import StopReason
from short_recurrence_cases import DTYPES, _check_both, _scalars, _status, _vectors


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_cgs_steps(ref, ocl, rng, dtype):
    r, u, p, q, v_hat, t, u_hat, x = _vectors(rng, 8)
    rho, prev_rho, gamma, alpha = _scalars(rng, 4)
    breakdown = [0, StopReason.CONVERGED, StopReason.BREAKDOWN]
    zero_rho = rho.copy()
    zero_rho[0, 2] = 0
    _, status = _check_both(ref, ocl, "solver.cgs.step_1", [r, u, p, q, zero_rho, prev_rho], _status(), dtype)
    assert list(status) == breakdown
    gamma[0, 2] = 0
    _, status = _check_both(ref, ocl, "solver.cgs.step_2", [u, v_hat, q, t, alpha, rho, gamma], _status(), dtype)
    assert list(status) == breakdown
    _check_both(ref, ocl, "solver.cgs.step_3", [u_hat, x, alpha, rho, prev_rho], _status(), dtype)
