"""The solve loop on the device (issue 8): what a loop costs (counters, never times), the stop
state read asynchronously giving the same answers as read after every iteration, and loggers
seeing every iteration in order."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.log.logger import Logger
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d

JACOBI = gk.preconditioner.Jacobi.build().with_max_block_size(1)


def _solver(exec, name, S, max_iters, reduction=None, dtype=np.float64, **params):
    A = gk.matrix.Csr.from_scipy(exec, S, dtype)
    p = getattr(gk.solver, name).build().with_preconditioner(JACOBI)
    crit = [gk.stop.Iteration.build().with_max_iters(max_iters)]
    if reduction is not None:
        crit.append(gk.stop.ResidualNorm.build().with_reduction_factor(reduction))
    p.with_criteria(*crit)
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    return p.on(exec).generate(A)


def _apply(solver, b, loggers=()):
    exec = solver.executor
    for logger in loggers:
        solver.add_logger(logger)
    B = gk.matrix.Dense.from_numpy(exec, b, solver.dtype)
    X = gk.matrix.Dense.zeros(exec, B.shape, solver.dtype)
    solver.apply(B, X)
    for logger in loggers:
        solver.remove_logger(logger)
    return X.to_numpy()


def _counted(exec, solver, b, logger):
    """Counters of one apply (after a first apply that made the work vectors and kernels)."""
    _apply(solver, b, [logger])
    before = dict(exec.counters)
    _apply(solver, b, [logger])
    return {key: exec.counters[key] - before[key] for key in before}


SYSTEMS = {"Cg": poisson_2d(30), "Bicgstab": convection_diffusion_2d(30), "Gmres": convection_diffusion_2d(30),
           "CbGmres": convection_diffusion_2d(30),
           # symmetric indefinite, a positive diagonal (Jacobi is SPD)
           "Minres": (poisson_2d(30) - 0.5 * sp.identity(900)).tocsr(),
           "Tfqmr": convection_diffusion_2d(30), "Qmr": convection_diffusion_2d(30)}
# launches per iteration in the loop, with scalar Jacobi (issue 8's targets; Gmres per inner iteration)
# (Tfqmr and Qmr apply scalar Jacobi as an operator of its own and compute their dots apart:
# Tfqmr a half step of 11, Qmr an iteration of 15 with A^H, M1, M1^H, M2 and M2^H)
# (CbGmres lags its DGKS second pass into the next step's dot products as Gmres does: 3, not 4)
LAUNCHES = {"Cg": 3, "Bicgstab": 5, "Gmres": 3, "CbGmres": 3, "Minres": 3, "Tfqmr": 11, "Qmr": 15}


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_nothing_is_allocated_in_the_loop_and_launches_per_iteration(ocl, name):
    # with only an iteration limit, 40 and 100 iterations differ by 60 iterations of launches and
    # by no allocation and no blocking read
    S = SYSTEMS[name]
    b = np.random.default_rng(0).standard_normal(S.shape[0])
    counts = [_counted(ocl, _solver(ocl, name, S, iters), b, gk.log.Convergence()) for iters in (40, 100)]
    assert counts[0]["allocations"] == counts[1]["allocations"]
    assert counts[0]["reads"] == counts[1]["reads"]
    per_iteration = (counts[1]["launches"] - counts[0]["launches"]) / 60
    # (Gmres adds its end of cycle every 30 iterations: 7 launches)
    assert per_iteration <= LAUNCHES[name] + (0.3 if name in ("Gmres", "CbGmres") else 0.05), per_iteration


def test_the_reference_loop_allocates_nothing_per_iteration(ref):
    S = SYSTEMS["Cg"]
    b = np.ones(S.shape[0])
    counts = [_counted(ref, _solver(ref, "Cg", S, iters), b, gk.log.Convergence()) for iters in (20, 80)]
    assert counts[0]["allocations"] == counts[1]["allocations"]


class _EveryIteration(Logger):
    """Needs the live solution after every iteration: the solve reads its state after each one."""

    needs_solution = True

    def __init__(self) -> None:
        self.iterations = []

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        self.iterations.append(iteration)


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_synchronous_and_asynchronous_reads_agree(exec, name):
    # several columns, one of them converging early (b = A * ones in column 0 is smooth)
    S = SYSTEMS[name]
    n = S.shape[0]
    b = np.column_stack([S @ np.ones(n), np.random.default_rng(1).standard_normal((n, 2))])
    results = []
    for loggers in ([gk.log.Convergence()], [gk.log.Convergence(), _EveryIteration()]):
        solver = _solver(exec, name, S, 500, 1e-10)
        x = _apply(solver, b, loggers)
        results.append((x, loggers[0]))
    (x_async, log_async), (x_sync, log_sync) = results
    assert list(log_async.iterations) == list(log_sync.iterations)
    assert log_async.stop_reasons == log_sync.stop_reasons == [StopReason.CONVERGED] * 3
    np.testing.assert_array_equal(x_async, x_sync)
    assert len(log_async.residual_norm_history) == len(log_sync.residual_norm_history) == log_async.num_iterations + 1


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_histories_are_complete_and_in_order(exec, name):
    S = SYSTEMS[name]
    b = np.random.default_rng(2).standard_normal((S.shape[0], 2))
    stream = io.StringIO()
    log = gk.log.Convergence()
    solver = _solver(exec, name, S, 400, 1e-9)
    _apply(solver, b, [log, gk.log.Stream(stream)])
    lines = [line for line in stream.getvalue().splitlines() if "iteration" in line and "stopped" not in line]
    printed = [int(line.split("iteration ")[1].split(":")[0]) for line in lines]
    assert printed == list(range(log.num_iterations + 1))
    history = np.array(log.residual_norm_history)
    assert history.shape == (log.num_iterations + 1, 2)
    # the first entry is ||b|| (x = 0), the last the final residual of each column
    np.testing.assert_allclose(history[0], np.linalg.norm(b, axis=0), rtol=1e-12)
    for c in range(2):
        np.testing.assert_allclose(history[log.iterations[c], c], log.residual_norm[c], rtol=1e-12)


def _fast_and_slow_columns():
    """A system whose column 0 is solved in one iteration (an eigenvector of the Jacobi-scaled
    matrix: b = A 1 of a scaled identity block) and column 1 needs many."""
    S = sp.block_diag([2.0 * sp.identity(100), poisson_2d(10)]).tocsr()
    b = np.zeros((200, 2))
    b[:100, 0] = 1.0
    b[100:, 1] = np.random.default_rng(3).standard_normal(100)
    return S, b


def test_columns_converge_while_others_run(exec):
    # each column stops on its own, its x left as it was
    S, b = _fast_and_slow_columns()
    log = gk.log.Convergence()
    x = _apply(_solver(exec, "Cg", S, 500, 1e-10), b, [log])
    assert log.stop_reasons == [StopReason.CONVERGED] * 2
    assert log.iterations[0] == 1 and log.iterations[1] > 10
    assert np.linalg.norm(b - S @ x, axis=0).max() <= 1e-10 * np.linalg.norm(b, axis=0).max()


def test_a_breakdown_between_two_reads(exec):
    # column 0 breaks down in its first iteration (an indefinite matrix: p^T A p = 0), column 1 runs
    # on for many iterations: the breakdown is flagged by a kernel long before the host reads it
    S = sp.block_diag([sp.csr_matrix([[0.0, 1.0], [1.0, 0.0]]), poisson_2d(10)]).tocsr()
    b = np.zeros((102, 2))
    b[0, 0] = 1.0
    b[2:, 1] = np.random.default_rng(4).standard_normal(100)
    log = gk.log.Convergence()
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(400),
                                                gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(exec).generate(A)
    solver.add_logger(log)
    X = gk.matrix.Dense.zeros(exec, (102, 2))
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), X)
    assert log.stop_reasons == [StopReason.BREAKDOWN, StopReason.CONVERGED]
    assert log.iterations[0] == 1 and log.iterations[1] > 10
    assert np.isfinite(X.to_numpy()).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_converged_means_the_true_residual_meets_the_criterion(exec, name, dtype):
    # tolerances near what the value type resolves: the recurrence residual falls below them
    # before the true one does; converged only where the true residual is below the threshold
    S = SYSTEMS[name]
    rng = np.random.default_rng(5)
    b = rng.standard_normal((S.shape[0], 3))
    reduction = 1e-13 if dtype == np.float64 else 3e-6
    log = gk.log.Convergence()
    x = _apply(_solver(exec, name, S, 600, reduction, dtype=dtype), b, [log])
    A = gk.matrix.Csr.from_scipy(exec, S, dtype)
    X = gk.matrix.Dense.from_numpy(exec, x, dtype)
    r = gk.matrix.Dense.from_numpy(exec, b, dtype)
    A.apply(-1.0, X, 1.0, r)  # the true residual, in the solve's own arithmetic
    true = r.compute_norm2().to_numpy()[0]
    for c in range(3):
        if log.converged[c]:
            assert true[c] <= reduction * np.linalg.norm(b[:, c].astype(dtype)) * (1 + 1e-6), (c, true[c])


def test_a_small_system_in_one_launch_agrees_with_the_loop(ocl, monkeypatch):
    # the same system through the batch-of-one kernel (no logger that wants every iteration) and
    # through the loop: the same verdict and iterations, x to the tolerance (the methods with a
    # batched kernel)
    for name in ("Cg", "Bicgstab", "Gmres"):
        S = SYSTEMS[name]
        b = S @ np.ones(S.shape[0])
        runs = []
        for history in (False, True):
            log = gk.log.Convergence(history=history)
            x = _apply(_solver(ocl, name, S, 2000, 1e-10), b, [log])
            runs.append((x, log.result))
        (x_one, one), (x_loop, loop) = runs
        assert one.method == "batch of one" and loop.method == "loop"
        assert one.stop_reasons == loop.stop_reasons == [StopReason.CONVERGED]
        assert abs(int(one.iterations[0]) - int(loop.iterations[0])) <= 2
        np.testing.assert_allclose(x_one, x_loop, rtol=1e-7, atol=1e-7)
        # and it can be turned off
        monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
        log = gk.log.Convergence(history=False)
        _apply(_solver(ocl, name, S, 2000, 1e-10), b, [log])
        assert log.result.method == "loop"
        monkeypatch.delenv("GINKPY_SMALL_SYSTEMS")


def test_argument_checks_run_once_per_call(exec, monkeypatch):
    # the value type is checked where an argument comes in (the SciPy door, the generated
    # solver), not again by every vector a solve makes: none in an apply of a generated solver
    calls = []
    check = type(exec).check_dtype
    monkeypatch.setattr(type(exec), "check_dtype", lambda self, dtype: calls.append(dtype) or check(self, dtype))
    S = poisson_2d(10)
    x, info = gk.linalg.cg(S, np.ones(100), executor=exec)
    assert info == 0 and len(calls) <= 4, calls
    solver = _solver(exec, "Bicgstab", convection_diffusion_2d(10), 200, 1e-8)
    B = gk.matrix.Dense.from_numpy(exec, np.ones((100, 2)))
    for _ in range(2):
        calls.clear()
        solver.apply(B, gk.matrix.Dense.zeros(exec, (100, 2)))
    assert calls == [np.float64]  # Dense.zeros above


def test_stop_codes_are_defined_once():
    # StopReason is the one definition: the OpenCL sources get the codes as build options
    from ginkpy.core.stop.stopping_status import status_defines
    root = Path(gk.__file__).parent
    sources = "\n".join(path.read_text() for path in root.rglob("*.cl"))
    assert not re.search(r"#define\s+STATUS_", sources)
    assert set(re.findall(r"\bSTATUS_[A-Z_]+\b", sources)) - {"STATUS_DTYPE"} <= set(status_defines())
    assert status_defines() == {f"STATUS_{r.name}": int(r) for r in StopReason}


def _measured_apply(solver, b):
    """Counters of an apply to new vectors, after an apply to others of the same shape."""
    exec = solver.executor
    for _ in range(2):
        B = gk.matrix.Dense.from_numpy(exec, b, solver.dtype)
        X = gk.matrix.Dense.zeros(exec, B.shape, solver.dtype)
        before = dict(exec.counters)
        solver.apply(B, X)
    return {key: exec.counters[key] - before[key] for key in before}, X.to_numpy()


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_a_second_apply_replays_the_first(exec, name, monkeypatch):
    # issue 24: the solver keeps its workspace and its captured iteration across applies of one
    # shape; a second apply captures nothing, allocates nothing, and costs its iterations' launches
    # and a handful more (b and x copied in and out, the initial residual and its norms)
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = SYSTEMS[name]
    b = np.random.default_rng(6).standard_normal((S.shape[0], 2))
    counts = {}
    for iters in (10, 40):
        counts[iters], x = _measured_apply(_solver(exec, name, S, iters), b)
        assert counts[iters]["captures"] == counts[iters]["allocations"] == counts[iters]["kernel_copies"] == 0
    per_iteration = (counts[40]["launches"] - counts[10]["launches"]) / 30
    # 16 launches (b and x in, their norms, r = b - A x and its norm, the setup, x out), and 12
    # for the honest end of a solve stopped by its iteration limit (the samples of the best
    # iterate, the true residuals of x and of the best); Gmres: its restart and last cycle's end;
    # Qmr: its start's M1 r and M2^H r and their norms
    extra = {"Gmres": 8, "Qmr": 4}.get(name, 0)
    assert counts[10]["launches"] - 10 * per_iteration <= 16 + 12 + extra, (counts, per_iteration)
    # and the same answer as a fresh solver's first apply
    fresh = _apply(_solver(exec, name, S, 40), b)
    np.testing.assert_array_equal(x, fresh)


def test_nested_solvers_are_not_captured_again(exec, monkeypatch):
    # a Multigrid preconditioner with Ir smoothers (solvers run by the monitor, blind) and an Ir
    # preconditioner of Gmres (three Jacobi sweeps): the outer iteration's capture holds theirs; a
    # second outer apply captures nothing
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = poisson_2d(20)
    smoother = gk.solver.Ir.build().with_solver(JACOBI).with_relaxation_factor(0.8).with_criteria(
        gk.stop.Iteration.build().with_max_iters(2))
    amg = gk.solver.Multigrid.build().with_pre_smoother(smoother).with_min_coarse_rows(20)
    sweeps = gk.solver.Ir.build().with_solver(JACOBI).with_criteria(gk.stop.Iteration.build().with_max_iters(3))
    b = np.random.default_rng(7).standard_normal(S.shape[0])
    for name, M in (("Cg", amg), ("Gmres", sweeps)):
        A = gk.matrix.Csr.from_scipy(exec, S)
        solver = getattr(gk.solver, name).build().with_preconditioner(M).with_criteria(
            gk.stop.Iteration.build().with_max_iters(100),
            gk.stop.ResidualNorm.build().with_reduction_factor(1e-9)).on(exec).generate(A)
        counts, x = _measured_apply(solver, b)
        assert counts["captures"] == counts["allocations"] == 0, (name, counts)
        assert np.linalg.norm(b - S @ x[:, 0]) <= 1e-9 * np.linalg.norm(b)


# captures of a first apply: the steps of j % 2 and the cycle's first, j = 0, the cycle's end, and
# the inner solver's iteration on each pair of vectors it runs on: v -> z in the steps and, in
# plain Gmres's end of a cycle, u -> z (x += M V y)
@pytest.mark.parametrize("name, params, captures", [
    ("Gmres", {}, 3 + 1 + 2), ("CbGmres", {}, 3 + 1 + 2), ("Gmres", {"flexible": True}, 3 + 1 + 1),
    ("Gcr", {}, 3 + 1 + 1)], ids=str)
def test_restarted_solvers_capture_a_few_steps_not_one_per_inner_iteration(exec, monkeypatch, name, params, captures):
    # the kernels of Gmres (CbGmres, flexible) and Gcr read the inner iteration j from the device,
    # so that a first apply captures a few steps, not one per j (a capture costs a kernel copy per
    # launch, 0.5-1 ms each on NVIDIA's OpenCL where none is spare): 45 iterations of GMRES(10)
    # with a preconditioner that is a solver (flexible Gmres keeps its preconditioned basis), on
    # rows enough for several work-groups in either layout (partial sums that grow after the
    # capture of step 0 would leave its replays a stale buffer)
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = convection_diffusion_2d(91)
    b = np.random.default_rng(9).standard_normal(S.shape[0])
    sweeps = gk.solver.Ir.build().with_solver(JACOBI).with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    p = getattr(gk.solver, name).build().with_krylov_dim(10).with_preconditioner(sweeps).with_criteria(
        gk.stop.Iteration.build().with_max_iters(45))
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    solver = p.on(exec).generate(gk.matrix.Csr.from_scipy(exec, S))
    before = dict(exec.counters)
    x = _apply(solver, b)
    assert exec.counters["captures"] - before["captures"] == captures
    # the replayed steps run the right j: the reference's iterates
    if exec.backend == "opencl":
        ref = gk.ReferenceExecutor()
        expected = _apply(p.on(ref).generate(gk.matrix.Csr.from_scipy(ref, S)), b)
        # (CbGmres's float32 basis: rounded in another order than the reference's)
        rtol = 1e-5 if name == "CbGmres" else 1e-8
        np.testing.assert_allclose(x, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


def test_a_new_solver_reuses_the_kernel_copies_of_one_gone(ocl, monkeypatch):
    # capture is cheap: the private kernel copies of a solver no longer held go back to their
    # kernels, and the next solver's capture sets their arguments instead of creating kernels
    import gc
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = convection_diffusion_2d(20)
    b = np.random.default_rng(8).standard_normal(S.shape[0])
    # (on a copy: gk.linalg keeps the solver of a matrix while the matrix lives)
    gk.linalg.gmres(S.copy(), b, M="jacobi", executor=ocl, restart=10)
    gc.collect()
    before = dict(ocl.counters)
    x, info = gk.linalg.gmres(S, b, M="jacobi", executor=ocl, restart=10)
    assert info == 0 and ocl.counters["captures"] > before["captures"]
    assert ocl.counters["kernel_copies"] == before["kernel_copies"]


# -- what a solve says (issue 23 item 6) ---------------------------------------------------------

def test_stop_reason_is_a_stop_reason(exec):
    # one kind: stop_reason is the StopReason of the solve (CONVERGED when every column converged,
    # else the first that did not), printed as words, like each of stop_reasons
    S, b = _fast_and_slow_columns()
    log = gk.log.Convergence()
    _apply(_solver(exec, "Cg", S, 5, 1e-10), b, [log])
    assert log.stop_reasons == [StopReason.CONVERGED, StopReason.ITERATION_LIMIT]
    assert log.stop_reason is StopReason.ITERATION_LIMIT
    assert str(log.stop_reason) == f"{log.stop_reason}" == "iteration limit"
    _apply(_solver(exec, "Cg", S, 500, 1e-10), b, [log])
    assert log.stop_reason is StopReason.CONVERGED and str(log.stop_reason) == "converged"


def test_residual_norm_absolute_and_relative(exec):
    # residual_norm is ||b - A x|| (Ginkgo's), relative_residual_norm ||b - A x|| / ||b||: what a
    # relative criterion compares with its factor
    S = SYSTEMS["Bicgstab"]
    b = 1e3 * np.random.default_rng(4).standard_normal((S.shape[0], 2))
    log = gk.log.Convergence()
    x = _apply(_solver(exec, "Bicgstab", S, 500, 1e-8), b, [log])
    true = np.linalg.norm(b - S @ x, axis=0)
    np.testing.assert_allclose(log.residual_norm, true, rtol=1e-6)
    np.testing.assert_allclose(log.relative_residual_norm, true / np.linalg.norm(b, axis=0), rtol=1e-6)
    assert log.has_converged and (log.relative_residual_norm <= 1e-8).all()


def test_an_overflowing_initial_residual_says_so(exec, monkeypatch):
    # an x0 whose product with A overflows is not "NaN or Inf in x0": the message says what
    # happened, on both executors and whether or not the system is small
    S = poisson_2d(10)
    for small in ("0", "1"):
        monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", small)
        for A, x0, what in ((1e200 * S, np.full(100, 1e150), "initial residual b - A x overflows"),
                            (S, np.full(100, 1.7e308), "initial guess x is too large")):
            with pytest.raises(ValueError, match=what):
                gk.linalg.cg(A, np.ones(100), x0=x0, executor=exec)


def test_a_nan_in_x0_raises_on_every_executor(exec, monkeypatch):
    # the OpenCL norm used to skip NaN entries, and the solve returned a NaN solution
    S = poisson_2d(10)
    A = gk.matrix.Csr.from_scipy(exec, S)
    x0 = np.ones((100, 1))
    x0[37] = np.nan
    b = np.ones((100, 1))
    b_nan = b.copy()
    b_nan[5] = np.nan
    for small in ("0", "1"):
        monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", small)
        for name in ("Cg", "Gmres", "Bicgstab"):
            solver = getattr(gk.solver, name).build().with_criteria(
                gk.stop.Iteration.build().with_max_iters(50)).on(exec).generate(A)
            with pytest.raises(ValueError, match="initial guess x contains NaN or Inf"):
                solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.from_numpy(exec, x0))
            with pytest.raises(ValueError, match="right-hand side b contains NaN or Inf"):
                solver.apply(gk.matrix.Dense.from_numpy(exec, b_nan), gk.matrix.Dense.zeros(exec, (100, 1)))


# -- SciPy's callback(xk) without a stall (issue 25 item 5) ---------------------------------------

class _WaitingSolution(Logger):
    """x after every iteration as a callback got it before: the solve waits after each one."""

    needs_solution = True

    def __init__(self, x) -> None:
        self.x, self.iterates = x, []

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration > 0:
            self.iterates.append(self.x.to_numpy()[:, 0])


@pytest.mark.parametrize("name", ["cg", "bicgstab"])
def test_callback_iterates_as_when_the_solve_waited(exec, name, monkeypatch):
    # the callback gets x_t read one iteration behind the device: the same iterates, in the same
    # order, as a solve that waits after every iteration; no blocking read per iteration
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = SYSTEMS["Cg" if name == "cg" else "Bicgstab"]
    b = np.random.default_rng(9).standard_normal(S.shape[0])
    before = exec.counters["reads"]
    piped = []
    x, info = getattr(gk.linalg, name)(S, b, rtol=1e-8, M="jacobi", executor=exec,
                                       callback=lambda xk: piped.append(xk.copy()))  # xk is reused, as SciPy's
    reads = exec.counters["reads"] - before
    assert info == 0 and len(piped) > 20 and reads < 12, (len(piped), reads)
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = getattr(gk.solver, name.capitalize()).build().with_preconditioner(JACOBI).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-8),
        gk.stop.Iteration.build().with_max_iters(10 * S.shape[0])).on(exec).generate(A)
    X = gk.matrix.Dense.zeros(exec, (S.shape[0], 1))
    waiting = _WaitingSolution(X)
    solver.add_logger(waiting)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), X)
    assert len(piped) == len(waiting.iterates)
    for mine, theirs in zip(piped, waiting.iterates):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(x, piped[-1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_callback_of_a_scaled_solve_gets_the_unscaled_x(exec, dtype):
    # b of norm 2^600 (float32: 2^100) is scaled by a power of 2 on the device: the callback's
    # iterates are those of b unscaled times that power (exact), in x's type, not a slot left scaled
    S = SYSTEMS["Cg"].astype(dtype)
    b = np.random.default_rng(3).standard_normal(S.shape[0]).astype(dtype)
    factor = dtype(2.0 ** (600 if dtype == np.float64 else 100))
    runs = []
    for rhs in (b, b * factor):
        piped = []
        x, info = gk.linalg.cg(S, rhs, rtol=1e-4, M="jacobi", executor=exec,
                               callback=lambda xk: piped.append(xk.copy()))
        assert info == 0 and len(piped) > 5 and piped[0].dtype == dtype
        np.testing.assert_array_equal(x, piped[-1])
        runs.append(piped)
    plain, scaled = runs
    assert len(plain) == len(scaled)
    for mine, theirs in zip(scaled, plain):
        np.testing.assert_allclose(mine, theirs * factor, rtol=1e-4 if dtype == np.float32 else 1e-12)
