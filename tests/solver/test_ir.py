"""Ir (core/solver/ir.py): its inner solver, Richardson by hand, a diverging column, its OpenCL
kernels against their reference twins. The checks it shares with Bicg, Cgs, Fcg and Idr:
test_short_recurrence_solvers.py."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import criteria as _criteria, solve, solver_params
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import poisson_2d
from short_recurrence_cases import DTYPES, _check_both, _status, _vectors


def test_ir_takes_no_preconditioner_and_checks_its_inner_solver(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    # Ir's parameters have no preconditioner (give it to the inner solver, or make it the inner solver)
    assert not hasattr(gk.solver.Ir.build(), "with_preconditioner")
    assert hasattr(gk.solver.Cg.build(), "with_preconditioner")
    with pytest.raises(TypeError, match="inner solver must be"):
        solver_params("Ir", solver=5).on(ref).generate(A)


def test_ir_richardson_by_hand(ref):
    # A = diag(1, 2), b = (1, 1), omega = 1/2: x_k = (1 - 2^-k, 1/2)
    x, log = solve(ref, "Ir", sp.diags([1.0, 2.0]), np.ones(2), criteria=_criteria(3, None),
                    relaxation_factor=0.5)
    np.testing.assert_array_equal(x[:, 0], [0.875, 0.5])
    assert log.num_iterations == 3
    np.testing.assert_allclose(log.residual_norm, [0.125], rtol=1e-15)


def test_ir_with_jacobi_solves_a_diagonal_system_in_one_iteration(exec):
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    x, log = solve(exec, "Ir", sp.diags([2.0, 4.0, 8.0]), np.ones(3), solver=jacobi)
    np.testing.assert_array_equal(x[:, 0], [0.5, 0.25, 0.125])
    assert log.has_converged and log.num_iterations == 1


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_ir_a_diverging_column_leaves_the_inner_solver_to_the_others(ref):
    # inner solver: two Richardson steps from z = 0 (z = r, then z = 2 r - A r), so x changes by
    # (2 I - A) r and the error by (I - A)^2: factor 1/4 on column 0 (converges), 4 on column 1
    # (overflows at about 256 iterations, DIVERGED), 0.98 on column 2 (still running then). The
    # diverged column must not reach the inner solver, which would refuse its infinite right-hand side.
    inner = gk.solver.Ir.build().with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    x, log = solve(ref, "Ir", sp.diags([0.5, 3.0, 0.01]), np.eye(3) + np.eye(3, k=1) * [0, 1, 0],
                    criteria=_criteria(300), solver=inner)
    assert log.result.stop_reasons == [StopReason.CONVERGED, StopReason.DIVERGED, StopReason.ITERATION_LIMIT]
    assert log.iterations[1] < log.iterations[2] == 300
    np.testing.assert_allclose(x[:, 0], [2.0, 0.0, 0.0], rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opencl_ir_kernels(ref, ocl, rng, dtype):
    r, z, x = _vectors(rng, 3)
    (r_out, z_out), _ = _check_both(ref, ocl, "solver.ir.prepare", [r, z], _status(), dtype)
    np.testing.assert_array_equal(r_out[:, 1], 0)
    np.testing.assert_array_equal(z_out, r_out)
    (_, _, x_out), _ = _check_both(ref, ocl, "solver.ir.update", [np.array([[0.7]]), z, x], _status(), dtype)
    np.testing.assert_array_equal(x_out[:, 1], x[:, 1].astype(dtype))
