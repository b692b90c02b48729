"""The batched solvers' kernels (ginkpy/opencl/components/batch_solver.py) in complex values: many
small complex systems in one launch on both executors.

Complex twins as tests/complex_cases.py describes them.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk

from complex_cases import CONVERGED, complex_dtype, crandom


dtype = complex_dtype  # complex128 and complex64


# -- the batched solvers' kernels ---------------------------------------------------------------------

@pytest.mark.parametrize("solver", ["Cg", "Bicgstab", "Gmres"])
@pytest.mark.parametrize("fmt, precond", [("Csr", None), ("Ell", 1), ("Dense", 4)])
def test_batched_solvers(ref, dev, rng, dtype, solver, fmt, precond):
    """Many small complex systems in one launch (Hermitian positive definite for Cg): the same
    verdicts and solutions on both executors, and the true residuals meet the tolerance."""
    from ginkpy.problems import magnetic_laplacian_2d
    N, side = 9, 6
    n = side * side
    A = magnetic_laplacian_2d(side, 0.2, shift=0.5)
    if solver != "Cg":
        A = (A + 0.5j * sp.eye(n)).tocsr()
    shifts = rng.uniform(0, 0.5, N)
    values = np.stack([(A + s * sp.eye(n)).tocsr().data for s in shifts])
    pattern = (A + sp.eye(n)).tocsr()
    B = crandom(rng, (N, n), dtype)
    rtol = 1e-10 if dtype == np.complex128 else 1e-4
    results = []
    for exec in (ref, dev):
        batch = gk.batch.matrix.Csr.from_pattern(exec, pattern, values, dtype)
        if fmt == "Ell":
            batch = gk.batch.matrix.Ell.from_csr(batch)
        elif fmt == "Dense":
            batch = gk.batch.matrix.Dense.from_numpy(exec, np.stack([m.toarray() for m in batch.to_scipy()]))
        params = getattr(gk.batch.solver, solver).build()
        if precond is not None:
            params = params.with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(precond))
        s = params.on(exec).generate(batch)
        X = gk.batch.MultiVector.zeros(exec, (N, n), dtype)
        result = s.apply_with_tolerances(gk.batch.MultiVector.from_numpy(exec, B, dtype), X, rtol, 0.0, 500)
        results.append((X.to_numpy(), result))
    for (x, result) in results:
        assert (np.asarray(result.stop_reasons) == CONVERGED).all()
        for i in range(N):
            Ai = (A + shifts[i] * sp.eye(n)).astype(np.complex128)
            assert np.linalg.norm(B[i] - Ai @ x[i]) <= 1.01 * rtol * np.linalg.norm(B[i])
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e3 * rtol, atol=1e3 * rtol)
