"""Regenerate docs/convergence.png, the convergence plot shown in the README:

    python scripts/make_readme_plot.py

Jacobi-CG on a 2D Poisson problem with three right-hand sides (b = A 1, random, a point
source) and an iteration limit of 122, on the reference executor (the same figures on every
machine): two columns converge, one stops at the limit. ``ginkpy solve --plot`` and
``gk.log.Convergence().plot()`` draw the same kind of plot.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import ginkpy as gk
from ginkpy.problems import poisson_2d

OUT = Path(__file__).resolve().parents[1] / "docs" / "convergence.png"


def main() -> None:
    exe = gk.ReferenceExecutor()
    S = poisson_2d(40)
    n = S.shape[0]
    B = np.c_[S @ np.ones(n), np.random.default_rng(0).standard_normal(n), np.eye(n)[:, n // 2 + 20]]
    solver = (gk.solver.Cg.build()
              .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
              .with_criteria(gk.stop.Iteration.build().with_max_iters(122),
                             gk.stop.ResidualNorm.build().with_reduction_factor(1e-8))
              .on(exe)
              .generate(gk.matrix.Csr.from_scipy(exe, S)))
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(gk.matrix.Dense.from_numpy(exe, B), gk.matrix.Dense.zeros(exe, B.shape))
    fig = Figure(figsize=(7, 4.2), layout="tight")
    logger.plot(ax=fig.add_subplot(), title="Jacobi-CG, 2D Poisson 40 x 40, three right-hand sides")
    fig.savefig(OUT, dpi=100)
    print(f"{OUT}: iterations {logger.iterations.tolist()}, {logger.stop_reason}")


if __name__ == "__main__":
    main()
