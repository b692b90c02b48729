"""``ginkpy solve --solver direct`` (or a --config of solver::Direct): a sparse LU or
Cholesky factorization, one solve and its report."""
from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.cli.devices_command import device_name
from ginkpy.cli.files import write_solution
from ginkpy.cli.timed_solve import profiled
from ginkpy.core.base.executor import Executor
from ginkpy.core.factorization.cholesky import Cholesky
from ginkpy.core.factorization.lu import Lu
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.direct import Direct


def solve_direct(args: argparse.Namespace, params: Any, exec: Executor, S: sp.csr_matrix, A: Csr, B: Dense,
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
            ("executor", f"{exec.backend} on {device_name(exec)}"),
            ("factors", f"{fill} nonzeros in L and U ({fill / max(S.nnz, 1):.1f} times A's)"),
            ("residual", f"{residual.max():.3e} (relative {relative.max():.3e})"),
            ("time", f"factorize {times['generate']:.3f} s, solve {times['solve']:.3f} s")]
    if args.out:
        write_solution(args.out, X)
        rows.append(("solution", str(args.out)))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if args.profile:
        print(f"\n{profiled(params, exec, A, B)}")
    return 0 if np.all(np.isfinite(relative)) else 1
