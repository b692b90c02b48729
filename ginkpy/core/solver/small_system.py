"""One system through the batched kernels: a batch of one, solved in one launch (a way of
``gk.solver.Cg``, ``Bicgstab``, ``Gmres`` and ``PipeCg`` to solve, beside their loop).

For a system small enough for one work-group (its vectors and matrix in local memory on a GPU,
a few thousand rows), a solve in one launch saves the per-iteration launches and host round
trips of the normal loop, and the capture of its launches. Two doors:

- :func:`solved_small`: the one ``gk.solver.Cg``, ``Bicgstab`` and ``Gmres`` take where the executor finds the system small enough
  (``Executor.small_system_rows``: the measured crossover of its device, method and value
  kind) and the solve allows it;
- :func:`solve_single`: the batched kernel on a single system, without those checks.

Both return the :class:`~ginkpy.core.stop.solve_result.SolveResult` of every solve
(``method="batch of one"``).
"""
from __future__ import annotations

import logging

import numpy as np

from ginkpy.core.batch.matrix.csr import Csr as BatchCsr
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.batch.preconditioner.jacobi import Jacobi as BatchJacobi
from ginkpy.core.batch.solver.bicgstab import Bicgstab
from ginkpy.core.batch.solver.cg import Cg
from ginkpy.core.batch.solver.gmres import Gmres
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.core.stop.solve_result import SolveResult

SOLVERS = {"cg": Cg, "bicgstab": Bicgstab, "gmres": Gmres}


def solved_small(monitor, method: str, krylov_dim: int = 0) -> bool:
    """Solve the system of a started ``monitor`` in one launch as a batch of one where
    :func:`solve_small_system` finds it applies, and end the monitor's solve with its result.
    True when it did (the solver then returns at once)."""
    result = solve_small_system(monitor, method, krylov_dim)
    if result is None:
        return False
    monitor.adopt(result)
    return True


def solve_small_system(monitor, method: str, krylov_dim: int = 0) -> SolveResult | None:
    """Solve the system of a started ``monitor`` (an IterationMonitor) in one launch by the
    batched kernel of ``method`` ("cg", "bicgstab" or "gmres", with ``krylov_dim``), where it
    applies: a Csr matrix of at most ``exec.small_system_rows(method, dtype)`` rows (0 on the
    reference executor), one right-hand side still running, Iteration and ResidualNorm
    criteria, no preconditioner or Jacobi, no time limit and no logger that wants every
    iteration (or every iterate). The result is what the loop would report (the true residual confirms
    convergence). Returns None where it does not apply (the loop runs)."""
    solver, exec, A = monitor.solver, monitor.exec, monitor.A
    M = solver.preconditioner
    if (monitor.blind or monitor.k != 1 or not monitor.running or monitor.log_iterations or monitor.sync
            or monitor.solution_loggers
            or monitor.time_limit != np.inf or monitor.max_iters >= np.iinfo(np.int32).max
            or not isinstance(A, Csr) or not isinstance(M, (Identity, Jacobi))
            or isinstance(M, Jacobi) and M.blocks.dtype != A.dtype  # blocks in reduced precision
            or not all(issubclass(c.parameters.product, (Iteration, ResidualNorm)) for c in solver.criteria)
            or A.shape[0] > exec.small_system_rows(method, A.dtype)):
        return None
    logging.getLogger("ginkpy").debug("%s: %d rows solved in one launch (a batch of one)", type(solver).__name__,
                                      A.shape[0])
    threshold = float(max(monitor.threshold[0], 0.0))
    return solve_single(method, A, monitor.b, monitor.x, int(monitor.max_iters), threshold,
                        None if isinstance(M, Identity) else M, krylov_dim=krylov_dim or 30)


def solve_single(solver: str, A: Csr, b: Dense, x: Dense, max_iterations: int, threshold: float,
                 preconditioner=None, krylov_dim: int = 30) -> SolveResult:
    """Solve A x = b with the batched kernel of ``solver`` ("cg", "bicgstab" or "gmres", with
    ``krylov_dim`` for GMRES) as a batch of one, until ||b - A x|| <= ``threshold`` (absolute;
    confirmed with the true residual) or ``max_iterations``.

    ``A`` is a square gk.matrix.Csr, ``b`` and ``x`` n x 1 Dense on A's executor; x is the
    initial guess and receives the solution. ``preconditioner`` is None or a generated
    gk.preconditioner.Jacobi (scalar or block) on A's executor, used as it is. Nothing is copied:
    the kernel reads A, b and the Jacobi blocks and writes x in place.

    Examples
    --------
    >>> result = solve_single("cg", A, b, x, 1000, 1e-10)
    >>> result.stop_reasons[0], result.method
    (<StopReason.CONVERGED: 1>, 'batch of one')
    """
    exec = A.executor
    n = A.shape[0]
    if A.shape != (n, n) or b.shape != (n, 1) or x.shape != (n, 1):
        raise ValueError(f"solve_single needs a square A and n x 1 b and x, got {A.shape}, {b.shape}, {x.shape}")
    batch_A = BatchCsr(exec, A.shape, A.row_ptrs, A.col_idxs, A.values.reshape(1, A.nnz))
    params = SOLVERS[solver].build()
    if solver == "gmres":
        params = params.with_krylov_dim(krylov_dim)
    if preconditioner is not None:
        stride = preconditioner.block_stride
        blocks = preconditioner.blocks.reshape(1, -1, stride, stride)
        block_ptrs, row_blocks = preconditioner.block_ptrs, preconditioner.row_blocks
        if block_ptrs is None:  # scalar Jacobi keeps only its inverse diagonal: one block per row
            block_ptrs, row_blocks = _scalar_blocks(exec, n)
        params = params.with_preconditioner(BatchJacobi.from_arrays(exec, A.shape, block_ptrs, row_blocks, blocks))
    batch_b = MultiVector(exec, b.values.reshape(1, n, 1))
    batch_x = MultiVector(exec, x.values.reshape(1, n, 1))
    result = params.on(exec).generate(batch_A).apply_with_tolerances(batch_b, batch_x, 0.0, float(threshold),
                                                                     int(max_iterations))
    return SolveResult(result.iterations, result.residual_norm, result.stop_reasons, result.time,
                       method="batch of one")


_SCALAR_BLOCKS: dict = {}


def _scalar_blocks(exec, n: int):
    """Block pointers 0..n and the block of each row (itself) on ``exec``, made once per size."""
    key = (id(exec.context) if hasattr(exec, "context") else id(exec), n)
    if key not in _SCALAR_BLOCKS:
        _SCALAR_BLOCKS[key] = (exec.from_host(np.arange(n + 1, dtype=np.int32)),
                               exec.from_host(np.arange(n, dtype=np.int32)))
    return _SCALAR_BLOCKS[key]
