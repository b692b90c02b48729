"""The ``ginkpy`` command line, also run as ``python -m ginkpy``:

    ginkpy solve A.mtx [--rhs b.mtx] [--solver auto] [--preconditioner auto] [--executor opencl]
                       [--dtype float64] [--rtol 1e-8] [--max-iters N] [--krylov-dim K]
                       [--config solver.json] [--out x.mtx] [--plot c.png] [--profile]
                       (--preconditioner amg: algebraic multigrid; its hierarchy is printed;
                        jacobi is scalar Jacobi, block_jacobi Ginkgo's block-Jacobi;
                        --solver cb_gmres [--storage-precision reduce1|reduce2|keep]: GMRES with
                        the Krylov basis stored in float32 or float16)
    ginkpy info A.mtx
    ginkpy devices

``solve`` exits with 0 when every right-hand side converged, 1 when not, 2 on bad input. Its
summary says which solver and preconditioner ran and why, how each right-hand side ended and, when one did not
converge, the likely cause and what to try. On an OpenCL device the kernels are compiled (or
loaded from the disk cache) in a short warm-up solve first, so that the setup and solve times
are those of the work alone; the compile time is reported apart.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence, TextIO

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy import config
from ginkpy.cli_info import info, matrix_info, matrix_kind, pde_like, symmetric_kind
from ginkpy.cli_summary import describe, hints, outcome_rows, preconditioner_key, time_rows, wider
from ginkpy.core.base.executor import Executor, executor
from ginkpy.core.matrix.mtx_io import read, write
from ginkpy.core.factorization.cholesky import Cholesky
from ginkpy.core.factorization.lu import Lu
from ginkpy.core.log.convergence import Convergence
from ginkpy.core.log.logger import Logger
from ginkpy.core.log.solver_progress import SolverProgress
from ginkpy.core.log.profiler_hook import ProfilerHook
from ginkpy.core.log.plot import require_matplotlib
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.direct import Direct
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.executor import ReferenceExecutor

__all__ = ["Progress", "info", "main", "matrix_info", "solve"]  # matrix_info and info: from cli_info

DEFAULT_RTOL = 1e-8
WARM_UP_ITERATIONS = 2  # enough to run every kernel of an iteration and of the solve's end once


class Progress(SolverProgress):
    """A live progress line (iteration, largest relative residual) rewritten in place with ``\\r``:
    gk.log.SolverProgress with ``in_place``, relative to ||b||.

    Writes only when ``stream`` is a terminal, at most every ``interval`` seconds, and clears
    the line when the solve completes; like SolverProgress it prints only what the solve loop
    reads back anyway (no wait for the device).
    """

    def __init__(self, b_norm: np.ndarray, stream: TextIO | None = None, interval: float = 0.1) -> None:
        stream = sys.stdout if stream is None else stream
        super().__init__(stream, min_interval=interval, relative_to=b_norm, in_place=True)
        self.active = stream.isatty()

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if self.active:
            super().on_iteration_complete(solver, iteration, residual_norm, status)


def _solver_parameters(args: argparse.Namespace, solver: str, preconditioner: str | None = None) -> Any:
    """The solver's parameters from --config, or from ``solver`` and ``preconditioner`` (default
    --preconditioner's), with the criteria of --rtol and --max-iters replacing those of the same kind."""
    if args.config:
        params = config.parse(args.config)
        if params.product is Direct:
            return params
        if not issubclass(params.product, IterativeSolver):
            raise ValueError(f"{args.config} describes a {config.type_name(params.product)}, "
                             f"not an iterative solver (solver::Cg, solver::Gmres, ...)")
    else:
        params = _iterative_solvers()[solver].build()
        preconditioner = args.preconditioner if preconditioner is None else preconditioner
        if preconditioner not in (None, "none", "auto"):
            setattr(params, preconditioner_key(params), config.short_names("preconditioner")[preconditioner].build())
    storage = getattr(args, "storage_precision", None)
    if storage is not None:
        if "storage_precision" not in attrs.fields_dict(type(params)):
            raise ValueError(f"--storage-precision is the Krylov basis's storage of CbGmres: use it with --solver "
                             f"cb_gmres, not with {params.product.__name__}")
        params.with_storage_precision(storage)
    if args.krylov_dim is not None:
        if "krylov_dim" not in attrs.fields_dict(type(params)):
            with_dim = sorted(name for name, cls in _iterative_solvers().items()
                              if "krylov_dim" in attrs.fields_dict(cls.Parameters))
            raise ValueError(f"--krylov-dim applies to the solvers with a Krylov dimension ({', '.join(with_dim)}), "
                             f"not {params.product.__name__}")
        params.krylov_dim = args.krylov_dim
    criteria = list(params.criteria)
    kinds = {c.product for c in criteria}
    if args.rtol is not None or ResidualNorm not in kinds:
        rtol = DEFAULT_RTOL if args.rtol is None else args.rtol
        criteria = [c for c in criteria if c.product is not ResidualNorm]
        criteria.append(ResidualNorm.build().with_reduction_factor(rtol))
    if args.max_iters is not None:
        criteria = [c for c in criteria if c.product is not Iteration]
        criteria.append(Iteration.build().with_max_iters(args.max_iters))
    return params.with_criteria(*criteria)


