"""Stopping criteria and their baselines, on the reference executor with hand-checked values."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.stop.stopping_status import StopReason


def _cg(ref, criteria, b=(1.0, 1.0), x0=(0.0, 0.0)):
    A = gk.matrix.Csr.from_scipy(ref, sp.diags([1.0, 2.0]))
    solver = gk.solver.Cg.build().with_criteria(*criteria).on(ref).generate(A)
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = gk.matrix.Dense.from_numpy(ref, np.array(x0))
    solver.apply(gk.matrix.Dense.from_numpy(ref, np.array(b)), x)
    return log, x.to_numpy()[:, 0]


def test_iteration_zero_leaves_x_unchanged(ref):
    log, x = _cg(ref, [gk.stop.Iteration.build().with_max_iters(0)], x0=(3.0, 4.0))
    assert log.num_iterations == 0
    np.testing.assert_array_equal(x, [3.0, 4.0])


@pytest.mark.parametrize("baseline, factor, iterations", [
    # residual norms of CG on diag(1, 2), b = (1, 1): sqrt(2), sqrt(2)/3, 0
    ("rhs_norm", 0.5, 1),           # threshold 0.5 * sqrt(2) > sqrt(2)/3
    ("rhs_norm", 0.3, 2),           # 0.3 * sqrt(2) < sqrt(2)/3
    ("absolute", 0.5, 1),           # threshold 0.5 > sqrt(2)/3 = 0.471
    ("absolute", 0.47, 2),
    ("initial_resnorm", 0.34, 1),   # x0 = 0, so the same as rhs_norm
])
def test_residual_norm_baselines(ref, baseline, factor, iterations):
    log, _ = _cg(ref, [gk.stop.Iteration.build().with_max_iters(10),
                       gk.stop.ResidualNorm.build().with_baseline(baseline).with_reduction_factor(factor)])
    assert log.num_iterations == iterations
    assert log.has_converged


def test_initial_resnorm_baseline_differs_from_rhs_norm(ref):
    # x0 = (1, 0): r0 = (0, 1), ||r0|| = 1 while ||b|| = sqrt(2); the exact solution needs 1 step
    log, x = _cg(ref, [gk.stop.Iteration.build().with_max_iters(10),
                       gk.stop.ResidualNorm.build().with_baseline("initial_resnorm").with_reduction_factor(1e-14)],
                 x0=(1.0, 0.0))
    assert log.num_iterations == 1
    np.testing.assert_allclose(x, [1.0, 0.5], rtol=1e-15)
    np.testing.assert_allclose(log.residual_norm_history[0], [1.0])


def test_time_limit_zero_stops_at_once(ref):
    log, _ = _cg(ref, [gk.stop.Time.build().with_time_limit(0.0)])
    assert log.num_iterations == 0
    assert log.stop_reason == StopReason.TIME_LIMIT


def test_first_criterion_met_gives_the_reason(ref):
    log, _ = _cg(ref, [gk.stop.Iteration.build().with_max_iters(1),
                       gk.stop.ResidualNorm.build().with_reduction_factor(1e-14)])
    assert log.stop_reason == StopReason.ITERATION_LIMIT and not log.has_converged


def test_bad_parameters_are_errors(ref):
    A = gk.matrix.Csr.from_scipy(ref, sp.diags([1.0, 2.0]))
    # a criterion without its limit is an error when the solver is generated
    with pytest.raises(ValueError, match="max_iters"):
        gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build()).on(ref).generate(A)
    # a bad value is an error where it is given, naming the parameter and what it accepts
    for make, msg in [(lambda: gk.stop.Iteration.build().with_max_iters(-1), "max_iters must be an integer >= 0"),
                      (lambda: gk.stop.Iteration.build().with_max_iters(float("nan")), "max_iters"),
                      (lambda: gk.stop.Iteration.build().with_max_iters(2.5), "max_iters"),
                      (lambda: gk.stop.ResidualNorm.build().with_baseline("relative"), "baseline must be one of"),
                      (lambda: gk.stop.ResidualNorm.build().with_reduction_factor("1e-8"), "reduction_factor"),
                      (lambda: gk.stop.ResidualNorm.build().with_reduction_factor(-1.0), "reduction_factor"),
                      (lambda: gk.stop.Time.build().with_time_limit(-1.0), "time_limit")]:
        with pytest.raises(ValueError, match=msg):
            make()


def test_solve_result_reads_codes_and_reasons():
    from ginkpy.core.stop.solve_result import SolveResult
    codes = np.array([1, 2, 4, 5, 6, 0, 3], np.uint8)
    result = SolveResult(np.zeros(7), np.zeros(7), codes)
    assert result.stop_reasons == [StopReason(int(c)) for c in codes]
    assert all(type(r) is StopReason for r in result.stop_reasons)
    np.testing.assert_array_equal(result.codes, codes)
    assert result.codes.dtype == codes.dtype
    assert SolveResult(np.zeros(2), np.zeros(2), [StopReason.BREAKDOWN, 1]).stop_reasons == \
        [StopReason.BREAKDOWN, StopReason.CONVERGED]
    with pytest.raises(ValueError, match="9 is not a valid StopReason"):
        SolveResult(np.zeros(1), np.zeros(1), [9])
