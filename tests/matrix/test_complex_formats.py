"""The matrix formats' kernels (Csr's SpMV in every strategy, its helpers, the other formats) in
complex values against their reference twins.

Complex twins as tests/complex_cases.py describes them.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk

from complex_cases import assert_summed, complex_dtype, complex_matrix, crandom
from conftest import assert_twins, sum_tol, tol, twin


dtype = complex_dtype  # complex128 and complex64


# -- matrices ----------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["classical", "vector", "long_rows", "merge_path", "row_blocks"])
def test_csr_spmv_every_strategy(ref, ocl, rng, dtype, strategy):
    from ginkpy.opencl.matrix import csr_strategy
    S = complex_matrix(rng, 1237, 1301)
    S[5, :] = 1j  # a long row
    S = S.tocsr()
    b, x = crandom(rng, (1301, 3), dtype), crandom(rng, (1237, 3), dtype)
    alpha, beta = crandom(rng, (1, 3), dtype), crandom(rng, (1, 3), dtype)
    results = []
    for exec in (ref, ocl):
        A = gk.matrix.Csr.from_scipy(exec, S, dtype)
        if exec is ocl:
            csr_strategy.select_strategy(ocl, A, name=strategy)
        B, X = gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.from_numpy(exec, x)
        A.apply(B, X)
        plain = X.to_numpy()
        X = gk.matrix.Dense.from_numpy(exec, x)
        A.apply(gk.matrix.Dense.from_numpy(exec, alpha), B, gk.matrix.Dense.from_numpy(exec, beta), X)
        results.append((plain, X.to_numpy()))
    expected = S.astype(np.complex128) @ b
    magnitude = abs(S) @ np.abs(b)
    for plain, advanced in results:
        assert (np.abs(plain - expected) <= 2 * sum_tol(dtype, 1301) * magnitude).all()
        assert (np.abs(advanced - (alpha * expected + beta * x))
                <= 2 * sum_tol(dtype, 1301) * (np.abs(alpha) * magnitude + np.abs(beta * x))).all()


@pytest.mark.parametrize("second", ["none", "other", "y"])
def test_csr_spmv_dots(ref, dev, rng, dtype, second):
    S = complex_matrix(rng, 1237, 1237)
    b, u, w = (crandom(rng, (1237, 3), dtype) for _ in range(3))
    x = np.zeros((1237, 3), dtype)
    args = [S, b, x, u, {"none": None, "other": w}.get(second), np.zeros((1, 3))]
    if second == "y":
        from conftest import Same
        args[4] = Same(2)
    out = twin(ref, dev, "matrix.csr.spmv_dots", *args, dtype=dtype)
    assert_twins(out, dtype, factor=4, skip=(0, 5))
    y = out[0][2].astype(np.complex128)
    dots = [(u.conj() * y).sum(axis=0)]
    if second != "none":
        dots.append(((w if second == "other" else y).conj() * y).sum(axis=0))
    magnitude = np.concatenate([(np.abs(u) * np.abs(y)).sum(axis=0)] * len(dots))
    assert_summed(out[1][5], np.concatenate(dots)[None], magnitude, 1237, dtype, factor=4)


def test_csr_helpers(ref, ocl, rng, dtype):
    S = complex_matrix(rng, 301, 301)
    diag = crandom(rng, (301, 1), dtype)
    out = twin(ref, ocl, "matrix.csr.extract_diagonal", S, np.zeros((301, 1), dtype), dtype=dtype)
    np.testing.assert_array_equal(out[1][1][:, 0], S.diagonal().astype(dtype))
    for exec in (ref, ocl):
        A = gk.matrix.Csr.from_scipy(exec, S, dtype)
        scaled = A.scale_columns(gk.matrix.Dense.from_numpy(exec, diag)).to_scipy()
        np.testing.assert_allclose(scaled.toarray(), (S @ sp.diags(diag[:, 0])).toarray(), rtol=tol(dtype))
        np.testing.assert_array_equal(A.conj_transpose().to_scipy().toarray(), S.conj().T.toarray().astype(dtype))
        np.testing.assert_array_equal(A.transpose().to_scipy().toarray(), S.T.toarray().astype(dtype))
        assert A.is_finite()


@pytest.mark.parametrize("fmt", ["Coo", "Ell", "Sellp", "Hybrid", "Dense"])
def test_other_formats_apply(ref, ocl, rng, dtype, fmt):
    S = complex_matrix(rng, 1237, 1237, density=0.005)
    b, x = crandom(rng, (1237, 3), dtype), crandom(rng, (1237, 3), dtype)
    alpha, beta = crandom(rng, (1, 3), dtype), crandom(rng, (1, 3), dtype)
    expected = S.astype(np.complex128) @ b
    magnitude = abs(S) @ np.abs(b)
    for exec in (ref, ocl):
        if fmt == "Dense":
            A = gk.matrix.Dense.from_numpy(exec, S.toarray(), dtype)
        else:
            A = getattr(gk.matrix, fmt).from_scipy(exec, S, dtype)
        assert A.dtype == dtype
        X = gk.matrix.Dense.from_numpy(exec, x)
        A.apply(gk.matrix.Dense.from_numpy(exec, b), X)
        assert (np.abs(X.to_numpy() - expected) <= 2 * sum_tol(dtype, 1237) * magnitude).all()
        X = gk.matrix.Dense.from_numpy(exec, x)
        A.apply(gk.matrix.Dense.from_numpy(exec, alpha), gk.matrix.Dense.from_numpy(exec, b),
                gk.matrix.Dense.from_numpy(exec, beta), X)
        bound = 2 * sum_tol(dtype, 1237) * (np.abs(alpha) * magnitude + np.abs(beta * x))
        assert (np.abs(X.to_numpy() - (alpha * expected + beta * x)) <= bound).all()
