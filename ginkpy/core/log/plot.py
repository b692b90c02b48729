"""Convergence plots with matplotlib, the optional extra ``ginkpy[plot]``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason

# how each way a column can end is marked at its last iteration
_MARKERS = {StopReason.CONVERGED: "o", StopReason.ITERATION_LIMIT: ">", StopReason.TIME_LIMIT: "s",
            StopReason.BREAKDOWN: "X", StopReason.DIVERGED: "^", StopReason.RUNNING: "."}


def require_matplotlib() -> None:
    """Raise a clear ImportError when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError('plotting needs matplotlib: pip install "ginkpy[plot]"') from None


def plot_residual_history(history: Sequence[Any], ax: Any = None, title: str | None = None,
                          result: Any = None) -> Any:
    """Plot residual norms against iterations on a logarithmic axis, one line per right-hand side.

    ``history`` holds one entry per iteration (iteration 0 is the initial residual), each a number
    or the per-column norms, as ``gk.log.Convergence().residual_norm_history`` records them.
    With ``result`` (the solve's ``gk.log.SolveResult``) the plot shows what a reader needs at a
    glance: the relative residual ||b - A x|| / ||b||, the tolerance as a dashed line, each
    column drawn up to its last iteration only and marked there by how it ended (converged,
    iteration limit, breakdown, ...). Without it, the absolute residual norms of every entry.
    Draws on ``ax`` (a matplotlib Axes; a new figure's when None) and returns it. Zero, NaN and
    infinite norms, which a logarithmic axis cannot show, are left out.
    """
    require_matplotlib()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    norms = np.array([np.atleast_1d(np.asarray(h, dtype=np.float64)) for h in history])
    if norms.ndim != 2 or norms.shape[0] == 0:
        raise ValueError("the residual history is empty or ragged: run a solve with a "
                         "gk.log.Convergence logger attached first")
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots()
    k = norms.shape[1]
    last = np.full(k, norms.shape[0] - 1)
    if result is not None:
        if len(result.stop_reasons) != k:
            raise ValueError(f"the result has {len(result.stop_reasons)} columns, the history {k}")
        rhs = np.asarray(result.rhs_norm, dtype=np.float64)
        scale = np.where(rhs > 0, rhs, 1.0) if rhs.shape == (k,) else np.ones(k)
        norms = norms / scale
        last = np.minimum(np.asarray(result.iterations), last)
    shown = np.where((norms > 0) & np.isfinite(norms), norms, np.nan)
    iterations = np.arange(norms.shape[0])
    lines, legend = [], []
    for j in range(k):
        (line,) = ax.semilogy(iterations[: last[j] + 1], shown[: last[j] + 1, j])
        lines.append(line)
        if 1 < k <= 10:
            line.set_label(f"right-hand side {j}")
            legend.append(line)
        if result is not None:
            _mark_end(ax, shown[: last[j] + 1, j], result.stop_reasons[j], line.get_color())
    if result is not None:
        legend += _tolerance_lines(ax, result, scale, lines)
        legend += [Line2D([], [], ls="none", marker=_MARKERS[r], color="0.2", label=r.describe())
                   for r in sorted(set(result.stop_reasons))]
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration")
    ax.set_ylabel("relative residual  ||b - A x|| / ||b||" if result is not None else "residual norm")
    ax.grid(True, which="major", alpha=0.4)
    if legend:
        ax.legend(handles=legend, fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax


def _mark_end(ax: Any, column: np.ndarray, reason: StopReason, color: Any) -> None:
    """The marker of ``reason`` at the column's last drawable point."""
    finite = np.flatnonzero(np.isfinite(column))
    if finite.size:
        i = finite[-1]
        ax.plot([i], [column[i]], ls="none", marker=_MARKERS[StopReason(reason)], markersize=9,
                color=color, markeredgecolor="black", zorder=3)


def _tolerance_lines(ax: Any, result: Any, scale: np.ndarray, lines: list) -> list:
    """The convergence thresholds relative to ||b||: one dashed line when all columns share it,
    else one per column in its colour. Returns the legend entries."""
    from matplotlib.lines import Line2D
    threshold = np.asarray(result.threshold, dtype=np.float64)
    if threshold.shape != scale.shape or not np.isfinite(threshold).any():
        return []  # no residual criterion
    relative = threshold / scale
    if np.allclose(relative, relative[0], rtol=1e-6):
        return [ax.axhline(relative[0], ls="--", lw=1.2, color="0.35", label=f"tolerance {relative[0]:.0e}")]
    for value, line in zip(relative, lines):
        if np.isfinite(value):
            ax.axhline(value, ls="--", lw=1, color=line.get_color())
    return [Line2D([], [], ls="--", color="0.35", label="tolerance of each column")]
