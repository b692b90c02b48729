"""A dropped solver is freed at once, without a garbage collection: nothing in a solve (the
monitor and its read mode, captured iterations, a multigrid hierarchy and its kernel copies)
makes a reference cycle through it. A cycle kept an AMG-CG solver's hierarchy and device arrays
alive until the next collection (the read mode referred back to the monitor that owns it)."""
import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk


def _poisson(n: int) -> sp.csr_matrix:
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], (n, n))
    return (sp.kron(T, sp.eye(n)) + sp.kron(sp.eye(n), T)).tocsr()


def _iterations(n: int):
    return gk.stop.Iteration.build().with_max_iters(n)


FACTORIES = {
    "cg": lambda: gk.solver.Cg.build().with_criteria(_iterations(20)),
    "amg-cg": lambda: (gk.solver.Cg.build()
                       .with_preconditioner(gk.solver.Multigrid.build().with_mg_level(gk.multigrid.Pgm.build())
                                            .with_criteria(_iterations(1)))
                       .with_criteria(_iterations(20), gk.stop.ResidualNorm.build().with_reduction_factor(1e-8))),
    "multigrid": lambda: (gk.solver.Multigrid.build().with_mg_level(gk.multigrid.Pgm.build())
                          .with_criteria(_iterations(5))),
    "gmres": lambda: gk.solver.Gmres.build().with_criteria(_iterations(20)),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_a_dropped_solver_is_freed_without_gc(exec, name):
    A = gk.matrix.Csr.from_scipy(exec, _poisson(24))
    b = gk.matrix.Dense.from_numpy(exec, np.ones(A.shape[0]))
    x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1))
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        solver = FACTORIES[name]().on(exec).generate(A)
        for _ in range(3):  # the later applies replay captured iterations
            x.fill(0.0)
            solver.apply(b, x)
        alive = [weakref.ref(solver)]
        M = getattr(solver, "preconditioner", None)
        if M is not None:
            alive.append(weakref.ref(M))
        del solver, M
        assert [r() is None for r in alive] == [True] * len(alive)
    finally:
        if enabled:
            gc.enable()
    assert np.isfinite(x.to_numpy()).all()
