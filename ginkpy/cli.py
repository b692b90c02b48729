"""The ``ginkpy`` command line, also run as ``python -m ginkpy``:

    ginkpy solve A.mtx [--rhs b.mtx] [--solver cg] [--preconditioner jacobi] [--executor opencl]
                       [--rtol 1e-8] [--max-iters N] [--config solver.json] [--out x.mtx] [--plot c.png]
                       (--preconditioner amg: algebraic multigrid; its hierarchy is printed)
    ginkpy info A.mtx
    ginkpy devices

``solve`` exits with 0 when every right-hand side converged, 1 when not, 2 on bad input.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence, TextIO

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy import config
from ginkpy.core.base.executor import Executor, executor
from ginkpy.core.base.mtx_io import read, write
from ginkpy.core.log.convergence import Convergence
from ginkpy.core.log.logger import Logger
from ginkpy.core.log.plot import require_matplotlib
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.reference.executor import ReferenceExecutor

DEFAULT_RTOL = 1e-8


class Progress(Logger):
    """A live progress line (iteration, largest relative residual) rewritten in place with ``\\r``.

    Writes only when ``stream`` is a terminal, at most every ``interval`` seconds, and clears
    the line when the solve completes.
    """

    def __init__(self, b_norm: np.ndarray, stream: TextIO | None = None, interval: float = 0.1) -> None:
        self.stream = sys.stdout if stream is None else stream
        self.active = self.stream.isatty()
        self.b_norm = np.where(b_norm > 0, b_norm, 1.0)
        self.interval = interval
        self._last = -np.inf
        self._width = 0

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        now = time.perf_counter()
        if not self.active or now - self._last < self.interval:
            return
        self._last = now
        line = f"\riteration {iteration:>8d}   relative residual {np.max(residual_norm / self.b_norm):.3e}"
        self._width = max(self._width, len(line))
        self.stream.write(line)
        self.stream.flush()

    def on_solve_complete(self, solver, result) -> None:
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


def _solver_parameters(args: argparse.Namespace) -> Any:
    """The solver's parameters from --config or --solver/--preconditioner, with the criteria
    of --rtol and --max-iters replacing those of the same kind."""
    if args.config:
        if args.solver or args.preconditioner:
            raise ValueError("--config describes the solver and its preconditioner: leave out --solver "
                             "and --preconditioner, or --config")
        params = config.parse(args.config)
        if not issubclass(params.product, IterativeSolver):
            raise ValueError(f"{args.config} describes a {config.type_name(params.product)}, "
                             f"not an iterative solver (solver::Cg, solver::Gmres, ...)")
    else:
        params = _iterative_solvers()[args.solver or "cg"].build()
        if args.preconditioner not in (None, "none"):
            setattr(params, _preconditioner_key(params),
                    config.short_names("preconditioner")[args.preconditioner].build())
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


def _preconditioner_key(params: Any) -> str:
    """Where a solver takes the preconditioner: Ir has none, its inner solver plays that part
    (--solver ir --preconditioner jacobi is the Jacobi iteration), as in gk.linalg.ir."""
    return "solver" if "solver" in attrs.fields_dict(type(params)) else "preconditioner"


def _describe(params: Any) -> str:
    """``Cg, preconditioner Jacobi``: the solver type and what it applies as its preconditioner."""
    key = _preconditioner_key(params)
    value = getattr(params, key)
    name = "none" if value is None else getattr(value, "product", type(value)).__name__
    return f"{params.product.__name__}, {'inner solver' if key == 'solver' else key} {name}"


def _iterative_solvers() -> dict[str, type]:
    return {name: cls for name, cls in config.short_names("solver").items() if issubclass(cls, IterativeSolver)}


def _device(exec: Executor) -> str:
    info = getattr(exec, "info", None)
    return f"{info.name} [{info.platform}]" if info is not None else "host (numpy/scipy)"


def solve(args: argparse.Namespace) -> int:
    """``ginkpy solve``: solve A x = b (b from --rhs, else A times ones) and report how it went."""
    if args.plot:
        require_matplotlib()  # before the solve, not after it
    params = _solver_parameters(args)
    exec = executor(args.executor)
    dtype = np.dtype(args.dtype)
    A = read(args.matrix, exec, dtype=dtype)
    n = A.shape[0]
    if args.rhs:
        B = read(args.rhs, exec, "dense", dtype)
        if B.shape[0] != n:
            raise ValueError(f"the right-hand side {args.rhs} has {B.shape[0]} rows but the matrix has {n}")
    else:
        # b = A 1, so that the exact solution is all ones
        B = Dense.empty(exec, (n, 1), dtype)
        A.apply(Dense.full(exec, (A.shape[1], 1), 1.0, dtype), B)
    X = Dense.zeros(exec, (A.shape[1], B.shape[1]), dtype)

    start = time.perf_counter()
    solver = params.on(exec).generate(A)
    exec.synchronize()
    setup = time.perf_counter() - start
    convergence = Convergence()
    b_norm = B.compute_norm2().to_numpy()[0].astype(np.float64)
    solver.add_logger(convergence)
    solver.add_logger(Progress(b_norm))
    start = time.perf_counter()
    solver.apply(B, X)
    exec.synchronize()
    elapsed = time.perf_counter() - start

    relative = convergence.residual_norm / np.where(b_norm > 0, b_norm, 1.0)
    rows = [
        ("matrix", f"{args.matrix}: {n} x {A.shape[1]}, {A.nnz} nonzeros, {dtype}, {B.shape[1]} right-hand side(s)"),
        ("solver", _describe(params)),
        ("executor", f"{exec.backend} on {_device(exec)}"),
        ("iterations", str(convergence.num_iterations)),
        ("residual", f"{np.max(convergence.residual_norm):.3e} (relative {np.max(relative):.3e})"),
        ("stopped", convergence.stop_reason),
        ("time", f"setup {setup:.4f} s, solve {elapsed:.4f} s"),
    ]
    hierarchy = _multigrid(solver)
    if hierarchy is not None:
        rows.append(("multigrid", f"{hierarchy.num_levels} levels, operator complexity "
                                  f"{hierarchy.operator_complexity:.3f}, grid complexity {hierarchy.grid_complexity:.3f}"))
    if args.out:
        write(args.out, X)
        rows.append(("solution", str(args.out)))
    if args.plot:
        _save_plot(convergence, args.plot, f"{params.product.__name__} on {Path(args.matrix).name}")
        rows.append(("plot", str(args.plot)))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if hierarchy is not None:
        print(f"\n{hierarchy!r}")
    return 0 if convergence.has_converged else 1


def _multigrid(solver: Any) -> Any:
    """The Multigrid hierarchy a solve uses (as the solver, its preconditioner or Ir's inner
    solver), for the report; None where there is none."""
    from ginkpy.core.solver.multigrid import Multigrid
    for op in (solver, getattr(solver, "preconditioner", None), getattr(solver, "solver", None)):
        if isinstance(op, Multigrid):
            return op
    return None


def _save_plot(convergence: Convergence, path: str, title: str) -> None:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 4.5), layout="tight")
    convergence.plot(ax=fig.add_subplot(), title=title)
    fig.savefig(path, dpi=120)


def matrix_info(A: sp.csr_matrix) -> list[tuple[str, str]]:
    """What ``ginkpy info`` reports about a matrix: size, nonzeros, row lengths, symmetry and
    diagonal dominance, as (name, value) rows."""
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    n, m = A.shape
    lengths = np.diff(A.indptr)
    explicit_zeros = int(np.count_nonzero(A.data == 0))
    rows = [
        ("size", f"{n} x {m}"),
        ("nonzeros", f"{A.nnz} stored ({explicit_zeros} of them zero), {A.nnz / max(n, 1):.2f} per row"),
        ("row lengths", f"min {lengths.min() if n else 0}, mean {lengths.mean() if n else 0:.2f}, "
                        f"max {lengths.max() if n else 0}, std {lengths.std() if n else 0:.2f}, "
                        f"{int(np.count_nonzero(lengths == 0))} empty rows"),
        ("value type", str(A.dtype)),
    ]
    if n != m:
        return rows + [("symmetry", "not square"), ("diagonal", "not square")]
    absA = abs(A)
    scale = absA.max() if A.nnz else 0.0
    asym = abs(A - A.T).max() if A.nnz else 0.0
    pattern = A != 0
    if asym == 0:
        symmetry = "symmetric"
    elif asym <= 1e-12 * scale:
        symmetry = f"numerically symmetric (max |A - A^T| = {asym:.1e} of max |A| = {scale:.1e})"
    elif (pattern != pattern.T).nnz == 0:
        symmetry = "structurally symmetric, values nonsymmetric"
    else:
        symmetry = "nonsymmetric"
    diag = np.abs(A.diagonal())
    off = np.asarray(absA.sum(axis=1)).ravel() - diag
    strict, weak = int(np.count_nonzero(diag > off)), int(np.count_nonzero(diag >= off))
    if strict == n:
        dominance = "strictly diagonally dominant"
    elif weak == n:
        dominance = f"weakly diagonally dominant ({strict} of {n} rows strictly)"
    else:
        dominance = f"not diagonally dominant ({weak} of {n} rows are, {strict} strictly)"
    signs = A.diagonal()
    diagonal = (f"{int(np.count_nonzero(signs > 0))} positive, {int(np.count_nonzero(signs < 0))} negative, "
                f"{int(np.count_nonzero(signs == 0))} zero or missing")
    return rows + [("symmetry", symmetry), ("dominance", dominance), ("diagonal", diagonal)]


def info(args: argparse.Namespace) -> int:
    """``ginkpy info``: print what :func:`matrix_info` finds in a Matrix Market file."""
    rows = [("matrix", args.matrix)] + matrix_info(read(args.matrix, ReferenceExecutor()).to_scipy())
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


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
    s.add_argument("--solver", choices=sorted(_iterative_solvers()), help="the Krylov solver (default cg)")
    s.add_argument("--preconditioner", choices=[*sorted(config.short_names("preconditioner")), "none"],
                   help="the preconditioner (default none)")
    s.add_argument("--executor", default="default",
                   help="reference | opencl | opencl:<platform>:<device> (default: a GPU if there is one)")
    s.add_argument("--dtype", choices=["float64", "float32"], default="float64", help="value type (default float64)")
    s.add_argument("--rtol", type=float, help=f"stop at ||b - A x|| <= rtol ||b|| (default {DEFAULT_RTOL:g})")
    s.add_argument("--max-iters", type=int, help="iteration limit (default max(1000, 10 n))")
    s.add_argument("--config", help="solver, preconditioner and criteria from a JSON file in Ginkgo's format")
    s.add_argument("--out", help="write the solution x here (Matrix Market)")
    s.add_argument("--plot", help="save the residual history here as an image (needs matplotlib)")
    s.set_defaults(run=solve)

    i = commands.add_parser("info", help="size, nonzeros, row lengths, symmetry, diagonal dominance of a matrix")
    i.add_argument("matrix", help="the matrix (Matrix Market .mtx)")
    i.set_defaults(run=info)

    d = commands.add_parser("devices", help="list the OpenCL platforms and devices")
    d.set_defaults(run=devices)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError, ImportError, RuntimeError, NotImplementedError) as err:
        print(f"ginkpy {args.command}: error: {err}", file=sys.stderr)
        return 2
