"""The solver's parameters from ``ginkpy solve``'s options: --config or --solver and
--preconditioner, then --storage-precision, --preconditioner-side, --krylov-dim, --rtol and --max-iters."""
from __future__ import annotations

import argparse
import sys
from typing import Any

import attrs
import numpy as np

from ginkpy import config
from ginkpy.cli.summary import preconditioner_key, wider
from ginkpy.core.solver.direct import Direct
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm


DEFAULT_RTOL = 1e-8


def solver_parameters(args: argparse.Namespace, solver: str, preconditioner: str | None = None) -> Any:
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
        params = iterative_solvers()[solver].build()
        preconditioner = args.preconditioner if preconditioner is None else preconditioner
        if preconditioner not in (None, "none", "auto"):
            setattr(params, preconditioner_key(params), config.short_names("preconditioner")[preconditioner].build())
    storage = getattr(args, "storage_precision", None)
    if storage is not None:
        if "storage_precision" not in attrs.fields_dict(type(params)):
            raise ValueError(f"--storage-precision is the Krylov basis's storage of CbGmres: use it with --solver "
                             f"cb_gmres, not with {params.product.__name__}")
        params.with_storage_precision(storage)
    side = getattr(args, "preconditioner_side", None)
    if side is not None:
        if "preconditioner_side" not in attrs.fields_dict(type(params)):
            raise ValueError(f"--preconditioner-side applies to gmres and cb_gmres, not {params.product.__name__}")
        params.with_preconditioner_side(side)
    if args.krylov_dim is not None:
        if "krylov_dim" not in attrs.fields_dict(type(params)):
            with_dim = sorted(name for name, cls in iterative_solvers().items()
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


def iterative_solvers() -> dict[str, type]:
    """The --solver names of iterative solvers: config.solver_methods() (gk.linalg.Solver's
    methods too) less "direct"."""
    return {name: cls for name, cls in config.solver_methods().items() if name != "direct"}


def relative_tolerance(params: Any) -> float | None:
    """The reduction factor of a ResidualNorm criterion relative to ||b|| or ||r0||, if any."""
    factors = [c.reduction_factor for c in params.criteria
               if c.product is ResidualNorm and c.baseline != "absolute"]
    return min(factors) if factors else None


def warn_tolerance(params: Any, dtype: np.dtype) -> None:
    """A warning on stderr where --rtol is below what the value type resolves."""
    rtol, eps = relative_tolerance(params), float(np.finfo(dtype).eps)
    if rtol is not None and rtol < 10 * eps:
        print(f"ginkpy solve: warning: the tolerance {rtol:g} is below what {dtype} resolves (about "
              f"{10 * eps:.0e} ||b||): the solve will likely run to its iteration limit; use --rtol "
              f"{10 * eps:.0e} or more{wider(dtype, ', or ')}", file=sys.stderr)
