"""CoarseLevels: the coarse levels of a Multigrid hierarchy that one launch cycles through
(``solver.multigrid.coarse_cycle``): their matrices, Jacobi smoothers and aggregates, and the
schedules of their steps (V-cycles within them, entered once or twice from the level above),
made once on the host. See gk.core.solver.multigrid.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.matrix.dense import Dense

# The steps of coarse_cycle: rows (op, level, src, dst) of a schedule, src and dst naming the
# level's vector x0 (0) or x1 (1); the coarse correction of level t is in x0 of level t + 1.
OP_RELAX_FIRST_RESTRICT = 0  # x_dst = omega D^-1 b;  b_{t+1} = P^T (b - A x_dst)
OP_RELAX = 1                 # x_dst = x_src + omega D^-1 (b - A x_src)
OP_RESTRICT_RESIDUAL = 2     # b_{t+1} = P^T (b - A x_src)
OP_PROLONG_RELAX = 3         # y = x_src + P x0_{t+1};  x_dst = y + omega D^-1 (b - A y)
OP_COARSEST = 4              # x0 = A^-1 b
OP_RELAX_FIRST = 5           # x_dst = omega D^-1 b


@attrs.define(eq=False)
class CoarseLevels:
    """The coarse levels that one launch cycles through (``solver.multigrid.coarse_cycle``):
    their matrices (the finest of them first, the coarsest last), D^-1 and omega of the Jacobi
    smoother of each but the coarsest, their Pgm levels (aggregates) and the coarsest's dense
    inverse. ``cache`` keeps what a backend derives from them once (packed arrays)."""

    matrices: list
    inv_diags: list
    omegas: list
    levels: list
    inverse: Dense
    cache: dict = attrs.field(factory=dict)

    def layout(self) -> np.ndarray:
        """Per level t a row (rows n, offset of its row pointers, of its entries, of its rows
        (D^-1, aggregates), of its aggregate pointers, of its vectors): the places of its arrays
        packed one level after another, and of its vectors b, x0, x1 (n x k each, one after
        another) in the work vector."""
        n = np.array([m.shape[0] for m in self.matrices], dtype=np.int64)
        nnz = np.array([m.nnz for m in self.matrices], dtype=np.int64)
        before = lambda v: np.concatenate([[0], np.cumsum(v)[:-1]])  # noqa: E731
        return np.stack([n, before(n + 1), before(nnz), before(n), before(np.r_[n[1:] + 1, 0]), before(3 * n)], axis=1)

    @property
    def work_rows(self) -> int:
        """Rows of the work vector: b, x0 and x1 of every level."""
        return 3 * sum(m.shape[0] for m in self.matrices)

    def schedule(self, guesses: tuple, sweeps: int) -> np.ndarray:
        """The steps of V-cycles on these levels: one per entry of ``guesses`` (True: from 0,
        False: from the result before), each on level 0 (its x0), the result in its x0. Within
        these levels each visits the one below once: a W-cycle's visits, exponentially many in
        the depth, would all run one after another in the one work-group."""
        steps: list = []
        last = len(self.matrices) - 1

        def visit(t: int, zero: bool) -> None:
            if t == last:
                steps.append((OP_COARSEST, t, 0, 0))
                return
            # a visit ends in x0: from 0 its first write goes to x1 (2 sweeps - 1 more writes
            # follow, each to the other vector), from x0 it starts there (2 sweeps follow)
            if zero and sweeps == 1:
                steps.append((OP_RELAX_FIRST_RESTRICT, t, 0, 1))
                current = 1
            else:
                current = 0
                if zero:
                    steps.append((OP_RELAX_FIRST, t, 0, 1))
                    current = 1
                for _ in range(sweeps - 1 if zero else sweeps):
                    steps.append((OP_RELAX, t, current, 1 - current))
                    current = 1 - current
                steps.append((OP_RESTRICT_RESIDUAL, t, current, 0))
            visit(t + 1, True)
            for i in range(sweeps):
                steps.append((OP_PROLONG_RELAX if i == 0 else OP_RELAX, t, current, 1 - current))
                current = 1 - current
            assert current == 0

        for zero in guesses:
            visit(0, zero)
        return np.array(steps, dtype=np.int32).reshape(-1, 4)