def _iterative_solvers() -> dict[str, type]:
    """The --solver names of iterative solvers: config.solver_methods() (gk.linalg.Solver's
    methods too) less "direct"."""
    return {name: cls for name, cls in config.solver_methods().items() if name != "direct"}


def _device(exec: Executor) -> str:
    info = getattr(exec, "info", None)
    return f"{info.name} [{info.platform}]" if info is not None else "host (numpy/scipy)"


def _open_executor(name: str, profile: bool = False) -> Executor:
    """``executor(name)``; when the OpenCL device asked for does not exist but others do, the
    error lists them (the executor's own message advises installing a device). ``profile``:
    the device's queue records profiling events (the kernels' device times of --profile),
    where this process opens the device first."""
    previous = os.environ.get("GINKPY_OPENCL_PROFILE")
    if profile:
        os.environ["GINKPY_OPENCL_PROFILE"] = "1"
    try:
        return executor(name)
    except RuntimeError as err:
        from ginkpy.opencl.executor import NoOpenCLDeviceError
        if not isinstance(err, NoOpenCLDeviceError):
            raise
        from ginkpy.opencl.devices import describe_devices
        listing = describe_devices()
        if "opencl:" not in listing:  # no device at all: the advice to install one stands
            raise
        raise ValueError(f"{str(err).split(';')[0]}; the OpenCL devices here are:\n{listing}") from None
    finally:
        if previous is None:
            os.environ.pop("GINKPY_OPENCL_PROFILE", None)
        else:
            os.environ["GINKPY_OPENCL_PROFILE"] = previous


def _choose_solver(suits_cg: bool, kind: str, krylov_dim: int | None = None) -> tuple[str, str]:
    """--solver auto: Cg where it applies (see :func:`matrix_kind`), Minres for another symmetric
    (Hermitian) matrix, else Bicgstab (Gmres where --krylov-dim asks for it); and why.

    Bicgstab is the fastest here for a nonsymmetric matrix: on the nonsymmetric test matrices
    and generated problems (PoCL, whole solves, none and ilu preconditioners) it was faster than
    Gmres(30) on 17 of 20 (convection-diffusion 200^2: 0.52 s against 8.7 s unpreconditioned,
    0.49 s against 3.2 s with ilu; Gmres ahead by at most 1.3x elsewhere), with fewer and
    cheaper iterations; where it breaks down, :func:`solve` runs Gmres instead. Minres keeps
    the short recurrences of Cg for symmetric indefinite matrices, where Bicgstab may break down."""
    if suits_cg:
        return "cg", f"auto: the matrix is {kind}"
    need = "Hermitian" if "Hermitian" in kind else "symmetric"  # a complex matrix's kind names it
    if krylov_dim is not None:
        return "gmres", f"auto: the matrix is {kind}; Cg needs a {need} positive definite one; --krylov-dim: Gmres"
    if symmetric_kind(kind):
        return "minres", f"auto: the matrix is {kind}; Minres takes a {need} indefinite one"
    return "bicgstab", (f"auto: the matrix is {kind}; Cg needs a {need} positive definite one; Bicgstab is the "
                        f"fastest then, and Gmres takes over if it breaks down")


