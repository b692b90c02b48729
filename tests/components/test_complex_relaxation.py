"""Jacobi's and the relaxation steps' kernels (preconditioner/jacobi_kernels,
components/relaxation_kernels) in complex values against their reference twins.

Complex twins as tests/complex_cases.py describes them.
"""
import numpy as np
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.matrix.dense import Dense

from complex_cases import complex_dtype, complex_matrix, crandom
from conftest import assert_twins, tol, twin


dtype = complex_dtype  # complex128 and complex64


# -- Jacobi and the relaxation steps --------------------------------------------------------------

def test_jacobi_kernels(ref, ocl, rng, dtype):
    S = complex_matrix(rng, 1237, 1237)
    S.setdiag(np.where(np.arange(1237) == 7, 0, S.diagonal()))  # a zero diagonal entry: replaced by 1
    out = twin(ref, ocl, "preconditioner.jacobi.invert_diagonal", S, np.zeros((1237, 1), dtype), dtype=dtype)
    assert out[0][2] == out[1][2] == 1
    assert_twins(out, dtype)
    b = crandom(rng, (1237, 3), dtype)
    for block in (1, 4):
        results = []
        for exec in (ref, ocl):
            A = gk.matrix.Csr.from_scipy(exec, S + sp.eye(1237) * 3, dtype)
            J = gk.preconditioner.Jacobi.build().with_max_block_size(block).on(exec).generate(A)
            X = gk.matrix.Dense.zeros(exec, b.shape, dtype)
            J.apply(gk.matrix.Dense.from_numpy(exec, b), X)
            Jh = J.conj_transpose()
            Y = gk.matrix.Dense.zeros(exec, b.shape, dtype)
            Jh.apply(gk.matrix.Dense.from_numpy(exec, b), Y)
            results.append((X.to_numpy(), Y.to_numpy(), J.block_pointers))
        ptrs = results[0][2]
        D = sp.block_diag([(S + sp.eye(1237) * 3)[p:q, p:q].toarray() for p, q in zip(ptrs[:-1], ptrs[1:])])
        inverse = np.linalg.inv(D.toarray())
        for x, y, _ in results:
            np.testing.assert_allclose(x, inverse @ b, rtol=100 * tol(dtype), atol=100 * tol(dtype))
            np.testing.assert_allclose(y, inverse.conj().T @ b, rtol=100 * tol(dtype), atol=100 * tol(dtype))


def test_relaxation_kernels(ref, ocl, rng, dtype):
    S = complex_matrix(rng, 1237, 1237)
    inv_diag = (1 / S.diagonal())[:, None].astype(dtype)
    b, x, d = (crandom(rng, (1237, 3), dtype) for _ in range(3))
    out = twin(ref, ocl, "components.relaxation.relax", 0.3, 0.7, S, inv_diag, b, x, d, np.zeros_like(x),
               dtype=dtype)
    assert_twins(out, dtype, factor=4)
    out = twin(ref, ocl, "components.relaxation.residual", S, b, x, np.zeros_like(x), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    bounds = [exec.run("components.relaxation.gershgorin_bound", gk.matrix.Csr.from_scipy(exec, S, dtype),
                       Dense.from_numpy(exec, inv_diag)) for exec in (ref, ocl)]
    expected = np.max(np.abs(inv_diag[:, 0]) * np.asarray(abs(S).sum(axis=1)).ravel())
    np.testing.assert_allclose(bounds, expected, rtol=100 * tol(dtype))
