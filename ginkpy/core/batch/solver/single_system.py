"""One system through the batched kernels: a batch of one, solved in one launch.

For a system small enough for one work-group (its vectors and matrix in local memory on a GPU,
a few thousand rows), a solve in one launch saves the per-iteration launches and host round
trips of the normal loop. :func:`solve_single` is the door that ``gk.solver.Cg``, ``Bicgstab``
and ``Gmres`` can take for such systems: it wraps the system's arrays as a batch of one without
copying them and runs the batched kernel.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.batch.matrix.csr import Csr as BatchCsr
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.batch.preconditioner.jacobi import Jacobi as BatchJacobi
from ginkpy.core.batch.solver.bicgstab import Bicgstab
from ginkpy.core.batch.solver.cg import Cg
from ginkpy.core.batch.solver.gmres import Gmres
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import StopReason

SOLVERS = {"cg": Cg, "bicgstab": Bicgstab, "gmres": Gmres}


@attrs.frozen
class SingleSolveResult:
    iterations: int        # iterations run
    residual_norm: float   # final ||b - A x|| (the true residual where converged, else the recurrence's)
    reason: StopReason     # CONVERGED, ITERATION_LIMIT, BREAKDOWN or DIVERGED


def solve_single(solver: str, A: Csr, b: Dense, x: Dense, max_iterations: int, threshold: float,
                 preconditioner=None, krylov_dim: int = 30) -> SingleSolveResult:
    """Solve A x = b with the batched kernel of ``solver`` ("cg", "bicgstab" or "gmres", with
    ``krylov_dim`` for GMRES) as a batch of one, until ||b - A x|| <= ``threshold`` (absolute;
    confirmed with the true residual) or ``max_iterations``.

    ``A`` is a square gk.matrix.Csr, ``b`` and ``x`` n x 1 Dense on A's executor; x is the
    initial guess and receives the solution. ``preconditioner`` is None or a generated
    gk.preconditioner.Jacobi (scalar or block) on A's executor, used as it is. Nothing is copied:
    the kernel reads A, b and the Jacobi blocks and writes x in place.
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
    return SingleSolveResult(int(result.iterations[0]), float(result.residual_norm[0]),
                             StopReason(int(result.stop_reasons[0])))


_SCALAR_BLOCKS: dict = {}


def _scalar_blocks(exec, n: int):
    """Block pointers 0..n and the block of each row (itself) on ``exec``, made once per size."""
    key = (id(exec.context) if hasattr(exec, "context") else id(exec), n)
    if key not in _SCALAR_BLOCKS:
        _SCALAR_BLOCKS[key] = (exec.from_host(np.arange(n + 1, dtype=np.int32)),
                               exec.from_host(np.arange(n, dtype=np.int32)))
    return _SCALAR_BLOCKS[key]