# the solvers whose preconditioner must be symmetric positive definite (as their matrix)
_SPD_PRECONDITIONED = ("Cg", "PipeCg", "Minres")  # (Fcg takes a nonsymmetric one)


def _choose_preconditioner(product: type, S: sp.csr_matrix, suits_cg: bool, kind: str) -> tuple[str, str]:
    """--preconditioner auto (the default) for the solver ``product``: algebraic multigrid for a
    symmetric matrix with a positive diagonal that looks like a PDE's (:func:`pde_like`: an
    M-matrix's sign pattern or diagonal dominance; nos6: 84 Jacobi-Cg iterations, 11 with amg),
    ILU for a nonsymmetric one (where the solver takes a nonsymmetric preconditioner), else
    scalar Jacobi, the cheapest that rarely hurts; and why, for the summary."""
    name = product.__name__
    fields = attrs.fields_dict(product.Parameters)
    if name == "Multigrid" or ("preconditioner" not in fields and "solver" not in fields):
        return "none", f"auto: {name} takes no preconditioner" + (": its smoothers play that part"
                                                                  if name == "Multigrid" else "")
    if name == "Chebyshev":
        return "jacobi", "auto: Chebyshev takes scalar Jacobi or none"
    if suits_cg:
        why = pde_like(S)
        if why is not None and name not in ("Bicg", "Qmr"):  # (these apply M^H, which amg has not)
            return "amg", f"auto: the matrix is {kind} and {why}: algebraic multigrid"
        return "jacobi", (f"auto: the matrix is {kind}" + (f" (amg's case, but {name} applies M^H, which amg "
                                                           f"lacks)" if why else ", but not PDE-like (amg's case)") +
                          ": scalar Jacobi")
    zeros = int(np.count_nonzero(S.diagonal() == 0)) if S.shape[0] == S.shape[1] else 0
    if name in _SPD_PRECONDITIONED:
        if symmetric_kind(kind):
            return "none", (f"auto: the matrix is {kind}: {name} needs a symmetric positive definite "
                            f"preconditioner, and Jacobi of this diagonal is not one")
        return "jacobi", f"auto: {name} needs a symmetric preconditioner: scalar Jacobi (the matrix is {kind})"
    if symmetric_kind(kind) and not zeros:
        return "jacobi", f"auto: the matrix is {kind}: scalar Jacobi"
    return "ilu", (f"auto: the matrix is {kind}" + (f", with {zeros} zero diagonal entries" if zeros else "") +
                   ": incomplete LU")


def _relative_tolerance(params: Any) -> float | None:
    """The reduction factor of a ResidualNorm criterion relative to ||b|| or ||r0||, if any."""
    factors = [c.reduction_factor for c in params.criteria
               if c.product is ResidualNorm and c.baseline != "absolute"]
    return min(factors) if factors else None


def _warm_up(params: Any, exec: Executor, A: Any, B: Dense) -> tuple[float, int]:
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


