"""The ``ginkpy`` command line's parser and entry point (``ginkpy`` and ``python -m ginkpy``)."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ginkpy import config
from ginkpy.cli.devices_command import devices
from ginkpy.cli.info_command import info
from ginkpy.cli.solve_command import solve
from ginkpy.cli.solver_options import DEFAULT_RTOL, iterative_solvers


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ginkpy", description="Sparse iterative solvers on any OpenCL device.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{solve,info,devices}")

    s = commands.add_parser("solve", help="solve A x = b for a Matrix Market matrix A")
    s.add_argument("matrix", help="the matrix A (Matrix Market .mtx)")
    s.add_argument("--rhs", help="right-hand side(s) b (Matrix Market, n x k); default b = A * ones")
    s.add_argument("--solver", choices=["auto", *sorted(iterative_solvers()), "direct"],
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
    s.add_argument("--preconditioner-side", choices=["right", "left"],
                   help="gmres and cb_gmres: M from the right (default, Ginkgo's) or from the left (SciPy's "
                        "gmres: each cycle minimizes ||M (b - A x)||, the true residual decides at its end)")
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
    i.add_argument("--executor", help="also say how the matrix's SpMV runs there: reference | opencl | "
                                      "opencl:<platform>:<device> | default (the strategy chosen from its row lengths)")
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
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError, ImportError, RuntimeError, NotImplementedError) as err:
        print(f"ginkpy {args.command}: error: {err}", file=sys.stderr)
        return 2
