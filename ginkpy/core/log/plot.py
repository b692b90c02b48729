"""Convergence plots with matplotlib, the optional extra ``ginkpy[plot]``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def require_matplotlib() -> None:
    """Raise a clear ImportError when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError('plotting needs matplotlib: pip install "ginkpy[plot]"') from None


def plot_residual_history(history: Sequence[Any], ax: Any = None, title: str | None = None) -> Any:
    """Plot residual norms against iterations on a logarithmic axis, one line per right-hand side.

    ``history`` holds one entry per iteration (iteration 0 is the initial residual), each a number
    or the per-column norms, as ``gk.log.Convergence().residual_norm_history`` records them.
    Draws on ``ax`` (a matplotlib Axes; a new figure's when None) and returns it. Zero norms,
    which a logarithmic axis cannot show, are left out.
    """
    require_matplotlib()
    norms = np.array([np.atleast_1d(np.asarray(h, dtype=np.float64)) for h in history])
    if norms.ndim != 2 or norms.shape[0] == 0:
        raise ValueError("the residual history is empty or ragged: run a solve with a "
                         "gk.log.Convergence logger attached first")
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots()
    iterations = np.arange(norms.shape[0])
    shown = np.where(norms > 0, norms, np.nan)
    k = norms.shape[1]
    for j in range(k):
        ax.semilogy(iterations, shown[:, j], label=f"right-hand side {j}" if k > 1 else None)
    ax.set_xlabel("iteration")
    ax.set_ylabel("residual norm")
    ax.grid(True, which="major", alpha=0.4)
    if 1 < k <= 10:
        ax.legend()
    if title is not None:
        ax.set_title(title)
    return ax