def solve(args: argparse.Namespace) -> int:
    """``ginkpy solve``: solve A x = b (b from --rhs, else A times ones) and report how it went."""
    if args.plot:
        require_matplotlib()  # before the solve, not after it
    _check_paths(args)
    if args.config and (args.solver not in (None, "auto") or args.preconditioner not in (None, "auto")):
        raise ValueError("--config describes the solver and its preconditioner: leave out --solver "
                         "and --preconditioner, or --config")
    if args.rtol is not None and not args.rtol >= 0:
        raise ValueError(f"--rtol must be a relative tolerance >= 0 (such as 1e-8), got {args.rtol:g}")
    params = _solver_parameters(args, "") if args.config else None  # a bad file fails before the matrix is read
    times = {}
    start = time.perf_counter()
    exec = _open_executor(args.executor, profile=args.profile)
    dtype = exec.check_dtype(args.dtype or _file_dtype(args.matrix))
    times["device"] = time.perf_counter() - start
    start = time.perf_counter()
    S, B_host = _read_system(args, dtype)
    times["read"] = time.perf_counter() - start
    start = time.perf_counter()
    A, B = Csr.from_scipy(exec, S, dtype), Dense.from_numpy(exec, B_host, dtype)
    exec.synchronize()
    times["transfer"] = time.perf_counter() - start

    suits_cg, kind = matrix_kind(S)
    if args.solver == "direct" or (params is not None and params.product is Direct):
        return _solve_direct(args, params, exec, S, A, B, times, suits_cg)
    why = chosen = chosen_why = solver = None
    if params is None:
        solver, why = (args.solver, None) if args.solver not in (None, "auto") else \
            _choose_solver(suits_cg, kind, args.krylov_dim)
        if args.preconditioner in (None, "auto"):
            chosen, chosen_why = _choose_preconditioner(_iterative_solvers()[solver], S, suits_cg, kind)
        params = _solver_parameters(args, solver, chosen)
    _warn_tolerance(params, dtype)
    X, op, convergence, params, chosen, chosen_why = _solve_with_default(args, exec, A, B, times, params, solver,
                                                                         chosen, chosen_why)
    failed = {StopReason.BREAKDOWN, StopReason.DIVERGED}
    if why and params.product.__name__ == "Bicgstab" and failed & set(convergence.result.stop_reasons):
        # auto: where Bicgstab breaks down, Gmres (which does not) solves instead
        reason = next(r for r in convergence.result.stop_reasons if r in failed).describe()
        if chosen is not None:
            chosen, chosen_why = _choose_preconditioner(_iterative_solvers()["gmres"], S, suits_cg, kind)
        count = convergence.result.num_iterations
        why = why.split("; Bicgstab")[0] + f"; Bicgstab stopped with {reason} after {count} " \
                                           f"iteration{'' if count == 1 else 's'}, so Gmres"
        X, op, convergence, params, chosen, chosen_why = _solve_with_default(
            args, exec, A, B, times, _solver_parameters(args, "gmres", chosen), "gmres", chosen, chosen_why)

    result = convergence.result
    rows = [
        ("matrix", f"{args.matrix}: {S.shape[0]} x {S.shape[1]}, {S.nnz} nonzeros, {dtype}, "
                   f"{B.shape[1]} right-hand side{'s' if B.shape[1] != 1 else ''}"),
        ("solver", describe(params) + (f" ({why})" if why else "")),
        *([("preconditioner", f"{chosen} ({chosen_why})")] if chosen_why else []),
        ("executor", f"{exec.backend} on {_device(exec)}"),
        *outcome_rows(result),
        *time_rows(times, result.num_iterations, args.profile, WARM_UP_ITERATIONS),
        *[("hint", text) for text in hints(result, convergence.residual_norm_history, params, suits_cg, kind, dtype,
                                            np.flatnonzero(S.diagonal() == 0), _empty_rows(S))],
    ]
    hierarchy = _multigrid(op)
    if hierarchy is not None:
        rows.append(("multigrid", f"{hierarchy.num_levels} levels, operator complexity "
                                  f"{hierarchy.operator_complexity:.3f}, grid complexity {hierarchy.grid_complexity:.3f}"))
    if args.out:
        _write_solution(args.out, X)
        rows.append(("solution", str(args.out)))
    if args.plot:
        rows.append(("plot", _save_plot(convergence, args.plot, f"{params.product.__name__} on {Path(args.matrix).name}")))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if hierarchy is not None:
        print(f"\n{hierarchy!r}")
    if args.profile:
        print(f"\n{_profiled(params, exec, A, B)}")
    return 0 if convergence.has_converged else 1


