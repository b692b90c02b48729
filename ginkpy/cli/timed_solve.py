"""A timed solve of ``ginkpy solve``: on a device a warm-up first (so that the times are the
work's, the compile time reported apart), the generate and the solve timed, the fallback of
``--preconditioner auto`` to scalar Jacobi, and ``--profile``'s second, profiled solve."""
from __future__ import annotations

import argparse
import time
from typing import Any

import attrs
import numpy as np

from ginkpy.cli.progress import Progress
from ginkpy.cli.solver_options import solver_parameters
from ginkpy.core.base.executor import Executor
from ginkpy.core.log.convergence import Convergence
from ginkpy.core.log.logger import Logger
from ginkpy.core.log.profiler_hook import ProfilerHook
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.iteration import Iteration


WARM_UP_ITERATIONS = 2  # enough to run every kernel of an iteration and of the solve's end once


def warm_up(params: Any, exec: Executor, A: Any, B: Dense) -> tuple[float, int]:
    """Compile every kernel of the solve (or load it from the disk cache) before anything is
    timed: the same solver on the same system, stopped after WARM_UP_ITERATIONS iterations.
    The system's own sizes matter: a device may compile a kernel anew for other launch sizes.
    Returns the seconds it took and the iterations it ran."""
    criteria = [c for c in params.criteria if c.product is not Iteration]
    warm = attrs.evolve(params, criteria=(*criteria, Iteration.build().with_max_iters(WARM_UP_ITERATIONS)))
    logger = Convergence()
    start = time.perf_counter()
    solver = warm.on(exec).generate(A)
    solver.add_logger(logger)
    solver.apply(B, Dense.zeros(exec, B.shape, B.dtype))
    exec.synchronize()
    return time.perf_counter() - start, logger.num_iterations


def timed_solve(params: Any, exec: Executor, A: Any, B: Dense, times: dict[str, float],
                 convergence: Convergence, *loggers: Logger) -> tuple[Dense, Any]:
    """Generate the solver and solve from x = 0 with ``convergence`` and ``loggers`` attached;
    returns x and the solver. Records the seconds of "generate" and "solve" in ``times`` and, on a device, of
    the warm-up before them and the part of it that compiled or loaded kernels ("compile")."""
    compiled = exec.backend != "reference"  # the reference executor runs numpy/scipy: nothing to compile
    if compiled:
        times["warm-up"], warm_iterations = warm_up(params, exec, A, B)
    start = time.perf_counter()
    solver = params.on(exec).generate(A)
    exec.synchronize()
    times["generate"] = time.perf_counter() - start
    for logger in (convergence, *loggers):
        solver.add_logger(logger)
    X = Dense.zeros(exec, (A.shape[1], B.shape[1]), B.dtype)
    exec.synchronize()
    start = time.perf_counter()
    solver.apply(B, X)
    exec.synchronize()
    times["solve"] = time.perf_counter() - start
    if compiled:
        # the warm-up's time beyond the setup and the iterations it repeated
        per_iteration = times["solve"] / max(convergence.num_iterations, 1)
        times["compile"] = max(0.0, times["warm-up"] - times["generate"] - warm_iterations * per_iteration)
    return X, solver


def solve_with_default(args: argparse.Namespace, exec: Executor, A: Any, B: Dense, times: dict[str, float],
                        params: Any, solver: str | None, chosen: str | None,
                        chosen_why: str | None) -> tuple[Dense, Any, Convergence, Any, str | None, str | None]:
    """:func:`timed_solve` with a progress line; where the preconditioner that --preconditioner
    auto ``chosen`` cannot be set up, again with scalar Jacobi (a default never fails where a
    weaker method works), said in ``chosen_why``. Returns x, the solver, its Convergence, the
    parameters and the preconditioner's name and reason."""
    b_norm = np.asarray(B.compute_norm2().to_numpy()).ravel()
    convergence = Convergence()
    try:
        X, op = timed_solve(params, exec, A, B, times, convergence, Progress(b_norm))
    except ValueError as err:
        if chosen in (None, "none", "jacobi"):
            raise
        chosen, chosen_why = "jacobi", f"{chosen_why}; it could not be set up ({err}), so scalar Jacobi"
        params = solver_parameters(args, solver, chosen)
        convergence = Convergence()
        X, op = timed_solve(params, exec, A, B, times, convergence, Progress(b_norm))
    return X, op, convergence, params, chosen, chosen_why


def profiled(params: Any, exec: Executor, A: Any, B: Dense) -> ProfilerHook:
    """--profile: the same generate and solve again with a ProfilerHook on the executor, which
    times every kernel, apply and generate (on OpenCL the kernels' device times: solve() turns
    on the queue's profiling events)."""
    hook = ProfilerHook.create_summary("profile: a second generate and solve, every operation timed (gk.log."
                                       "ProfilerHook; each timed range waits for the device)")
    exec.add_logger(hook)
    try:
        solver = params.on(exec).generate(A)
        solver.apply(B, Dense.zeros(exec, (A.shape[1], B.shape[1]), B.dtype))
    finally:
        exec.remove_logger(hook)
    return hook
