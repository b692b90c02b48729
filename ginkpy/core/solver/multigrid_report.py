"""What a Multigrid tells of itself: the launches of one cycle and the printed hierarchy
(PyAMG's layout: levels, rows, nonzeros, complexities; here also the cycle, the smoother, the
levels cycled through in one launch, each level's prolongation and the kind of executor the
choice was made for).
"""
from __future__ import annotations

from typing import Any

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.multigrid_steps import splits_restriction


def launches_per_cycle(mg: Any) -> int:
    """Kernel launches of one cycle from x = 0 (the preconditioner's apply), one column (a
    smoothed aggregation's level: relax, residual, R, P and relax, beside sweeps 2 and on; a level
    whose restriction is split: the residual and its sums per aggregate)."""
    def visit(l: int, zero: bool, kind: str) -> int:
        if l == len(mg.levels):
            return 1 if isinstance(mg.coarsest_solver, Dense) else 0
        if mg.pre_smoothers[l] is not None or mg.post_smoothers[l] is not None:
            return 0  # not counted: the smoothers' own launches
        own = 2 * mg.smoother_iters + (3 if mg.levels[l].smoothed else
                                       0 if zero and mg.smoother_iters == 1 else
                                       2 if splits_restriction(mg, l) else 1)
        second = kind in ("w", "f") and l + 1 < len(mg.levels)
        if l + 1 == mg.merged_from:
            return own + 1
        return own + visit(l + 1, True, kind) + (visit(l + 1, False, "w" if kind == "w" else "v") if second else 0)
    return visit(0, True, mg.cycle)


def describe(mg: Any) -> str:
    """The hierarchy as ``repr(mg)`` prints it."""
    total = sum(m.nnz for m in mg.matrices) or 1
    coarsest = mg.coarsest_solver
    coarse_name = "dense inverse" if isinstance(coarsest, Dense) else type(coarsest).__name__
    smoother = (f"Jacobi ({mg.smoother_iters} sweep(s), relaxation {mg.parameters.smoother_relax:g})"
                if mg.pre_smoothers and mg.pre_smoothers[0] is None
                else type(mg.pre_smoothers[0]).__name__ if mg.pre_smoothers else "none")
    choice = mg._device_choice
    merged = (f"levels {mg.merged_from}-{mg.num_levels - 1} (<= {mg.merged_rows} rows) in one launch "
              f"(V-cycles)" if mg.merged_from is not None else "one launch per step")
    lines = [f"Multigrid ({mg.cycle.upper()}-cycle, smoother {smoother}) on {mg.executor!r}",
             f"Chosen for a {mg.device_kind} executor: {choice.why}" if mg.device_kind != "reference"
             else f"Chosen for the reference executor: {choice.why}",
             f"Cycle:                {mg.cycle.upper()}, {merged}, {mg.launches_per_cycle} launches",
             f"Number of Levels:     {mg.num_levels}",
             f"Operator Complexity: {mg.operator_complexity:6.3f}",
             f"Grid Complexity:     {mg.grid_complexity:6.3f}",
             f"Coarse Solver:        '{coarse_name}'",
             "  level   unknowns     nonzeros           prolongation"]
    for l, m in enumerate(mg.matrices):
        transfer = "" if l == len(mg.levels) else (
            "  smoothed aggregation" if getattr(mg.levels[l], "smoothed", False) else "  aggregation")
        lines.append(f"  {l:>4d} {m.shape[0]:>10d} {m.nnz:>12d} [{100 * m.nnz / total:5.2f}%]{transfer}")
    return "\n".join(lines)