def _warn_tolerance(params: Any, dtype: np.dtype) -> None:
    """A warning on stderr where --rtol is below what the value type resolves."""
    rtol, eps = _relative_tolerance(params), float(np.finfo(dtype).eps)
    if rtol is not None and rtol < 10 * eps:
        print(f"ginkpy solve: warning: the tolerance {rtol:g} is below what {dtype} resolves (about "
              f"{10 * eps:.0e} ||b||): the solve will likely run to its iteration limit; use --rtol "
              f"{10 * eps:.0e} or more{wider(dtype, ', or ')}", file=sys.stderr)


def _solve_with_default(args: argparse.Namespace, exec: Executor, A: Any, B: Dense, times: dict[str, float],
                        params: Any, solver: str | None, chosen: str | None,
                        chosen_why: str | None) -> tuple[Dense, Any, Convergence, Any, str | None, str | None]:
    """:func:`_timed_solve` with a progress line; where the preconditioner that --preconditioner
    auto ``chosen`` cannot be set up, again with scalar Jacobi (a default never fails where a
    weaker method works), said in ``chosen_why``. Returns x, the solver, its Convergence, the
    parameters and the preconditioner's name and reason."""
    b_norm = np.asarray(B.compute_norm2().to_numpy()).ravel()
    convergence = Convergence()
    try:
        X, op = _timed_solve(params, exec, A, B, times, convergence, Progress(b_norm))
    except ValueError as err:
        if chosen in (None, "none", "jacobi"):
            raise
        chosen, chosen_why = "jacobi", f"{chosen_why}; it could not be set up ({err}), so scalar Jacobi"
        params = _solver_parameters(args, solver, chosen)
        convergence = Convergence()
        X, op = _timed_solve(params, exec, A, B, times, convergence, Progress(b_norm))
    return X, op, convergence, params, chosen, chosen_why


def _empty_rows(S: sp.csr_matrix) -> np.ndarray:
    """The rows of S without a nonzero entry (none stored, or all stored ones zero)."""
    return np.flatnonzero(np.asarray(abs(S).sum(axis=1)).ravel() == 0)


def _profiled(params: Any, exec: Executor, A: Any, B: Dense) -> ProfilerHook:
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


def _solve_direct(args: argparse.Namespace, params: Any, exec: Executor, S: sp.csr_matrix, A: Csr, B: Dense,
                  times: dict[str, float], suits_cg: bool) -> int:
    """``ginkpy solve --solver direct`` (or a --config of solver::Direct): factorize, solve once,
    report the residual, the factors' fill and the times."""
    if args.preconditioner not in (None, "none") or args.plot:
        raise ValueError("--solver direct solves exactly: it takes no --preconditioner and has no residual "
                         "history to --plot")
    why = "from --config"
    if params is None:
        # Cholesky where the matrix looks SPD; Lu where Cholesky finds it is not positive definite
        why = "symmetric with a positive diagonal" if suits_cg else "not symmetric positive definite"
        params = Direct.build().with_factorization((Cholesky if suits_cg else Lu).build())
    start = time.perf_counter()
    try:
        solver = params.on(exec).generate(A)
    except ValueError as err:
        if not (suits_cg and "positive definite" in str(err) and why != "from --config"):
            raise
        why = "Cholesky found it not positive definite"
        params = Direct.build()
        solver = params.on(exec).generate(A)
    exec.synchronize()
    times["generate"] = time.perf_counter() - start
    X = Dense.zeros(exec, B.shape, B.dtype)
    exec.synchronize()
    start = time.perf_counter()
    solver.apply(B, X)
    exec.synchronize()
    times["solve"] = time.perf_counter() - start
    x, b = X.to_numpy(), B.to_numpy()
    residual = np.linalg.norm(b - S @ x, axis=0)
    relative = residual / np.where(np.linalg.norm(b, axis=0) > 0, np.linalg.norm(b, axis=0), 1.0)
    fact = solver.factorization
    fill = sum(f.nnz for f in fact.factors)
    rows = [("matrix", f"{args.matrix}: {S.shape[0]} x {S.shape[1]}, {S.nnz} nonzeros, {X.dtype}, "
                       f"{B.shape[1]} right-hand side{'s' if B.shape[1] != 1 else ''}"),
            ("solver", f"Direct, factorization {type(fact).__name__} ({why})"),
            ("executor", f"{exec.backend} on {_device(exec)}"),
            ("factors", f"{fill} nonzeros in L and U ({fill / max(S.nnz, 1):.1f} times A's)"),
            ("residual", f"{residual.max():.3e} (relative {relative.max():.3e})"),
            ("time", f"factorize {times['generate']:.3f} s, solve {times['solve']:.3f} s")]
    if args.out:
        _write_solution(args.out, X)
        rows.append(("solution", str(args.out)))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if args.profile:
        print(f"\n{_profiled(params, exec, A, B)}")
    return 0 if np.all(np.isfinite(relative)) else 1


