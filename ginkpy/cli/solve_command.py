"""``ginkpy solve``: read the system, choose or read the solver, solve and report how it went."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.cli.auto_choice import choose_preconditioner, choose_solver
from ginkpy.cli.devices_command import device_name, open_executor
from ginkpy.cli.direct_solve import solve_direct
from ginkpy.cli.files import check_paths, file_dtype, read_system, save_plot, write_solution
from ginkpy.cli.info_command import matrix_kind
from ginkpy.cli.solver_options import iterative_solvers, solver_parameters, warn_tolerance
from ginkpy.cli.summary import describe, hints, outcome_rows, time_rows
from ginkpy.cli.timed_solve import WARM_UP_ITERATIONS, profiled, solve_with_default
from ginkpy.core.base.executor import Executor
from ginkpy.core.log.plot import require_matplotlib
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.direct import Direct
from ginkpy.core.stop.stopping_status import StopReason


def solve(args: argparse.Namespace) -> int:
    """``ginkpy solve``: solve A x = b (b from --rhs, else A times ones) and report how it went."""
    params = _checked_options(args)  # a bad --config fails before the matrix is read
    times: dict[str, float] = {}
    exec, dtype, S, A, B = _open_system(args, times)
    suits_cg, kind = matrix_kind(S)
    if args.solver == "direct" or (params is not None and params.product is Direct):
        return solve_direct(args, params, exec, S, A, B, times, suits_cg)
    why = chosen = chosen_why = solver = None
    if params is None:
        solver, why = (args.solver, None) if args.solver not in (None, "auto") else \
            choose_solver(suits_cg, kind, args.krylov_dim)
        if args.preconditioner in (None, "auto"):
            chosen, chosen_why = choose_preconditioner(iterative_solvers()[solver], S, suits_cg, kind)
        params = solver_parameters(args, solver, chosen)
    warn_tolerance(params, dtype)
    solved = solve_with_default(args, exec, A, B, times, params, solver, chosen, chosen_why)
    if why:
        solved, why = _gmres_after_breakdown(args, exec, S, A, B, times, solved, why, suits_cg, kind)
    X, op, convergence, params, chosen, chosen_why = solved
    rows = [
        ("matrix", f"{args.matrix}: {S.shape[0]} x {S.shape[1]}, {S.nnz} nonzeros, {dtype}, "
                   f"{B.shape[1]} right-hand side{'s' if B.shape[1] != 1 else ''}"),
        ("solver", describe(params) + (f" ({why})" if why else "")),
        *([("preconditioner", f"{chosen} ({chosen_why})")] if chosen_why else []),
        ("executor", f"{exec.backend} on {device_name(exec)}"),
        *outcome_rows(convergence.result),
        *time_rows(times, convergence.result.num_iterations, args.profile, WARM_UP_ITERATIONS),
        *[("hint", text) for text in hints(convergence.result, convergence.residual_norm_history, params, suits_cg,
                                            kind, dtype, np.flatnonzero(S.diagonal() == 0), _empty_rows(S))],
    ]
    _report(args, rows, X, op, convergence, params)
    if args.profile:
        print(f"\n{profiled(params, exec, A, B)}")
    return 0 if convergence.has_converged else 1


def _checked_options(args: argparse.Namespace) -> Any:
    """Check the options before anything runs; the parameters of --config (None without)."""
    if args.plot:
        require_matplotlib()  # before the solve, not after it
    check_paths(args)
    if args.config and (args.solver not in (None, "auto") or args.preconditioner not in (None, "auto")):
        raise ValueError("--config describes the solver and its preconditioner: leave out --solver "
                         "and --preconditioner, or --config")
    if args.rtol is not None and not args.rtol >= 0:
        raise ValueError(f"--rtol must be a relative tolerance >= 0 (such as 1e-8), got {args.rtol:g}")
    return solver_parameters(args, "") if args.config else None


def _open_system(args: argparse.Namespace, times: dict[str, float]) -> tuple:
    """The executor, the value type, the matrix on the host (SciPy) and A, B on the executor;
    the seconds of "device", "read" and "transfer" go to ``times``."""
    start = time.perf_counter()
    exec = open_executor(args.executor, profile=args.profile)
    dtype = exec.check_dtype(args.dtype or file_dtype(args.matrix))
    times["device"] = time.perf_counter() - start
    start = time.perf_counter()
    S, B_host = read_system(args, dtype)
    times["read"] = time.perf_counter() - start
    start = time.perf_counter()
    A, B = Csr.from_scipy(exec, S, dtype), Dense.from_numpy(exec, B_host, dtype)
    exec.synchronize()
    times["transfer"] = time.perf_counter() - start
    return exec, dtype, S, A, B


def _gmres_after_breakdown(args: argparse.Namespace, exec: Executor, S: sp.csr_matrix, A: Csr, B: Dense,
                           times: dict[str, float], solved: tuple, why: str, suits_cg: bool,
                           kind: str) -> tuple[tuple, str]:
    """--solver auto: where Bicgstab broke down (or diverged), Gmres (which does not) solves
    instead; ``solved`` and ``why`` as :func:`solve_with_default` gave them, or Gmres's."""
    X, op, convergence, params, chosen, chosen_why = solved
    failed = {StopReason.BREAKDOWN, StopReason.DIVERGED}
    if params.product.__name__ != "Bicgstab" or not failed & set(convergence.result.stop_reasons):
        return solved, why
    reason = next(r for r in convergence.result.stop_reasons if r in failed).describe()
    if chosen is not None:
        chosen, chosen_why = choose_preconditioner(iterative_solvers()["gmres"], S, suits_cg, kind)
    count = convergence.result.num_iterations
    why = why.split("; Bicgstab")[0] + f"; Bicgstab stopped with {reason} after {count} " \
                                       f"iteration{'' if count == 1 else 's'}, so Gmres"
    return solve_with_default(args, exec, A, B, times, solver_parameters(args, "gmres", chosen), "gmres", chosen,
                              chosen_why), why


def _report(args: argparse.Namespace, rows: list, X: Dense, op: Any, convergence: Any, params: Any) -> None:
    """Print the summary ``rows`` with the multigrid hierarchy, --out's and --plot's files."""
    hierarchy = _multigrid(op)
    if hierarchy is not None:
        rows.append(("multigrid", f"{hierarchy.num_levels} levels, operator complexity "
                                  f"{hierarchy.operator_complexity:.3f}, grid complexity {hierarchy.grid_complexity:.3f}"))
    if args.out:
        write_solution(args.out, X)
        rows.append(("solution", str(args.out)))
    if args.plot:
        rows.append(("plot", save_plot(convergence, args.plot, f"{params.product.__name__} on {Path(args.matrix).name}")))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if hierarchy is not None:
        print(f"\n{hierarchy!r}")


def _empty_rows(S: sp.csr_matrix) -> np.ndarray:
    """The rows of S without a nonzero entry (none stored, or all stored ones zero)."""
    return np.flatnonzero(np.asarray(abs(S).sum(axis=1)).ravel() == 0)


def _multigrid(solver: Any) -> Any:
    """The Multigrid hierarchy a solve uses (as the solver, its preconditioner or Ir's inner
    solver), for the report; None where there is none."""
    from ginkpy.core.solver.multigrid import Multigrid
    for op in (solver, getattr(solver, "preconditioner", None), getattr(solver, "solver", None)):
        if isinstance(op, Multigrid):
            return op
    return None
