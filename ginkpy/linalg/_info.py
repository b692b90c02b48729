"""SciPy's ``info`` of a ginkpy solve: 0 where the true residual meets the tolerance, SciPy's
codes otherwise (-1 breakdown, -2 divergence or NaN, maxiter), and the clear error for a system
whose entries are too small or too large for its value type's products."""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import StopReason

BREAKDOWN_INFO = -1
DIVERGED_INFO = -2


def solve_info(A: LinOp, b: Dense, x: Dense, threshold: float, result, maxiter: int) -> int:
    """SciPy's info from how the solver stopped: 0 when it converged (the solver confirmed that
    with the true residual b - A x), else from the true residual, computed here."""
    reason = result.stop_reasons[0]
    if reason == StopReason.CONVERGED:
        return 0
    # r = b - A x
    r = b.clone()
    A.apply(-1.0, x, 1.0, r)
    r_norm = float(r.compute_norm2().to_numpy()[0, 0])
    if r_norm <= threshold:
        return 0
    if reason == StopReason.BREAKDOWN:
        return BREAKDOWN_INFO
    if reason == StopReason.DIVERGED or not np.isfinite(r_norm):
        return DIVERGED_INFO
    return maxiter


def check_magnitude(A: LinOp, method: str) -> None:
    """Raise a ValueError that says how to scale the system where A's entries are so small or so
    large that their squares underflow or overflow in A's value type (below 1.5e-154 or above
    1.3e154 in float64): the products a Krylov method forms of A with its vectors then vanish or
    overflow, and the method breaks down or diverges on a system that is well posed once scaled.
    Called after a breakdown or divergence, so that it costs a successful solve nothing."""
    values = getattr(A, "values", None)
    if values is None or getattr(A, "nnz", 1) == 0:
        return  # (not a stored matrix: a LinearOperator, a solver; nothing to measure)
    magnitude = np.abs(np.asarray(A.executor.to_host(values))).max(initial=0)
    real = np.finfo(np.dtype(A.dtype))
    low, high = np.sqrt(real.tiny), np.sqrt(real.max)
    if magnitude == 0 or low <= magnitude <= high:
        return
    k = -int(np.round(np.log2(magnitude)))
    raise ValueError(
        f"{method}: A's largest entry is {magnitude:.1e} in magnitude, {'below' if magnitude < low else 'above'} "
        f"{low if magnitude < low else high:.1e}, where products with A {'underflow' if magnitude < low else 'overflow'} "
        f"in {np.dtype(A.dtype)}, so the method broke down or diverged: scale A and b by 2**{k} "
        f"(A.data = numpy.ldexp(A.data, {k}); b = numpy.ldexp(b, {k}): exact, and x stays the same)")
