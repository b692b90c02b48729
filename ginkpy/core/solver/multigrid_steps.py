"""The steps of a multigrid cycle on one level that several of its branches share: the
built-in Jacobi sweeps, the restriction of the residual and the prolongation of the coarse
correction, for a level of piecewise constant aggregation (one gather per aggregate) or of
smoothed aggregation (Pgm's ``prolongation_relax``: R and P general sparse matrices, applied
as SpMVs).
"""
from __future__ import annotations

from typing import Any

from ginkpy.core.matrix.dense import Dense, as_scalar


def sweeps(mg: Any, l: int, count: int, b: Dense, current: Dense, other: Dense) -> tuple[Dense, Dense]:
    """``count`` built-in sweeps on level l of the Multigrid ``mg`` from ``current``, each
    writing the other vector; returns (the result's vector, the other one)."""
    exec, omega, A, inv_diag = mg.executor, mg.omegas[l], mg.matrices[l], mg.inv_diags[l]
    for _ in range(count):
        # x_new = x + omega D^-1 (b - A x)
        exec.run("components.relaxation.relax", 0.0, omega, A, inv_diag, b, current, None, other)
        current, other = other, current
    return current, other


def splits_restriction(mg: Any, l: int) -> bool:
    """Whether level l of piecewise constant aggregation restricts a residual in two launches
    (the residual row by row, then its sums per aggregate): from the device's
    ``split_restrict_rows`` rows on (a GPU's large levels, where the one launch's work-item per
    aggregate reads its rows' entries scattered)."""
    least = mg.split_restrict_rows
    return 0 < least <= mg.matrices[l].shape[0] and not mg.levels[l].smoothed


def restrict(mg: Any, l: int, b: Dense, x: Dense, coarse_b: Dense) -> None:
    """coarse_b = R (b - A_l x) on level l: per aggregate in one kernel; on a large level of a
    device that chose so (:func:`splits_restriction`) the residual and then its sums per
    aggregate; with a smoothed aggregation's R the residual and then R's SpMV."""
    exec, level, A = mg.executor, mg.levels[l], mg.matrices[l]
    if not level.smoothed and not splits_restriction(mg, l):
        exec.run("solver.multigrid.restrict_residual", A, level.agg_ptrs, level.agg_rows, b, x, coarse_b)
        return
    key = ("residual", l, b.shape[1])
    residual = mg._work.get(key)
    if residual is None:
        residual = mg._work[key] = Dense.empty(exec, (A.shape[0], b.shape[1]), A.dtype)
    # r = b - A x;  b_c = R r
    exec.run("components.relaxation.residual", A, b, x, residual)
    if level.smoothed:
        level.restrict_op.apply(residual, coarse_b)
    else:
        exec.run("solver.multigrid.restrict", level.agg_ptrs, level.agg_rows, residual, coarse_b)


def prolong(mg: Any, level: Any, e: Dense, x: Dense) -> None:
    """x = x + P e: one gather per aggregate, or a smoothed aggregation's SpMV."""
    if not level.smoothed:
        mg.executor.run("solver.multigrid.prolong", level.agg, e, x)
        return
    one = mg._work.get(("one", x.dtype))
    if one is None:
        one = mg._work[("one", x.dtype)] = as_scalar(mg.executor, 1.0, x.dtype)
    level.prolong_op.apply(one, e, one, x)
