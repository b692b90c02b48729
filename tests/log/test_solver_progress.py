"""gk.log.SolverProgress: the iteration and residual norm every n-th iteration, to a chosen
stream, from what the solve loop reads anyway."""
import io
import re

import numpy as np
import pytest

import ginkpy as gk
from ginkpy.problems import poisson_2d


def _cg(exec, n_side=30, max_iters=1000):
    A = gk.matrix.Csr.from_scipy(exec, poisson_2d(n_side))
    b = gk.matrix.Dense.from_numpy(exec, np.ones(n_side * n_side))
    solver = gk.solver.Cg.build().with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-8),
        gk.stop.Iteration.build().with_max_iters(max_iters)).on(exec).generate(A)
    return solver, b


def _rows(text):
    return [(int(m.group(1)), float(m.group(2))) for m in
            re.finditer(r"\[Cg\] iteration +(\d+)  residual norm (\S+)", text)]


def test_prints_every_nth_iteration_and_how_it_ended(exec):
    solver, b = _cg(exec)
    stream = io.StringIO()
    history = gk.log.Convergence(history=True)
    solver.add_logger(history)
    solver.add_logger(gk.log.SolverProgress(stream, every=7))
    solver.apply(b, gk.matrix.Dense.zeros(exec, b.shape))
    text = stream.getvalue()
    rows = _rows(text)
    iterations = history.num_iterations
    assert [i for i, _ in rows] == list(range(0, iterations + 1, 7))
    norms = np.array(history.residual_norm_history, dtype=float)[:, 0]
    np.testing.assert_allclose([v for _, v in rows], norms[::7][:len(rows)], rtol=1e-6)
    assert text.rstrip().splitlines()[-1].startswith(f"[Cg] stopped after {iterations} iterations (converged)")


def test_adds_no_read_of_the_device(ocl):
    """Its lines come from the loop's asynchronous reads: no more blocking reads than a solve
    with another logger of every iteration."""
    solver, b = _cg(ocl, n_side=40)

    class Quiet(gk.log.Logger):  # wants every iteration's norms, as SolverProgress
        pass

    reads = []
    for logger in (Quiet(), gk.log.SolverProgress(io.StringIO(), every=1)):
        solver.add_logger(logger)
        ocl.synchronize()
        before = ocl.counters["reads"]
        solver.apply(b, gk.matrix.Dense.zeros(ocl, b.shape))
        ocl.synchronize()
        reads.append(ocl.counters["reads"] - before)
        solver.remove_logger(logger)
    assert reads[1] <= reads[0]
    assert reads[1] < 20  # (some 100 iterations, a handful of reads)


def test_relative_in_place_line_is_cleared_at_the_end(ref):
    solver, b = _cg(ref, n_side=10)
    stream = io.StringIO()
    solver.add_logger(gk.log.SolverProgress(stream, relative_to=[10.0], in_place=True))
    solver.apply(b, gk.matrix.Dense.zeros(ref, b.shape))
    text = stream.getvalue()
    assert "\riteration        0   relative residual 1.000e+00" in text
    assert text.endswith("\r") and "\n" not in text


def test_min_interval_limits_the_lines(ref):
    solver, b = _cg(ref, n_side=20)
    stream = io.StringIO()
    solver.add_logger(gk.log.SolverProgress(stream, min_interval=3600.0, summary=False))
    solver.apply(b, gk.matrix.Dense.zeros(ref, b.shape))
    assert len(_rows(stream.getvalue())) == 1  # the first line only


def test_default_stream_is_stdout_and_ginkgo_name(ref, capsys):
    solver, b = _cg(ref, n_side=6)
    solver.add_logger(gk.log.SolverProgress.create_scalar_table_writer(every=100))
    solver.apply(b, gk.matrix.Dense.zeros(ref, b.shape))
    out = capsys.readouterr().out
    assert _rows(out)[0][0] == 0 and "stopped after" in out


@pytest.mark.parametrize("kwargs, message", [({"every": 0}, "every must be an integer >= 1"),
                                             ({"min_interval": -1.0}, "min_interval must be")])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gk.log.SolverProgress(**kwargs)
