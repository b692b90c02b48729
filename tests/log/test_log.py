"""Loggers: what Convergence records and what Stream prints."""
import io

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.stop.stopping_status import StopReason


def _solver(ref):
    A = gk.matrix.Csr.from_scipy(ref, sp.diags([1.0, 2.0]))
    return gk.solver.Cg.build().with_criteria(
        gk.stop.Iteration.build().with_max_iters(10),
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-14)).on(ref).generate(A)


def test_convergence_records_history_and_result(ref):
    solver = _solver(ref)
    log = gk.log.Convergence()
    solver.add_logger(log)
    with pytest.raises(RuntimeError, match="no solve"):
        log.num_iterations
    solver.apply(gk.matrix.Dense.from_numpy(ref, [1.0, 1.0]), gk.matrix.Dense.zeros(ref, (2, 1)))
    hist = np.array(log.residual_norm_history)[:, 0]
    np.testing.assert_allclose(hist[:2], [np.sqrt(2), np.sqrt(2) / 3], rtol=1e-15)
    assert hist[2] <= 1e-14 * np.sqrt(2)
    assert log.num_iterations == 2 and log.has_converged and log.stop_reason == StopReason.CONVERGED
    assert log.stop_reasons == [gk.stop.StopReason.CONVERGED]
    # a second solve starts a new history
    solver.apply(gk.matrix.Dense.from_numpy(ref, [0.0, 0.0]), gk.matrix.Dense.zeros(ref, (2, 1)))
    assert len(log.residual_norm_history) == 1 and log.num_iterations == 0


def test_stream_prints_iterations_and_summary(ref):
    solver = _solver(ref)
    out = io.StringIO()
    solver.add_logger(gk.log.Stream(out))
    solver.apply(gk.matrix.Dense.from_numpy(ref, [1.0, 1.0]), gk.matrix.Dense.zeros(ref, (2, 1)))
    lines = out.getvalue().splitlines()
    assert lines[0] == "[Cg] iteration 0: residual norm 1.414214e+00"
    assert lines[-1].startswith("[Cg] stopped after 2 iterations (converged)")
    assert len(lines) == 4