def _file_dtype(path: str) -> np.dtype:
    """The value type a matrix file asks for: complex128 for a complex Matrix Market file,
    float64 for any other."""
    try:
        with open(path, "rb") as f:
            header = f.readline().decode("ascii", "replace").lower().split()
    except OSError:
        header = []  # reading the matrix says what is wrong
    return np.dtype(np.complex128 if "complex" in header[2:4] else np.float64)


def _read_system(args: argparse.Namespace, dtype: np.dtype) -> tuple[sp.csr_matrix, np.ndarray]:
    """The matrix and the right-hand sides (--rhs, else b = A 1, whose solution is all ones),
    read on the host."""
    host = ReferenceExecutor()
    S = read(args.matrix, host, dtype=dtype).to_scipy()
    if not args.rhs:
        return S, (S @ np.ones((S.shape[1], 1), dtype)).astype(dtype)
    B = read(args.rhs, host, "dense", dtype).to_numpy()
    if B.shape[0] != S.shape[0]:
        raise ValueError(f"the right-hand side {args.rhs} has {B.shape[0]} rows but the matrix has {S.shape[0]}")
    return S, B


def _timed_solve(params: Any, exec: Executor, A: Any, B: Dense, times: dict[str, float],
                 convergence: Convergence, *loggers: Logger) -> tuple[Dense, Any]:
    """Generate the solver and solve from x = 0 with ``convergence`` and ``loggers`` attached;
    returns x and the solver. Records the seconds of "generate" and "solve" in ``times`` and, on a device, of
    the warm-up before them and the part of it that compiled or loaded kernels ("compile")."""
    compiled = exec.backend != "reference"  # the reference executor runs numpy/scipy: nothing to compile
    if compiled:
        times["warm-up"], warm_iterations = _warm_up(params, exec, A, B)
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


def _multigrid(solver: Any) -> Any:
    """The Multigrid hierarchy a solve uses (as the solver, its preconditioner or Ir's inner
    solver), for the report; None where there is none."""
    from ginkpy.core.solver.multigrid import Multigrid
    for op in (solver, getattr(solver, "preconditioner", None), getattr(solver, "solver", None)):
        if isinstance(op, Multigrid):
            return op
    return None


def _save_plot(convergence: Convergence, path: str, title: str) -> str:
    """Save the residual history as an image; returns the path written (matplotlib's default
    format, PNG, and its extension added where ``path`` has none)."""
    from matplotlib.figure import Figure
    written = path if Path(path).suffix else f"{path}.png"
    fig = Figure(figsize=(7, 4.5), layout="tight")
    convergence.plot(ax=fig.add_subplot(), title=title)
    fig.savefig(written, dpi=120)
    return written


def _write_solution(path: str, X: Dense) -> None:
    """--out: x as a Matrix Market file; an error names the option and the path."""
    try:
        write(path, X)
    except OSError as err:
        raise OSError(f"--out {path}: cannot write the solution: {err.strerror or err}") from None


def _check_paths(args: argparse.Namespace) -> None:
    """Before anything runs: --config names a file there is, --out and --plot a folder there is."""
    if args.config and not Path(args.config).is_file():
        what = "that is a folder: give the JSON file" if Path(args.config).is_dir() else "no such file"
        raise ValueError(f"--config {args.config}: {what}")
    for option, path in (("--out", args.out), ("--plot", args.plot)):
        if path and not Path(path).resolve().parent.is_dir():
            raise ValueError(f"{option} {path}: the folder {Path(path).parent} does not exist: create it or "
                             f"write elsewhere")
        if path and Path(path).is_dir():
            raise ValueError(f"{option} {path}: that is a folder: give a file name")


def devices(args: argparse.Namespace) -> int:
    """``ginkpy devices``: list the OpenCL platforms and devices."""
    from ginkpy.opencl.devices import describe_devices
    print(describe_devices())
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ginkpy", description="Sparse iterative solvers on any OpenCL device.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{solve,info,devices}")

    s = commands.add_parser("solve", help="solve A x = b for a Matrix Market matrix A")
    s.add_argument("matrix", help="the matrix A (Matrix Market .mtx)")
    s.add_argument("--rhs", help="right-hand side(s) b (Matrix Market, n x k); default b = A * ones")
    s.add_argument("--solver", choices=["auto", *sorted(_iterative_solvers()), "direct"],
                   help="the Krylov solver (default auto: cg for a symmetric matrix with a positive diagonal, "
                        "minres for another symmetric one, else bicgstab, or gmres where bicgstab breaks down or --krylov-dim is given), or direct: a sparse LU (Cholesky for a symmetric matrix with a positive "
                        "diagonal, falling back to LU if it is not positive definite)")
    s.add_argument("--preconditioner", choices=["auto", *sorted(config.short_names("preconditioner")), "none"],
                   help="the preconditioner (default auto: amg for a symmetric matrix with a positive diagonal "
                        "that looks like a PDE's (an M-matrix's signs or diagonal dominance), ilu for a "
                        "nonsymmetric one, else jacobi; the summary says which and why); none: no "
                        "preconditioner; jacobi is scalar Jacobi, block_jacobi block-Jacobi; ilu / ic never fail "
                        "where an incomplete factorization exists; ilut is SciPy spilu's threshold ILU; amg "
                        "algebraic multigrid; ssor / symmetric_gauss_seidel the symmetric sweeps Cg needs")
    s.add_argument("--storage-precision", choices=["keep", "reduce1", "reduce2"],
                   help="--solver cb_gmres: the Krylov basis stored in float32 (reduce1, the default for float64) "
                        "or float16 (reduce2), the arithmetic in the value type")
    s.add_argument("--executor", default="default",
                   help="reference | opencl | opencl:<platform>:<device> (default: a GPU if there is one)")
    s.add_argument("--dtype", choices=["float64", "float32", "complex128", "complex64"],
                   help="value type (default: float64, complex128 for a complex matrix file)")
    s.add_argument("--rtol", type=float, help=f"stop at ||b - A x|| <= rtol ||b|| (default {DEFAULT_RTOL:g})")
    s.add_argument("--max-iters", type=int, help="iteration limit (default max(1000, 10 n))")
    s.add_argument("--krylov-dim", type=_positive_int,
                   help="Krylov dimension (restart length) of Gmres and the other solvers that have one "
                        "(default 30); with --solver auto on a nonsymmetric matrix it picks Gmres")
    s.add_argument("--config", help="solver, preconditioner and criteria from a JSON file in Ginkgo's format")
    s.add_argument("--out", help="write the solution x here (Matrix Market)")
    s.add_argument("--plot", help="save the residual history here as an image (needs matplotlib)")
    s.add_argument("--profile", action="store_true",
                   help="time each phase: open the device, read, transfer, compile, generate, solve; then "
                        "a second generate and solve with gk.log.ProfilerHook: every kernel, apply and "
                        "generate timed, as a table")
    s.set_defaults(run=solve)

    i = commands.add_parser("info", help="size, nonzeros, row lengths, symmetry, diagonal dominance of a matrix")
    i.add_argument("matrix", help="the matrix (Matrix Market .mtx)")
    i.set_defaults(run=info)

    d = commands.add_parser("devices", help="list the OpenCL platforms and devices")
    d.set_defaults(run=devices)
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError, ImportError, RuntimeError, NotImplementedError) as err:
        print(f"ginkpy {args.command}: error: {err}", file=sys.stderr)
        return 2
